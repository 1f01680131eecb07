"""Every figure of a run's metrics.json is recomputed from its records by code written from
docs/records.md alone (tests/recompute.py imports nothing from `place`)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from recompute import recompute

ROOT = Path(__file__).parents[2]
RECORDED = sorted(p.parent for p in (ROOT / "experiments").glob("*/*/manifest.json")) + sorted(
    p.parent for p in (ROOT / "experiments" / "replications").glob("*/*/manifest.json")
)
"""Every recorded run: the single runs, and every job of the recorded replication study."""


def test_the_recomputation_does_not_use_the_package() -> None:
    tree = ast.parse((Path(__file__).parents[1] / "recompute.py").read_text(encoding="utf-8"))
    imported = {
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in getattr(n, "names", [])
    }
    assert not {m for m in imported if m and m.split(".")[0] == "place"}, imported


def test_recorded_runs_exist() -> None:
    names = {str(p.relative_to(ROOT / "experiments")) for p in RECORDED}
    assert {
        "primary/smollm2-135m",
        "smoke/smollm2-135m",
        "primary-extended/smollm2-135m",
        "replications/smollm2-135m/0_smollm2-135m",
        "replications/smollm2-135m/9_smollm2-135m",
    } <= names, names


@pytest.mark.parametrize("run_dir", RECORDED, ids=lambda p: "/".join(p.parts[-2:]))
def test_every_recorded_figure_is_recomputed_independently(run_dir: Path) -> None:
    committed = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert recompute(run_dir) == committed


@pytest.mark.slow
@pytest.mark.integration
def test_a_fresh_run_is_recomputed_independently(cold_run: Path) -> None:
    assert recompute(cold_run) == json.loads((cold_run / "metrics.json").read_text())
