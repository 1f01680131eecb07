"""Deletion residue (beyond the paper): after each `forget`, and at the end of the run, every
stored string (Qdrant payloads, Mem0 history) is read for a forgotten value of the slot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from place.lexicon import Lexicon
from place.readback import is_certified
from place.trajectory.model import Event


def residue(
    store: Any, event: Event, values: Sequence[str], lexicon: Lexicon, principal: str
) -> list[str]:
    """Stored strings from which β reads a checked value of the slot's entity."""
    scan = store.scan()
    hits = []
    for point in scan.points:
        meta = point.metadata
        if is_certified(meta):
            if (meta["entity"], meta["predicate"], meta["scope"]) == tuple(event.slot) and meta[
                "value"
            ] in values:
                hits.append(point.text)
        elif names_value(point.text, event, values, lexicon, principal):
            hits.append(point.text)
    for row in scan.history:
        for text in (row.old_memory, row.new_memory):
            if text and names_value(text, event, values, lexicon, principal):
                hits.append(text)
    return sorted(set(hits))


def names_value(
    text: str, event: Event, values: Sequence[str], lexicon: Lexicon, principal: str
) -> bool:
    """Conservative: a forgotten value of the predicate, about the slot's entity."""
    if not set(values) & lexicon.values_in(text, event.predicate):
        return False
    entities = lexicon.entities_in(text) or [principal]
    return event.entity in entities
