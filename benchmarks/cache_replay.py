"""Cache replay: re-run a completed run from its LLM cache alone, against the cold run.

The replay is a fresh ``place run`` with the cold run's trajectory, experiment and model, in
``cache.mode=replay-only`` on a copy of its ``llm_cache.sqlite`` (a miss would be an error),
into a temporary directory. Both walls are the runs' own ``timings.wall`` (start of the
experiment to the last record and report); the replay's whole process time, imports and
Hydra included, is reported beside it. Target: >= 20x faster, identical ``metrics.json``.

Run: ``.venv/bin/python -m benchmarks.cache_replay RUN_DIR [--note "..."]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine_info, write_result
from place.runner.replay import replay_argv

ROOT = Path(__file__).resolve().parent.parent
TARGET_SPEEDUP = 20.0


def replay(cold: Path, work: Path) -> tuple[float, Path]:
    """Replay `cold` into `work/replay`; returns (process seconds, run dir)."""
    manifest = json.loads((cold / "manifest.json").read_text(encoding="utf-8"))
    cache = work / "llm_cache.sqlite"
    shutil.copy(cold / "llm_cache.sqlite", cache)
    run_dir = work / "replay"
    started = time.perf_counter()
    done = subprocess.run(
        replay_argv(manifest, run_dir, cache),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"replay failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return seconds, run_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--note", default=None)
    args = parser.parse_args(argv)
    cold_manifest = json.loads((args.run_dir / "manifest.json").read_text(encoding="utf-8"))
    machine = machine_info(args.note)
    with tempfile.TemporaryDirectory(prefix="place-replay-") as tmp:
        process_seconds, run_dir = replay(args.run_dir, Path(tmp))
        warm_manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        identical = (run_dir / "metrics.json").read_bytes() == (
            args.run_dir / "metrics.json"
        ).read_bytes()
    cold_wall = float(cold_manifest["timings"]["wall"])
    warm_wall = float(warm_manifest["timings"]["wall"])
    measured = {
        "cold_wall_seconds": cold_wall,
        "replay_wall_seconds": warm_wall,
        "replay_process_seconds": round(process_seconds, 3),
        "speedup": cold_wall / warm_wall,
        "speedup_process": cold_wall / process_seconds,
        "replay_timings": warm_manifest["timings"],
        "replay_cache": warm_manifest["cache"],
        "metrics_identical": identical,
    }
    met = measured["speedup"] >= TARGET_SPEEDUP and identical
    write_result(
        "cache_replay",
        measured,
        {"speedup_min": TARGET_SPEEDUP, "metrics_identical": True},
        met,
        machine,
        source={
            "run_dir": str(args.run_dir),
            "git": cold_manifest.get("git"),
            "trajectory": cold_manifest["header"]["trajectory"],
        },
    )
    print(
        f"cache replay: cold {cold_wall:.0f} s, replay {warm_wall:.1f} s "
        f"({process_seconds:.1f} s with process start-up): {measured['speedup']:.1f}x "
        f"({measured['speedup_process']:.1f}x), metrics identical: {identical}; target >= "
        f"{TARGET_SPEEDUP:.0f}x: {'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
