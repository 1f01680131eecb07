"""An answer-free study as a parallel Hydra multirun (joblib launcher), interrupted and
resumed by running the same command again (docs/population.md): the finished jobs are
skipped, the interrupted ones resume, and every job comes out as in an uninterrupted study."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ROOT = Path(__file__).parents[2]
SEEDS = (0, 1, 2)
STUDY = [
    "hydra/launcher=place_joblib",
    "experiment=state",
    "trajectory=generated",
    f"trajectory.seed={','.join(map(str, SEEDS))}",
    "design.name=resume",
    "design.producers=[append]",
    "design.policies=[native,qasc]",
    "plots=false",
    "progress=false",
    "hydra.sweep.subdir=${hydra.job.num}",
]


def _study(sweep_dir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "place.cli", "run", "-m", *STUDY, f"hydra.sweep.dir={sweep_dir}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its loky workers too: killed as one group
    )


def _status(job: Path) -> str | None:
    try:
        return json.loads((job / "manifest.json").read_text())["status"]
    except (OSError, ValueError, KeyError):
        return None


def _finish(proc: subprocess.Popen[bytes]) -> str:
    out, _ = proc.communicate(timeout=1200)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-3000:]
    return text


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    root = tmp_path_factory.mktemp("study")
    whole, resumed = root / "whole", root / "resumed"
    _finish(_study(whole))
    proc = _study(resumed)
    jobs = [resumed / str(n) for n in range(len(SEEDS))]
    deadline = time.monotonic() + 900
    # Interrupt once some job is complete and another is not (and has begun).
    while time.monotonic() < deadline and proc.poll() is None:
        states = [_status(j) for j in jobs]
        if "complete" in states and "running" in states:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the study ended before it could be interrupted"
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert {_status(j) for j in jobs} - {"complete"}, "nothing was left to resume"
    return whole, resumed, _finish(_study(resumed))


def test_the_same_command_resumes_the_study(studies: tuple[Path, Path, str]) -> None:
    _whole, resumed, output = studies
    assert "complete already, skipped" in output
    for n in range(len(SEEDS)):
        assert _status(resumed / str(n)) == "complete"


def test_a_resumed_study_is_the_uninterrupted_one(studies: tuple[Path, Path, str]) -> None:
    whole, resumed, _output = studies
    for n in range(len(SEEDS)):
        assert (resumed / str(n) / "metrics.json").read_bytes() == (
            whole / str(n) / "metrics.json"
        ).read_bytes(), n
