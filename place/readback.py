"""The readback β: physical records -> facts (docs/method.md §2).

A record written by the certifier carries lifecycle metadata and is read from it; any
other record is read from its text with the trajectory's lexicon. β is deterministic, never
produces a value absent from the record, and never reads the reference state. It is shared
by the evaluator (S^phys, exposure, support) and by the read authorizer (QASC).

Decision (documented in docs/decisions.md): β reads the *current records* (Qdrant points).
Mem0's history database is an audit trail; it is scanned for deletion residue, not read
as state.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from place.eligibility import expired
from place.lexicon import Lexicon
from place.trajectory.model import Fact

SOURCE_TURNS = "source_turns"
"""Metadata key: the turn ids a producer wrote a plain record from (docs/method.md §16)."""

LIFECYCLE_MARKER = "place_lifecycle"
"""Metadata key whose presence marks a certified record; its value is the metadata version."""
LIFECYCLE_VERSION = "1"
LIFECYCLE_KEYS: tuple[str, ...] = (
    "entity",
    "predicate",
    "value",
    "scope",
    "status",
    "valid_from",
    "valid_until",
)
OWNER = "owner"
"""Lifecycle key of a certified record (docs/method.md §11): the principal who owns it (the
speaker of the event that made it). Absent: the principal."""
VISIBLE_TO = "visible_to"
"""Lifecycle key of a certified record (docs/method.md §11): the principals who see it, sorted
(its owner and those its slot is shared with). Absent: the principal alone."""
VISIBILITY_KEYS: tuple[str, ...] = (OWNER, VISIBLE_TO)
"""Kept apart from `LIFECYCLE_KEYS` (what the run records copy of an exposed record), so
that adding them moved no record of a trajectory with one principal, where they are absent."""


def record_owner(metadata: Mapping[str, Any], principal: str) -> str:
    """A certified record's owner: its `owner`, else the principal."""
    owner = metadata.get(OWNER)
    return str(owner) if owner else principal


def record_visible_to(metadata: Mapping[str, Any], principal: str) -> tuple[str, ...]:
    """A certified record's `visible_to` (sorted), else the principal alone."""
    raw = metadata.get(VISIBLE_TO)
    if not raw:
        return (principal,)
    names = [raw] if isinstance(raw, str) else list(raw)
    return tuple(sorted({str(n) for n in names}))


class StoredRecord(Protocol):
    """What β needs from a physical record: its text and its metadata."""

    @property
    def text(self) -> str: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class ReadFact:
    """A fact read from one record, with the lifecycle the record carries."""

    entity: str
    predicate: str
    value: str
    scope: str
    status: str
    valid_from: dt.date | None
    valid_until: dt.date | None
    certified: bool
    """True when read from lifecycle metadata, False when read from text."""
    owner: str | None = None
    """Certified: the record's `owner` (absent: the principal). Plain: None."""
    visible_to: tuple[str, ...] | None = None
    """Certified: the record's `visible_to` (absent: the principal alone). Plain: None (E's
    reading of plain records, visible to their speaker, is docs/method.md §11's, not β's)."""

    @property
    def fact(self) -> Fact:
        return Fact(self.entity, self.predicate, self.value, self.scope)


def _date(raw: Any) -> dt.date | None:
    return None if raw in (None, "") else dt.date.fromisoformat(str(raw))


SPEAKER = "speaker"
"""Metadata key every producer writes: who said (or forwarded) what the record holds."""


def speaker_of(metadata: Mapping[str, Any]) -> str | None:
    """A record's `speaker` (None: not written, i.e. the principal)."""
    speaker = metadata.get(SPEAKER)
    return str(speaker) if speaker else None


def is_certified(metadata: Mapping[str, Any]) -> bool:
    return metadata.get(LIFECYCLE_MARKER) == LIFECYCLE_VERSION


# --- summaries (docs/method.md §11, "Derived summaries") ------------------------------------

SUMMARY_MARKER = "place_summary"
"""Metadata key of a plain summary (native, append, extract at a compaction point): its
record texts joined by newlines, each line read as its own record."""
DERIVED_MARKER = "place_derived"
"""Metadata key of CSS's derived summary: its facts, each with its lifecycle, are in
`DERIVED_FACTS`; β reads those, never the text."""
DERIVED_FACTS = "facts"
SUMMARY_KEYS = ("summary_entity", "summary_scope", "summary_after")
"""What every summary names: the compaction entry's entity and scope, and its turn."""


def is_summary(metadata: Mapping[str, Any]) -> bool:
    """A summary of either kind: producers that revisit their records leave these alone."""
    return bool(metadata.get(SUMMARY_MARKER) or metadata.get(DERIVED_MARKER))


def is_derived(metadata: Mapping[str, Any]) -> bool:
    return bool(metadata.get(DERIVED_MARKER))


def lifecycle_fact(meta: Mapping[str, Any], principal: str, day: dt.date) -> tuple[ReadFact, bool]:
    """A fact from lifecycle metadata (a certified record's, or one line of a derived
    summary's), with whether β yields it on `day` (active and unexpired)."""
    status = str(meta.get("status"))
    until = _date(meta.get("valid_until"))
    fact = ReadFact(
        str(meta["entity"]),
        str(meta["predicate"]),
        str(meta["value"]),
        str(meta["scope"]),
        status,
        _date(meta.get("valid_from")),
        until,
        True,
        record_owner(meta, principal),
        record_visible_to(meta, principal),
    )
    return fact, status == "active" and not expired(until, day)


class Readback:
    """β for one trajectory's lexicon."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon

    def held_facts(self, record: StoredRecord, day: dt.date) -> tuple[tuple[ReadFact, bool], ...]:
        """Every fact the record holds, whatever its lifecycle, each with whether β yields it.

        A certified record holds its fact even when superseded or expired (β then yields
        nothing); exposure of such a record is exposure of an ineligible fact.
        """
        meta = record.metadata or {}
        principal = self.lexicon.principal
        if is_derived(meta):
            # A derived summary: its listed facts (docs/method.md §14), never its text.
            return tuple(
                lifecycle_fact(raw, principal, day) for raw in meta.get(DERIVED_FACTS) or ()
            )
        if is_certified(meta):
            return (lifecycle_fact(meta, principal, day),)
        # Plain text: QASC cannot know better than "active, open window".
        return tuple(
            (ReadFact(f.entity, f.predicate, f.value, f.scope, "active", None, None, False), True)
            for f in sorted(self._plain_facts(record.text, meta))
        )

    def _plain_facts(
        self, text: str, meta: Mapping[str, Any], predicate: str | None = None
    ) -> set[Fact]:
        """β of a plain record's text; a plain summary's lines each as their own record."""
        speaker = speaker_of(meta)
        if meta.get(SUMMARY_MARKER):
            return {
                f
                for line in text.split("\n")
                for f in self.lexicon.read_as(line, speaker, predicate)
            }
        return set(self.lexicon.read_as(text, speaker, predicate))

    def read_record(self, record: StoredRecord, day: dt.date) -> tuple[ReadFact, ...]:
        """β of one record on `day`: only active, unexpired facts."""
        return tuple(f for f, readable in self.held_facts(record, day) if readable)

    def state(self, records: Iterable[StoredRecord], day: dt.date) -> frozenset[Fact]:
        """S^phys = β(X, day)."""
        return frozenset(rf.fact for r in records for rf in self.read_record(r, day))

    def held_predicate_facts(
        self, record: StoredRecord, predicate: str, day: dt.date
    ) -> tuple[tuple[ReadFact, bool], ...]:
        """`held_facts` restricted to one predicate: what E is decided on
        (place.eligibility.admits). A plain record is read for just that predicate (β per
        predicate is the cost) and counts as active with an open window."""
        meta = record.metadata or {}
        if is_certified(meta) or is_derived(meta):
            return tuple(
                (f, r) for f, r in self.held_facts(record, day) if f.predicate == predicate
            )
        return tuple(
            (ReadFact(f.entity, f.predicate, f.value, f.scope, "active", None, None, False), True)
            for f in sorted(self._plain_facts(record.text, meta, predicate))
        )

    def visible_to(self, record: StoredRecord) -> tuple[str, ...]:
        """Who may see a record (docs/method.md §11): a certified record's `visible_to` (its
        owner and those its slot is shared with; absent: the principal), a plain record's
        speaker alone (a plain store keeps no share table; absent: the principal)."""
        meta = record.metadata or {}
        if is_certified(meta):
            return record_visible_to(meta, self.lexicon.principal)
        if is_derived(meta):
            # Those who may see every line (decision: a summary is shown whole or not at all).
            lines = meta.get(DERIVED_FACTS) or ()
            seen = [set(record_visible_to(raw, self.lexicon.principal)) for raw in lines]
            return tuple(sorted(set.intersection(*seen))) if seen else ()
        return (speaker_of(meta) or self.lexicon.principal,)
