"""A SLURM job asked to stop stops at a unit boundary (docs/sweeps.md, "Preemption and
time limits").

SLURM asks a running job to stop in two ways:

- the signal submitit asks `sbatch` for (`--signal=USR2@<signal_delay_s>`), sent that long
  before the time limit (some clusters send it on preemption too). submitit's handler
  checkpoints (Hydra's launcher re-submits the same sweep job), runs `scontrol requeue` and
  exits, wherever the process is;
- SIGTERM, sent by `scontrol requeue`, `scancel`, preemption and at the time limit, and
  followed by SIGKILL `KillWait` seconds later. submitit ignores it, so SIGKILL ends the job.

Either way the journal keeps the run directory consistent (a half-written unit is cut on
resume), but a cut unit is computed twice and the stop lands anywhere. While a job runs its
units, `BoundaryStop` defers both signals to the next unit boundary: the unit in flight is
finished and journaled, then the job stops, after USR2 through submitit's own handler
(checkpoint, requeue, exit), after SIGTERM by exiting (SLURM has requeued or cancelled it
already). A unit that does not end within `grace_s` of USR2 is cut after all: submitit's
handler then runs at once, so a slow unit cannot cost the job its requeue.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

STOP_SIGNALS = (signal.SIGUSR2, signal.SIGTERM)
"""submitit's time-limit / preemption signal (its default `USR2`) and SLURM's own SIGTERM."""

DEFAULT_SIGNAL_DELAY_S = 120
"""Hydra's submitit config's `signal_delay_s` default, used when the job cannot read it."""


def in_slurm_job(env: Mapping[str, str] = os.environ) -> bool:
    """This process is a sweep job submitit started on a SLURM node (its sbatch script
    exports SUBMITIT_EXECUTOR=slurm; SLURM sets SLURM_JOB_ID)."""
    return env.get("SUBMITIT_EXECUTOR") == "slurm" and "SLURM_JOB_ID" in env


def grace_for(signal_delay_s: float) -> float:
    """How long a unit may run on after USR2: half the warning SLURM gives before the time
    limit (the other half is left for submitit's requeue and the exit), at least 5 s."""
    return max(5.0, signal_delay_s / 2)


class BoundaryStop:
    """Defer USR2 and SIGTERM to the end of the unit in flight (see the module doc).

    `boundary(units_done)` is called after each unit is journaled; `log` receives one line
    per event, so the job's SLURM log says where it stopped."""

    def __init__(self, grace_s: float, log: Callable[[str], None] | None = None) -> None:
        self.grace_s = grace_s
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.pending: int | None = None
        self.units_done = 0
        self._saved: dict[int, Handler] = {}

    def __enter__(self) -> BoundaryStop:
        if threading.current_thread() is threading.main_thread():  # signals reach only it
            for sig in STOP_SIGNALS:
                self._saved[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if self.pending is not None and exc_type is None:
            # Caught after the last boundary: stop now rather than drop the signal.
            self.log("place run: stopping after the last unit")
            self._stop(None)
        self._restore()

    def _restore(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in self._saved.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._saved.clear()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.pending is not None:
            return
        self.pending = signum
        name = signal.Signals(signum).name
        self.log(
            f"place run: {name} during unit {self.units_done}: the job stops once that unit "
            "is journaled"
            + (f" (at most {self.grace_s:g} s from now)" if signum == signal.SIGUSR2 else "")
        )
        if signum == signal.SIGUSR2:
            # Saved with the others, so leaving restores whatever handled SIGALRM before.
            self._saved[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._too_late)
            signal.setitimer(signal.ITIMER_REAL, self.grace_s)

    def _too_late(self, signum: int, frame: FrameType | None) -> None:
        self.log(
            f"place run: unit {self.units_done} did not end within {self.grace_s:g} s of the "
            "signal: stopping inside it (the journal cuts it when the job resumes)"
        )
        self._stop(frame)

    def boundary(self, units_done: int) -> None:
        """A unit is journaled: `units_done` units are durable. Stop here if asked to."""
        self.units_done = units_done
        if self.pending is not None:
            self.log(f"place run: stopped at a unit boundary: {units_done} units journaled")
            self._stop(None)

    def _stop(self, frame: FrameType | None) -> None:
        signum = self.pending if self.pending is not None else signal.SIGTERM
        self.pending = None  # acted on: stops once
        handler = self._saved.get(signum)
        self._restore()
        if signum == signal.SIGUSR2 and callable(handler):
            # submitit's handler: checkpoint, `scontrol requeue`, then sys.exit.
            handler(signum, frame)
        # After SIGTERM SLURM has requeued or cancelled the job already: only exit.
        raise SystemExit(128 + signum)


def for_job(hydra_launcher: Mapping[str, Any] | None) -> BoundaryStop | None:
    """A `BoundaryStop` for this process if it is a SLURM sweep job, with the grace derived
    from the launcher's `signal_delay_s`; None anywhere else (local runs keep the default
    signal handling)."""
    if not in_slurm_job():
        return None
    delay = (hydra_launcher or {}).get("signal_delay_s") or DEFAULT_SIGNAL_DELAY_S
    return BoundaryStop(grace_for(float(delay)))
