"""Summaries at compaction points (docs/method.md §11, "Derived summaries"): how β reads a
plain and a derived summary, and how CSS's derived summary follows its sources. The store
here is a FAKE (a dict); the real-stack run is tests/integration/test_governance_run.py."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from place.governance.certifier import render
from place.governance.summaries import SOURCES, VERSION, DerivedSummaries
from place.lexicon import Lexicon
from place.readback import DERIVED_FACTS, DERIVED_MARKER, SUMMARY_MARKER, Readback
from place.reference.lifecycle import FactRecord
from place.reference.validate import load_trajectory
from place.trajectory.model import Compaction, Fact

PILOT = load_trajectory(Path(__file__).parents[2] / "trajectories" / "aoep-pilot.yaml")
BETA = Readback(Lexicon(PILOT.schema, PILOT.principal))
DAY = dt.date(2026, 6, 22)


@dataclass(frozen=True)
class Item:
    id: str
    text: str
    metadata: dict[str, Any]


@dataclass
class FakeStore:
    """FAKE row store: records in a dict, ids counted."""

    records: dict[str, Item] = field(default_factory=dict)

    def add_record(self, text: str, metadata: dict[str, Any]) -> str:
        memory_id = f"m{len(self.records) + 1:03d}-{text[:8]}"
        self.records[memory_id] = Item(memory_id, text, dict(metadata))
        return memory_id

    def remove(self, memory_ids: list[str]) -> None:
        for memory_id in memory_ids:
            del self.records[memory_id]

    @property
    def points(self) -> list[Item]:
        return list(self.records.values())


def record(predicate: str, value: str, event: str, **kw: Any) -> FactRecord:
    fields: dict[str, Any] = dict(status="active", valid_from=None, valid_until=None)
    fields.update(kw)
    return FactRecord("nora", predicate, value, "global", event_id=event, version=1, **fields)


def line(r: FactRecord) -> dict[str, Any]:
    return {
        "entity": r.entity,
        "predicate": r.predicate,
        "value": r.value,
        "scope": r.scope,
        "status": r.status,
        "valid_from": None,
        "valid_until": r.valid_until.isoformat() if r.valid_until else None,
        "event_id": r.event_id,
    }


def test_a_plain_summary_is_read_line_by_line_as_its_entity() -> None:
    text = "Theo's salary is 4100 EUR a month.\nMy therapist is Dr Lind."
    plain = Item("s", text, {SUMMARY_MARKER: "1", "speaker": "nora"})
    assert BETA.state([plain], DAY) == {
        Fact("theo", "salary", "4100 EUR", "global"),
        Fact("nora", "therapist", "Dr Lind", "global"),  # the line names no one: its entity's
    }
    assert BETA.visible_to(plain) == ("nora",)
    # Read as one record, the text would give Theo the therapist too.
    whole = BETA.state([Item("r", text, {"speaker": "nora"})], DAY)
    assert Fact("theo", "therapist", "Dr Lind", "global") in whole


def test_beta_reads_a_derived_summary_from_its_facts_never_its_text() -> None:
    active = record("therapist", "Dr Lind", "e1")
    ended = record("therapist", "Dr Berg", "e0", status="superseded")
    lapsed = record("door_code", "2718", "e2", valid_until=dt.date(2026, 6, 1))
    derived = Item(
        "d",
        "Nora's therapist is Dr Berg",  # the text is not what β reads
        {DERIVED_MARKER: "1", DERIVED_FACTS: [line(active), line(ended), line(lapsed)]},
    )
    assert BETA.state([derived], DAY) == {Fact("nora", "therapist", "Dr Lind", "global")}
    held = {(f.value, readable) for f, readable in BETA.held_facts(derived, DAY)}
    assert held == {("Dr Lind", True), ("Dr Berg", False), ("2718", False)}
    assert BETA.visible_to(derived) == (PILOT.principal,)
    shared = dict(line(active), owner="nora", visible_to=["nora", "theo"])
    only_nora = dict(line(lapsed), owner="nora", visible_to=["nora"])
    both = Item("d2", "", {DERIVED_MARKER: "1", DERIVED_FACTS: [shared, only_nora]})
    assert BETA.visible_to(both) == ("nora",)  # shown whole: those who may see every line


def test_a_derived_summary_follows_its_sources_and_leaves_no_old_version() -> None:
    store = FakeStore()
    summaries = DerivedSummaries(store, PILOT.schema, render)
    lind = record("therapist", "Dr Lind", "e1")
    code = record("door_code", "2718", "e2")
    other = FactRecord("theo", "salary", "4100 EUR", "global", "active", None, None, "e3", 1)
    entry = Compaction("c4-02", "nora")
    (first,) = summaries.compact(entry, [lind, code, other], line, DAY, None)
    meta = store.records[first].metadata
    assert meta[SOURCES] == ["e1", "e2"] and meta[VERSION] == 1
    assert store.records[first].text.split("\n") == [render(PILOT.schema, r) for r in (lind, code)]
    assert summaries.sync([lind, code, other], line, DAY, None) == ([], [])  # nothing moved
    assert summaries.problems(store.points) == []

    # A forget removes e1: the summary is rebuilt from e2 alone, the old version is gone.
    removed, added = summaries.sync([code, other], line, DAY, None)
    assert removed == [first] and len(added) == 1 and first not in store.records
    rebuilt = store.records[added[0]]
    assert rebuilt.metadata[SOURCES] == ["e2"] and rebuilt.metadata[VERSION] == 2
    assert "Dr Lind" not in rebuilt.text
    assert all("Dr Lind" not in str(i.metadata) for i in store.points)

    # A source superseded leaves the summary too; with no source left, the summary goes.
    superseded = record("door_code", "2718", "e2", status="superseded")
    assert summaries.sync([superseded], line, DAY, None) == ([added[0]], [])
    assert store.records == {} and summaries.problems(store.points) == []


def test_verification_sees_a_derived_summary_that_drifted() -> None:
    store = FakeStore()
    summaries = DerivedSummaries(store, PILOT.schema, render)
    (kept,) = summaries.compact(
        Compaction("c4-02", "nora"), [record("therapist", "Dr Lind", "e1")], line, DAY, None
    )
    store.records[kept].metadata[DERIVED_FACTS] = []  # changed behind the certifier's back
    assert summaries.problems(store.points) == [f"derived summaries whose facts differ: {[kept]}"]
    store.remove([kept])
    assert summaries.problems(store.points) == [f"derived summaries [] != expected {[kept]}"]


def test_qasc_does_not_admit_a_summary_that_lists_an_ended_fact_of_the_predicate() -> None:
    # Found by the replication study (seed 3): a derived summary listed an expired value of
    # the queried slot beside its current one; admitted on the current one, it showed the
    # answer model the expired value as well (experiments/README.md).
    from place.eligibility import Interpretation, admits, is_ineligible_exposure

    current = record("therapist", "Dr Lind", "e1")
    lapsed = record("therapist", "Dr Berg", "e0", valid_until=dt.date(2026, 6, 1))
    tau = Interpretation("nora", "therapist", "global", DAY)
    clean = Item("c", "", {DERIVED_MARKER: "1", DERIVED_FACTS: [line(current)]})
    mixed = Item("m", "", {DERIVED_MARKER: "1", DERIVED_FACTS: [line(current), line(lapsed)]})
    assert admits(BETA, clean, tau, DAY)
    assert is_ineligible_exposure(BETA, mixed, tau, DAY)
    assert not admits(BETA, mixed, tau, DAY)
    # a summary's ended fact of another predicate does not concern this query
    other = record("door_code", "2718", "e2", valid_until=dt.date(2026, 6, 1))
    beside = Item("b", "", {DERIVED_MARKER: "1", DERIVED_FACTS: [line(current), line(other)]})
    assert admits(BETA, beside, tau, DAY)
