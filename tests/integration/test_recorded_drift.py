"""The recorded drift experiment (experiments/drift/): its drift.json is what its drift.jsonl
recomputes to, it holds 0 violations of the exact tests, and `place drift` run again on the
primary trajectory gives the same rows and the same figures (only the header's commit can
differ). No model is involved: this is the recording's replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from place.cli import main
from place.drift.stats import dumps, read_jsonl, recompute

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "experiments" / "drift"


@pytest.mark.parametrize("name", ["primary", "replications"])
def test_the_recorded_figures_are_recomputed_from_the_rows(name: str) -> None:
    out = RECORDED / name
    written = (out / "drift.json").read_text(encoding="utf-8")
    doc = recompute(out / "drift.jsonl")
    assert dumps(doc) == written
    assert doc["violations"] == 0


def test_place_drift_on_primary_reproduces_the_recording(tmp_path: Path) -> None:
    header, rows = read_jsonl(RECORDED / "primary" / "drift.jsonl")
    argv = [
        "drift",
        str(ROOT / "trajectories" / "primary.yaml"),
        "--eps",
        ",".join(str(e) for e in header.eps),
        "--every",
        ",".join(str(n) for n in header.every),
        "--seeds",
        str(header.seeds),
        "--out",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(argv) == 0
    again_header, again = read_jsonl(tmp_path / "drift.jsonl")
    assert again == rows
    keep = ("git_commit", "git_dirty", "trajectories")
    assert again_header.model_dump(exclude=set(keep)) == header.model_dump(exclude=set(keep))
    assert [(t.sha256, t.checkpoints) for t in again_header.trajectories] == [
        (t.sha256, t.checkpoints) for t in header.trajectories
    ]
    recorded = json.loads((RECORDED / "primary" / "drift.json").read_text(encoding="utf-8"))
    fresh = json.loads((tmp_path / "drift.json").read_text(encoding="utf-8"))
    assert fresh["cells"] == recorded["cells"]
