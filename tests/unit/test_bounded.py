"""§14's bounded producer (docs/method.md §14) on hand-built trajectories: folding under the
state budget, archive summaries, summary versions in L and their rebuild path, and forget
reaching summaries with its deletion status. The store is a FAKE (points, history and side
rows in memory, removal purging history as the real store does); the real-stack run is
tests/integration/test_bounded_run.py."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest
from builders import schema, user
from fakes.stores import FakeSideTables

from place.errors import PlaceError
from place.governance.bounded import SUMMARY_ROW, BoundedCertifier, own_residue
from place.governance.certifier import CertificationError
from place.governance.evidence import EVIDENCE, REDACTED
from place.governance.ledger import LEDGER, read_governance
from place.governance.summaries import REBUILD, SOURCES, VERSION, is_archive
from place.lexicon import Lexicon
from place.memory.scan import HistoryRow, PointRecord, StoreScan
from place.producers.bounded import BoundedWriter
from place.producers.css import CSSWriter
from place.producers.registry import build_writer
from place.readback import DERIVED_FACTS, DERIVED_MARKER, Readback
from place.trajectory.model import Conversation, Turn

SCHEMA = schema()
BETA = Readback(Lexicon(SCHEMA, "alex"))


@dataclass
class FakeCertifiedStore(FakeSideTables):
    """FAKE row store: points in a dict, an `ADD` history row per record, side rows in a
    list; `remove` deletes a record's history with it (as place.memory's store does), unless
    `leaky` (a store that keeps history on removal, to make residue)."""

    principal: str = "alex"
    points: dict[str, PointRecord] = field(default_factory=dict)
    history: list[HistoryRow] = field(default_factory=list)
    leaky: bool = False
    added: int = 0

    def add_record(self, text: str, metadata: dict[str, Any]) -> str:
        self.added += 1
        memory_id = f"m{self.added:03d}"
        self.points[memory_id] = PointRecord(memory_id, text, dict(metadata), {"data": text})
        self.history.append(
            HistoryRow(
                f"h{self.added}", memory_id, None, text, "ADD", None, None, False, None, None
            )
        )
        return memory_id

    def update_metadata(self, memory_id: str, changes: dict[str, Any]) -> None:
        p = self.points[memory_id]
        self.points[memory_id] = PointRecord(p.id, p.text, {**p.metadata, **changes}, p.payload)

    def remove(self, memory_ids: list[str]) -> None:
        for memory_id in memory_ids:
            del self.points[memory_id]
        if not self.leaky:
            self.history = [h for h in self.history if h.memory_id not in memory_ids]

    def scan(self) -> StoreScan:
        return StoreScan(tuple(self.points.values()), tuple(self.history), tuple(self.rows))


def hotel(turn: str, value: str, text: str | None = None) -> Turn:
    return user(
        turn,
        {"op": "assert", "entity": "alex", "predicate": "hotel", "value": value},
        text=text or f"My hotel is {value}.",
    )


def diet(turn: str, value: str) -> Turn:
    return user(
        turn,
        {"op": "assert", "entity": "alex", "predicate": "diet", "value": value},
        text=f"My diet is {value}.",
    )


def forget(turn: str, predicate: str) -> Turn:
    return user(
        turn,
        {"op": "forget", "entity": "alex", "predicate": predicate},
        text=f"Forget my {predicate}.",
    )


def conv(i: int, *turns: Turn) -> Conversation:
    return Conversation(f"c{i}", dt.date(2026, 3, i), tuple(turns))


def writer(name: str, store: FakeCertifiedStore, **params: Any) -> Any:
    return build_writer(name, store, SCHEMA, BETA, params)


def run(steps: list[Conversation], **params: Any) -> tuple[Any, FakeCertifiedStore, list[dict]]:
    """Bounded on a FAKE store, one step per conversation; CSS beside it on its own store
    must read back the same S^phys at every step."""
    store, twin = FakeCertifiedStore(), FakeCertifiedStore()
    bounded, css = writer("bounded", store, **params), writer("css", twin)
    ops = []
    for c in steps:
        done = bounded.write(c.turns, c)
        css.write(c.turns, c)
        ops.append(done.operations[-1])
        assert BETA.state(store.scan().points, c.date) == BETA.state(twin.scan().points, c.date)
    return bounded, store, ops


def archives(store: FakeCertifiedStore) -> list[PointRecord]:
    return [p for p in store.points.values() if is_archive(p.metadata)]


def certified(store: FakeCertifiedStore) -> list[PointRecord]:
    return [p for p in store.points.values() if "place_lifecycle" in p.metadata]


HOTELS = [
    conv(1, hotel("t1", "Avenida")),
    conv(2, hotel("t2", "Lumen")),
    conv(3, hotel("t3", "Marriott")),
    conv(4, diet("t4", "vegetarian")),
]


def test_the_oldest_ended_record_is_folded_into_its_archive_and_s_phys_is_unchanged() -> None:
    bounded, store, ops = run(HOTELS, budget={"state": 2})
    assert isinstance(bounded, BoundedWriter)
    # Each step past the budget folds the oldest superseded hotel, never the live one.
    assert [o["folds"] for o in ops] == [[], [], ["t1#1"], ["t2#1"]]
    assert [o["state"] for o in ops] == [1, 2, 2, 2]
    assert not any(o["over_budget"] for o in ops)
    [archive] = archives(store)
    meta = archive.metadata
    assert meta[DERIVED_MARKER] == "1" and meta[SOURCES] == ["t1#1", "t2#1"]
    assert [(f["value"], f["status"]) for f in meta[DERIVED_FACTS]] == [
        ("Avenida", "superseded"),
        ("Lumen", "superseded"),
    ]
    assert meta[VERSION] == 2 and meta[REBUILD]
    assert BETA.read_record(archive, dt.date(2026, 3, 4)) == ()  # ended facts are invisible
    # Every version is a ledger row without values; the old version's point and history left.
    rows = [r.metadata for r in store.side_rows(LEDGER) if r.metadata["kind"] == SUMMARY_ROW]
    assert [r["version"] for r in rows] == [1, 2]
    assert all("value" not in line for r in rows for line in r["lines"])
    assert {h.memory_id for h in store.history} == set(store.points)
    assert [[v["version"] for v in o["versions"]] for o in ops] == [[], [], [1], [2]]
    assert [o["rebuild_checks"] for o in ops] == [0, 0, 1, 1]


def test_budget_null_is_css() -> None:
    _b, store, ops = run(HOTELS)
    assert not archives(store) and len(certified(store)) == 4
    assert all(o["folds"] == [] and not o["over_budget"] for o in ops)


def test_active_records_are_never_folded_and_count_over_budget() -> None:
    steps = [
        conv(1, diet("t1", "vegetarian")),
        conv(2, diet("t2", "nut-free")),
        conv(3, hotel("t3", "Avenida")),
    ]
    _b, store, ops = run(steps, budget={"state": 1})
    assert [o["folds"] for o in ops] == [[], [], []]
    assert [o["over_budget"] for o in ops] == [False, True, True]
    assert [o["active"] for o in ops] == [1, 2, 3]
    assert not archives(store)


def test_the_latest_record_of_a_slot_is_kept_to_fix_its_owner() -> None:
    retract = user("t2", {"op": "retract", "entity": "alex", "predicate": "hotel"}, text="no hotel")
    _b, store, ops = run([conv(1, hotel("t1", "Avenida")), conv(2, retract)], budget={"state": 0})
    assert ops[-1]["folds"] == [] and ops[-1]["over_budget"]
    assert len(certified(store)) == 1


def test_forget_reaches_the_archive_redacts_v_and_is_done() -> None:
    steps = [*HOTELS, conv(5, forget("t5", "hotel"))]
    _bounded, store, ops = run(steps, budget={"state": 2})
    assert not archives(store)  # every line was the slot's: the archive is gone
    assert ops[-1]["deletions"] == [{"event": "t5#1", "status": "done", "where": []}]
    assert [d.status for d in read_governance(store).deletions] == ["done"]
    texts = [r.metadata["text"] for r in store.side_rows(EVIDENCE)]
    assert not any("Avenida" in t or "Lumen" in t for t in texts)
    assert any(REDACTED in t for t in texts)
    assert not any("Avenida" in h.new_memory for h in store.history if h.new_memory)
    assert (
        own_residue(
            store.scan(), steps[-1].turns[0].events[0], ["Avenida", "Lumen", "Marriott"], BETA
        )
        == set()
    )


def test_a_forgotten_slot_s_quarantine_rows_do_not_count_as_residue() -> None:
    """The forget redacts the slot's quarantine row from L as it writes its deletion row; the
    producer's scan reads L as it will be, so the forget is `done`."""
    steps = [
        conv(1, hotel("t1", "Avenida")),
        conv(2, Turn("t2", "tool", "Your hotel is Lumen.", source="sms")),
        conv(3, forget("t3", "hotel")),
    ]
    _b, store, ops = run(steps, budget={"state": 2})
    assert ops[-1]["deletions"] == [{"event": "t3#1", "status": "done", "where": []}]
    assert not [r for r in store.side_rows(LEDGER) if r.metadata["kind"] == "quarantine"]


def test_retained_evidence_is_not_redacted_and_the_forget_is_retained() -> None:
    steps = [*HOTELS, conv(5, forget("t5", "hotel"))]
    _b, store, ops = run(steps, budget={"state": 2}, retain=["evidence"])
    assert ops[-1]["deletions"] == [{"event": "t5#1", "status": "retained", "where": ["evidence"]}]
    assert [d.status for d in read_governance(store).deletions] == ["retained"]
    assert any("Avenida" in r.metadata["text"] for r in store.side_rows(EVIDENCE))
    assert not archives(store)


def test_residue_outside_a_retained_class_makes_the_forget_pending() -> None:
    store = FakeCertifiedStore(leaky=True)  # FAKE: removal keeps Mem0 history
    w = writer("bounded", store, budget={"state": 2})
    for c in [*HOTELS, conv(5, forget("t5", "hotel"))]:
        done = w.write(c.turns, c)
    assert done.operations[-1]["deletions"][0]["status"] == "pending"
    assert "history" in done.operations[-1]["deletions"][0]["where"]


def test_a_summary_that_does_not_rebuild_from_l_and_v_fails_certification() -> None:
    store = FakeCertifiedStore()
    w = writer("bounded", store, budget={"state": 2})
    for c in HOTELS[:2]:
        w.write(c.turns, c)
    # Tamper with V: the folded source's value no longer matches the archive's line.
    row = next(r for r in store.side_rows(EVIDENCE) if r.metadata["turn"] == "t1")
    events = [{**e, "value": "Lumen"} for e in row.metadata["events"]]
    store.update_side_row(EVIDENCE, row.id, {"events": events})
    with pytest.raises(CertificationError, match="does not rebuild"):
        w.write(HOTELS[2].turns, HOTELS[2])


def test_a_restarted_writer_resumes_from_the_store_l_and_v() -> None:
    store = FakeCertifiedStore()
    w = writer("bounded", store, budget={"state": 2})
    for c in HOTELS[:3]:
        w.write(c.turns, c)
    w.restart()
    assert set(w.certifier.folded) == {"t1#1"}
    for c in [HOTELS[3], conv(5, forget("t5", "hotel"))]:
        done = w.write(c.turns, c)
    assert done.operations[-1]["deletions"][0]["status"] == "done"
    assert not archives(store)


def test_a_forked_writer_continues_on_its_clone() -> None:
    store = FakeCertifiedStore()
    w = writer("bounded", store, budget={"state": 2})
    for c in HOTELS[:2]:
        w.write(c.turns, c)
    import copy

    clone = copy.deepcopy(store)
    twin = w.fork(clone)
    twin.write(HOTELS[2].turns, HOTELS[2])
    assert [a.metadata[SOURCES] for a in archives(clone)] == [["t1#1"]]
    assert not archives(store)  # the original store is left as it was


def test_record_versions_are_those_css_writes() -> None:
    # B = 1 folds Avenida before Marriott is written: Marriott is still the slot's third.
    _b, store, ops = run(HOTELS, budget={"state": 1})
    assert ops[1]["folds"] == ["t1#1"]
    twin = FakeCertifiedStore()
    css = writer("css", twin)
    assert isinstance(css, CSSWriter)
    for c in HOTELS:
        css.write(c.turns, c)
    version = {p.metadata["event_id"]: p.metadata["version"] for p in certified(store)}
    assert version == {
        p.metadata["event_id"]: p.metadata["version"]
        for p in certified(twin)
        if p.metadata["event_id"] in version
    }


def test_line_retirement_is_refused_and_retain_is_checked() -> None:
    with pytest.raises(PlaceError, match=r"line retirement.*is not built"):
        writer("bounded", FakeCertifiedStore(), budget={"summary": 3})
    with pytest.raises(PlaceError, match="retain"):
        writer("bounded", FakeCertifiedStore(), retain=["ledger"])
    assert isinstance(BoundedCertifier(FakeCertifiedStore(), SCHEMA, BETA), BoundedCertifier)
