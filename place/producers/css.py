"""`css`: the certified state specification (place/governance/certifier.py).

Applies the trusted events of a step (tool turns carry none), realizes each transition
through Mem0 with `infer=False` writes carrying lifecycle metadata, and verifies the store by
reading it back. Never calls the LLM.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from place.governance.certifier import Certifier, Provenance
from place.producers.registry import (
    ProducerContext,
    RecordCounter,
    StepOutcome,
    register_producer,
    turn_speaker,
)
from place.trajectory.model import Conversation, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


class CSSWriter:
    def __init__(self, store: WritableStore, certifier: Certifier) -> None:
        self.store = store
        self.certifier = certifier

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        operations = []
        counter = RecordCounter(self.store)
        principal = self.store.principal
        for turn in turns:
            for event in turn.events:
                provenance = Provenance(
                    turn.id, conv.id, conv.date, speaker=turn_speaker(turn, principal)
                )
                record = self.certifier.apply(event, provenance, counter)
                operations.append(record.__dict__)
        return StepOutcome(operations)

    def fork(self, store: WritableStore) -> CSSWriter:
        return CSSWriter(store, self.certifier.fork(store))

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """Replay G from the events already applied, then learn the store's memory ids."""
        for turns, conv in done:
            for turn in turns:
                for event in turn.events:
                    self.certifier.governed.apply(event, conv.date)
                    self.certifier.applied.add(event.id)
        self.certifier.adopt_store()


@register_producer("css", display="CSS", governance=True)
def css(store: WritableStore, context: ProducerContext[None]) -> CSSWriter:
    return CSSWriter(store, Certifier(store, context.schema, context.readback))
