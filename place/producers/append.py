"""`append`: raw conversational memory (docs/method.md §8).

Mem0 `add(messages, infer=False)` with exactly the messages the Native producer passes, each
stored verbatim as its own record: no LLM, no lifecycle, so stale values stay. The "naive
append / vector RAG over history" baseline of the AOEP-v0 pilot; deterministic for every
model, which is why it shows the write-side phenomenon on the embedded model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from place.agent.native import dialogue_messages, written_turns
from place.producers.registry import (
    ProducerContext,
    RecordCounter,
    StepOutcome,
    register_producer,
    speakers,
    written,
)
from place.producers.summary import plain_summary
from place.readback import Readback
from place.trajectory.model import Compaction, Conversation, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


class AppendWriter:
    def __init__(self, store: WritableStore, readback: Readback) -> None:
        self.store = store
        self.readback = readback

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        messages = dialogue_messages(turns)
        if messages is None:
            return StepOutcome()
        # One add per message, so that each record carries its own `written_seq` and
        # speaker; Mem0 stores and numbers them exactly as one add of the whole list would.
        said_by = written_turns(turns)
        said = speakers(said_by, self.store.principal)
        counter = RecordCounter(self.store)
        stored = [
            text
            for message, speaker, turn in zip(messages, said, said_by, strict=True)
            for text in self.store.add_messages(
                [message], written(conv.date, counter.take(), speaker, (turn.id,))
            )
        ]
        return StepOutcome([{"event": "ADD", "memory": text} for text in stored])

    def fork(self, store: WritableStore) -> AppendWriter:
        return AppendWriter(store, self.readback)

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """All state is in the store."""

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        return plain_summary(self.store, self.readback, entry, day)


@register_producer("append", display="Append")
def append(store: WritableStore, context: ProducerContext[None]) -> AppendWriter:
    return AppendWriter(store, context.readback)
