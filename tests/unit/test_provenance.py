"""A run whose recorded counterpart ran on other compute says so (place/report/provenance.py)."""

from __future__ import annotations

import json
from pathlib import Path

from place.report.provenance import compute_note, recorded_counterpart

COMPUTE = {
    "cpu": "x",
    "env": {"ATEN_CPU_CAPABILITY": "avx2"},
    "llama_cpp_system_info": "CPU : AVX2 = 1 | FMA = 1 |",
    "torch_cpu_capability": "AVX2",
}


def manifest(compute: dict | None, sha: str = "abc") -> dict:
    return {
        "header": {"trajectory": {"sha256": sha}, "model": {"name": "smollm2-135m"}},
        "config": {"experiment": {"name": "all"}},
        **({"compute": compute} if compute is not None else {}),
    }


def recorded(root: Path, doc: dict) -> Path:
    run = root / "experiments" / "primary" / "smollm2-135m"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps(doc))
    return run


def test_same_compute_gives_no_note(tmp_path: Path) -> None:
    recorded(tmp_path, manifest(COMPUTE))
    assert compute_note(manifest(COMPUTE), tmp_path) is None


def test_another_llama_build_is_named(tmp_path: Path) -> None:
    recorded(tmp_path, manifest(COMPUTE))
    native = {**COMPUTE, "llama_cpp_system_info": "CPU : AVX2 = 1 | AVX512 = 1 |"}
    note = compute_note(manifest(native), tmp_path)
    assert note is not None
    assert "experiments/primary/smollm2-135m" in note and "AVX512" in note
    assert "torch_cpu_capability" not in note  # only what differs


def test_a_recording_without_compute_differs(tmp_path: Path) -> None:
    recorded(tmp_path, manifest(None))
    assert "llama_cpp_system_info" in (compute_note(manifest(COMPUTE), tmp_path) or "")


def test_no_counterpart_no_note(tmp_path: Path) -> None:
    recorded(tmp_path, manifest(COMPUTE, sha="other"))
    assert recorded_counterpart(manifest(COMPUTE), tmp_path) is None
    assert compute_note(manifest({}), tmp_path) is None
