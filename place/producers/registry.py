"""Write producers by name: one decorated definition registers a producer (docs/extending.md).

A producer writes its row's store once per update step; every read policy of its row reads
that store. `factory(store, context)` binds a producer to one store (typed against
`WritableStore`, as read policies are against `ReadOnlyStore`); a writer can `fork` onto a
clone of its store (causal-pair world b) and `resume` its in-memory state after an
interrupted run. `@register_producer("name", params=..., governance=..., display=...)`
declares the rest, as for read policies.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from place.readback import Readback
from place.registry import Component, FactoryT, Registry, component_decorator
from place.trajectory.model import Conversation, Schema, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


@dataclass
class StepOutcome:
    """What one update step did to one store (recorded in records/steps.jsonl)."""

    operations: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    llm_calls: list[dict[str, Any] | None] = field(default_factory=list)
    """How each model call of the step ended (Completion.meta(); None when not recorded)."""


class Writer(Protocol):
    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome: ...

    def fork(self, store: WritableStore) -> Writer:
        """A writer on a clone of this writer's store, continuing its state (world b)."""
        ...

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """Rebuild in-memory state from the steps a resumed run already completed."""
        ...


P = TypeVar("P")


@dataclass(frozen=True)
class ProducerContext(Generic[P]):
    """What a producer may be built from: the trajectory's schema, β, and its own parameters
    (an instance of its declared parameter set, None when it declares none)."""

    schema: Schema
    readback: Readback
    params: P = None  # type: ignore[assignment]  # reason: P is None for producers without parameters


ProducerFactory = Callable[["WritableStore", ProducerContext[Any]], Writer]
ProducerSpec = Component[ProducerFactory]
PRODUCERS: Registry[ProducerSpec] = Registry("producer", "place.producers")

def register_producer(
    name: str,
    *,
    params: type | None = None,
    governance: bool = False,
    display: str | None = None,
) -> Callable[[FactoryT], FactoryT]:
    """Register `factory(store, context) -> Writer` under `name`."""
    return component_decorator(
        PRODUCERS, name, params=params, governance=governance, display=display
    )


def build_writer(
    name: str,
    store: WritableStore,
    schema: Schema,
    readback: Readback,
    values: Any = None,
) -> Writer:
    """The producer `name` bound to `store`, with its parameters from config `values`."""
    spec = PRODUCERS[name]
    return spec.factory(store, ProducerContext(schema, readback, spec.make_params(values)))


def written_on(day: dt.date) -> dict[str, str]:
    """The `written_on` metadata every producer puts on every record it writes (docs/method.md
    §8: the decay policy reads it; Mem0 passes metadata to the store, not to its LLM)."""
    return {"written_on": day.isoformat()}
