"""A run directory is never corrupted by an ordinary mistake (issue #26).

On the real stack (llama.cpp serving SmolLM2-135M, answered from the smoke recording's
committed LLM cache in replay-only mode, real Mem0, Qdrant local mode and MiniLM): a run of
the smoke trajectory is killed part-way (kill -9), then runs with another trajectory,
design, model or seed are pointed at its directory. Each is refused with exit 2, naming the
setting and both values, and leaves every file of the directory byte for byte as it was.
The interrupted run then resumes and ends with the recording's metrics, and a second run
into the finished directory is refused the same way.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from smoke_runs import ROOT, finish, kill_group, place_run, units_done

from place import faults

pytestmark = [pytest.mark.slow, pytest.mark.integration]

RECORDED = ROOT / "experiments" / "smoke" / "smollm2-135m"


def snapshot(run_dir: Path) -> dict[str, str]:
    """sha256 of every file under the directory, by relative path."""
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file()
    }


def run(
    run_dir: Path, cache: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    return place_run(run_dir, "cache.mode=replay-only", f"cache.path={cache}", *extra, env=env)


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A smoke run killed after its first certified writes, and its cache (a copy of the
    recording's)."""
    root = tmp_path_factory.mktemp("guard")
    cache = root / "llm_cache.sqlite"
    shutil.copy(RECORDED / "llm_cache.sqlite", cache)
    run_dir = root / "run"
    proc = run(run_dir, cache, env={faults.ENV: "css-verify@3:kill"})
    proc.communicate(timeout=1800)
    kill_group(proc)
    assert proc.returncode == -signal.SIGKILL
    assert units_done(run_dir) > 0
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "running"
    return run_dir, cache


# Each override changes what the run records; the message names the key and both values.
OTHER_SETTINGS = {
    "trajectory": (["trajectory=primary"], "trajectory (sha256): "),
    "design": (["design=extended"], "design.policies: [native, qasc] in the directory != "),
    "model": (["model.name=smollm2-other"], "model.name: smollm2-135m in the directory != "),
    "seed": (["model.seed=7"], "model.seed: 42 in the directory != 7 for this run"),
}


def refused(run_dir: Path, cache: Path, overrides: list[str], expected: str) -> None:
    before = snapshot(run_dir)
    proc = run(run_dir, cache, *overrides)
    out, _ = proc.communicate(timeout=600)
    text = out.decode(errors="replace")
    assert proc.returncode == 2, text[-3000:]
    assert expected in text, text[-3000:]
    assert "Traceback" not in text
    assert snapshot(run_dir) == before  # nothing in the directory changed, .hydra included


@pytest.mark.parametrize("what", list(OTHER_SETTINGS))
def test_another_run_into_an_interrupted_directory_is_refused_and_changes_nothing(
    interrupted: tuple[Path, Path], what: str
) -> None:
    run_dir, cache = interrupted
    overrides, expected = OTHER_SETTINGS[what]
    refused(run_dir, cache, overrides, expected)


def test_run_check_reports_the_refusal_too(interrupted: tuple[Path, Path]) -> None:
    run_dir, cache = interrupted
    refused(run_dir, cache, ["--check", "model.seed=7"], "model.seed: 42 in the directory")


def test_the_same_run_resumes_then_a_finished_directory_is_never_reopened(
    interrupted: tuple[Path, Path],
) -> None:
    run_dir, cache = interrupted
    # The same settings resume (a record-neutral setting may differ: here the progress bar).
    finish(run(run_dir, cache, "progress=true"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and len(manifest["resumed"]) == 1
    assert json.loads((run_dir / "metrics.json").read_text()) == json.loads(
        (RECORDED / "metrics.json").read_text()
    )
    refused(run_dir, cache, [], "holds a finished run (manifest status 'complete')")
    for overrides, _ in OTHER_SETTINGS.values():
        refused(run_dir, cache, overrides, "holds a finished run")
