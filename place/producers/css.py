"""`css`: the certified state specification (place/governance/certifier.py).

Applies the trusted events of a step, realizes each transition through Mem0 with
`infer=False` writes carrying lifecycle metadata, and verifies the store by reading it back.
Beside the state it keeps the ledger L (docs/method.md §11): an event row per new event,
the governance rows its events make or change, a quarantine row per fact of a tool turn
and a request row per task turn, verified against its own Γ after every write. Never calls
the LLM.

Restart (docs/method.md §11): `restart()` drops the writer's in-memory state and
rebuilds it from the store and L alone; `resume(done)` does the same and checks that L
records every event and task of the steps a resumed run already completed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from place.governance.certifier import CertificationError, Certifier, Provenance
from place.producers.registry import (
    ProducerContext,
    RecordCounter,
    StepOutcome,
    register_producer,
    speakers,
    turn_speaker,
)
from place.trajectory.model import Compaction, Conversation, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


class CSSWriter:
    def __init__(self, store: WritableStore, certifier: Certifier) -> None:
        self.store = store
        self.certifier = certifier

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        """The step's turns in order: a tool turn's facts go to quarantine rows, a task
        turn's request to a request row, and every event is certified. The step's record
        lists the certified events only, as it always has (the ledger's rows are observed
        through β_L at the checkpoints)."""
        operations = []
        counter = RecordCounter(self.store)
        principal = self.store.principal
        # Every turn of the step goes to V first, so that a forget later in the step redacts
        # a reply that repeats the value too (docs/method.md §12).
        for turn, speaker in zip(turns, speakers(turns, principal), strict=True):
            self.certifier.evidence.record(
                turn, None if turn.role == "assistant" else speaker, conv.date
            )
        for turn in turns:
            provenance = Provenance(
                turn.id, conv.id, conv.date, speaker=turn_speaker(turn, principal)
            )
            if turn.role == "tool":
                self.certifier.quarantine(turn.id, turn.text, provenance)
            if turn.task is not None:
                self.certifier.request(turn.task, provenance)
            for event in turn.events:
                record = self.certifier.apply(event, provenance, counter)
                operations.append(record.__dict__)
        return StepOutcome(operations)

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        """The derived summary of the point (place.governance.summaries), verified."""
        added = self.certifier.compact(entry, day, RecordCounter(self.store))
        return StepOutcome([{"event_id": None, "op": "summary", "added": added}])

    def fork(self, store: WritableStore) -> CSSWriter:
        return CSSWriter(store, self.certifier.fork(store))

    def restart(self) -> None:
        """Drop everything held in memory and resume from the store and its ledger alone."""
        old = self.certifier
        self.certifier = Certifier.restore(self.store, old.schema, old.readback)

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """Rebuild G and Γ from the store and L (`restart`), then check that L holds every
        event and task request of the steps already completed: a store whose ledger lacks
        one was written by an older place (or not by CSS) and cannot be resumed."""
        self.restart()
        applied = self.certifier.applied
        requested = self.certifier.world.requests
        missing: list[str] = []
        for turns, _conv in done:
            for turn in turns:
                missing += [e.id for e in turn.events if e.id not in applied]
                if turn.task is not None and turn.task.id not in requested:
                    missing.append(f"task {turn.task.id}")
        if missing:
            raise CertificationError(
                f"the store's ledger does not record {missing[:5]}"
                f"{' ...' if len(missing) > 5 else ''}, which the completed steps applied; "
                "the store was written by an older place: start the run in a new directory"
            )


@register_producer("css", display="CSS", governance=True)
def css(store: WritableStore, context: ProducerContext[None]) -> CSSWriter:
    return CSSWriter(store, Certifier(store, context.schema, context.readback))
