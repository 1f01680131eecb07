"""What the extended design costs: its wall time against the paper design's, on the same
trajectory, model and machine, from two finished runs (one of each design).

The extended design (12 conditions) triples the answer calls of a query; identical answer
prompts across conditions are one LLM call, because the cache keys by content (a condition
that exposes the same items as another for the same question costs nothing). Reported: the
wall-time ratio (target <= 2x), model calls made (cache misses), calls answered from the
cache (hits: repeated prompts), and answer records per run.

Run: ``.venv/bin/python -m benchmarks.design_cost PAPER_RUN EXTENDED_RUN [--note "..."]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import machine_info, write_result

TARGET_RATIO = 2.0


def summary(run_dir: Path) -> dict[str, Any]:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("status") != "complete" or "timings" not in manifest:
        raise SystemExit(f"{run_dir}: not a completed run")
    design = manifest["header"].get("design") or {"name": "paper", "conditions": []}
    queries = sum(1 for _ in (run_dir / "records" / "queries.jsonl").open(encoding="utf-8"))
    probes = sum(1 for _ in (run_dir / "records" / "probes.jsonl").open(encoding="utf-8"))
    return {
        "run": str(run_dir),
        "design": design["name"],
        "conditions": len(design.get("conditions", [])) or 4,
        "git": manifest["git"],
        "trajectory": manifest["header"]["trajectory"]["id"],
        "model": manifest["header"]["model"]["name"],
        "wall_seconds": float(manifest["timings"]["wall"]),
        "llm_seconds": float(manifest["timings"]["llm"]),
        "model_calls": int(manifest["cache"]["misses"]),
        "cache_hits": int(manifest["cache"]["hits"]),
        "query_records": queries,
        "probe_records": probes,
        "resumed": bool(manifest.get("resumed")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paper_run", type=Path)
    parser.add_argument("extended_run", type=Path)
    parser.add_argument("--note")
    args = parser.parse_args(argv)
    paper, extended = summary(args.paper_run), summary(args.extended_run)
    if (paper["trajectory"], paper["model"]) != (extended["trajectory"], extended["model"]):
        raise SystemExit("the two runs differ in trajectory or model; compare like with like")
    ratio = extended["wall_seconds"] / paper["wall_seconds"]
    met = ratio <= TARGET_RATIO
    measured = {
        "paper": paper,
        "extended": extended,
        "wall_ratio": round(ratio, 3),
        "calls_ratio": round(extended["model_calls"] / max(paper["model_calls"], 1), 3),
    }
    path = write_result(
        "design_cost", measured, {"wall_ratio_max": TARGET_RATIO}, met, machine_info(args.note)
    )
    print(
        f"extended/paper wall time: {ratio:.2f}x ({extended['wall_seconds']:.0f} s vs "
        f"{paper['wall_seconds']:.0f} s; target <= {TARGET_RATIO}x: "
        f"{'met' if met else 'MISSED'}); model calls {extended['model_calls']} vs "
        f"{paper['model_calls']}, cache hits {extended['cache_hits']} vs {paper['cache_hits']}"
        f" -> {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
