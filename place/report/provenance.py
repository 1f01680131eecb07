"""Does this run's arithmetic match the recorded run's? (docs/reproducibility.md)

A cold run reproduces a committed recording byte for byte only on the same compute: the
same llama.cpp build (its system-info string names the instruction set it was compiled
for) and the same torch kernels. When a run has a recorded counterpart (same trajectory
and model under `experiments/`) on other compute, its report says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMPARED = ("llama_cpp_system_info", "torch_cpu_capability", "env", "minilm_dtype")


def recorded_counterpart(manifest: dict[str, Any], root: Path = ROOT) -> Path | None:
    header = manifest.get("header", {})
    sha = header.get("trajectory", {}).get("sha256")
    model = header.get("model", {}).get("name")
    for path in sorted((root / "experiments").glob("*/*/manifest.json")):
        try:
            other = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        h = other.get("header", {})
        same_config = other.get("config", {}).get("experiment") == manifest.get("config", {}).get(
            "experiment"
        )
        if (
            h.get("trajectory", {}).get("sha256") == sha
            and h.get("model", {}).get("name") == model
            and same_config
        ):
            return path.parent
    return None


def compute_note(manifest: dict[str, Any], root: Path = ROOT) -> str | None:
    """A note when the recorded counterpart ran on other compute; None otherwise."""
    recorded = recorded_counterpart(manifest, root)
    if recorded is None:
        return None
    other = json.loads((recorded / "manifest.json").read_text(encoding="utf-8"))
    mine, theirs = manifest.get("compute") or {}, other.get("compute") or {}
    differ = [k for k in COMPARED if mine.get(k) != theirs.get(k)]
    if not differ:
        return None
    where = recorded.relative_to(root)
    details = "; ".join(f"{k}: {mine.get(k)!r} here, {theirs.get(k)!r} there" for k in differ)
    return (
        f"Note: the recorded run {where} ran on other compute ({details}); a cold run's "
        "model answers and similarity ranks can differ from it (docs/reproducibility.md)."
    )
