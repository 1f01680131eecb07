"""The `ssgm` producer through the real runner (docs/method.md §13): aoep-pilot, design ssgm
(ssgm, css × native, qasc), in-process on the real stack (Mem0, Qdrant local mode, MiniLM)
with the FAKE answer model of tests/fakes/. aoep-pilot's `door_code` is core: c3-03
supersedes it by assert (a plasticity item) and the tool turn c3-05 claims 9999 (a
stability item). The facts §13 says hold on every model are checked on the records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import inprocess
import pytest
from recompute import recompute

from place.design import make_design
from place.reference.validate import load_trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PILOT = ROOT / "trajectories" / "aoep-pilot.yaml"
DESIGN = make_design("ssgm", ["ssgm", "css"], ["native", "qasc"])

RUNS = {
    # gate on, reconciling after every step
    "every": ["design.ssgm.reconcile_every=1"],
    # gate on, never reconciling, the seed's immutable log
    "immutable": ["design.ssgm.reconcile_every=0", "design.ssgm.redact=false"],
    "no-gate": ["design.ssgm.gate=false"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any]]]:
    traj = load_trajectory(PILOT)
    out = {}
    for name, overrides in RUNS.items():
        run_dir = tmp_path_factory.mktemp("ssgm") / name
        metrics = inprocess.run_inprocess(run_dir, traj, DESIGN, plots=False, overrides=overrides)
        out[name] = (run_dir, metrics)
    return out


def records(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records" / f"{name}.jsonl").open()]


def core(metrics: dict[str, Any], condition: str) -> tuple[list[str], list[str]]:
    tally = metrics["aoep"][condition]["core"]
    return tally["plasticity"]["failed"], tally["stability"]["failed"]


def test_the_gate_pays_in_plasticity_for_stability_and_css_passes_both(runs) -> None:
    _, on = runs["every"]
    _, off = runs["no-gate"]
    for condition in ("SSGM/Native", "SSGM/QASC"):
        # with the gate: the core supersede by assert fails, the tool's 9999 is kept out
        assert core(on, condition) == (["c3-03#1"], [])
        # without: the supersede is held, and so is the untrusted value
        assert core(off, condition) == ([], ["door_code=9999"])
    for condition in ("CSS", "PLACE"):
        assert core(on, condition) == ([], [])
        assert on["aoep"][condition]["core"]["plasticity"]["total"] == 1
        assert on["aoep"][condition]["core"]["stability"]["total"] == 1


def test_rejections_are_recorded_on_the_step(runs) -> None:
    run_dir, _ = runs["every"]
    rejected = [
        (op["event_id"], op["source"])
        for s in records(run_dir, "steps")
        if s["producer"] == "ssgm"
        for op in s["operations"]
        if op.get("op") == "rejected"
    ]
    assert rejected == [("c3-03#1", "user"), ("c3-05~tool#1.1", "tool")]


def test_reconciliation_leaves_the_state_unchanged(runs) -> None:
    """Without corruption R changes nothing: SSGM reconciling after every step observes at
    every checkpoint exactly what it observes never reconciling."""
    every, _ = runs["every"]
    never, _ = runs["immutable"]

    def observed(run_dir: Path) -> dict[tuple, list]:
        return {
            (c["turn"], c["checkpoint"], c["world"], c["query"]): c["observed"]
            for c in records(run_dir, "checkpoints")
            if c["condition"] == "SSGM/Native"
        }

    reconciles = [
        op
        for s in records(every, "steps")
        if s["producer"] == "ssgm" and s["world"] == "a"
        for op in s["operations"]
        if op.get("op") == "reconcile"
    ]
    assert reconciles and all(op["removed"] == op["added"] == [] for op in reconciles)
    assert observed(every) == observed(never)


def test_redaction_is_what_makes_a_forget_pass(runs) -> None:
    def forgets(run_dir: Path) -> dict[str, list]:
        return {
            f["event"]: f["residue"]
            for f in records(run_dir, "forgets")
            if f["producer"] == "ssgm" and f["check"] == "after"
        }

    redacted, immutable = forgets(runs["every"][0]), forgets(runs["immutable"][0])
    assert redacted and all(residue == [] for residue in redacted.values())
    assert immutable.keys() == redacted.keys()
    assert all(residue for residue in immutable.values())  # the log keeps every value
    card = runs["immutable"][1]["aoep"]["SSGM/Native"]["obligations"]["kinds"]["forget"]
    assert card["passed"] == 0 and card["total"] == len(immutable)


def test_every_figure_is_recomputed_from_the_records(runs) -> None:
    for run_dir, metrics in runs.values():
        assert recompute(run_dir) == metrics


def test_place_stability_draws_gate_on_gate_off_and_css(runs, tmp_path, capsys) -> None:
    from place.cli import main

    out = tmp_path / "core.png"
    code = main(["stability", str(runs["every"][0]), str(runs["no-gate"][0]), "--out", str(out)])
    printed = capsys.readouterr().out.splitlines()
    assert code == 0 and out.stat().st_size > 0
    assert printed[:3] == [
        "SSGM (gate on): plasticity 0/1, stability 1/1",
        "CSS: plasticity 1/1, stability 1/1",
        "SSGM (gate off): plasticity 1/1, stability 0/1",
    ]


def test_place_stability_refuses_a_run_without_ssgm(tmp_path, capsys) -> None:
    from place.cli import main

    run_dir = tmp_path / "paper"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text("{}")
    assert main(["stability", str(run_dir), "--out", str(tmp_path / "x.png")]) == 2
    assert "metrics.json" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
