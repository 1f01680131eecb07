"""Answer-phase concurrency: wall time of a run's answer calls at answer.concurrency 1, 2, 4.

The calls are the answer prompts a real run sends: the primary-mode query records of a
recorded run (default: the extended design on the primary trajectory), grouped by query as
the runner groups them (one unit = every condition and world of one query; the runner sends
a unit's calls at once and waits for all of them before the next unit). Each level starts
with an empty LLM call cache, so identical prompts within a run are one call, as in a run.
They go through the package's own answer path (`place.agent.answer.answer_all`, the
`AnswerModel`, the cache, the runtime's chat model) against:

(a) the embedded server: SmolLM2-135M behind llama.cpp on 127.0.0.1 (two cores here), and
(b) a FAKE Ollama server (tests/fakes/ollama_server.py) that answers every chat request after a
    fixed latency (default 0.25 s), standing in for a GPU server that serves requests in
    parallel.

Target: >= 3x at concurrency 4 on (b); (a) is reported with its cause.

Run: ``.venv/bin/python -m benchmarks.answer_concurrency [--run RUN_DIR] [--units N]
[--embedded-units N] [--latency S] [--note "..."]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from benchmarks.common import machine_info, write_result
from place.agent.answer import AnswerCall, AnswerModel, AnswerPrompt, answer_all
from place.runtime import CachedChatModel, LLMCallCache, RetryPolicy

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RUN = ROOT / "experiments" / "primary-extended" / "smollm2-135m"
LEVELS = (1, 2, 4)
TARGET_FAKE_SPEEDUP_AT_4 = 3.0


def units_of(run_dir: Path, limit: int) -> list[list[AnswerCall]]:
    """The first `limit` queries' primary-mode answer calls (both worlds, every condition)."""
    units: dict[str, list[AnswerCall]] = {}
    with (run_dir / "records" / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["mode"] == "primary":
                units.setdefault(r["query"], []).append(
                    (r["question"], [e["text"] for e in r["exposed"]], ())
                )
    return list(units.values())[:limit]


def prompt() -> tuple[AnswerPrompt, int]:
    doc = yaml.safe_load((ROOT / "configs" / "answer" / "default.yaml").read_text("utf-8"))
    keys = ("system", "user", "dialogue", "empty_memory")
    return AnswerPrompt(**{k: doc[k] for k in keys}), int(doc["max_tokens"])


def measure(chat: Any, units: Sequence[list[AnswerCall]], concurrency: int) -> dict[str, Any]:
    """Wall time of every unit's calls at `concurrency`, from an empty cache."""
    answer_prompt, max_tokens = prompt()
    with tempfile.TemporaryDirectory() as tmp, LLMCallCache(Path(tmp) / "c.sqlite") as cache:
        model = AnswerModel(CachedChatModel(chat, cache, "benchmark"), answer_prompt, max_tokens)
        pool = ThreadPoolExecutor(concurrency) if concurrency > 1 else None
        started = time.perf_counter()
        try:
            answers = [answer_all(model, calls, pool) for calls in units]
        finally:
            if pool is not None:
                pool.shutdown()
        seconds = time.perf_counter() - started
        return {
            "concurrency": concurrency,
            "seconds": round(seconds, 3),
            "model_calls": cache.misses,
            "cache_hits": cache.hits,
            "answers": answers,
        }


def series(chat: Any, units: Sequence[list[AnswerCall]]) -> dict[str, Any]:
    runs = [measure(chat, units, c) for c in LEVELS]
    sequential = runs[0]["answers"]
    for r in runs:
        r["speedup"] = round(runs[0]["seconds"] / r["seconds"], 3)
        r["same_answers"] = r.pop("answers") == sequential
    return {
        "units": len(units),
        "calls_per_unit": [len(u) for u in units],
        "levels": runs,
    }


def fake_ollama(units: Sequence[list[AnswerCall]], latency: float) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.ollama_server import FakeOllamaServer

    from place.runtime.ollama import OllamaRuntime

    with FakeOllamaServer(latency=latency) as server:
        runtime = OllamaRuntime(
            "qwen2.5:7b", "nomic-embed-text", server.url, max_tokens=32, seed=42, num_ctx=8192
        )
        with runtime:
            out = series(runtime.chat, units)
    out["latency_seconds"] = latency
    return out


def embedded(units: Sequence[list[AnswerCall]]) -> dict[str, Any]:
    from place.runtime.llamacpp import LlamaCppRuntime

    with tempfile.TemporaryDirectory() as logs:
        runtime = LlamaCppRuntime(
            None, n_ctx=4096, max_tokens=384, seed=42, log_dir=logs, retry=RetryPolicy()
        )
        with runtime:
            return series(runtime.chat, units)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", type=Path, default=DEFAULT_RUN)
    parser.add_argument("--units", type=int, default=12, help="queries for (b)")
    parser.add_argument("--embedded-units", type=int, default=3, help="queries for (a)")
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--note")
    args = parser.parse_args(argv)
    fake = fake_ollama(units_of(args.run, args.units), args.latency)
    real = embedded(units_of(args.run, args.embedded_units))
    at4 = next(r for r in fake["levels"] if r["concurrency"] == 4)["speedup"]
    met = at4 >= TARGET_FAKE_SPEEDUP_AT_4
    path = write_result(
        "answer_concurrency",
        {"run": str(args.run.relative_to(ROOT)), "fake_ollama": fake, "embedded": real},
        {"fake_ollama_speedup_at_4_min": TARGET_FAKE_SPEEDUP_AT_4},
        met,
        machine_info(args.note),
    )
    for name, doc in (("fake Ollama", fake), ("embedded llama.cpp", real)):
        cells = ", ".join(
            f"{r['concurrency']}: {r['seconds']:.1f} s ({r['speedup']:.2f}x)" for r in doc["levels"]
        )
        print(f"{name}: {doc['units']} units; {cells}")
    verdict = "met" if met else "MISSED"
    print(f"target >= {TARGET_FAKE_SPEEDUP_AT_4}x at 4 on the fake: {verdict} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
