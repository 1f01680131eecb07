"""Answer-free cost of on-topic distractor turns, per producer (issue 39, docs/method.md §16).

One answer-free run (`experiment=state`, `design=population`, no plots) of a trajectory with
`--dose` distractors of every kind (`place distract`, seed 0), and one of the same trajectory
without them. From the distracted run's own step records: for each producer, the seconds its
world-a distractor steps took, per 100 distractor turns (a distractor and its reply count as
two turns); and the two runs' walls, their difference per 100 added turns, and their ratio.
All from one pair of runs, printed and written to `benchmarks/results/distractor_cost.json`
with the machine. No model is asked.

Run: ``.venv/bin/python -m benchmarks.distractor_cost [--trajectory trajectories/primary.yaml]
[--dose 20] [--note ...]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.common import machine_info, write_result
from place.archive import load_run_records
from place.generate.distract import distract
from place.trajectory.model import DISTRACTOR_KINDS

ROOT = Path(__file__).resolve().parent.parent


def _run(trajectory: Path, run_dir: Path) -> float:
    argv = [
        sys.executable,
        "-m",
        "place.cli",
        "run",
        "experiment=state",
        "design=population",
        f"trajectory.path={trajectory}",
        f"trajectory.name={trajectory.stem}",
        "plots=false",
        "progress=false",
        f"hydra.run.dir={run_dir}",
    ]
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectory", default="trajectories/primary.yaml")
    parser.add_argument("--dose", type=int, default=20, help="distractors of each kind")
    parser.add_argument("--note")
    args = parser.parse_args()
    machine = machine_info(args.note)
    source = ROOT / args.trajectory
    with tempfile.TemporaryDirectory(prefix="place-bench-distract-") as tmp:
        root = Path(tmp)
        distracted = root / f"{source.stem}-distracted.yaml"
        made = distract(source, list(DISTRACTOR_KINDS), args.dose, 0)
        distracted.write_text(made.text, encoding="utf-8")
        wall_base = _run(source, root / "base")
        wall_distracted = _run(distracted, root / "distracted")
        records = load_run_records(root / "distracted")
        manifest = json.loads((root / "distracted" / "manifest.json").read_text())
    turns = made.added
    seconds: dict[str, float] = defaultdict(float)
    for step in records.steps:
        if step.world == "a" and step.distractor is not None:
            seconds[step.producer] += step.seconds
    per_producer = {p: round(100 * s / turns, 3) for p, s in sorted(seconds.items())}
    measured = {
        "trajectory": args.trajectory,
        "dose_per_kind": args.dose,
        "distractor_turns": turns,
        "conditions": len(manifest["header"]["design"]["conditions"]),
        "seconds_per_100_distractor_turns": per_producer,
        "wall_without": round(wall_base, 2),
        "wall_with": round(wall_distracted, 2),
        "wall_seconds_per_100_added_turns": round(100 * (wall_distracted - wall_base) / turns, 3),
        "wall_ratio": round(wall_distracted / wall_base, 3),
    }
    print(json.dumps(measured, indent=2))
    path = write_result(
        "distractor_cost",
        measured,
        targets={"note": "reported, no target: the cost a distractor dose adds per producer"},
        met=True,
        machine=machine,
    )
    print(f"written: {path}")


if __name__ == "__main__":
    main()
