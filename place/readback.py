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

    @property
    def fact(self) -> Fact:
        return Fact(self.entity, self.predicate, self.value, self.scope)


def _date(raw: Any) -> dt.date | None:
    return None if raw in (None, "") else dt.date.fromisoformat(str(raw))


def is_certified(metadata: Mapping[str, Any]) -> bool:
    return metadata.get(LIFECYCLE_MARKER) == LIFECYCLE_VERSION


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
        if is_certified(meta):
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
            )
            return ((fact, status == "active" and not expired(until, day)),)
        # Plain text: QASC cannot know better than "active, open window".
        return tuple(
            (ReadFact(f.entity, f.predicate, f.value, f.scope, "active", None, None, False), True)
            for f in sorted(self.lexicon.read(record.text))
        )

    def read_record(self, record: StoredRecord, day: dt.date) -> tuple[ReadFact, ...]:
        """β of one record on `day`: only active, unexpired facts."""
        return tuple(f for f, readable in self.held_facts(record, day) if readable)

    def state(self, records: Iterable[StoredRecord], day: dt.date) -> frozenset[Fact]:
        """S^phys = β(X, day)."""
        return frozenset(rf.fact for r in records for rf in self.read_record(r, day))

    def predicate_facts(
        self, record: StoredRecord, predicate: str, day: dt.date
    ) -> tuple[ReadFact, ...]:
        """β of `record` on `day`, restricted to one predicate: what E is decided on
        (place.eligibility.admits). A plain record is read for just that predicate (β per
        predicate is the cost) and counts as active with an open window."""
        meta = record.metadata or {}
        if is_certified(meta):
            return tuple(f for f in self.read_record(record, day) if f.predicate == predicate)
        return tuple(
            ReadFact(f.entity, f.predicate, f.value, f.scope, "active", None, None, False)
            for f in self.lexicon.read(record.text, predicate)
        )
