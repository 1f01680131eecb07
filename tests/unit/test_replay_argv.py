"""`replay_argv` (place/runner/replay.py): a recording's design parameters come back as
overrides Hydra reads to the same values, nested sections (`design.bounded.budget`)
included."""

from __future__ import annotations

from pathlib import Path

from place.runner.replay import replay_argv


def test_nested_and_non_scalar_parameters_are_flattened_into_overrides(tmp_path: Path) -> None:
    config = {
        "design": {
            "name": "aoep",
            "producers": ["css", "bounded", "ssgm"],
            "policies": ["native", "qasc"],
            "bounded": {"budget": {"state": 2, "summary": None}, "retain": ["evidence"]},
            "ssgm": {"core": "all", "gate": False, "reconcile_every": 10, "redact": True},
        },
        "trajectory": {"name": "primary"},
        "experiment": {"name": "all"},
        "model": {"name": "smollm2-135m"},
    }
    argv = replay_argv({"config": config}, tmp_path / "run", tmp_path / "cache.sqlite")
    for override in (
        "design.producers=[css,bounded,ssgm]",
        "design.bounded.budget.state=2",
        "design.bounded.budget.summary=null",
        "design.bounded.retain=[evidence]",
        "design.ssgm.core=all",
        "design.ssgm.gate=false",
        "design.ssgm.redact=true",
        "design.ssgm.reconcile_every=10",
    ):
        assert override in argv, override
    assert not [a for a in argv if "{" in a]  # no section written as a Python dict
