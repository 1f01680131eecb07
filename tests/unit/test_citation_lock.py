"""The citation lock and the provenance audit (docs/method.md §12.3, §12.4), hand-built.

Records are written as the certifier writes them (`metadata_for`) or as the forger does
(`forged_record`), on the aoep-pilot schema; V is a list of side rows as CSS keeps it
(`evidence.entry`). The store is tests/fakes/stores.py's FAKE read-only store with V
attached, so each rule is tested on its own: each forgery kind, each audit class, the
consequential class, `scope=all`, and the lock's place before truncation.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from fakes.stores import FakeStore

from place.eligibility import Interpretation
from place.governance.certifier import Provenance, metadata_for, render
from place.governance.citation import (
    Evidence,
    cited,
    consequential_predicates,
    pointer,
    provenance,
    supports,
)
from place.governance.evidence import EVIDENCE, entry
from place.governance.forgery import forged_record
from place.governance.summaries import SOURCES
from place.lexicon import Lexicon
from place.memory.item import StoredItem
from place.memory.tables import SideRow
from place.policies import build_policy
from place.readback import DERIVED_FACTS, DERIVED_MARKER, Readback
from place.reference.lifecycle import FactRecord
from place.reference.validate import load_trajectory
from place.trajectory.model import Fact, Forged, Probe, Trajectory

PILOT = Path(__file__).resolve().parents[2] / "trajectories" / "aoep-pilot.yaml"
DAY = dt.date(2026, 6, 16)


@pytest.fixture(scope="module")
def traj() -> Trajectory:
    return load_trajectory(PILOT)


@pytest.fixture(scope="module")
def lexicon(traj: Trajectory) -> Lexicon:
    return Lexicon(traj.schema, traj.principal)


class FakeStoreWithV(FakeStore):
    """FAKE read-only store holding V's rows beside its records."""

    def __init__(self, items: list[StoredItem], rows: list[SideRow]) -> None:
        super().__init__(items)
        self.rows = tuple(rows)

    def side_rows(self, table: str) -> tuple[SideRow, ...]:
        return tuple(r for r in self.rows if r.table == table)


def _turn(traj: Trajectory, turn_id: str) -> Any:
    return next(t for _c, t in traj.turns() if t.id == turn_id)


def _v(traj: Trajectory, *turn_ids: str) -> list[SideRow]:
    return [
        SideRow(EVIDENCE, f"{EVIDENCE}-{n}", entry(_turn(traj, t), "nora", DAY))
        for n, t in enumerate(turn_ids, start=1)
    ]


def _certified(
    traj: Trajectory, value: str, source_turn: str, predicate: str = "door_code"
) -> dict[str, Any]:
    record = FactRecord("nora", predicate, value, "global", "active", None, None, "e-x", 1)
    return metadata_for(record, Provenance(source_turn, "c3", DAY), 1)


def _item(traj: Trajectory, ident: str, meta: dict[str, Any], score: float) -> StoredItem:
    text = render(
        traj.schema,
        FactRecord(
            str(meta["entity"]),
            str(meta["predicate"]),
            str(meta["value"]),
            str(meta["scope"]),
            "active",
            None,
            None,
            "e",
            1,
        ),
    )
    return StoredItem(ident, text, meta, score)


def _forged(traj: Trajectory, kind: str, value: str, pointer_: str | None) -> dict[str, Any]:
    probe = Probe(
        "px",
        "c3-06",
        "provenance",
        "What's the door code?",
        "nora",
        "door_code",
        "global",
        ("2718",),
        forged=Forged(kind, value, pointer_),  # type: ignore[arg-type]  # reason: kinds from the test's table
    )
    _text, meta = forged_record(traj.schema, probe, "nora", "nora", "c3", DAY, 9)
    return meta


# -- Open(m) supports ------------------------------------------------------------------


def test_a_trusted_entry_that_states_the_fact_supports_it(traj, lexicon) -> None:
    v = Evidence.from_rows(_v(traj, "c3-03"))
    assert supports(v.by_turn["c3-03"], Fact("nora", "door_code", "2718", "global"), lexicon)
    # the same entry does not support a value it does not state
    assert not supports(v.by_turn["c3-03"], Fact("nora", "door_code", "8642", "global"), lexicon)


def test_a_tool_entry_supports_nothing_even_when_it_states_the_fact(traj, lexicon) -> None:
    v = Evidence.from_rows(_v(traj, "c3-05"))
    fact = Fact("nora", "door_code", "9999", "global")
    assert fact in lexicon.read(str(v.by_turn["c3-05"]["text"]))  # it does state it
    assert v.by_turn["c3-05"]["trust"] == "untrusted"
    assert not supports(v.by_turn["c3-05"], fact, lexicon)


def test_a_missing_entry_supports_nothing(lexicon) -> None:
    assert not supports(None, Fact("nora", "door_code", "2718", "global"), lexicon)


# -- the audit classes ---------------------------------------------------------------------


def test_audit_classes(traj, lexicon) -> None:
    v = Evidence.from_rows(_v(traj, "c3-01", "c3-03", "c3-05"))
    genuine = _certified(traj, "2718", "c3-03")
    assert (pointer(genuine), provenance(genuine, v, lexicon)) == ("c3-03", "openable")
    wrong_turn = _certified(traj, "2718", "c3-01")  # c3-01 states 1357, not 2718
    assert provenance(wrong_turn, v, lexicon) == "pointer_only"
    nowhere = _certified(traj, "2718", "c9-99")  # no such entry in V
    assert provenance(nowhere, v, lexicon) == "pointer_only"
    plain = {"written_on": DAY.isoformat(), "written_seq": 3, "speaker": "nora"}
    assert (pointer(plain), provenance(plain, v, lexicon)) == (None, "orphaned")
    # a plain record that happens to carry a `source_turn` key is still orphaned: only a
    # certified record's pointer is one
    assert provenance({**plain, "source_turn": "c3-03"}, v, lexicon) == "orphaned"


def test_each_forgery_kind_is_classed_as_the_spec_says(traj, lexicon) -> None:
    v = Evidence.from_rows(_v(traj, "c3-01", "c3-03", "c3-05"))
    classes = {
        kind: provenance(_forged(traj, kind, value, ptr), v, lexicon)
        for kind, value, ptr in [
            ("missing", "4444", None),
            ("tool", "9999", "c3-05"),
            ("unsupported", "8642", "c3-03"),
            ("stale", "1357", "c3-01"),
        ]
    }
    # a stale forgery opens to genuine, once-true evidence: provenance is not truth
    assert classes == {
        "missing": "pointer_only",
        "tool": "pointer_only",
        "unsupported": "pointer_only",
        "stale": "openable",
    }
    assert pointer(_forged(traj, "missing", "4444", None)) == "px~forged"


def test_a_derived_summary_is_cited_through_its_sources(traj, lexicon) -> None:
    rows = _v(traj, "c3-03")
    v = Evidence.from_rows(rows)
    line = {
        "entity": "nora",
        "predicate": "door_code",
        "value": "2718",
        "scope": "global",
        "status": "active",
        "event_id": "e-2718",
    }
    # the entry's events carry no id "e-2718" yet: the source opens nothing
    summary = {DERIVED_MARKER: "1", DERIVED_FACTS: [line], SOURCES: ["e-2718"]}
    assert provenance(summary, v, lexicon) == "pointer_only"
    meta = dict(rows[0].metadata)
    meta["events"] = [{"id": "e-2718", "op": "assert"}]
    v2 = Evidence.from_rows([SideRow(EVIDENCE, "evidence-1", meta)])
    assert provenance(summary, v2, lexicon) == "openable"
    assert provenance({**summary, SOURCES: []}, v2, lexicon) == "orphaned"


# -- the `cited` policy ------------------------------------------------------------------


def _policy(traj, scope: str = "consequential", k: int = 5) -> Any:
    return build_policy(
        "cited",
        k,
        Readback(Lexicon(traj.schema, traj.principal)),
        {"scope": scope},
        consequential_predicates(traj),
    )


TAU = Interpretation("nora", "door_code", "global", DAY)


def test_cited_keeps_the_genuine_and_the_stale_record_and_drops_the_rest(traj) -> None:
    items = [
        _item(traj, "genuine", _certified(traj, "2718", "c3-03"), 0.5),
        _item(traj, "missing", _forged(traj, "missing", "4444", None), 0.9),
        _item(traj, "tool", _forged(traj, "tool", "9999", "c3-05"), 0.8),
        _item(traj, "unsupported", _forged(traj, "unsupported", "8642", "c3-03"), 0.7),
        _item(traj, "stale", _forged(traj, "stale", "1357", "c3-01"), 0.6),
    ]
    store = FakeStoreWithV(items, _v(traj, "c3-01", "c3-03", "c3-05"))
    decision = _policy(traj).read(store, "door code?", TAU, DAY)
    assert [i.id for i in decision.items] == ["stale", "genuine"]
    assert set(decision.hearsay) == {"missing", "tool", "unsupported"}
    assert decision.admitted == 2
    # QASC, on the same store, exposes every forgery (the metadata is all it reads)
    qasc = build_policy("qasc", 5, Readback(Lexicon(traj.schema, traj.principal)))
    assert len(qasc.read(store, "door code?", TAU, DAY).items) == 5


def test_the_lock_precedes_truncation(traj) -> None:
    items = [
        _item(traj, "genuine", _certified(traj, "2718", "c3-03"), 0.1),
        _item(traj, "tool", _forged(traj, "tool", "9999", "c3-05"), 0.9),
    ]
    store = FakeStoreWithV(items, _v(traj, "c3-03", "c3-05"))
    decision = _policy(traj, k=1).read(store, "door code?", TAU, DAY)
    assert [i.id for i in decision.items] == ["genuine"]  # hearsay took no place of the k


def test_only_consequential_records_are_locked_unless_scope_is_all(traj) -> None:
    # locker_code is neither money, nor marked, nor needed by a task: an unsupported record
    # of it passes the lock under the default scope, and not under scope=all
    assert "locker_code" not in consequential_predicates(traj)
    assert "door_code" in consequential_predicates(traj)
    unsupported = _item(traj, "u", _certified(traj, "4512", "c3-03", "locker_code"), 0.5)
    store = FakeStoreWithV([unsupported], _v(traj, "c3-03"))
    tau = Interpretation("nora", "locker_code", "global", DAY)
    assert [i.id for i in _policy(traj).read(store, "locker?", tau, DAY).items] == ["u"]
    locked = _policy(traj, scope="all").read(store, "locker?", tau, DAY)
    assert (locked.items, locked.hearsay) == ((), ("u",))


def test_a_plain_consequential_record_is_hearsay(traj) -> None:
    plain = StoredItem("p", "My door code is 2718.", {"written_on": DAY.isoformat()}, 0.5)
    store = FakeStoreWithV([plain], _v(traj, "c3-03"))
    decision = _policy(traj).read(store, "door code?", TAU, DAY)
    assert (decision.items, decision.hearsay) == ((), ("p",))


def test_money_and_task_needs_are_consequential(traj) -> None:
    cons = consequential_predicates(traj)
    money = {p for p, d in traj.schema.predicates.items() if d.type == "money"}
    needs = {n.predicate for _c, _t, task in traj.tasks() for n in task.needs}
    assert money and needs and money | needs <= cons
    assert cited({"written_on": "x"}, Evidence(), Lexicon(traj.schema, traj.principal)) is False


def test_a_stale_forgery_of_a_forgotten_value_opens_to_redacted_evidence(traj, lexicon) -> None:
    # The replication study's finding: after a forget, V's entry no longer states the value
    # (docs/method.md §12.1), so a forgery citing it is not cited, unlike one citing a value
    # that was only superseded.
    from place.governance.evidence import redact_text

    row = _v(traj, "c1-01")[0]
    forget = next(e for _c, t in traj.turns() for e in t.events if e.op == "forget")
    meta = dict(row.metadata)
    meta["text"] = redact_text(str(meta["text"]), forget, ["4512"], lexicon, "nora")
    assert "4512" not in meta["text"]
    record = FactRecord("nora", "locker_code", "4512", "global", "active", None, None, "x", 1)
    forged = metadata_for(record, Provenance("c1-01", "c1", DAY), 1)
    before = Evidence.from_rows([row])
    after = Evidence.from_rows([SideRow(EVIDENCE, row.id, meta)])
    assert provenance(forged, before, lexicon) == "openable"
    assert provenance(forged, after, lexicon) == "pointer_only"
