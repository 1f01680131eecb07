"""Read policies by name: one decorated definition registers a policy (docs/extending.md)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from place.eligibility import Interpretation
from place.governance.authorizer import ReadDecision
from place.readback import Readback

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore


class ReadPolicy(Protocol):
    """What the answer model may see for one query: a read-only store in, items out."""

    name: str

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision: ...


@dataclass(frozen=True)
class PolicyContext:
    """What a policy may be built from: the shared budget k, β, and its own config section."""

    k: int
    readback: Readback
    params: Mapping[str, Any]


PolicyFactory = Callable[[PolicyContext], ReadPolicy]
POLICIES: dict[str, PolicyFactory] = {}


def register_policy(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    def decorate(factory: PolicyFactory) -> PolicyFactory:
        if name in POLICIES:
            raise ValueError(f"read policy {name!r} is registered twice")
        POLICIES[name] = factory
        return factory

    return decorate


def build_policy(name: str, context: PolicyContext) -> ReadPolicy:
    return POLICIES[name](context)
