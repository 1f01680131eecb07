"""`native`: Mem0's own LLM-driven `add()` over the dialogue (place/agent/native.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from place.agent.native import NativeWriter
from place.producers.registry import (
    ProducerContext,
    StepOutcome,
    register_producer,
    written_on,
)
from place.trajectory.model import Conversation, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


class NativeStoreWriter:
    def __init__(self, store: WritableStore) -> None:
        self.store = store

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        done = NativeWriter().write(self.store, turns, conv.date, metadata=written_on(conv.date))
        return StepOutcome(done.operations, done.failures, done.llm_calls)

    def fork(self, store: WritableStore) -> NativeStoreWriter:
        return NativeStoreWriter(store)

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """Mem0 keeps all its state in the store."""


@register_producer("native", display="Native")
def native(store: WritableStore, context: ProducerContext[None]) -> NativeStoreWriter:
    return NativeStoreWriter(store)
