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
    assert m["schema"] == "place-metrics/1"
    assert m["factorization"]["ok"] and m["factorization"]["mismatches"] == 0
    assert m["factorization"]["checkpoints"] == (
        m["counts"]["post_update_checkpoints"] + m["counts"]["pre_query_checkpoints"]
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
