"""Read policies by name: one decorated definition registers a policy (docs/extending.md).

`@register_policy("name", params=..., governance=..., display=...)` declares everything the
rest of the package needs: the factory, the parameter set (`design.<name>` in the run
configuration, checked and documented from the declaration), whether its time counts as
governance overhead, and how condition names spell it; `max_exposed_chars=` declares a
character bound on what one read exposes, for a policy not bounded by k (fullcontext).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from place.eligibility import Interpretation
from place.governance.authorizer import ReadDecision
from place.readback import Readback
from place.registry import Component, FactoryT, Registry, component_decorator

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore


class ReadPolicy(Protocol):
    """What the answer model may see for one query: a read-only store in, items out."""

    name: str

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision: ...


P = TypeVar("P")


@dataclass(frozen=True)
class PolicyContext(Generic[P]):
    """What a policy may be built from: the shared budget k, β, and its own parameters (an
    instance of its declared parameter set, None when it declares none)."""

    k: int
    readback: Readback
    params: P
    consequential: frozenset[str] = frozenset()
    """The trajectory's consequential predicates (docs/method.md §12: money, marked
    `consequential`, or needed by a task), for a policy that treats them apart."""


PolicyFactory = Callable[[PolicyContext[Any]], ReadPolicy]
PolicySpec = Component[PolicyFactory]
POLICIES: Registry[PolicySpec] = Registry("read policy", "place.policies")

def register_policy(
    name: str,
    *,
    params: type | None = None,
    governance: bool = False,
    display: str | None = None,
    max_exposed_chars: Callable[[Any], int | None] | None = None,
) -> Callable[[FactoryT], FactoryT]:
    """Register `factory(context) -> ReadPolicy` under `name`. `max_exposed_chars(params)`
    declares, for a policy whose reads are bounded by characters rather than by k, the most
    characters of record text one read exposes (the configuration check sizes the answer
    prompt by it)."""
    return component_decorator(
        POLICIES,
        name,
        params=params,
        governance=governance,
        display=display,
        max_exposed_chars=max_exposed_chars,
    )


def build_policy(
    name: str,
    k: int,
    readback: Readback,
    values: Mapping[str, Any] | None = None,
    consequential: frozenset[str] = frozenset(),
) -> ReadPolicy:
    """The policy `name` with budget k and its parameters from config `values` (checked
    against its declaration; the declaration's defaults fill what is not given)."""
    spec = POLICIES[name]
    return spec.factory(PolicyContext(k, readback, spec.make_params(values), consequential))
