"""Helpers for tests that run `place run` on the smoke trajectory in a subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PLACE = [sys.executable, "-m", "place.cli"]


def place_run(
    run_dir: Path, *extra: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`place run trajectory=smoke` into `run_dir`, in its own session (killable as a group)."""
    return subprocess.Popen(
        [*PLACE, "run", "trajectory=smoke", f"hydra.run.dir={run_dir}", "progress=false", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def finish(proc: subprocess.Popen[bytes], timeout: float = 1800) -> str:
    out, _ = proc.communicate(timeout=timeout)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-3000:]
    return text


def metrics(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


def units_done(run_dir: Path) -> int:
    """Completed units per progress.json (0 before the first)."""
    path = run_dir / "progress.json"
    return json.loads(path.read_text())["units_done"] if path.exists() else 0


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the run and everything it started (its llama.cpp server)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def kill_when(proc: subprocess.Popen[bytes], run_dir: Path, units: int) -> None:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            if units_done(run_dir) >= units:
                break
        except (json.JSONDecodeError, KeyError):
            pass  # replaced atomically, but read while being created: look again
        if proc.poll() is not None:
            pytest.fail("run ended before it could be interrupted")
        time.sleep(0.02)
    kill_group(proc)


def wait_for(path: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"{path} never appeared")
        time.sleep(0.05)


def record_lines(run_dir: Path) -> dict[str, list[str]]:
    return {p.name: p.read_text().splitlines() for p in sorted((run_dir / "records").iterdir())}


def assert_same_results(run_dir: Path, cold: Path) -> None:
    """Byte-identical metrics and tables, and the same records (line for line)."""
    for name in ["metrics.json", *[f"tables/{p.name}" for p in (cold / "tables").iterdir()]]:
        assert (run_dir / name).read_bytes() == (cold / name).read_bytes(), name
    assert record_lines(run_dir).keys() == record_lines(cold).keys()
    for name, lines in record_lines(cold).items():
        resumed = record_lines(run_dir)[name]
        assert len(resumed) == len(lines), name
        got = [_comparable(json.loads(x)) for x in resumed]
        want = [_comparable(json.loads(x)) for x in lines]
        # Timings differ between runs (record ids are seeded, place/memory/ids.py); nothing
        # else may, except similarity scores in their last digits (MiniLM embeds in
        # whichever thread Mem0 uses, and torch's reductions are not bitwise stable across
        # thread pools).
        assert [_scoreless(x) for x in got] == [_scoreless(x) for x in want], name
        assert all(
            abs(a - b) <= SCORE_TOLERANCE for a, b in zip(_scores(got), _scores(want), strict=True)
        ), name


SCORE_TOLERANCE = 1e-5


def _comparable(doc: object) -> object:
    if isinstance(doc, dict):
        return {k: _comparable(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_comparable(v) for v in doc]
    return doc


def _scoreless(doc: object) -> object:
    if isinstance(doc, dict):
        return {k: _scoreless(v) for k, v in doc.items() if k != "score"}
    if isinstance(doc, list):
        return [_scoreless(v) for v in doc]
    return doc


def _scores(doc: object) -> list[float]:
    if isinstance(doc, dict):
        own = [float(doc["score"])] if "score" in doc else []
        return own + [s for k, v in doc.items() if k != "score" for s in _scores(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _scores(v)]
    return []
