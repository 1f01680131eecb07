"""The evidence log V (docs/method.md §12): what every delivered turn said, kept
by CSS beside its state as a side table of its row store (`evidence`).

One entry per turn CSS is given to write, keyed by turn id: role, speaker, source, text,
events, trust (`trusted` for a user turn, `untrusted` for a tool turn, `none` for an
assistant reply) and the date. V is append-only (a redelivery adds nothing), never searched
and never read as state; a certified record's `source_turn` points into it, which is what
the citation lock of §12 opens. A `forget` redacts, in every entry, the spans from which β
reads a forgotten value of the slot's entity (`[forgotten]`), and the forgotten values of
the slot's events, so the deletion-residue check finds nothing there.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from place.lexicon import Lexicon
from place.memory.tables import SideRow
from place.trajectory.model import Event, Turn

EVIDENCE = "evidence"
"""The side table of V."""
REDACTED = "[forgotten]"
TRUST = {"user": "trusted", "tool": "untrusted", "assistant": "none"}


class EvidenceStore(Protocol):
    def add_side_row(self, table: str, metadata: dict[str, Any]) -> str: ...
    def update_side_row(self, table: str, row_id: str, changes: dict[str, Any]) -> None: ...
    def side_rows(self, table: str) -> tuple[SideRow, ...]: ...


def event_fields(event: Event) -> dict[str, Any]:
    """An event as V keeps it: its id, op and the keys it names (None left out)."""
    fields = {
        "id": event.id,
        "op": event.op,
        "entity": event.entity or None,
        "predicate": event.predicate or None,
        "scope": event.scope if event.has_slot else None,
        "value": event.value,
        "valid_from": event.valid_from.isoformat() if event.valid_from else None,
        "valid_until": event.valid_until.isoformat() if event.valid_until else None,
    }
    return {k: v for k, v in fields.items() if v is not None}


def entry(turn: Turn, speaker: str | None, day: dt.date) -> dict[str, Any]:
    """V's entry for one delivered turn."""
    return {
        "turn": turn.id,
        "role": turn.role,
        "speaker": speaker,
        "source": turn.source,
        "text": turn.text,
        "events": [event_fields(e) for e in turn.events],
        "trust": TRUST[turn.role],
        "written_on": day.isoformat(),
    }


class EvidenceLog:
    """V of one CSS store: appends entries and redacts them on forget."""

    def __init__(self, store: EvidenceStore) -> None:
        self.store = store
        self.ids: dict[str, str] = {}
        """turn id -> its row id."""

    def fork(self, store: EvidenceStore) -> EvidenceLog:
        """V of a clone (a clone copies the side tables, ids included)."""
        twin = EvidenceLog(store)
        twin.ids = dict(self.ids)
        return twin

    def adopt(self, rows: Sequence[SideRow]) -> None:
        """Learn the entries a store holds (a restart or a resumed run)."""
        self.ids = {str(r.metadata["turn"]): r.id for r in rows}

    def record(
        self, turn: Turn, speaker: str | None, day: dt.date, conversation: str | None = None
    ) -> str | None:
        """Append the turn's entry; a redelivery, or a turn already logged (a resumed, partial
        step), adds nothing (None). `conversation`, when given, is kept too (SSGM's
        reconciliation rebuilds records, and their provenance, from V alone)."""
        if turn.redelivers is not None or turn.id in self.ids:
            return None
        row = entry(turn, speaker, day)
        if conversation is not None:
            row["conversation"] = conversation
        self.ids[turn.id] = self.store.add_side_row(EVIDENCE, row)
        return self.ids[turn.id]

    def redact(
        self, event: Event, values: Sequence[str], lexicon: Lexicon, principal: str
    ) -> list[str]:
        """After a forget of `event`'s slot: every entry's spans that name one of `values` about
        the slot's entity become `[forgotten]`, and so do those values in the slot's events.
        Returns the ids of the rows rewritten."""
        changed = []
        for row in self.store.side_rows(EVIDENCE):
            meta = row.metadata
            text = redact_text(str(meta.get("text") or ""), event, values, lexicon, principal)
            events = [redact_event(e, event, values) for e in meta.get("events") or ()]
            if text != meta.get("text") or events != list(meta.get("events") or ()):
                self.store.update_side_row(EVIDENCE, row.id, {"text": text, "events": events})
                changed.append(row.id)
        return changed


def redact_text(
    text: str, event: Event, values: Sequence[str], lexicon: Lexicon, principal: str
) -> str:
    """`text` with every span from which β reads one of `values` of the event's predicate
    replaced, when the text is about the slot's entity (the entities it names, else
    `principal`: the reading of the deletion-residue check)."""
    if not text:
        return text
    entities = lexicon.entities_in(text) or [principal]
    if event.entity not in entities:
        return text
    spans = sorted(
        (m.start, m.end) for m in lexicon.matches(text, event.predicate) if m.value in values
    )
    out, at = [], 0
    for start, end in spans:
        if start < at:
            continue  # overlapping matches: the first one covers it
        out += [text[at:start], REDACTED]
        at = end
    return "".join([*out, text[at:]])


def redact_event(fields: Mapping[str, Any], event: Event, values: Sequence[str]) -> dict[str, Any]:
    """An event of V with a forgotten value of the forgotten slot redacted."""
    out = dict(fields)
    slot = (out.get("entity"), out.get("predicate"), out.get("scope"))
    if slot == tuple(event.slot) and out.get("value") in values:
        out["value"] = REDACTED
    return out
