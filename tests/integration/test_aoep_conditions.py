"""The AOEP pilot's systems as conditions (docs/method.md §8.6-§8.11): `design=aoep` on the
smoke trajectory, in-process through the real runner, records and report, on real Mem0,
Qdrant local mode and MiniLM, with the FAKE models of tests/fakes/ (FakeMem0LLM,
ScriptedChat); then the `extract` producer and the record counter on a real store.

The run sets `design.fullcontext.budget_chars=300` so that the budget binds on smoke (its
whole history fits in the default 6,000 characters).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import inprocess
import pytest
import yaml

from place.design import Design, make_design
from place.governance.citation import consequential_predicates
from place.lexicon import Lexicon
from place.policies.recency import written_order
from place.producers import build_writer
from place.readback import Readback
from place.reference.validate import load_trajectory
from place.runner.plan import build_plan
from place.trajectory.model import Conversation, Turn

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
SMOKE = load_trajectory(ROOT / "trajectories" / "smoke.yaml")
READBACK = Readback(Lexicon(SMOKE.schema, SMOKE.principal))
BUDGET = 300
K = 5  # tests/inprocess.py composes experiment.k=5


def aoep_design() -> Design:
    """The design as configs/design/aoep.yaml declares it."""
    doc = yaml.safe_load((ROOT / "configs" / "design" / "aoep.yaml").read_text())
    return make_design(doc["name"], doc["producers"], doc["policies"])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("aoep") / "run"
    metrics = inprocess.run_inprocess(
        run_dir,
        SMOKE,
        aoep_design(),
        plots=False,
        overrides=[f"design.fullcontext.budget_chars={BUDGET}"],
    )
    return run_dir, metrics


def records(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records" / f"{name}.jsonl").open()]


@pytest.fixture(scope="module")
def final_stores(run: tuple[Path, dict]) -> Iterator[dict[str, list[Any]]]:
    """Every row store's points as the run left them."""
    run_dir, _ = run
    with inprocess.backend(run_dir) as backend:
        out = {}
        for producer in aoep_design().producers:
            store = backend.open(producer, SMOKE.principal)
            out[producer] = list(store.scan().points)
            store.close()
    yield out


# --- the design ---------------------------------------------------------------------------


def test_the_aoep_design_crosses_six_producers_with_five_policies(run: tuple[Path, dict]) -> None:
    _, m = run
    design = aoep_design()
    assert design.name == "aoep"
    assert design.producers == ("none", "append", "extract", "native", "css", "bounded")
    assert design.policies == ("native", "recency", "fullcontext", "qasc", "cited")
    assert list(m["conditions"]) == list(design.names) and len(design.names) == 30
    # the pilot's systems (method §11): floor, naive append, full context, vector RAG,
    # Mem0-style extracted facts, mem0ai, governed reducer
    for name in (
        "None/Native",
        "Append/Recency",
        "Append/Fullcontext",
        "Append/Native",
        "Extract/Native",
        "Native",
        "PLACE",
    ):
        assert name in m["conditions"], name
    assert m["design"]["name"] == "aoep"


def test_the_factorization_check_holds(run: tuple[Path, dict]) -> None:
    _, m = run
    assert m["factorization"]["ok"], m["factorization"]
    assert m["factorization"]["checkpoints"] > 0


# --- none: the no-memory floor ----------------------------------------------------------


def test_none_writes_nothing_and_every_read_of_its_row_is_empty(
    run: tuple[Path, dict], final_stores: dict[str, list[Any]]
) -> None:
    run_dir, _ = run
    assert final_stores["none"] == []
    none_rows = set(aoep_design().row("none"))
    steps = [s for s in records(run_dir, "steps") if s["producer"] == "none"]
    assert steps and all(s["operations"] == [] for s in steps)
    queries = [q for q in records(run_dir, "queries") if q["condition"] in none_rows]
    assert queries and all(q["exposed"] == [] for q in queries)
    probes = [p for p in records(run_dir, "probes") if p["condition"] in none_rows]
    assert probes and all(p["clean"]["exposed"] == [] for p in probes)
    planted = {q.id: q.conflict.text for q in SMOKE.probes if q.conflict is not None}
    locked = {q.id for q in SMOKE.probes if q.predicate in consequential_predicates(SMOKE)}
    for p in probes:  # an injected read shows the planted conflict record and nothing else
        if p["injected"] is not None:
            # ... unless the citation lock withholds it: plain text on a consequential slot
            # has no evidence pointer (docs/method.md §12.3)
            cited = aoep_design().policy_of(p["condition"]) == "cited"
            want = [] if cited and p["probe"] in locked else [planted[p["probe"]]]
            assert [i["text"] for i in p["injected"]["exposed"]] == want, p["condition"]
    checkpoints = [c for c in records(run_dir, "checkpoints") if c["condition"] in none_rows]
    assert checkpoints and all(c["observed"] == [] for c in checkpoints)


def test_none_keeps_no_obligation_but_conflict_and_holds_every_invariant(
    run: tuple[Path, dict],
) -> None:
    _, m = run
    for condition in aoep_design().row("none"):
        card = m["aoep"][condition]
        for kind, tally in card["obligations"]["kinds"].items():
            if kind != "conflict":
                assert tally["passed"] == 0, (condition, kind)
        assert card["invariants"]["passed"] == card["invariants"]["total"], condition
        assert m["conditions"][condition]["state_correctness"] == 0.0


# --- extract: ideal extraction, no governance ------------------------------------------


def test_extract_follows_supersessions_better_than_append(run: tuple[Path, dict]) -> None:
    _, m = run
    c, aoep = m["conditions"], m["aoep"]
    assert c["Extract/Native"]["state_correctness"] > c["Append/Native"]["state_correctness"]
    extract = aoep["Extract/Native"]["obligations"]["kinds"]["transition"]
    append = aoep["Append/Native"]["obligations"]["kinds"]["transition"]
    # the correction c1-012 (flight 9:40) and the supersession c2-001 (Hotel Kaiser)
    for event in ("c1-012#1", "c2-001#1"):
        assert event in append["failed"] and event not in extract["failed"], event
    assert extract["passed"] > append["passed"]


def test_extract_promotes_a_value_only_a_tool_turn_states(run: tuple[Path, dict]) -> None:
    _, m = run
    for condition in aoep_design().row("extract"):
        promotion = m["aoep"][condition]["invariants"]["kinds"]["promotion"]
        # c2-003, a forwarded e-mail: "your Rome flight now departs at 6:05"
        assert "flight_time=06:05" in promotion["failed"], condition


def test_extracts_forget_leaves_residue_in_mem0s_history(
    run: tuple[Path, dict], final_stores: dict[str, list[Any]]
) -> None:
    run_dir, m = run
    for condition in aoep_design().row("extract"):
        assert m["conditions"][condition]["deletion_residue"] == 1.0
        assert "c2-006#1" in m["aoep"][condition]["obligations"]["kinds"]["forget"]["failed"]
    forgets = [f for f in records(run_dir, "forgets") if f["producer"] == "extract"]
    assert forgets and all(f["residue"] for f in forgets)
    # the record itself is gone: DELETE removed the point, Mem0's history kept its text
    assert not any("dentist" in p.text for p in final_stores["extract"])
    assert m["conditions"]["PLACE"]["deletion_residue"] == 0.0


# --- recency and fullcontext on the real stack ------------------------------------------


def after_last_write(run_dir: Path, condition: str) -> list[dict[str, Any]]:
    """World-a primary reads of `condition` after the trajectory's last write (c2-006/7):
    they all read the store as it ends."""
    queries = records(run_dir, "queries")
    return [
        q
        for q in queries
        if q["condition"] == condition
        and q["world"] == "a"
        and q["mode"] == "primary"
        and q["turn"] > "c2-007"
        and q["turn"].startswith("c2-")
    ]


def test_recency_exposes_the_k_newest_whatever_the_question(
    run: tuple[Path, dict], final_stores: dict[str, list[Any]]
) -> None:
    run_dir, _ = run
    for producer, condition in (("append", "Append/Recency"), ("css", "CSS/Recency")):
        newest = sorted(
            final_stores[producer], key=lambda p: written_order(p.id, p.metadata), reverse=True
        )
        reads = after_last_write(run_dir, condition)
        assert len({q["question"] for q in reads}) >= 5  # different questions...
        for q in reads:  # ...the same k newest records, newest first
            assert [i["id"] for i in q["exposed"]] == [p.id for p in newest[:K]], q["query"]
    native = after_last_write(run_dir, "Append/Native")
    assert len({tuple(i["id"] for i in q["exposed"]) for q in native}) > 1  # similarity differs


def test_fullcontext_exposes_the_newest_that_fit_the_budget_oldest_first(
    run: tuple[Path, dict], final_stores: dict[str, list[Any]]
) -> None:
    run_dir, _ = run
    for producer, condition in (("append", "Append/Fullcontext"), ("css", "CSS/Fullcontext")):
        newest = sorted(
            final_stores[producer], key=lambda p: written_order(p.id, p.metadata), reverse=True
        )
        taken, used = [], 0
        for point in newest:
            if used + len(point.text) > BUDGET:
                break
            taken.append(point)
            used += len(point.text)
        assert 0 < len(taken) < len(newest)  # the budget binds
        expected = [p.id for p in reversed(taken)]
        for q in after_last_write(run_dir, condition):
            assert [i["id"] for i in q["exposed"]] == expected, q["query"]
            assert sum(len(i["text"]) for i in q["exposed"]) <= BUDGET


# --- the metadata every producer writes -------------------------------------------------


def test_every_record_of_every_producer_carries_date_counter_and_speaker(
    final_stores: dict[str, list[Any]],
) -> None:
    for producer in ("append", "extract", "css"):
        points = final_stores[producer]
        assert points, producer
        for p in points:
            assert p.metadata["written_on"] in ("2026-05-04", "2026-05-18"), producer
            assert isinstance(p.metadata["written_seq"], int), producer
            assert p.metadata["speaker"] == SMOKE.principal, producer
        seqs = [p.metadata["written_seq"] for p in points]
        assert len(set(seqs)) == len(seqs), producer  # one number per record
    # append writes the messages in order: its counter follows the dialogue
    append = sorted(final_stores["append"], key=lambda p: p.metadata["written_seq"])
    assert append[0].text == SMOKE.conversations[0].turns[0].text


def test_native_records_carry_the_metadata_too(tmp_path: Path) -> None:
    """The FAKE Mem0 LLM of the run extracts nothing; here it extracts one fact."""
    from fakes.mem0_llm import FakeMem0LLM

    conv = SMOKE.conversations[0]
    fact = "Sam's flight to Rome is at 7:15"
    llm = FakeMem0LLM.scripted([fact], {"memory": [{"id": "0", "text": fact, "event": "ADD"}]})
    with inprocess.backend(tmp_path, llm) as backend:
        store = backend.open("native", SMOKE.principal)
        build_writer("native", store, SMOKE.schema, READBACK).write(conv.turns[:2], conv)
        points = store.scan().points
        store.close()
    assert [p.text for p in points] == ["Sam's flight to Rome is at 7:15"]
    assert points[0].metadata == {
        "written_on": "2026-05-04",
        "written_seq": 1,
        "speaker": "sam",
        "source_turns": ["c1-001", "c1-002"],  # the step's written turns (docs/method.md §16.2)
    }


# --- extract and the counter on a real store, step by step --------------------------------


def steps() -> list[tuple[tuple[Turn, ...], Conversation]]:
    return [(u.turns, u.conversation) for u in build_plan(SMOKE) if u.kind == "step"]


def step_with(turn_id: str) -> tuple[tuple[Turn, ...], Conversation]:
    return next((t, c) for t, c in steps() if any(x.id == turn_id for x in t))


def test_extract_adds_updates_and_deletes_as_mem0_would(tmp_path: Path) -> None:
    with inprocess.backend(tmp_path) as backend:
        store = backend.open("extract", SMOKE.principal)
        try:
            extract_smoke(store)
        finally:
            store.close()


def extract_smoke(store: Any) -> None:
    writer = build_writer("extract", store, SMOKE.schema, READBACK)
    ops: dict[str, list[dict[str, Any]]] = {}
    for turns, conv in steps():
        done = writer.write(turns, conv)
        assert done.failures == [] and done.llm_calls == []
        ops[turns[0].id] = done.operations
    # a new slot: ADD of one sentence that β reads back
    assert [(o["event"], o["memory"]) for o in ops["c1-001"]] == [
        ("ADD", "Sam's flight (Rome) departs at 07:15")
    ]
    # two values of a `one` slot in one message: ADD, then UPDATE of that record (the
    # window the user stated is lost)
    assert [o["event"] for o in ops["c1-010"]] == ["ADD", "UPDATE"]
    # a correction: UPDATE of the slot's record, the old text kept in Mem0's history
    (fix,) = ops["c1-012"]
    assert fix["event"] == "UPDATE" and fix["previous"].endswith("07:15")
    assert fix["memory"] == "Sam's flight (Rome) departs at 09:40"
    history = store.scan().history_for(fix["id"])
    assert [r.event for r in history] == ["ADD", "UPDATE", "UPDATE"]
    # a forwarded tool turn is written like the user's own word: promotion
    (tool,) = ops["c2-003"]
    assert (tool["event"], tool["memory"]) == ("UPDATE", "Sam's flight (Rome) departs at 06:05")
    # a value the message negates is not stated; one already held is Mem0's NONE
    assert ops["c2-005"] == []
    # the request to forget: DELETE, and Mem0's history keeps the text
    (forget,) = ops["c2-006"]
    assert forget["event"] == "DELETE" and "dentist" in forget["memory"]
    scan = store.scan()
    assert scan.point(forget["id"]) is None
    assert scan.history_for(forget["id"])[-1].event == "DELETE"
    assert scan.contains("2026-05-12")
    # assistant replies are not read ("Got it: a 7:15 flight for Rome." states a fact)
    texts = {p.text for p in scan.points}
    assert texts == {
        "Sam's flight (Rome) departs at 06:05",
        "Sam's hotel for Rome is Hotel Fiore",
        "Rita's hotel for Rome is Hotel Luce",
        "Sam's hotel for Vienna is Hotel Kaiser",
        "Sam's dietary requirement: vegetarian",
        "Sam's dietary requirement: nut allergy",
        "Sam's budget for Rome is 1500 EUR",
        "Sam sits at desk 14",
    }
    # no lifecycle metadata: the date, the counter, the speaker and the source turn only
    keys = {"written_on", "written_seq", "speaker", "source_turns"}
    assert all(set(p.metadata) == keys for p in scan.points)
    assert all(len(p.metadata["source_turns"]) == 1 for p in scan.points)  # the user turn
    updated = next(p for p in scan.points if p.id == fix["id"])
    assert updated.metadata["written_seq"] > min(p.metadata["written_seq"] for p in scan.points)


def test_a_message_asking_to_forget_a_slot_keeps_nothing_of_it(tmp_path: Path) -> None:
    conv = SMOKE.conversations[1]
    said = "I moved it to 26 May, but please forget my dentist appointment."
    turns = (Turn("x-1", "user", said),)
    with inprocess.backend(tmp_path) as backend:
        store = backend.open("extract", SMOKE.principal)
        writer = build_writer("extract", store, SMOKE.schema, READBACK)
        writer.write((Turn("x-0", "user", "Dentist is on 12 May."),), conv)
        done = writer.write(turns, conv)
        points = store.scan().points
        store.close()
    assert [o["event"] for o in done.operations] == ["DELETE"]
    assert points == ()


def test_world_b_continues_the_stores_counter(tmp_path: Path) -> None:
    turns, conv = step_with("c1-003")
    with inprocess.backend(tmp_path) as backend:
        for producer in ("append", "extract", "css"):
            store = backend.open(producer, SMOKE.principal)
            writer = build_writer(producer, store, SMOKE.schema, READBACK)
            writer.write(*step_with("c1-001"))
            writer.write(turns, conv)
            top = max(p.metadata["written_seq"] for p in store.scan().points)
            clone = store.clone(f"{producer}__b")
            writer.fork(clone).write(*step_with("c1-005"))
            added = [
                p.metadata["written_seq"]
                for p in clone.scan().points
                if p.metadata["written_seq"] > top
            ]
            assert added and min(added) == top + 1, producer
            # the source store's next record continues its own count, not the clone's
            writer.write(*step_with("c1-006"))
            assert max(p.metadata["written_seq"] for p in store.scan().points) == top + (
                2 if producer == "append" else 1
            ), producer
            clone.drop()
            store.close()


def test_the_counter_is_the_same_after_a_resume(tmp_path: Path) -> None:
    """A writer rebuilt mid-run (resume) numbers the next record as the first writer would."""
    first, second = step_with("c1-001"), step_with("c1-003")
    seqs = []
    for run, rebuild in (("one", False), ("two", True)):
        with inprocess.backend(tmp_path / run) as backend:
            store = backend.open("append", SMOKE.principal)
            writer = build_writer("append", store, SMOKE.schema, READBACK)
            writer.write(*first)
            if rebuild:
                writer = build_writer("append", store, SMOKE.schema, READBACK)
                writer.resume([first])
            writer.write(*second)
            seqs.append(sorted((p.metadata["written_seq"], p.text) for p in store.scan().points))
            store.close()
    assert seqs[0] == seqs[1] and [s for s, _ in seqs[0]] == [1, 2, 3, 4]


def test_css_records_carry_the_metadata_beside_their_lifecycle(tmp_path: Path) -> None:
    first = steps()[:6]  # asserts only: each event adds one record
    with inprocess.backend(tmp_path) as backend:
        store = backend.open("css", SMOKE.principal)
        writer = build_writer("css", store, SMOKE.schema, READBACK)
        for turns, conv in first:
            writer.write(turns, conv)
        points = store.scan().points
        store.close()
    assert points and all(p.metadata["place_lifecycle"] == "1" for p in points)
    in_order = sorted(points, key=lambda p: p.metadata["written_seq"])
    applied = [e.id for turns, _ in first for t in turns for e in t.events]
    assert [p.metadata["event_id"] for p in in_order] == applied
    assert [p.metadata["written_seq"] for p in in_order] == list(range(1, len(applied) + 1))
    assert {p.metadata["speaker"] for p in points} == {SMOKE.principal}
    assert in_order[0].metadata["written_on"] == SMOKE.conversations[0].date.isoformat()
