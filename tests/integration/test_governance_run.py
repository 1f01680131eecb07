"""The governance half of AOEP-v0 through the real runner (docs/method.md §11).

`design=aoep` on trajectories/aoep-pilot.yaml, in-process, on the real stack (Mem0, Qdrant
local mode, MiniLM) with the FAKE models of tests/fakes/ (the act gate and the ledger need
no model): the certified ledger's Γ^phys equals Γ* at every governed checkpoint, the act
gate decides every task as the reference does on the CSS row under QASC, and producers
without a ledger never carry out a permission task.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import inprocess
import pytest

from place.design import make_design
from place.reference.validate import load_trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
AOEP = make_design(
    "aoep",
    ["none", "append", "extract", "native", "css"],
    ["native", "recency", "fullcontext", "qasc"],
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("aoep") / "run"
    trajectory = load_trajectory(ROOT / "trajectories" / "aoep-pilot.yaml")
    metrics = inprocess.run_inprocess(out, trajectory, AOEP, plots=False)
    assert metrics["factorization"]["ok"], metrics["factorization"]
    return out


def aoep(run: Path) -> dict[str, Any]:
    return json.loads((run / "metrics.json").read_text())["aoep"]


def test_place_keeps_every_answer_free_obligation_and_holds_every_invariant(run: Path) -> None:
    """docs/method.md §11's facts on every model: PLACE passes every item that reads no
    answer on the pilot trajectory."""
    place = aoep(run)["PLACE"]["model_independent"]
    for family in ("obligations", "invariants"):
        assert place[family]["passed"] == place[family]["total"] > 0, (family, place[family])


def test_none_keeps_no_answer_free_obligation_and_holds_every_invariant(run: Path) -> None:
    for name, card in aoep(run).items():
        if name.startswith("None/"):
            tally = card["model_independent"]
            assert tally["obligations"]["passed"] == 0, (name, tally["obligations"])
            assert tally["invariants"]["passed"] == tally["invariants"]["total"], name


def test_a_producer_without_a_ledger_fails_every_governance_obligation(run: Path) -> None:
    for name, card in aoep(run).items():
        if name.split("/")[0] in ("None", "Append", "Extract", "Native", "QASC"):
            for kind in ("epoch", "block", "surface", "rollback"):
                item = card["obligations"]["kinds"][kind]
                assert item["total"] > 0 and item["passed"] == 0, (name, kind, item)


def records(run: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "records" / f"{name}.jsonl").open()]


def test_the_ledger_holds_the_reference_governance_at_every_checkpoint(run: Path) -> None:
    governed = [c for c in records(run, "checkpoints") if c["governance"] is not None]
    assert {c["checkpoint"] for c in governed} == {"post-update", "pre-task"}
    for c in governed:
        gov = c["governance"]
        if c["condition"] in ("CSS", "PLACE", "CSS/Recency", "CSS/Fullcontext"):
            assert gov["observed"] == gov["reference"], (c["turn"], c["condition"])
        else:  # no ledger: Γ^phys is empty
            assert gov["observed"] == {k: [] for k in gov["observed"]}, c["condition"]
    assert any(c["governance"]["reference"]["requests"] for c in governed)


def test_place_decides_every_task_as_the_reference_does(run: Path) -> None:
    tasks = [t for t in records(run, "tasks") if t["condition"] == "PLACE"]
    assert {t["task"] for t in tasks} == {"t1", "t2", "t3", "t4", "t5", "t6"}
    for t in tasks:
        ref, got = t["reference"], t["decision"]
        if t["redelivery"]:
            assert got["kind"] == "duplicate", t["delivery"]
        elif ref["decision"] == "allow":
            assert got["kind"] == "execute" and got["args"] == ref["args"], t["task"]
            assert got["handle"] == t["request"] and got["sources"], t["task"]
            assert set(got["sources"]) <= set(ref["links"]), t["task"]
        else:
            assert got["kind"] == "block" and set(got["reasons"]) <= set(ref["reasons"])


def test_no_producer_without_a_ledger_carries_out_a_permission_task(run: Path) -> None:
    ledgerless = ("None", "Append", "Extract", "Native")
    for t in records(run, "tasks"):
        if t["condition"].split("/")[0] in ledgerless and t["task"] in ("t1", "t2", "t3"):
            assert t["decision"]["kind"] == "no-support", (t["task"], t["condition"])
        if t["condition"].startswith("None/"):
            assert t["decision"]["kind"] != "execute"


def test_reads_carry_their_asker_date_and_visibility(run: Path) -> None:
    queries = records(run, "queries")
    trajectory = load_trajectory(ROOT / "trajectories" / "aoep-pilot.yaml")
    asked_by = {t.query.id: trajectory.speaker_of(t) for _c, t, _q in trajectory.queries()}
    assert all(q["asker"] == asked_by[q["query"]] for q in queries)
    assert all(q["read_on"] for q in queries)
    probes = records(run, "probes")
    assert all(p["follows"] is not None for p in probes)
    # Under QASC nothing the asker may not see is exposed; a plain store can expose it.
    place = [q for q in queries if q["condition"] == "PLACE" and q["world"] == "a"]
    assert all(f["visible"] for q in place for item in q["exposed"] for f in item["facts"])


def test_world_b_steps_name_their_pair(run: Path) -> None:
    steps = records(run, "steps")
    assert all(s["query"] for s in steps if s["world"] == "b")
    assert all(s["query"] is None for s in steps if s["world"] == "a")


def test_a_plain_summary_keeps_a_forgotten_value_a_derived_one_does_not(run: Path) -> None:
    """AOEP-v0's c4 (docs/method.md §11, §14): the summaries written at the compaction point
    after c4-02 hold Dr Lind; the forget at c4-03 leaves Append's and Extract's plain
    summaries as they are (residue found in a `summary`), and CSS rebuilds its derived one
    without the forgotten fact (no residue anywhere)."""
    written = {c["producer"]: c for c in records(run, "compactions")}
    assert set(written) == set(AOEP.producers)
    assert all(c["after"] == "c4-02" and c["entity"] == "nora" for c in written.values())
    assert written["none"]["operations"] == []
    for producer in ("append", "extract"):
        (op,) = written[producer]["operations"]
        assert op["event"] == "SUMMARY" and "Dr Lind" in op["memory"], producer
    (css_op,) = written["css"]["operations"]
    assert len(css_op["added"]) == 1
    therapist = [f for f in records(run, "forgets") if f["slot"][1] == "therapist"]
    assert {f["check"] for f in therapist} == {"after", "end"}
    for f in therapist:
        where = {w for entry in f["where"] for w in entry.split("+")}
        if f["producer"] in ("append", "extract"):
            assert "summary" in where, f
        if f["producer"] == "css":
            assert f["residue"] == [], f


def test_the_evidence_log_holds_every_written_turn_and_no_forgotten_value(run: Path) -> None:
    """V (docs/method.md §12.1) in CSS's store at the end of the run: one entry per turn CSS
    was given (never two for a turn; the redeliveries c1-05 and c8-03 add nothing), the
    forgotten therapist and locker code redacted from every entry that said them."""
    import sqlite3

    with sqlite3.connect(run / "side_tables" / "css.db") as db:
        rows = [
            json.loads(m)
            for (m,) in db.execute("SELECT metadata FROM side_rows WHERE tbl = 'evidence'")
        ]
    turns = [r["turn"] for r in rows]
    assert len(turns) == len(set(turns)) > 0
    assert not {"c1-05", "c8-03"} & set(turns)
    assert {"c4-01", "c4-02", "c4-03", "c9-01"} <= set(turns)
    said = {r["turn"]: r for r in rows}
    assert "Dr Lind" not in json.dumps(rows) and "[forgotten]" in said["c4-01"]["text"]
    assert "4512" not in json.dumps(rows) and "[forgotten]" in said["c1-01"]["text"]
    assert said["c9-01"]["trust"] == "untrusted" and said["c4-02"]["trust"] == "none"
