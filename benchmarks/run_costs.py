"""Harness overhead and LLM-call economy, read from one finished (uninterrupted) run.

**harness_overhead**: the share of the run's wall time not spent in LLM inference or
embedding, from the per-phase timings the run recorded in ``manifest.json`` (``llm`` =
inference on cache misses, ``embedding`` = MiniLM inside Mem0 and QASC). Target <= 5 %.
The rest is itemised: Qdrant calls, cache look-ups, the governance layers, metrics and
report, and what remains (Mem0's and the harness's own Python, start-up).

**llm_calls**: model calls made against the minimum the design needs. Every call goes
through the run's cache, so a call the model answered is a cache miss, and a duplicate is a
miss for a prompt the model had already answered (misses - distinct prompts stored).
Each producer writes once per step: one Native record and one CSS record per update step
and world. Target: no duplicates.

Run: ``.venv/bin/python -m benchmarks.run_costs RUN_DIR [--note "..."]``
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import machine_info, write_result

TARGET_OVERHEAD = 0.05


def load(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("status") != "complete" or "timings" not in manifest:
        raise SystemExit(f"{run_dir}: not a completed run (manifest status/timings missing)")
    with (run_dir / "records" / "steps.jsonl").open(encoding="utf-8") as fh:
        steps = [json.loads(line) for line in fh if line.strip()]
    return manifest, steps


def overhead(manifest: dict[str, Any]) -> dict[str, Any]:
    t = manifest["timings"]
    wall = float(t["wall"])
    model = float(t["llm"]) + float(t["embedding"])
    itemised = {k: float(t.get(k, 0.0)) for k in ("store", "cache", "metrics")}
    return {
        "wall_seconds": wall,
        "llm_seconds": float(t["llm"]),
        "embedding_seconds": float(t["embedding"]),
        "overhead_seconds": wall - model,
        "overhead_share": (wall - model) / wall,
        "overhead_itemised_seconds": {
            **itemised,
            "other (Mem0 + harness Python, start-up)": wall - model - sum(itemised.values()),
        },
        # CSS writes and QASC reads: their Qdrant and embedding time is also in the above.
        "governance_seconds": float(t.get("governance", 0.0)),
        "resumed": bool(manifest.get("resumed")),
    }


def calls(run_dir: Path, manifest: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    cache = manifest["cache"]
    with sqlite3.connect(run_dir / "llm_cache.sqlite") as db:
        (distinct,) = db.execute("SELECT count(*) FROM llm_calls").fetchone()
    per_step = Counter((s["producer"], s["world"], s["step"], tuple(s["turns"])) for s in steps)
    return {
        "model_calls": int(cache["misses"]),
        "distinct_prompts_stored": int(distinct),
        "duplicate_calls": int(cache["misses"]) - int(distinct),
        "requests_served_by_cache": int(cache["hits"]),
        "producer_writes": dict(Counter(s["producer"] for s in steps)),
        "producer_writes_repeated": sum(n - 1 for n in per_step.values() if n > 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--note", default=None)
    args = parser.parse_args(argv)
    manifest, steps = load(args.run_dir)
    machine = machine_info(args.note)
    source = {
        "run_dir": str(args.run_dir),
        "git": manifest.get("git"),
        "trajectory": manifest["header"]["trajectory"],
        "model": manifest["header"]["model"],
    }

    measured = overhead(manifest)
    met = measured["overhead_share"] <= TARGET_OVERHEAD and not measured["resumed"]
    write_result(
        "harness_overhead",
        measured,
        {"overhead_share_max": TARGET_OVERHEAD},
        met,
        machine,
        source=source,
    )
    print(
        f"harness overhead: {measured['overhead_share']:.2%} of {measured['wall_seconds']:.0f} s "
        f"wall (target <= {TARGET_OVERHEAD:.0%}): {'met' if met else 'NOT met'}"
    )
    for name, seconds in measured["overhead_itemised_seconds"].items():
        print(f"  {name}: {seconds:.1f} s ({seconds / measured['wall_seconds']:.2%})")
    governance = measured["governance_seconds"]
    print(
        f"  governance layers (CSS + QASC, overlapping the above): {governance:.1f} s "
        f"({governance / measured['wall_seconds']:.2%})"
    )

    counted = calls(args.run_dir, manifest, steps)
    ok = counted["duplicate_calls"] == 0 and counted["producer_writes_repeated"] == 0
    write_result(
        "llm_calls",
        counted,
        {"duplicate_calls": 0, "producer_writes_repeated": 0},
        ok,
        machine,
        source=source,
    )
    print(
        f"LLM calls: {counted['model_calls']} made for {counted['distinct_prompts_stored']} "
        f"distinct prompts (duplicates {counted['duplicate_calls']}, ratio "
        f"{counted['model_calls'] / max(counted['distinct_prompts_stored'], 1):.3f}); "
        f"{counted['requests_served_by_cache']} repeated requests served by the cache; "
        f"repeated producer writes {counted['producer_writes_repeated']}: "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
