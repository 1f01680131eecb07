"""Write producers by name: one decorated definition registers a producer (docs/extending.md).

A producer writes its row's store once per update step; every read policy of its row reads
that store. `writer(store, context)` binds a producer to one store; a writer can `fork` onto
a clone of its store (causal-pair world b) and `resume` its in-memory state after an
interrupted run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from place.readback import Readback
from place.trajectory.model import Conversation, Schema, Turn


@dataclass
class StepOutcome:
    """What one update step did to one store (recorded in records/steps.jsonl)."""

    operations: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    llm_calls: list[dict[str, Any] | None] = field(default_factory=list)
    """How each model call of the step ended (Completion.meta(); None when not recorded)."""


class Writer(Protocol):
    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome: ...

    def fork(self, store: Any) -> Writer:
        """A writer on a clone of this writer's store, continuing its state (world b)."""
        ...

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """Rebuild in-memory state from the steps a resumed run already completed."""
        ...


@dataclass(frozen=True)
class ProducerContext:
    schema: Schema
    readback: Readback


ProducerFactory = Callable[[Any, ProducerContext], Writer]
PRODUCERS: dict[str, ProducerFactory] = {}


def register_producer(name: str) -> Callable[[ProducerFactory], ProducerFactory]:
    def decorate(factory: ProducerFactory) -> ProducerFactory:
        if name in PRODUCERS:
            raise ValueError(f"producer {name!r} is registered twice")
        PRODUCERS[name] = factory
        return factory

    return decorate


def written_on(day: dt.date) -> dict[str, str]:
    """The `written_on` metadata every producer puts on every record it writes (method.md §8:
    the decay policy reads it; Mem0 passes metadata to the store, not to its LLM)."""
    return {"written_on": day.isoformat()}
