"""`native`: Mem0's own LLM-driven `add()` over the dialogue (place/agent/native.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from place.agent.native import NativeWriter, dialogue_messages, written_turns
from place.producers.registry import (
    ProducerContext,
    RecordCounter,
    StepOutcome,
    register_producer,
    turn_speaker,
    written,
)
from place.producers.summary import plain_summary
from place.readback import Readback
from place.trajectory.model import Compaction, Conversation, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


class NativeStoreWriter:
    def __init__(self, store: WritableStore, readback: Readback) -> None:
        self.store = store
        self.readback = readback

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        if dialogue_messages(turns) is None:  # nothing to add (NativeWriter adds nothing)
            return StepOutcome()
        # Mem0 decides the records of one add(): they share the step's `written_seq` (ties
        # are ordered by id) and speaker (a step has one speaker: it closes when that changes).
        speaker = next(
            (turn_speaker(t, self.store.principal) for t in turns if t.role != "assistant"),
            self.store.principal,
        )
        sources = [t.id for t in written_turns(turns)]
        metadata = written(conv.date, RecordCounter(self.store).take(), speaker, sources)
        done = NativeWriter().write(self.store, turns, conv.date, metadata=metadata)
        return StepOutcome(done.operations, done.failures, done.llm_calls)

    def fork(self, store: WritableStore) -> NativeStoreWriter:
        return NativeStoreWriter(store, self.readback)

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """Mem0 keeps all its state in the store."""

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        """A plain summary written with `infer=False` (no model call): what Mem0 does with
        it afterwards is Mem0's."""
        return plain_summary(self.store, self.readback, entry, day)


@register_producer("native", display="Native", llm=True)
def native(store: WritableStore, context: ProducerContext[None]) -> NativeStoreWriter:
    return NativeStoreWriter(store, context.readback)
