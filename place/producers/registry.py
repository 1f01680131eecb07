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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from place.readback import SOURCE_TURNS, Readback
from place.registry import Component, FactoryT, Registry, component_decorator
from place.trajectory.model import Compaction, Conversation, Schema, Turn

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore, WritableStore


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

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        """Write the summary of a compaction point (docs/method.md §11, "Derived
        summaries"); a producer that keeps no memory writes nothing."""
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
    llm: bool = False,
) -> Callable[[FactoryT], FactoryT]:
    """Register `factory(store, context) -> Writer` under `name`; `llm=True` for a producer
    that writes through the LLM (an answer-free run leaves it out unless asked)."""
    return component_decorator(
        PRODUCERS, name, params=params, governance=governance, display=display, llm=llm
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


WRITTEN_ON = "written_on"
WRITTEN_SEQ = "written_seq"
SPEAKER = "speaker"


def written_on(day: dt.date) -> dict[str, str]:
    """The `written_on` metadata every producer puts on every record it writes (docs/method.md
    §8: the decay policy reads it; Mem0 passes metadata to the store, not to its LLM)."""
    return {WRITTEN_ON: day.isoformat()}


def written(day: dt.date, seq: int, speaker: str, turns: Sequence[str] = ()) -> dict[str, Any]:
    """What every producer puts on every record it writes (docs/method.md §8.10): the
    conversation date (`written_on`), the store's record counter (`written_seq`, from a
    `RecordCounter`), who said what the record holds (`speaker`) and the turns it was
    written from (`source_turns`, docs/method.md §16: DistractorShare reads them). Records
    are ordered by (written_on, written_seq, id). Mem0 passes metadata to the store, never
    to its LLM, so none of this reaches a prompt."""
    meta: dict[str, Any] = {WRITTEN_ON: day.isoformat(), WRITTEN_SEQ: seq, SPEAKER: speaker}
    if turns:
        meta[SOURCE_TURNS] = list(turns)
    return meta


OrderKey = tuple[tuple[int, str], tuple[int, int], str]


def written_order(record_id: str, metadata: Mapping[str, Any]) -> OrderKey:
    """The write order of a record, ascending: (written_on, written_seq, id), a missing date
    after every date and a missing counter after every counter of its date."""
    on, seq = metadata.get(WRITTEN_ON), metadata.get(WRITTEN_SEQ)
    return (
        (1, "") if on in (None, "") else (0, str(on)),
        (0, seq) if isinstance(seq, int) and not isinstance(seq, bool) else (1, 0),
        record_id,
    )


def stored_seq(metadata: Mapping[str, Any]) -> int | None:
    """A record's `written_seq`, None when it has none (a record written by an older place,
    or the probe's injected conflict record)."""
    seq = metadata.get(WRITTEN_SEQ)
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


class RecordCounter:
    """`written_seq` for the records one write step adds to one store (docs/method.md §8.10).

    A per-store record counter kept by the store itself: the first number a step takes is
    1 + the largest `written_seq` stored for the principal (1 for an empty store), read at
    the first `take`; the step counts on from there. Because the count is read from the
    store, a world-b clone, a probe's conflict copy and a snapshot restored on resume all
    continue their store's sequence, and a resumed run numbers exactly as an uninterrupted
    one. Of two records present together, the later written never has the smaller number (a
    deletion can free the largest number, never reorder what stays). Make one per step.
    """

    def __init__(self, store: ReadOnlyStore) -> None:
        self.store = store
        self._next: int | None = None

    def take(self) -> int:
        if self._next is None:
            stored = (stored_seq(p.metadata) for p in self.store.scan().points)
            self._next = max((s for s in stored if s is not None), default=0) + 1
        seq = self._next
        self._next += 1
        return seq


def turn_speaker(turn: Turn, principal: str) -> str:
    """Who said (or forwarded) a user or tool turn: its `speaker` (the trajectory format gains
    it with method §11), the principal without one (docs/method.md §8.10)."""
    speaker = getattr(turn, SPEAKER, None)
    return str(speaker) if speaker else principal


def speakers(turns: Sequence[Turn], principal: str) -> list[str]:
    """The speaker of each turn of a step: a user or tool turn's own, an assistant turn that
    of the turn it answers (the latest user or tool turn before it; the principal when there
    is none)."""
    out, current = [], principal
    for turn in turns:
        if turn.role != "assistant":
            current = turn_speaker(turn, principal)
        out.append(current)
    return out
