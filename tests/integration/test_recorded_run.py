"""The committed recorded run replays, in replay-only cache mode, to identical metrics.

This is the reproducibility check of the harness: any change to prompts, store contents,
read policies or metrics that alters the recorded experiment shows up here as a cache miss
or a metrics difference.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from place.runner.replay import replay_argv

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ROOT = Path(__file__).parents[2]
RUNS = {
    "primary": ROOT / "experiments" / "primary" / "smollm2-135m",
    "smoke": ROOT / "experiments" / "smoke" / "smollm2-135m",
    "primary-extended": ROOT / "experiments" / "primary-extended" / "smollm2-135m",
    "aoep-pilot": ROOT / "experiments" / "aoep-pilot" / "smollm2-135m",
    "primary-aoep": ROOT / "experiments" / "primary-aoep" / "smollm2-135m",
    "primary-ssgm": ROOT / "experiments" / "primary-ssgm" / "smollm2-135m",
}
TRAJECTORY = {
    "primary": "primary",
    "smoke": "smoke",
    "primary-extended": "primary",
    "aoep-pilot": "aoep-pilot",
    "primary-aoep": "primary",
    "primary-ssgm": "primary",
}
DESIGN = {
    "primary": "paper",
    "smoke": "paper",
    "primary-extended": "extended",
    "aoep-pilot": "aoep",
    "primary-aoep": "aoep",
    "primary-ssgm": "ssgm",
}
recorded = pytest.mark.parametrize("RECORDED", list(RUNS.values()), ids=list(RUNS))


@recorded
def test_the_recorded_run_is_committed_complete(RECORDED: Path) -> None:
    manifest = json.loads((RECORDED / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert "invalid" not in manifest
    assert manifest["git"]["dirty"] is False  # recorded on a clean commit
    name = RECORDED.parent.name
    assert manifest["header"]["trajectory"]["id"] == TRAJECTORY[name]
    assert (manifest["header"].get("design") or {"name": "paper"})["name"] == DESIGN[name]
    for name in ("checkpoints", "queries", "probes", "steps", "forgets"):
        assert (RECORDED / "records" / f"{name}.jsonl").stat().st_size > 0
    # hashes and responses only: the cache has no column that could hold a prompt
    import sqlite3

    with sqlite3.connect(RECORDED / "llm_cache.sqlite") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(llm_calls)")]
    # meta (finish reason, token counts) exists in caches recorded since it was kept
    assert columns[:3] == ["key", "response", "created"] and columns[3:] in ([], ["meta"])


@recorded
def test_recorded_run_replays_to_identical_metrics(RECORDED: Path, tmp_path: Path) -> None:
    manifest = json.loads((RECORDED / "manifest.json").read_text())
    cache = tmp_path / "llm_cache.sqlite"
    shutil.copy(RECORDED / "llm_cache.sqlite", cache)
    run_dir = tmp_path / "replay"
    done = subprocess.run(
        replay_argv(manifest, run_dir, cache),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3000,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    replayed = json.loads((run_dir / "metrics.json").read_text())
    assert replayed == json.loads((RECORDED / "metrics.json").read_text())
    assert json.loads((run_dir / "manifest.json").read_text())["cache"]["misses"] == 0


@recorded
def test_recorded_metrics_are_recomputable_from_its_records(
    RECORDED: Path,
    tmp_path: Path,
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(RECORDED / "records", copy / "records")
    shutil.copy(RECORDED / "manifest.json", copy / "manifest.json")
    done = subprocess.run(
        [sys.executable, "-m", "place.cli", "report", str(copy), "--no-plots"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (copy / "metrics.json").read_bytes() == (RECORDED / "metrics.json").read_bytes()
