"""A cold run (empty cache, the model decoding) reproduces the committed smoke recording byte
for byte: metrics.json and every line of every records/*.jsonl, step timings aside
(docs/reproducibility.md). A difference is reported by the part of the stack that made it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ROOT = Path(__file__).parents[2]
RECORDED = ROOT / "experiments" / "smoke" / "smollm2-135m"

# Which part of the stack a differing field comes from, so a failure names its cause.
CAUSES = {
    "raw_answer": "the model's decode (llama.cpp build or GGUF)",
    "outcome": "the model's decode (llama.cpp build or GGUF)",
    "operations": "Mem0's LLM calls (llama.cpp decode) or record ids",
    "failures": "Mem0's LLM calls (llama.cpp decode)",
    "score": "the embedder's arithmetic (torch kernels) or Qdrant's scoring",
    "exposed": "similarity ranking (embedder or Qdrant) or record ids",
    "id": "record ids (place/memory/ids.py)",
}


def _without_timing(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "seconds"}


def _first_difference(got: object, want: object, path: str = "") -> str | None:
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            diff = _first_difference(got.get(key), want.get(key), f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            diff = _first_difference(g, w, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if got == want else f"{path}: {got!r} != {want!r}"


def _cause(path: str) -> str:
    for part in reversed([p.split("[")[0] for p in path.split(".") if p]):
        if part in CAUSES:
            return CAUSES[part]
    return "the harness (state, reads or metrics)"


def test_the_smoke_recording_was_made_with_the_portable_build() -> None:
    compute = json.loads((RECORDED / "manifest.json").read_text())["compute"]
    info = compute["llama_cpp_system_info"]
    assert "AVX2 = 1" in info and "AVX512" not in info, info
    assert compute["torch_cpu_capability"] == "AVX2"


def test_a_cold_run_reproduces_the_recording(cold_run: Path) -> None:
    manifest = json.loads((cold_run / "manifest.json").read_text())
    recorded = json.loads((RECORDED / "manifest.json").read_text())
    # Cold: every cache entry was made by this run (hits are repeats within the run).
    assert manifest["cache"]["entries"] == manifest["cache"]["misses"] > 0, manifest["cache"]
    for key in ("llama_cpp_system_info", "torch_cpu_capability"):
        assert manifest["compute"][key] == recorded["compute"][key], (
            f"this machine's {key} differs from the recording's; a cold run cannot be "
            "expected to match (docs/reproducibility.md)"
        )
    names = sorted(p.name for p in (RECORDED / "records").iterdir())
    assert sorted(p.name for p in (cold_run / "records").iterdir()) == names
    for name in names:
        got = (cold_run / "records" / name).read_text().splitlines()
        want = (RECORDED / "records" / name).read_text().splitlines()
        assert len(got) == len(want), f"{name}: {len(got)} lines, recorded {len(want)}"
        for number, (g, w) in enumerate(zip(got, want, strict=True), start=1):
            gd, wd = _without_timing(json.loads(g)), _without_timing(json.loads(w))
            if gd != wd:
                where = _first_difference(gd, wd)
                pytest.fail(f"{name}:{number}: {where} (cause: {_cause(where or '')})")
    assert (cold_run / "metrics.json").read_bytes() == (RECORDED / "metrics.json").read_bytes()
