"""Plain summaries at compaction points (docs/method.md §11, "Derived summaries").

At a compaction point (entity, scope), a producer without a certifier (native, append,
extract) writes one record joining, one per line, the texts of its records that β reads as
holding a fact of that entity in that scope, oldest first. It is written once and never
revisited: a later forget leaves it as it is, which is the summary residue AOEP-v0's fault
pattern c4 is about. CSS writes a derived summary instead (place.governance.summaries).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from place.producers.registry import RecordCounter, StepOutcome, written, written_order
from place.readback import SOURCE_TURNS, SUMMARY_KEYS, SUMMARY_MARKER, Readback, is_summary
from place.trajectory.model import Compaction

if TYPE_CHECKING:
    from place.memory.item import WritableStore


def summary_names(entry: Compaction) -> dict[str, str]:
    """The keys every summary carries: the compaction entry's entity, scope and turn."""
    return dict(zip(SUMMARY_KEYS, (entry.entity, entry.scope, entry.after), strict=True))


def plain_summary(
    store: WritableStore, readback: Readback, entry: Compaction, day: dt.date
) -> StepOutcome:
    """Write the plain summary of `entry` (nothing when no record holds such a fact)."""
    group = [
        point
        for point in store.scan().points
        if not is_summary(point.metadata)
        and any(
            f.entity == entry.entity and f.scope == entry.scope
            for f, _readable in readback.held_facts(point, day)
        )
    ]
    if not group:
        return StepOutcome()
    text = "\n".join(p.text for p in sorted(group, key=lambda p: written_order(p.id, p.metadata)))
    # The summary speaks for its entity: a line naming no one is read as about it.
    ordered = sorted(group, key=lambda p: written_order(p.id, p.metadata))
    sources = list(dict.fromkeys(t for p in ordered for t in p.metadata.get(SOURCE_TURNS) or ()))
    meta = {
        **written(day, RecordCounter(store).take(), entry.entity, sources),
        SUMMARY_MARKER: "1",
        **summary_names(entry),
    }
    memory_id = store.add_record(text, meta)
    return StepOutcome([{"id": memory_id, "event": "SUMMARY", "memory": text}])
