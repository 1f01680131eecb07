"""Answer-free runs against today's replay, on the same trajectories (issue 30).

Both sides run the recorded replication study's design (`append, css` × `native, posthoc,
decay, qasc, cited`, no closed loop) on the same generated trajectories (`--seeds`, default
0 1 2), each side as one Hydra multirun in one process (the basic launcher runs its jobs one
after another, so both pay imports and model loading once):

- **replay**: the code of `--baseline` (default `03b7c1a`, main before answer-free runs and
  the embedding memo existed), unpacked with `git archive`, every LLM call answered from a
  copy of the committed study's cache in replay-only mode (a miss fails the run);
- **state**: this checkout's `experiment=state`, which asks no answer and starts no model,
  with its plots (as `place run` draws them by default, like the replay);
- **study job**: the same with `plots=false`, as the jobs of a population study run
  (docs/population.md; the plots are drawn later by `place report` when wanted).

Printed: each run's process seconds and per-job `timings.wall`, the ratios to the replay,
and whether every figure the answer-free runs measure equals the replay's (the scorecard by
its model-independent tally). Target: a study job >= 2x faster than the replay, figures
equal; the ratio with plots is reported beside it. Results go to
`benchmarks/results/state_run.json` with the machine.

Run: ``.venv/bin/python -m benchmarks.state_run [--seeds 0 1 2] [--baseline REV] [--note ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import machine_info, write_result
from place.mappings import flatten

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "experiments" / "replications" / "smollm2-135m"
TARGET_SPEEDUP = 2.0
DESIGN = [
    "trajectory=generated",
    "design.name=replication",
    "design.producers=[append,css]",
    "design.policies=[native,posthoc,decay,qasc,cited]",
    "experiment.closed_loop=false",
    "progress=false",
]


def _run(code: Path, argv: list[str]) -> float:
    """`place run -m ...` with the package at `code`; returns the process seconds."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "place", "run", "-m", *argv],
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"place run failed in {code}:\n{(done.stdout + done.stderr)[-3000:]}")
    return seconds


def _jobs(sweep: Path) -> list[Path]:
    return sorted((p for p in sweep.iterdir() if (p / "manifest.json").is_file()), key=str)


def differences(state: dict[str, Any], replay: dict[str, Any]) -> list[str]:
    """Every figure the answer-free run measured that differs from the replay's."""
    unmeasured = set(state.get("not_measured") or ())
    out = []
    for condition, values in state["conditions"].items():
        theirs = flatten(replay["conditions"][condition])
        for key, value in flatten(values).items():
            if key not in unmeasured and value != theirs.get(key):
                out.append(f"{condition} {key}: {value} != {theirs.get(key)}")
        if (
            state["aoep"][condition]["model_independent"]
            != (replay["aoep"][condition]["model_independent"])
        ):
            out.append(f"{condition} aoep.model_independent")
    for name, effect in state["effects"].items():
        if name not in unmeasured and effect != replay["effects"].get(name):
            out.append(f"effect {name}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--baseline", default="03b7c1a")
    parser.add_argument("--note", default=None)
    args = parser.parse_args(argv)
    machine = machine_info(args.note)
    seeds = ",".join(str(s) for s in args.seeds)
    with tempfile.TemporaryDirectory(prefix="place-state-bench-") as tmp:
        work = Path(tmp)
        base = work / "baseline"
        base.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.baseline], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "x", "-C", str(base)], input=archive.stdout, check=True)
        caches = work / "caches"
        caches.mkdir()
        for seed in args.seeds:
            shutil.copy(
                STUDY / f"{seed}_smollm2-135m" / "llm_cache.sqlite", caches / f"cache-{seed}.sqlite"
            )
        replay_seconds = _run(
            base,
            [
                *DESIGN,
                f"trajectory.seed={seeds}",
                "cache.mode=replay-only",
                f"cache.path={caches}/cache-${{trajectory.seed}}.sqlite",
                f"hydra.sweep.dir={work / 'replay'}",
            ],
        )
        state_seconds = _run(
            ROOT,
            [
                *DESIGN,
                "experiment=state",
                f"trajectory.seed={seeds}",
                f"hydra.sweep.dir={work / 'state'}",
            ],
        )
        study_seconds = _run(
            ROOT,
            [
                *DESIGN,
                "experiment=state",
                "plots=false",
                f"trajectory.seed={seeds}",
                f"hydra.sweep.dir={work / 'study'}",
            ],
        )
        walls: dict[str, list[float]] = {"replay": [], "state": [], "study": []}
        diffs: list[str] = []
        replays = _jobs(work / "replay")
        for side in ("state", "study"):
            for r, s in zip(replays, _jobs(work / side), strict=True):
                sm = json.loads((s / "manifest.json").read_text(encoding="utf-8"))
                walls[side].append(sm["timings"]["wall"])
                diffs += differences(
                    json.loads((s / "metrics.json").read_text(encoding="utf-8")),
                    json.loads((r / "metrics.json").read_text(encoding="utf-8")),
                )
        for r in replays:
            rm = json.loads((r / "manifest.json").read_text(encoding="utf-8"))
            walls["replay"].append(rm["timings"]["wall"])
    measured = {
        "seeds": args.seeds,
        "replay_process_seconds": round(replay_seconds, 3),
        "state_process_seconds": round(state_seconds, 3),
        "study_process_seconds": round(study_seconds, 3),
        "speedup_process": replay_seconds / state_seconds,
        "speedup_process_study": replay_seconds / study_seconds,
        "replay_job_walls": walls["replay"],
        "state_job_walls": walls["state"],
        "study_job_walls": walls["study"],
        "speedup_job_walls": sum(walls["replay"]) / sum(walls["state"]),
        "speedup_job_walls_study": sum(walls["replay"]) / sum(walls["study"]),
        "figures_equal": not diffs,
        "differences": diffs[:20],
    }
    met = measured["speedup_process_study"] >= TARGET_SPEEDUP and not diffs
    write_result(
        "state_run",
        measured,
        {"speedup_min": TARGET_SPEEDUP, "figures_equal": True},
        met,
        machine,
        baseline=args.baseline,
        design=DESIGN,
    )
    print(
        f"answer-free runs vs today's replay on seeds {seeds}: replay {replay_seconds:.1f} s; "
        f"answer-free with plots {state_seconds:.1f} s: {measured['speedup_process']:.2f}x "
        f"(job walls {measured['speedup_job_walls']:.2f}x); as study jobs (plots=false) "
        f"{study_seconds:.1f} s: {measured['speedup_process_study']:.2f}x (job walls "
        f"{measured['speedup_job_walls_study']:.2f}x); measured figures equal: {not diffs}; "
        f"target >= {TARGET_SPEEDUP:.0f}x for a study job: {'met' if met else 'NOT met'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
