"""The certified ledger L and its readback β_L (docs/method.md §11) on the real stack: real
Mem0 1.0.x, Qdrant local mode and MiniLM. CSS never calls an LLM (Mem0's points at a closed
port); the Native store gets the FAKE Mem0 LLM.

Γ^phys = β_L(L) is compared with the reference's Γ* at every checkpoint; each rule of the
ledger has a test that fails when the rule is broken on purpose (a tampered row, a missing
redaction, a lost event row).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import gev, governed, said, tool
from fakes.mem0_llm import FakeMem0LLM
from inprocess import backend as make_backend

from place.governance.certifier import CertificationError, Certifier
from place.governance.evidence import EVIDENCE
from place.governance.ledger import LEDGER, read_governance
from place.lexicon import Lexicon
from place.memory import Backend
from place.producers.css import CSSWriter
from place.producers.registry import build_writer
from place.readback import Readback
from place.reference.governance import Governance, QuarantineRow
from place.reference.replay import replay
from place.reference.validate import load_trajectory
from place.runner import residue
from place.runner.plan import build_plan
from place.trajectory.model import Fact, Trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
GOVERNANCE = ROOT / "tests" / "data" / "good" / "governance.yaml"
SMOKE = ROOT / "trajectories" / "smoke.yaml"


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with make_backend(tmp_path_factory.mktemp("ledger")) as b:
        yield b


def readback(traj: Trajectory) -> Readback:
    return Readback(Lexicon(traj.schema, traj.principal))


def css_writer(backend: Backend, traj: Trajectory, name: str) -> CSSWriter:
    store = backend.open(name, traj.principal)
    writer = build_writer("css", store, traj.schema, readback(traj))
    writer.resume([])
    assert isinstance(writer, CSSWriter)
    return writer


def run_turns(traj: Trajectory, writer: CSSWriter) -> list[tuple[str, str, Governance, Governance]]:
    """Write the trajectory's world-a turns one at a time, as the runner's steps would
    (restarting before a `restart` turn, never writing a query turn), and return every
    reference checkpoint with Γ^phys beside Γ*: (turn, kind, observed, reference)."""
    ref = replay(traj)
    assert ref.problems == ()
    checkpoints = {(c.turn, c.kind): c for c in ref.checkpoints}
    seen = []
    for conv, turn in traj.turns():
        if turn.restart:
            writer.restart()
        kinds = ("pre-query",) if turn.query is not None else ("pre-task", "post-update")
        if turn.query is None:
            writer.write([turn], conv)
        for kind in kinds:
            checkpoint = checkpoints.get((turn.id, kind))
            if checkpoint is not None:
                assert checkpoint.governance is not None
                observed = read_governance(writer.store)
                seen.append((turn.id, kind, observed, checkpoint.governance))
    assert len(seen) == len(ref.checkpoints)
    return seen


# ---------------------------------------------------------------- Γ^phys = Γ*


def test_css_ledger_reads_back_as_the_reference_at_every_checkpoint(backend: Backend) -> None:
    """governance.yaml uses every construct of §11: shares, a proposal and its resolution,
    grants and revokes, tasks (deferred, blocked, redelivered), a rollback, a tool turn,
    a forget, restarts."""
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_governance")
    seen = run_turns(traj, writer)
    for turn, kind, observed, reference in seen:
        assert observed == reference, (turn, kind)
    final = seen[-1][3]
    assert final.epochs and final.shares and final.conflicts and final.requests
    assert final.quarantine and final.deletions
    assert {r.status for r in final.requests} == {"requested", "reverted"}
    assert {c.status for c in final.conflicts} == {"resolved"}


def test_css_ledger_on_a_trajectory_without_the_constructs(backend: Backend) -> None:
    """The smoke trajectory, written step by step as the runner cuts it: Γ* holds only
    quarantine and deletion rows there, and Γ^phys equals it after every step."""
    traj = load_trajectory(SMOKE)
    assert not traj.governed
    ref = replay(traj)
    checkpoints = {(c.turn, c.kind): c.governance for c in ref.checkpoints}
    writer = css_writer(backend, traj, "ledger_smoke")
    checked = 0
    for unit in build_plan(traj):
        if unit.kind == "query":
            assert read_governance(writer.store) == checkpoints[(unit.turns[0].id, "pre-query")]
            checked += 1
        elif unit.kind == "step":
            writer.write(unit.turns, unit.conversation)
            if unit.event_turn is not None:
                observed = read_governance(writer.store)
                assert observed == checkpoints[(unit.event_turn.id, "post-update")]
                checked += 1
    assert checked == len(ref.checkpoints)
    final = read_governance(writer.store)
    assert final.quarantine and final.deletions
    assert not (final.epochs or final.shares or final.conflicts or final.requests)
    # One principal: the records carry neither owner nor visible_to (absent = the principal).
    for point in writer.store.scan().points:
        assert "owner" not in point.payload and "visible_to" not in point.payload


@pytest.mark.parametrize("producer", ["append", "none", "extract", "native"])
def test_stores_without_a_ledger_read_as_empty_governance(producer: str, tmp_path: Path) -> None:
    traj = load_trajectory(GOVERNANCE)
    fake = FakeMem0LLM.scripted(
        ["Locker code is 4512"],
        {"memory": [{"id": "0", "text": "Locker code is 4512", "event": "ADD"}]},
    )
    with make_backend(tmp_path, mem0_llm=fake) as b:
        store = b.open(f"ledger_{producer}", traj.principal)
        writer = build_writer(producer, store, traj.schema, readback(traj))
        for conv, turn in traj.turns():
            if turn.query is None:
                writer.write([turn], conv)
        scan = store.scan()
        assert read_governance(store) == Governance() == read_governance(scan)
        assert scan.tables == ()
        assert not b.side_tables_path(store.name).exists()
        if producer in ("append", "native"):
            assert scan.points  # they did write their state


# ---------------------------------------------------------------- restart


def test_restart_rebuilds_G_and_Gamma_from_the_store_and_ledger_alone(backend: Backend) -> None:
    traj = load_trajectory(GOVERNANCE)
    # No restart on the way: the in-memory state is the one built event by event.
    plain = dataclasses.replace(
        traj,
        conversations=tuple(
            dataclasses.replace(
                c, turns=tuple(dataclasses.replace(t, restart=False) for t in c.turns)
            )
            for c in traj.conversations
        ),
    )
    writer = css_writer(backend, plain, "ledger_restart")
    for conv, turn in plain.turns():
        if turn.query is None:
            writer.write([turn], conv)
    live = writer.certifier
    restored = Certifier.restore(writer.store, traj.schema, readback(traj))
    assert restored.governed.records == live.governed.records  # same records, same order
    assert restored.governed.ever_held == live.governed.ever_held
    assert restored.governance() == live.governance()
    assert restored.world.shares == live.world.shares
    assert restored.world.epochs == live.world.epochs
    assert restored.applied == live.applied
    assert restored.memory_ids == live.memory_ids
    assert restored.ledger_ids == live.ledger_ids
    assert restored.ledger_versions == live.ledger_versions
    assert restored.subject_versions == live.subject_versions
    assert restored.visibility == live.visibility
    for record in live.governed.records:
        assert restored.world.owner(record) == live.world.owner(record)


def _turn(traj: Trajectory, turn_id: str) -> tuple[Any, Any]:
    return next((c, t) for c, t in traj.turns() if t.id == turn_id)


def test_a_redelivery_after_a_restart_writes_nothing(backend: Backend) -> None:
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_redeliver")
    run_turns(traj, writer)
    for turn_id in ("c1-03", "c4-04"):  # a forgotten value's assert; an executed task
        writer.restart()
        before = writer.store.scan()
        conv, turn = _turn(traj, turn_id)
        done = writer.write([turn], conv)
        assert all(op["noop"] for op in done.operations)
        assert writer.store.scan() == before  # points, history and ledger unchanged


def test_without_its_event_row_a_redelivered_event_would_be_applied_again(
    backend: Backend,
) -> None:
    """The rule broken on purpose: L's event rows are what a restarted CSS knows; without
    the forgotten assert's row, its redelivery brings the forgotten value back."""
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_lost_event")
    conv, first = _turn(traj, "c1-01")
    writer.write([first], conv)
    writer.write([_turn(traj, "c1-02")[1]], conv)
    store = writer.store
    lost = [
        r.id
        for r in store.side_rows(LEDGER)
        if r.metadata["kind"] == "event" and r.metadata["event_id"] == "c1-01#1"
    ]
    store.delete_side_rows(LEDGER, lost)
    writer.restart()
    done = writer.write([_turn(traj, "c1-03")[1]], conv)
    assert done.operations[0]["added"]  # 4512 is back: the redelivery was not recognised


def test_resume_refuses_a_store_whose_ledger_lacks_a_completed_event(backend: Backend) -> None:
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_old")
    conv, turn = _turn(traj, "c2-01")
    writer.write([turn], conv)
    writer.resume([([turn], conv)])  # L records both events: resumable
    store = writer.store
    store.delete_side_rows(LEDGER, [r.id for r in store.side_rows(LEDGER)])
    with pytest.raises(CertificationError, match="no event row in the ledger"):
        writer.resume([([turn], conv)])


# ---------------------------------------------------------------- verification


def test_a_tampered_ledger_row_fails_verification(backend: Backend) -> None:
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_tamper")
    store = writer.store
    for turn_id in ("c2-01", "c2-02"):
        conv, turn = _turn(traj, turn_id)
        writer.write([turn], conv)
    epoch = next(r for r in store.side_rows(LEDGER) if r.metadata["kind"] == "epoch")
    store.update_side_row(LEDGER, epoch.id, {"n": 7})
    conv, turn = _turn(traj, "c2-03")  # theo's task: its request row, then L is verified
    with pytest.raises(CertificationError, match="ledger differs from the governed state"):
        writer.write([turn], conv)


@pytest.mark.parametrize("tamper", ["drop-event-row", "stray-row", "extra-share"])
def test_other_ledger_tampering_fails_verification(backend: Backend, tamper: str) -> None:
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, f"ledger_{tamper.replace('-', '_')}")
    store = writer.store
    conv, turn = _turn(traj, "c2-01")
    writer.write([turn], conv)
    rows = store.side_rows(LEDGER)
    if tamper == "drop-event-row":
        store.delete_side_rows(LEDGER, [rows[0].id])
        match = "not the applied events"
    elif tamper == "stray-row":
        store.add_side_row(LEDGER, {"kind": "share", "note": "no marker"})
        match = "without 'place_ledger'"
    else:
        share = next(r for r in rows if r.metadata["kind"] == "share")
        store.add_side_row(LEDGER, {**share.metadata, "principal": "ivy"})
        match = "ledger differs"
    conv, turn = _turn(traj, "c2-02")
    with pytest.raises(CertificationError, match=match):
        writer.write([turn], conv)


# ---------------------------------------------------------------- rows and redaction

SLOT = {"entity": "alex", "predicate": "hotel"}


def forget_story() -> Trajectory:
    """alex's hotel, shared with dana; dana proposes another; a tool turn names a third;
    alex forgets the slot."""
    return governed(
        (
            "c1",
            "2026-03-01",
            [
                said("u1", {"op": "assert", **SLOT, "value": "Avenida"}),
                said("u2", gev("u2", 1, "share", **SLOT, with_="dana")),
                said("u3", {"op": "assert", **SLOT, "value": "Lumen"}, speaker="dana"),
                tool("t1", "The hotel is now the Marriott."),
                said("u4", {"op": "forget", **SLOT}),
            ],
        )
    )


def test_forget_redacts_the_slot_and_leaves_no_value_in_the_ledger(backend: Backend) -> None:
    traj = forget_story()
    for _turn_id, _kind, observed, reference in run_turns(
        traj, css_writer(backend, traj, "ledger_forget_ref")
    ):
        assert observed == reference
    writer = css_writer(backend, traj, "ledger_forget")
    conv = traj.conversations[0]
    writer.write(list(conv.turns[:-1]), conv)
    before_forget = read_governance(writer.store)
    assert [(c.value, c.active) for c in before_forget.conflicts] == [("Lumen", ("Avenida",))]
    assert before_forget.quarantine == (
        QuarantineRow("t1", Fact("alex", "hotel", "Marriott", "global")),
    )
    writer.write([conv.turns[-1]], conv)
    store = writer.store
    scan = store.scan()
    assert read_governance(scan).conflicts == () and read_governance(scan).quarantine == ()
    for value in ("Avenida", "Lumen", "Marriott"):
        assert not scan.contains(value), value
        for path in store.files():
            assert value.encode() not in path.read_bytes(), (value, path)
    rows = scan.table(LEDGER)
    deletion = next(r for r in rows if r.metadata["kind"] == "deletion")
    assert {
        k: deletion.metadata[k] for k in ("event", "entity", "predicate", "scope", "status")
    } == {
        "event": "u4#1",
        "entity": "alex",
        "predicate": "hotel",
        "scope": "global",
        "status": "done",
    }
    events = [r for r in rows if r.metadata["kind"] == "event"]
    assert [r.metadata["event_id"] for r in events] == ["u1#1", "u2#1", "u3#1", "u4#1"]
    for row in (*events, deletion):  # rows of fact events: event id and slot, never a value
        assert "value" not in row.metadata and "active" not in row.metadata
    lexicon = readback(traj).lexicon
    forget = traj.conversations[0].turns[-1].events[0]
    values = ["Avenida", "Lumen", "Marriott"]
    assert residue.residue(store, forget, values, lexicon, traj.principal) == []


def test_an_unredacted_row_is_caught_by_verification_and_by_the_residue_check(
    backend: Backend,
) -> None:
    """The rule broken on purpose: the conflict row put back after the forget."""
    traj = forget_story()
    writer = css_writer(backend, traj, "ledger_unredacted")
    conv = traj.conversations[0]
    for turn in conv.turns[:-1]:
        writer.write([turn], conv)
    conflict = next(r for r in writer.store.side_rows(LEDGER) if r.metadata["kind"] == "conflict")
    writer.write([conv.turns[-1]], conv)
    writer.store.add_side_row(LEDGER, dict(conflict.metadata))
    forget = conv.turns[-1].events[0]
    lexicon = readback(traj).lexicon
    hits = residue.residue(writer.store, forget, ["Lumen"], lexicon, traj.principal)
    assert len(hits) == 1 and json.loads(hits[0].split(" ", 1)[1])["value"] == "Lumen"
    with pytest.raises(CertificationError, match="ledger differs"):
        writer.certifier.verify_ledger()


def visibility_story() -> Trajectory:
    diet = {"entity": "dana", "predicate": "diet"}
    return governed(
        (
            "c1",
            "2026-03-01",
            [
                said("u1", {"op": "assert", **SLOT, "value": "Avenida"}),
                said("u2", gev("u2", 1, "share", **SLOT, with_="dana")),
                said("u3", {"op": "assert", **SLOT, "value": "Lumen"}, speaker="dana"),
                said("u4", {"op": "assert", **SLOT, "value": "Lumen"}),
                said("u5", gev("u5", 1, "unshare", **SLOT, with_="dana")),
                said("u6", {"op": "assert", **diet, "value": "vegetarian"}, speaker="dana"),
            ],
        )
    )


def _visibility(writer: CSSWriter) -> dict[str, tuple[Any, Any]]:
    return {
        str(p.metadata["value"]): (p.payload.get("owner"), p.payload.get("visible_to"))
        for p in writer.store.scan().points
    }


def test_share_and_unshare_rewrite_owner_and_visible_to(backend: Backend) -> None:
    traj = visibility_story()
    writer = css_writer(backend, traj, "ledger_visibility")
    conv = traj.conversations[0]
    turns = {t.id: t for t in conv.turns}
    writer.write([turns["u1"]], conv)
    assert _visibility(writer) == {"Avenida": (None, None)}  # the principal's: keys absent
    writer.write([turns["u2"]], conv)
    assert _visibility(writer) == {"Avenida": (None, ["alex", "dana"])}
    before = writer.store.scan()
    writer.write([turns["u3"]], conv)  # dana's proposal: no record is touched
    after = writer.store.scan()
    assert (after.points, after.history) == (before.points, before.history)
    assert read_governance(after).conflicts[0].status == "pending"
    writer.write([turns["u4"]], conv)  # the owner's value: a new record, already shared
    assert _visibility(writer) == {
        "Avenida": (None, ["alex", "dana"]),
        "Lumen": (None, ["alex", "dana"]),
    }
    writer.write([turns["u5"]], conv)
    assert _visibility(writer) == {"Avenida": (None, ["alex"]), "Lumen": (None, ["alex"])}
    writer.write([turns["u6"]], conv)
    assert _visibility(writer)["vegetarian"] == ("dana", ["dana"])
    # β reads them: the record's owner and who sees it (absent: the principal)
    rb = readback(traj)
    facts = {
        rf.value: (rf.owner, rf.visible_to)
        for p in writer.store.scan().points
        for rf, _readable in rb.held_facts(p, conv.date)
    }
    assert facts == {
        "Avenida": ("alex", ("alex",)),
        "Lumen": ("alex", ("alex",)),
        "vegetarian": ("dana", ("dana",)),
    }
    for _t, _k, observed, reference in run_turns(traj, css_writer(backend, traj, "ledger_vis2")):
        assert observed == reference


def test_a_record_whose_visibility_is_not_the_governed_one_fails_verification(
    backend: Backend,
) -> None:
    traj = visibility_story()
    writer = css_writer(backend, traj, "ledger_vis_tamper")
    conv = traj.conversations[0]
    writer.write([conv.turns[0]], conv)
    record = writer.store.scan().points[0]
    writer.store.update_metadata(record.id, {"visible_to": ["alex", "dana"]})  # not shared
    with pytest.raises(CertificationError, match="owner or visible_to"):
        writer.write([conv.turns[-1]], conv)  # an event on another slot


def test_a_tool_turn_yields_quarantine_rows_never_state(backend: Backend) -> None:
    traj = forget_story()
    writer = css_writer(backend, traj, "ledger_tool")
    conv = traj.conversations[0]
    writer.write(list(conv.turns[:3]), conv)
    before = writer.store.scan()
    done = writer.write([conv.turns[3]], conv)
    after = writer.store.scan()
    assert done.operations == []
    assert (after.points, after.history) == (before.points, before.history)
    assert read_governance(after).quarantine == (
        QuarantineRow("t1", Fact("alex", "hotel", "Marriott", "global")),
    )
    row = after.table(LEDGER)[-1]
    assert row.metadata["trust"] == "untrusted-tool-output" and row.metadata["event_id"] is None


def test_world_b_forks_the_ledger(backend: Backend) -> None:
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_fork")
    conv, turn = _turn(traj, "c2-01")
    writer.write([turn], conv)
    clone = writer.store.clone("ledger_fork__b")
    try:
        twin = writer.fork(clone)
        conv2, grant = _turn(traj, "c2-02")
        twin.write([grant], conv2)
        assert read_governance(clone).epochs and not read_governance(writer.store).epochs
        assert read_governance(clone).shares == read_governance(writer.store).shares
    finally:
        clone.drop()


def test_ledger_rows_carry_the_row_format(backend: Backend) -> None:
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_format")
    run_turns(traj, writer)
    rows = writer.store.side_rows(LEDGER)
    common = {
        "place_ledger",
        "kind",
        "version",
        "event_id",
        "source_turn",
        "conversation",
        "recorded_at",
        "trust",
    }
    assert {r.metadata["kind"] for r in rows} == {
        "event",
        "epoch",
        "share",
        "conflict",
        "request",
        "quarantine",
        "deletion",
    }
    for row in rows:
        assert common <= set(row.metadata), row
        assert row.metadata["place_ledger"] == "1"
        assert row.id.startswith("ledger-")
    epoch = next(r for r in rows if r.metadata["kind"] == "epoch")
    assert (epoch.metadata["n"], epoch.metadata["version"]) == (3, 3)  # grant, revoke, grant
    request = next(
        r for r in rows if r.metadata.get("task") == "t6" and r.metadata["kind"] == "request"
    )
    assert (request.metadata["status"], request.metadata["event_id"]) == ("reverted", "c4-05#1")
    # every applied event has its row, in the order applied
    applied = [r.metadata["event_id"] for r in rows if r.metadata["kind"] == "event"]
    events = [e.id for _c, t in traj.turns() if t.redelivers is None for e in t.events]
    assert applied == events


def test_the_ledger_is_written_outside_mem0(backend: Backend) -> None:
    traj = load_trajectory(GOVERNANCE)
    writer = css_writer(backend, traj, "ledger_outside")
    conv, turn = _turn(traj, "c2-02")  # a grant: an event row and an epoch row, no record
    before = writer.store.scan()
    writer.write([turn], conv)
    after = writer.store.scan()
    assert (after.points, after.history) == (before.points, before.history)
    assert len(after.table(LEDGER)) == 2
    # ... and the turn's entry in the evidence log V (docs/method.md §12.1), outside Mem0 too
    assert [r.metadata["turn"] for r in after.table(EVIDENCE)] == ["c2-02"]
    assert writer.store.count() == 0
