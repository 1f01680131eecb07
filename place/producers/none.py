"""`none`: the no-memory floor (docs/method.md §8.6).

Writes nothing, so every read of its row is empty: None/* is what an agent without memory
would do, the AOEP-v0 pilot's "no-memory floor". It is a writer like any other (write, fork,
resume), so its row store exists, is read at every checkpoint and takes part in the
factorization check and every endpoint.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from place.producers.registry import ProducerContext, StepOutcome, register_producer
from place.trajectory.model import Compaction, Conversation, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


class NoneWriter:
    def __init__(self, store: WritableStore) -> None:
        self.store = store

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        """Nothing is written."""
        return StepOutcome()

    def fork(self, store: WritableStore) -> NoneWriter:
        return NoneWriter(store)

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """There is no state."""

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        """Nothing to summarize."""
        return StepOutcome()


@register_producer("none", display="None")
def none(store: WritableStore, context: ProducerContext[None]) -> NoneWriter:
    return NoneWriter(store)
