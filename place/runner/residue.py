"""Deletion residue (beyond the paper): after each `forget`, and at the end of the run, every
stored string (Qdrant payloads, Mem0 history, the store's side tables such as the ledger L)
is read for a forgotten value of the slot."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from place.lexicon import Lexicon
from place.memory.scan import strings
from place.readback import is_certified, is_summary
from place.trajectory.model import Event

SLOT_KEYS = ("entity", "predicate", "scope")
TEXT_KEYS = ("text",)
"""Side-row keys that hold free text (the evidence log V's `text`, docs/method.md §12): read with
the lexicon like a plain record. Every other key is structured metadata."""


def residue(
    store: Any, event: Event, values: Sequence[str], lexicon: Lexicon, principal: str
) -> list[str]:
    """Stored strings from which β reads a checked value of the slot's entity."""
    return [text for text, _where in residue_where(store, event, values, lexicon, principal)]


def residue_where(
    store: Any, event: Event, values: Sequence[str], lexicon: Lexicon, principal: str
) -> list[tuple[str, str]]:
    """`residue`, each string with where it was found: `point` (a Qdrant payload),
    `summary` (a summary's payload, docs/method.md §11), `history` (Mem0's history
    database), `ledger` (a side-table row), or several of them
    joined by `+` when the same string is in several places. Sorted by string."""
    scan = store.scan()
    found: dict[str, set[str]] = {}
    for point in scan.points:
        meta = point.metadata
        if is_certified(meta):
            if (meta["entity"], meta["predicate"], meta["scope"]) == tuple(event.slot) and meta[
                "value"
            ] in values:
                found.setdefault(point.text, set()).add("point")
        elif names_value(point.text, event, values, lexicon, principal):
            found.setdefault(point.text, set()).add("summary" if is_summary(meta) else "point")
    for row in scan.history:
        for text in (row.old_memory, row.new_memory):
            if text and names_value(text, event, values, lexicon, principal):
                found.setdefault(text, set()).add("history")
    for side in getattr(scan, "tables", ()):
        if side_row_holds(side.metadata, event, values, lexicon, principal):
            text = f"{side.id} {json.dumps(dict(side.metadata), sort_keys=True)}"
            found.setdefault(text, set()).add(side.table)
    return [(text, "+".join(sorted(found[text]))) for text in sorted(found)]


def side_row_holds(
    metadata: Mapping[str, Any],
    event: Event,
    values: Sequence[str],
    lexicon: Lexicon,
    principal: str,
) -> bool:
    """Whether a side-table row (a ledger row of L, ...) holds a checked value of the slot.

    Side rows are metadata, read by key as certified records are: a row that names the
    slot (its `entity`, `predicate`, `scope`) holds a value when any string of its metadata
    is one; free text (`TEXT_KEYS`) is read with the lexicon as a plain record's text. So a
    deletion row (event id and slot) holds none, and an unredacted conflict or quarantine
    row of the slot does."""
    if tuple(metadata.get(k) for k in SLOT_KEYS) == tuple(event.slot):
        held = strings([v for k, v in metadata.items() if k not in TEXT_KEYS])
        if set(values) & set(held):
            return True
    # The events an evidence entry (V, docs/method.md §12) keeps: read by key, like a row.
    for fields in metadata.get("events") or ():
        if (
            isinstance(fields, Mapping)
            and tuple(fields.get(k) for k in SLOT_KEYS) == tuple(event.slot)
            and fields.get("value") in values
        ):
            return True
    return any(
        names_value(text, event, values, lexicon, principal)
        for key in TEXT_KEYS
        for text in strings(metadata.get(key))
    )


def names_value(
    text: str, event: Event, values: Sequence[str], lexicon: Lexicon, principal: str
) -> bool:
    """Conservative: a forgotten value of the predicate, about the slot's entity."""
    if not set(values) & lexicon.values_in(text, event.predicate):
        return False
    entities = lexicon.entities_in(text) or [principal]
    return event.entity in entities
