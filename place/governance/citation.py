"""The citation lock's evidence test and the provenance audit (docs/method.md §12.2, §12.4).

A certified record points into the evidence log V by its `source_turn`; a derived summary
points through its sources (the event ids of the records it folds). Opening a pointer means
looking V's entry up by that key, never searching V. An entry *supports* a fact when it
exists, is `trusted` (a user turn), and β over its text, read as its speaker, yields the
fact. From that test come the lock (`cited`, place/policies/cited.py) and the audit classes:
*openable* (the pointer supports the record), *pointer-only* (a pointer that fails) and
*orphaned* (no pointer: every plain record, whatever producer wrote it).

Which records the lock applies to is `cons(m)`: a record holding a fact of a consequential
predicate (type `money`, marked `consequential`, or named in a task's `needs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from place.governance.evidence import EVIDENCE
from place.governance.summaries import SOURCES
from place.lexicon import Lexicon
from place.memory.tables import SideRow
from place.readback import DERIVED_FACTS, SOURCE_TURNS, is_certified, is_derived
from place.records import ProvenanceClass
from place.trajectory.model import Fact, Trajectory

POINTER = "source_turn"
"""A certified record's pointer into V: the turn its event came in."""
TRUSTED = "trusted"


@dataclass(frozen=True)
class Evidence:
    """V opened by key: its entries by turn id, and by the ids of the events they hold (the
    key a derived summary's source names)."""

    by_turn: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    by_event: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, store: Any) -> Evidence:
        """V of `store` (empty for a store without one: every producer but CSS)."""
        rows = store.side_rows(EVIDENCE) if hasattr(store, "side_rows") else ()
        return cls.from_rows(rows)

    @classmethod
    def from_rows(cls, rows: Iterable[SideRow]) -> Evidence:
        by_turn: dict[str, Mapping[str, Any]] = {}
        by_event: dict[str, Mapping[str, Any]] = {}
        for row in rows:
            meta = row.metadata
            by_turn[str(meta.get("turn"))] = meta
            for event in meta.get("events") or ():
                by_event[str(event.get("id"))] = meta
        return cls(by_turn, by_event)


def supports(entry: Mapping[str, Any] | None, fact: Fact, lexicon: Lexicon) -> bool:
    """Open(m) supports the fact: the entry exists, is trusted, and β over its text, read as
    its speaker, yields the fact."""
    if entry is None or entry.get("trust") != TRUSTED:
        return False
    speaker = entry.get("speaker")
    read = lexicon.read_as(str(entry.get("text") or ""), speaker and str(speaker), fact.predicate)
    return fact in read


def _fact(meta: Mapping[str, Any]) -> Fact:
    return Fact(str(meta["entity"]), str(meta["predicate"]), str(meta["value"]), str(meta["scope"]))


def pointer(meta: Mapping[str, Any]) -> str | None:
    """The record's pointer into V: a certified record's `source_turn`; a derived summary's
    sources joined (its pointer is its list of sources); None for a plain record."""
    if is_derived(meta):
        sources = [str(s) for s in meta.get(SOURCES) or ()]
        return ",".join(sources) if sources else None
    if is_certified(meta):
        turn = meta.get(POINTER)
        return None if turn in (None, "") else str(turn)
    return None


def source_turns(meta: Mapping[str, Any]) -> list[str]:
    """The turns a stored record was written from (docs/method.md §16): a plain record's
    `source_turns`, else its pointer's turns (a certified record's source turn, a derived
    summary's sources); [] when the record says nothing of its origin."""
    turns = meta.get(SOURCE_TURNS)
    if isinstance(turns, (list, tuple)):
        return [str(t) for t in turns]
    found = pointer(meta)
    return found.split(",") if found else []


def cited(meta: Mapping[str, Any], evidence: Evidence, lexicon: Lexicon) -> bool:
    """cited(m) (docs/method.md §12.3): a certified record whose pointer supports its fact,
    or a derived summary each of whose active facts is supported through one of its sources.
    A plain record has no pointer and is never cited."""
    if is_derived(meta):
        sources = [str(s) for s in meta.get(SOURCES) or ()]
        active = [line for line in meta.get(DERIVED_FACTS) or () if line.get("status") == "active"]
        if not sources:
            return False
        return all(
            any(supports(evidence.by_event.get(s), _fact(line), lexicon) for s in sources)
            for line in active
        )
    if is_certified(meta):
        turn = pointer(meta)
        return turn is not None and supports(evidence.by_turn.get(turn), _fact(meta), lexicon)
    return False


def provenance(meta: Mapping[str, Any], evidence: Evidence, lexicon: Lexicon) -> ProvenanceClass:
    """The record's audit class (docs/method.md §12.4)."""
    if pointer(meta) is None:
        return "orphaned"
    return "openable" if cited(meta, evidence, lexicon) else "pointer_only"


def consequential_predicates(traj: Trajectory) -> frozenset[str]:
    """The predicates cons(m) locks: type money, marked consequential, or needed by a task."""
    marked = {
        pid for pid, p in traj.schema.predicates.items() if p.consequential or p.type == "money"
    }
    needed = {need.predicate for _c, _t, task in traj.tasks() for need in task.needs}
    return frozenset(marked | needed)


def is_consequential(predicates: Iterable[str], consequential: frozenset[str]) -> bool:
    """cons(m) for a record holding facts of `predicates`."""
    return any(p in consequential for p in predicates)
