"""The whole factorial on the smoke trajectory with the real stack (SmolLM2 behind llama.cpp,
Mem0 on Qdrant local mode, MiniLM), then a killed-and-resumed run of the same job."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from smoke_runs import (
    PLACE,
    ROOT,
    assert_same_results,
    finish,
    kill_group,
    kill_when,
    metrics,
    place_run,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_structural_facts_of_the_factorial(cold_run: Path) -> None:
    m = metrics(cold_run)
    c = m["conditions"]
    assert m["schema"] == "place-metrics/6"
    assert m["factorization"]["ok"] and m["factorization"]["mismatches"] == 0
    # Every post-update and pre-query checkpoint of world a, and every world b.
    assert m["factorization"]["checkpoints"] == (
        m["counts"]["post_update_checkpoints"]
        + m["counts"]["pre_query_checkpoints"]
        + m["counts"]["pairs"]
    )
    assert c["CSS"]["state_correctness"] == 1.0
    assert c["PLACE"]["state_correctness"] == 1.0
    assert c["QASC"]["exposure_rate"] == 0.0
    assert c["PLACE"]["exposure_rate"] == 0.0
    assert c["QASC"]["closed_loop"]["exposure_rate"] == 0.0
    assert c["PLACE"]["closed_loop"]["exposure_rate"] == 0.0
    assert c["PLACE"]["leakage_rate"] == 0.0 and c["PLACE"]["leakage_n"] == m["counts"]["pairs"]
    assert c["PLACE"]["needed_support"] == 1.0
    assert c["CSS"]["deletion_residue"] == 0.0
    # Both read policies of a row read the same store, so state metrics agree within rows.
    assert c["Native"]["state_correctness"] == c["QASC"]["state_correctness"]
    manifest = json.loads((cold_run / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["model_identity"]["identity"].startswith("sha256:")
    assert manifest["cache"]["misses"] > 0
    for name in ("table1a", "table1b", "table2a", "table2b"):
        for ext in ("tex", "csv"):
            assert (cold_run / "tables" / f"{name}.{ext}").stat().st_size > 0
    for plot in ("state_correctness", "effects", "families"):
        assert (cold_run / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"


# The smoke trajectory's AOEP items (docs/method.md §10): 1 forget, 4 transitions (2 supersedes,
# 1 correction, 1 retract), 6 queries with non-empty Q*, 4 conflict probes; 1 deletion
# item, 3 untrusted values (one forwarded in world a, two in world-b inserts), 8 queries +
# 6 probes read for exposure.
AOEP_TOTALS = {
    "forget": 1,
    "transition": 4,
    "support": 6,
    "conflict": 4,
    "deletion": 1,
    "promotion": 3,
    "exposure": 14,
    # The primary trajectory has no principals, tasks, restarts or rollbacks: the scorecard
    # still lists the governance kinds, each with no items.
    "act": 0,
    "epoch": 0,
    "block": 0,
    "surface": 0,
    "rollback": 0,
    "authority": 0,
    "traceability": 0,
    "non-exposure": 0,
    "idempotence": 0,
}


def test_aoep_scorecard_of_the_factorial(cold_run: Path) -> None:
    aoep = metrics(cold_run)["aoep"]
    assert list(aoep) == ["Native", "CSS", "QASC", "PLACE"]
    for condition, card in aoep.items():
        kinds = {**card["obligations"]["kinds"], **card["invariants"]["kinds"]}
        assert {k: v["total"] for k, v in kinds.items()} == AOEP_TOTALS, condition
    for certified in ("CSS", "PLACE"):
        kinds = {
            **aoep[certified]["obligations"]["kinds"],
            **aoep[certified]["invariants"]["kinds"],
        }
        # Certified writes carry out the forget, reflect every lifecycle event, never hold a
        # forwarded value, and nothing forgotten is shown again (whatever the model says).
        assert kinds["forget"]["passed"] == 1, certified
        assert kinds["transition"]["passed"] == 4, certified
        assert kinds["promotion"]["passed"] == 3, certified
        assert kinds["deletion"]["passed"] == 1, certified
    place = aoep["PLACE"]
    assert place["invariants"]["kinds"]["exposure"] == {"passed": 14, "total": 14, "failed": []}
    assert place["obligations"]["kinds"]["support"]["passed"] == 6
    # CSS reads without eligibility: the certified store's superseded records reach the model.
    assert aoep["CSS"]["invariants"]["kinds"]["exposure"]["passed"] < 14
    for ext in ("tex", "csv"):
        assert "PLACE" in (cold_run / "tables" / f"aoep.{ext}").read_text()
    assert "AOEP scorecard" in (cold_run / "tables" / "tables.md").read_text()
    assert (cold_run / "plots" / "aoep.png").read_bytes()[:4] == b"\x89PNG"


def test_records_carry_what_a_recomputation_needs(cold_run: Path) -> None:
    def lines(name: str) -> list[dict]:
        return [json.loads(x) for x in (cold_run / "records" / name).read_text().splitlines()]

    checkpoints, queries, probes = (
        lines("checkpoints.jsonl"),
        lines("queries.jsonl"),
        lines("probes.jsonl"),
    )
    m = metrics(cold_run)
    world_b = {c["query"] for c in checkpoints if c["world"] == "b"}
    assert len(world_b) == m["counts"]["pairs"]
    assert all(len(f) == 6 for c in checkpoints for f in c["observed"] + c["reference"])
    # Scheduled and windowed facts of the smoke trajectory show up with their windows.
    assert any(f[4] or f[5] for c in checkpoints for f in c["reference"])
    assert all("authorized_a" in q and "authorized_b" in q for q in queries)
    certified = [
        e for q in queries if q["condition"] == "PLACE" for e in q["exposed"] if e["lifecycle"]
    ]
    assert certified and all(e["lifecycle"]["status"] for e in certified)
    conflict = [p for p in probes if p["conflict_value"] is not None]
    assert conflict and all(p["injected"]["raw_answer"] is not None for p in conflict)
    assert all(p["clean"]["raw_answer"] is None for p in probes)
    assert all(p["injected"] is None for p in probes if p["conflict_value"] is None)


def test_a_factorization_mismatch_invalidates_the_run(cold_run: Path, tmp_path: Path) -> None:
    """A fault perturbs the Native row's store between its two reads at the first checkpoint:
    the run keeps its records, is marked invalid, and `place run`/`place report` exit 3."""
    run_dir = tmp_path / "perturbed"
    run_dir.mkdir()
    shutil.copy(cold_run / "llm_cache.sqlite", run_dir / "llm_cache.sqlite")
    proc = place_run(
        run_dir, "experiment=primary", env={"PLACE_FAULT": "checkpoint-read@1:perturb"}
    )
    out = proc.communicate(timeout=1800)[0].decode()
    assert proc.returncode == 3, out[-3000:]
    assert "INVALID: factorization" in out and "Traceback" not in out
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["invalid"] == "factorization"
    first = manifest["first_mismatch"]
    assert first.endswith("(post-update, world a): Native != QASC"), first
    m = metrics(run_dir)
    assert not m["factorization"]["ok"] and m["factorization"]["first_mismatch"] == first
    assert (run_dir / "records" / "queries.jsonl").stat().st_size > 0  # records kept
    for name in ("table1a", "table1b", "table2a", "table2b"):
        assert "INVALID: factorization" in (run_dir / "tables" / f"{name}.tex").read_text()
        assert (run_dir / "tables" / f"{name}.csv").read_text().startswith("# INVALID")
    assert (run_dir / "tables" / "tables.md").read_text().count(
        "> **INVALID"
    ) == 8  # Tables 1 A, 1 B, 2 A, 2 B, 3 (the citation lock), 4 A, 4 B and the scorecard
    report = subprocess.run(
        [*PLACE, "report", str(run_dir), "--no-plots"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert report.returncode == 3, report.stderr
    assert "INVALID" in report.stderr and "Traceback" not in report.stderr


def test_report_recomputes_metrics_from_records_alone(cold_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(cold_run / "records", copy / "records")
    shutil.copy(cold_run / "manifest.json", copy / "manifest.json")
    done = subprocess.run(
        [*PLACE, "report", str(copy), "--no-plots"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (copy / "metrics.json").read_bytes() == (cold_run / "metrics.json").read_bytes()


def test_killed_then_resumed_run_is_byte_identical(cold_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "resumed"
    run_dir.mkdir()
    # The cold run's cache pins the model's answers, so any difference is the harness's.
    shutil.copy(cold_run / "llm_cache.sqlite", run_dir / "llm_cache.sqlite")
    for units in (3, 11, 19):
        kill_when(place_run(run_dir), run_dir, units)
    finish(place_run(run_dir))
    assert_same_results(run_dir, cold_run)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["cache"]["misses"] == 0  # nothing was asked twice of the model


def test_a_second_run_on_a_locked_directory_is_refused(cold_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "locked"
    run_dir.mkdir()
    shutil.copy(cold_run / "llm_cache.sqlite", run_dir / "llm_cache.sqlite")
    first = place_run(run_dir)
    try:
        wait_for(run_dir / "progress.json")
        second = place_run(run_dir)
        out = second.communicate(timeout=600)[0].decode()
        assert second.returncode == 2
        assert "in use by another place run" in out
    finally:
        kill_group(first)
