"""SLURM's stop signals wait for the unit boundary (place.runner.preemption), with real
signals sent to this process and a fake in place of submitit's USR2 handler."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from place import faults
from place.errors import PlaceError
from place.records import RECORD_FILES
from place.runner.journal import Journal
from place.runner.preemption import BoundaryStop, for_job, grace_for, in_slurm_job


class FakeSubmititHandler:
    """Stands in for submitit's `checkpoint_and_try_requeue`: records the call, then exits
    as submitit does after `scontrol requeue`."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.calls.append(signum)
        raise SystemExit(-1)


@pytest.fixture
def submitit() -> Iterator[FakeSubmititHandler]:
    fake = FakeSubmititHandler()
    before = {
        s: signal.signal(s, fake if s == signal.SIGUSR2 else signal.SIG_IGN)
        for s in (signal.SIGUSR2, signal.SIGTERM)
    }
    yield fake
    for s, h in before.items():
        signal.signal(s, h)


def test_usr2_waits_for_the_boundary_then_runs_submitits_handler(
    submitit: FakeSubmititHandler,
) -> None:
    lines: list[str] = []
    with BoundaryStop(grace_s=30, log=lines.append) as stop:
        stop.boundary(3)
        os.kill(os.getpid(), signal.SIGUSR2)  # inside unit 3
        time.sleep(0.05)
        assert submitit.calls == []  # the unit goes on
        assert stop.pending == signal.SIGUSR2
        with pytest.raises(SystemExit):
            stop.boundary(4)
    assert submitit.calls == [signal.SIGUSR2]
    assert lines[0].startswith("place run: SIGUSR2 during unit 3: the job stops once")
    assert lines[-1] == "place run: stopped at a unit boundary: 4 units journaled"
    # submitit's handler is back for whatever follows (the report, the exit).
    assert signal.getsignal(signal.SIGUSR2) is submitit


def test_sigterm_waits_for_the_boundary_then_exits(submitit: FakeSubmititHandler) -> None:
    with BoundaryStop(grace_s=30, log=lambda _: None) as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        with pytest.raises(SystemExit) as exited:
            stop.boundary(1)
    assert exited.value.code == 128 + signal.SIGTERM
    assert submitit.calls == []  # SLURM requeued or cancelled the job itself


def test_a_unit_past_the_grace_is_cut_by_submitits_handler(
    submitit: FakeSubmititHandler,
) -> None:
    lines: list[str] = []
    with BoundaryStop(grace_s=0.2, log=lines.append):
        os.kill(os.getpid(), signal.SIGUSR2)
        started = time.monotonic()
        with pytest.raises(SystemExit):
            time.sleep(5)  # a unit that does not end
        assert time.monotonic() - started < 2
    assert submitit.calls == [signal.SIGUSR2]
    assert "did not end within 0.2 s" in lines[-1]
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # the timer's handler is gone


def test_a_signal_after_the_last_boundary_stops_when_the_units_end(
    submitit: FakeSubmititHandler,
) -> None:
    lines: list[str] = []
    with pytest.raises(SystemExit), BoundaryStop(grace_s=30, log=lines.append) as stop:
        stop.boundary(27)
        os.kill(os.getpid(), signal.SIGUSR2)
        time.sleep(0.05)
    assert submitit.calls == [signal.SIGUSR2]
    assert lines[-1] == "place run: stopping after the last unit"


def test_no_signal_no_stop_and_handlers_restored(submitit: FakeSubmititHandler) -> None:
    with BoundaryStop(grace_s=1, log=lambda _: None) as stop:
        assert signal.getsignal(signal.SIGUSR2) != submitit
        for n in range(1, 4):
            stop.boundary(n)
    assert submitit.calls == []
    assert signal.getsignal(signal.SIGUSR2) is submitit
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN


def test_only_a_submitit_slurm_job_gets_a_boundary_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not in_slurm_job({})
    assert not in_slurm_job({"SLURM_JOB_ID": "7"})  # an sbatch script, not submitit's
    assert not in_slurm_job({"SUBMITIT_EXECUTOR": "local", "SLURM_JOB_ID": "7"})
    assert in_slurm_job({"SUBMITIT_EXECUTOR": "slurm", "SLURM_JOB_ID": "7"})
    monkeypatch.delenv("SUBMITIT_EXECUTOR", raising=False)
    assert for_job({"signal_delay_s": 120}) is None
    monkeypatch.setenv("SUBMITIT_EXECUTOR", "slurm")
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    stop = for_job({"signal_delay_s": 90})
    assert stop is not None and stop.grace_s == 45
    assert grace_for(4) == 5  # at least 5 s


def test_the_journal_calls_its_hooks_once_a_unit_is_durable(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    with Journal(tmp_path) as journal:
        journal.on_commit.append(
            lambda n: seen.append(
                (n, json.loads((tmp_path / "progress.json").read_text())["units_done"])
            )
        )
        journal.commit_unit(0)
        journal.commit_unit(1)
    assert seen == [(1, 1), (2, 2)]  # progress.json already says so when the hook runs


def test_the_journal_counts_the_lines_it_cuts(tmp_path: Path) -> None:
    name = next(iter(RECORD_FILES.values()))[0]
    with Journal(tmp_path) as journal:
        assert journal.cut_lines == 0
        journal.commit_unit(0)
    # What a unit killed mid-way leaves: two whole lines and half a third.
    (tmp_path / "records" / name).write_text('{"a": 1}\n{"b": 2}\n{"c"')
    with Journal(tmp_path) as journal:
        assert journal.cut_lines == 3
    assert (tmp_path / "records" / name).read_text() == ""
    with Journal(tmp_path) as journal:
        assert journal.cut_lines == 0


def test_slow_unit_refuses_a_bad_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(faults.SLOW_ENV, "soon")
    with pytest.raises(PlaceError, match="PLACE_SLOW_UNIT_S: 'soon' is not a number"):
        faults.slow_unit()
    monkeypatch.setenv(faults.SLOW_ENV, "0.01")
    faults.slow_unit()
