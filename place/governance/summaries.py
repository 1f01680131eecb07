"""CSS's derived summaries (docs/method.md §11, "Derived summaries"; §14's derived records).

At a compaction point (entity, scope) CSS writes one derived record of the group's active
facts: one rendered line per fact, and in its metadata each fact with its lifecycle, owner
and visibility, the event ids it was built from (`sources`), a `version` and the recipe it
is rebuilt by. β reads the facts from the metadata (active and unexpired ones only), so a
summary never changes S^phys.

A summary follows its sources: after every certified write, a summary whose sources no
longer hold exactly what it says (a source superseded, retracted, forgotten, or its
visibility changed) is rebuilt from the sources that are still active. Every version is a
new record and the old one is removed physically, point and history (decision: nothing of
an old version remains, whatever made it old, so a forgotten value never survives in one).
A summary left with no active source is removed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from place.eligibility import expired
from place.readback import DERIVED_FACTS, DERIVED_MARKER, SUMMARY_KEYS, is_derived
from place.reference.lifecycle import FactRecord
from place.trajectory.model import Compaction, Schema

SOURCES = "sources"
VERSION = "summary_version"
REBUILD = "rebuild"
RECIPE = "active facts of (summary_entity, summary_scope) among sources, rendered one per line"
SUMMARY_CLASS = "summary_class"
"""Metadata key set only on §14's archive summaries (value `ARCHIVE`): a derived record kept
apart from the compaction summary of the same (entity, scope) (docs/method.md, amendment
10). A compaction summary has no such key, so CSS's records are unchanged."""
ARCHIVE = "archive"


def is_archive(metadata: Any) -> bool:
    """An archive summary of §14's bounded producer (not a compaction summary)."""
    return bool(metadata.get(SUMMARY_CLASS) == ARCHIVE)


class SummaryStore(Protocol):
    def add_record(self, text: str, metadata: dict[str, Any]) -> str: ...
    def remove(self, memory_ids: list[str]) -> None: ...


class Counter(Protocol):
    def take(self) -> int: ...


@dataclass(frozen=True)
class Held:
    """A derived summary as stored: its record id and metadata."""

    id: str
    metadata: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        return (str(self.metadata["summary_entity"]), str(self.metadata["summary_scope"]))


FactMetadata = Callable[[FactRecord], dict[str, Any]]
"""A source record's line of metadata: its lifecycle, event id, owner and visibility."""
Render = Callable[[Schema, FactRecord], str]


class DerivedSummaries:
    """The derived summaries of one CSS store, kept equal to its sources."""

    def __init__(self, store: SummaryStore, schema: Schema, render: Render) -> None:
        self.store = store
        self.schema = schema
        self.render = render
        self.held: dict[tuple[str, str], Held] = {}

    def fork(self, store: SummaryStore) -> DerivedSummaries:
        twin = DerivedSummaries(store, self.schema, self.render)
        twin.held = dict(self.held)
        return twin

    def adopt(self, points: Iterable[Any]) -> None:
        """Learn the summaries a store holds (a restart or a resumed run)."""
        for point in points:
            if is_derived(point.metadata) and not is_archive(point.metadata):
                held = Held(point.id, dict(point.metadata))
                self.held[held.key] = held

    def compact(
        self,
        entry: Compaction,
        records: Sequence[FactRecord],
        line: FactMetadata,
        day: dt.date,
        sequence: Counter | None,
    ) -> list[str]:
        """Write the summary of `entry` from the group's active, unexpired records (nothing
        when there are none). Returns the ids added; a summary of the same (entity, scope)
        written earlier is replaced."""
        group = [
            r
            for r in records
            if r.entity == entry.entity
            and r.scope == entry.scope
            and r.status == "active"
            and not expired(r.valid_until, day)
        ]
        old = self.held.pop((entry.entity, entry.scope), None)
        if old is not None:
            self.store.remove([old.id])
        if not group:
            return []
        version = 1 if old is None else int(old.metadata[VERSION]) + 1
        return [
            self._write(entry.entity, entry.scope, entry.after, group, line, day, sequence, version)
        ]

    def sync(
        self,
        records: Sequence[FactRecord],
        line: FactMetadata,
        day: dt.date,
        sequence: Counter | None,
    ) -> tuple[list[str], list[str]]:
        """Rebuild every summary whose sources changed. Returns (removed ids, added ids)."""
        removed: list[str] = []
        added: list[str] = []
        by_event = {r.event_id: r for r in records}
        for key, held in sorted(self.held.items()):
            sources = [str(e) for e in held.metadata.get(SOURCES) or ()]
            keep = [
                by_event[e] for e in sources if e in by_event and by_event[e].status == "active"
            ]
            if [line(r) for r in keep] == list(held.metadata.get(DERIVED_FACTS) or ()):
                continue
            self.store.remove([held.id])
            removed.append(held.id)
            del self.held[key]
            if keep:
                after = str(held.metadata["summary_after"])
                version = int(held.metadata[VERSION]) + 1
                added.append(self._write(*key, after, keep, line, day, sequence, version))
        return removed, added

    def _write(
        self,
        entity: str,
        scope: str,
        after: str,
        group: Sequence[FactRecord],
        line: FactMetadata,
        day: dt.date,
        sequence: Counter | None,
        version: int,
    ) -> str:
        text = "\n".join(self.render(self.schema, r) for r in group)
        order = {} if sequence is None else {"written_seq": sequence.take()}
        meta: dict[str, Any] = {
            DERIVED_MARKER: "1",
            **dict(zip(SUMMARY_KEYS, (entity, scope, after), strict=True)),
            DERIVED_FACTS: [line(r) for r in group],
            SOURCES: [r.event_id for r in group],
            VERSION: version,
            REBUILD: RECIPE,
            "written_on": day.isoformat(),
            **order,
            # The summary speaks for its entity (docs/decisions.md, "Summaries").
            "speaker": entity,
        }
        memory_id = self.store.add_record(text, meta)
        held = Held(memory_id, meta)
        self.held[held.key] = held
        return memory_id

    def problems(self, points: Iterable[Any]) -> list[str]:
        """The store's compaction summaries must be exactly the ones held, as written
        (archive summaries are checked by their own keeper, place.governance.bounded)."""
        stored = {
            p.id: dict(p.metadata)
            for p in points
            if is_derived(p.metadata) and not is_archive(p.metadata)
        }
        expected = {h.id: h.metadata for h in self.held.values()}
        if set(stored) != set(expected):
            return [f"derived summaries {sorted(stored)} != expected {sorted(expected)}"]
        wrong = [i for i in stored if stored[i].get(DERIVED_FACTS) != expected[i][DERIVED_FACTS]]
        return [f"derived summaries whose facts differ: {wrong}"] if wrong else []
