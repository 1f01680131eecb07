"""Replication studies (`place compare --replications`, docs/replications.md): the summary
statistics on hand-made metrics documents, the study's runs (`collect`) on hand-made
manifests, and the command on real run directories made in-process (real runner, records
and report; FAKE scripted models) on generated trajectories."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from place.cli import main
from place.errors import PlaceError
from place.report.metrics import MetricsDocument
from place.report.replications import (
    bootstrap_mean,
    cell,
    collect,
    header_line,
    load_replications,
    markdown,
    replication_tables,
    summarise,
    write_replications,
)
from place.report.tables import to_csv

CONDITIONS = ["Append/Native", "CSS", "Append/QASC", "PLACE"]
"""Design order (policy-major), deliberately not alphabetical."""


def condition(joint: float | None, state: float = 1.0, cl_joint: float | None = 0.5) -> dict:
    return {
        "state_correctness": state,
        "leakage_rate": 0.0,
        "leakage_n": 2,
        "answer_correctness": 0.5,
        "joint_success": joint,
        "needed_support": 1.0,
        "exposure_rate": 0.0,
        "conflict_harm": None,
        "deletion_residue": 0.0,
        "closed_loop": {
            "state_correctness": state,
            "exposure_rate": 0.0,
            "joint_success": cl_joint,
        },
    }


def doc(
    i: int,
    joint: list[float | None],
    effect: float | None = 0.1,
    seed: int = 11,
    resamples: int = 2000,
) -> MetricsDocument:
    """A metrics document for trajectory i with JointSuccess `joint` per condition."""
    return MetricsDocument.model_validate(raw_doc(i, joint, effect, seed, resamples))


def raw_doc(
    i: int, joint: list[float | None], effect: float | None, seed: int, resamples: int
) -> dict[str, Any]:
    """`doc` as the JSON it is written as."""
    return {
        "schema": "place-metrics/3",
        "trajectory": {
            "id": f"gen-s{i}",
            "sha256": f"{i:064x}",
            "path": "trajectory.yaml",
            "generated": {"seed": i, "design": "small", "filler": 0},
        },
        "model": {"name": "fake-model", "runtime": "fake", "identity": "fake"},
        "counts": {},
        "design": {"name": "mine", "producers": ["append", "css"], "policies": ["native", "qasc"]},
        "conditions": {
            c: condition(j, state=0.5 + 0.1 * i) for c, j in zip(CONDITIONS, joint, strict=True)
        },
        "effects": {
            "StateGain_Append": {"estimate": effect, "interval": None, "loco_range": None},
            "LeakageDrop": {"estimate": 0.25 * i, "interval": [0.0, 0.5], "n": 4},
        },
        "factorization": {"ok": True, "checkpoints": 1, "mismatches": 0, "first_mismatch": None},
        "aoep": {
            c: {
                "obligations": {"passed": i, "total": 4, "kinds": {}},
                "invariants": {"passed": 0, "total": 0, "kinds": {}},
            }
            for c in CONDITIONS
        },
        "bootstrap": {"seed": seed, "resamples": resamples},
    }


JOINT = {
    0: [0.0, 0.25, 0.0, 1.0],
    1: [0.1, None, 0.0, 0.5],
    2: [0.2, 0.75, 0.0, 0.75],
    3: [0.6, 0.5, 0.0, 0.25],
}


def study() -> list[MetricsDocument]:
    return [doc(i, JOINT[i], effect=[0.1, -0.2, None, 0.4][i]) for i in range(4)]


def row(frame: pd.DataFrame, kind: str, cond: str | None, name: str) -> pd.Series:
    c = frame["condition"].isna() if cond is None else frame["condition"] == cond
    hit = frame[(frame["kind"] == kind) & c & (frame["name"] == name)]
    assert len(hit) == 1, (kind, cond, name)
    return hit.iloc[0]


# --- the statistics ---------------------------------------------------------------------


def test_mean_spread_and_values_per_condition_are_exact() -> None:
    s = summarise(study())
    r = row(s, "endpoint", "PLACE", "joint_success")
    assert r["n"] == 4
    assert r["mean"] == pytest.approx((1.0 + 0.5 + 0.75 + 0.25) / 4)
    assert (r["min"], r["max"]) == (0.25, 1.0)
    assert r["values"] == [1.0, 0.5, 0.75, 0.25]  # run order, not sorted
    state = row(s, "endpoint", "CSS", "state_correctness")
    assert state["mean"] == pytest.approx(np.mean([0.5, 0.6, 0.7, 0.8]))


def test_a_missing_value_is_left_out_of_n_and_kept_as_none_in_values() -> None:
    s = summarise(study())
    r = row(s, "endpoint", "CSS", "joint_success")
    assert r["n"] == 3
    assert r["values"] == [0.25, None, 0.75, 0.5]
    assert r["mean"] == pytest.approx(0.5)
    effect = row(s, "effect", None, "StateGain_Append")
    assert effect["n"] == 3 and effect["values"] == [0.1, -0.2, None, 0.4]
    assert effect["mean"] == pytest.approx(0.1)
    assert (effect["min"], effect["max"]) == (-0.2, 0.4)
    nothing = row(s, "endpoint", "CSS", "conflict_harm")
    assert nothing["n"] == 0
    assert all(math.isnan(nothing[k]) for k in ("mean", "lo", "hi", "min", "max"))


def test_interval_is_the_trajectory_bootstrap_of_the_mean_as_documented() -> None:
    docs = study()
    s = summarise(docs)
    r = row(s, "endpoint", "Append/Native", "joint_success")
    values = np.array([0.0, 0.1, 0.2, 0.6])
    rng = np.random.default_rng(11)  # the first run's bootstrap seed and resamples
    idx = rng.integers(0, 4, size=(2000, 4))
    lo, hi = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    assert (r["lo"], r["hi"]) == (lo, hi)
    assert r["lo"] < r["mean"] < r["hi"]
    assert r["lo"] >= 0.0 and r["hi"] <= 0.6
    # A fresh generator per quantity: each interval is reproducible on its own.
    assert (r["lo"], r["hi"]) == bootstrap_mean([0.0, 0.1, 0.2, 0.6], 11, 2000)
    other = row(s, "effect", None, "LeakageDrop")
    assert (other["lo"], other["hi"]) == bootstrap_mean([0.0, 0.25, 0.5, 0.75], 11, 2000)


def test_same_inputs_same_frame_and_another_seed_another_interval() -> None:
    pd.testing.assert_frame_equal(summarise(study()), summarise(study()))
    reseeded = [doc(i, JOINT[i], seed=12) for i in range(4)]
    a = row(summarise(study()), "endpoint", "Append/Native", "joint_success")
    b = row(summarise(reseeded), "endpoint", "Append/Native", "joint_success")
    assert a["mean"] == b["mean"] and (a["lo"], a["hi"]) != (b["lo"], b["hi"])


def test_fewer_than_two_values_have_no_interval() -> None:
    assert all(map(math.isnan, bootstrap_mean([0.3], 1, 100)))
    s = summarise([doc(0, JOINT[0])])
    r = row(s, "endpoint", "PLACE", "joint_success")
    assert r["n"] == 1 and r["mean"] == 1.0 and math.isnan(r["lo"]) and math.isnan(r["hi"])


def test_rows_follow_design_order_and_metrics_order() -> None:
    s = summarise(study())
    assert list(s.columns) == [
        "kind",
        "condition",
        "name",
        "n",
        "mean",
        "lo",
        "hi",
        "min",
        "max",
        "values",
    ]
    assert list(dict.fromkeys(s[s["kind"] == "endpoint"]["condition"])) == CONDITIONS
    names = list(s[(s["kind"] == "endpoint") & (s["condition"] == "CSS")]["name"])
    assert names == [
        "state_correctness",
        "leakage_rate",
        "leakage_n",
        "answer_correctness",
        "joint_success",
        "needed_support",
        "exposure_rate",
        "conflict_harm",
        "deletion_residue",
        "closed_loop.state_correctness",
        "closed_loop.exposure_rate",
        "closed_loop.joint_success",
    ]
    assert list(s[s["kind"] == "effect"]["name"]) == ["StateGain_Append", "LeakageDrop"]
    assert s[s["kind"] == "effect"]["condition"].tolist() == [None, None]
    assert list(dict.fromkeys(s["kind"])) == ["endpoint", "effect", "aoep"]


def test_aoep_pass_rates_per_condition() -> None:
    s = summarise(study())
    r = row(s, "aoep", "PLACE", "obligations")
    assert r["values"] == [0.0, 0.25, 0.5, 0.75] and r["mean"] == pytest.approx(0.375)
    assert row(s, "aoep", "PLACE", "invariants")["n"] == 0  # no items: no rate


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["conditions"].pop("PLACE"), "conditions"),
        (lambda d: d["model"].update(name="other"), "model 'other'"),
        (lambda d: d["trajectory"].update(sha256=f"{0:064x}"), "are the same"),
    ],
    ids=["design", "model", "trajectory"],
)
def test_documents_that_are_not_replications_are_refused(change: Any, message: str) -> None:
    docs = study()
    bad = copy.deepcopy(docs[2].to_json())
    change(bad)
    with pytest.raises(PlaceError, match=message):
        summarise([*docs[:2], MetricsDocument.model_validate(bad)])


# --- tables and files --------------------------------------------------------------------


def test_cells_show_mean_interval_spread_and_missing_runs() -> None:
    s = summarise(study())
    r = row(s, "endpoint", "PLACE", "joint_success")
    assert cell(r, 4) == f"0.625 [{r['lo']:.3f}, {r['hi']:.3f}] (0.250–1.000)"
    assert cell(row(s, "endpoint", "CSS", "joint_success"), 4).endswith("(0.250–0.750) n=3")
    assert cell(row(s, "endpoint", "CSS", "conflict_harm"), 4) == "–"
    single = row(summarise([doc(0, JOINT[0])]), "endpoint", "PLACE", "joint_success")
    assert cell(single, 1) == "1.000 [–, –] (1.000–1.000)"


def test_tables_have_a_row_per_condition_and_per_effect() -> None:
    endpoints, effects = replication_tables(study())
    assert endpoints.name == "replications_endpoints" and effects.name == "replications_effects"
    assert [r[0] for r in endpoints.rows] == CONDITIONS
    assert endpoints.header[0] == "Condition" and "JointSuccess" in endpoints.header
    assert [r[0] for r in effects.rows] == ["StateGain_Append", "LeakageDrop"]
    assert effects.rows[0][1] == "3" and effects.rows[0][3] == "2/3"
    assert effects.rows[1][3] == "3/4"
    assert to_csv(endpoints).splitlines()[0].startswith("Condition,StateCorrectness")
    line = header_line(study())
    assert "4 trajectories" in line and "seeds 0, 1, 2, 3" in line
    assert "design mine (Append/Native, CSS, Append/QASC, PLACE)" in line
    assert "model fake-model" in line and "2000 resamples, seed 11" in line


def test_an_invalid_run_puts_a_banner_on_both_tables() -> None:
    docs = study()
    failed = docs[1].factorization.model_copy(update={"ok": False})
    docs[1] = docs[1].model_copy(update={"factorization": failed})
    assert all("gen-s1" in (t.banner or "") for t in replication_tables(docs))
    assert all(t.banner is None for t in replication_tables(study()))


def test_written_files_are_complete_and_deterministic(tmp_path: Path) -> None:
    write_replications(study(), tmp_path / "a")
    write_replications(study(), tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == [
        "forest.png",
        "replications.md",
        "replications_effects.csv",
        "replications_effects.tex",
        "replications_endpoints.csv",
        "replications_endpoints.tex",
        "replications_summary.csv",
    ]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "forest.png").read_bytes()[:4] == b"\x89PNG"
    md = (tmp_path / "a" / "replications.md").read_text()
    assert md == markdown(study())
    assert md.index("Replication study") < md.index("endpoints") < md.index("effect estimates")
    full = pd.read_csv(tmp_path / "a" / "replications_summary.csv")
    assert (
        json.loads(full["values"][0])
        == row(summarise(study()), "endpoint", CONDITIONS[0], "state_correctness")["values"]
    )
    assert "\\begin{tabular}" in (tmp_path / "a" / "replications_effects.tex").read_text()


# --- the study's runs ---------------------------------------------------------------------


def fake_run(
    path: Path,
    sha: int,
    status: str = "complete",
    model: str = "m",
    producers: tuple[str, ...] = ("append", "css"),
) -> Path:
    path.mkdir(parents=True)
    design = {
        "name": "mine",
        "producers": list(producers),
        "policies": ["native", "qasc"],
    }
    manifest = {
        "status": status,
        "header": {
            "trajectory": {"id": f"t{sha}", "sha256": f"{sha:064x}"},
            "model": {"name": model},
            "design": design,
        },
    }
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


def test_collect_takes_run_dirs_and_multirun_roots_in_natural_order(tmp_path: Path) -> None:
    root = tmp_path / "multirun"
    jobs = [fake_run(root / f"{n}_m", n) for n in (10, 2, 0)]
    (root / "multirun.yaml").write_text("{}")
    (root / ".hydra").mkdir()
    single = fake_run(tmp_path / "single", 99)
    want = [p.resolve() for p in (jobs[2], jobs[1], jobs[0])] + [single.resolve()]
    assert collect([root, single]) == want
    assert collect([single, root]) == want  # the order of DIRs does not matter


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda d: None, "no such directory"),
        (lambda d: d.mkdir(), "holds no run"),
        (lambda d: (fake_run(d / "0_m", 1), (d / "1_m").mkdir()), "1_m: not a run directory"),
        (lambda d: fake_run(d / "0_m", 1, status="running"), "not complete"),
        (lambda d: (fake_run(d / "0_m", 1), fake_run(d / "1_m", 1)), "same trajectory"),
        (lambda d: (fake_run(d / "0_m", 1), fake_run(d / "1_m", 2, model="x")), "model 'x'"),
        (
            lambda d: (fake_run(d / "0_m", 1), fake_run(d / "1_m", 2, producers=("css",))),
            "design conditions",
        ),
    ],
    ids=["missing", "empty", "not-a-run", "running", "duplicate", "model", "design"],
)
def test_collect_refuses_what_is_not_a_study(build: Any, message: str, tmp_path: Path) -> None:
    d = tmp_path / "study"
    build(d)
    with pytest.raises(PlaceError, match=message) as info:
        collect([d])
    assert "study" in str(info.value)  # names the directory


def test_cli_errors_exit_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["compare", "--replications", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("place: error: ") and "holds no run" in err and "Traceback" not in err
    fake_run(tmp_path / "run", 1)
    assert main(["compare", "--replications", "--paper", str(tmp_path / "run")]) == 2
    assert "--paper does not apply" in capsys.readouterr().err


# --- real run directories -----------------------------------------------------------------

STUDY_SEEDS = (1, 2)


def real_run(run_dir: Path, seed: int) -> Path:
    """One complete run directory on generated trajectory `seed` (design small), design
    append, css × native, qasc, through the real runner, records and report with FAKE
    models, and a manifest as `place run` writes it (status complete, trajectory.generated)."""
    from inprocess import run_inprocess

    from place.design import make_design
    from place.generate import write
    from place.reference.validate import load_trajectory

    run_dir.mkdir(parents=True)
    write(seed, run_dir / "trajectory.yaml", design="small", filler=0)
    trajectory = load_trajectory(run_dir / "trajectory.yaml")
    run_inprocess(
        run_dir,
        trajectory,
        make_design("replication", ["append", "css"], ["native", "qasc"]),
        trajectory_header={
            "id": trajectory.id,
            "sha256": trajectory.sha256,
            "path": "trajectory.yaml",
            "generated": {"seed": seed, "design": "small", "filler": 0},
        },
        seeds=(5, 300),
        plots=False,
    )
    return run_dir


def build_study(root: Path, seeds: tuple[int, ...] = STUDY_SEEDS) -> Path:
    """A study directory laid out as a Hydra multirun root (`<job>_scripted-fake/`), one real
    run per generated trajectory (about 30 s each). For tests/integration/test_notebooks.py too."""
    for job, seed in enumerate(seeds):
        real_run(root / f"{job}_scripted-fake", seed)
    return root


@pytest.fixture(scope="module")
def real_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_study(tmp_path_factory.mktemp("replications") / "study")


@pytest.mark.integration
def test_compare_replications_on_real_runs(
    real_study: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--replications", str(real_study)]) == 0
    out = tmp_path / "replications"  # the default --out
    printed = capsys.readouterr().out
    assert printed.rstrip("\n") == (out / "replications.md").read_text().rstrip("\n")
    assert "2 trajectories (generated (design small, filler 0), seeds 1, 2)" in printed
    assert (out / "forest.png").read_bytes()[:4] == b"\x89PNG"
    # Recomputed from the records: the same figures as each run's own metrics.json.
    runs = sorted(real_study.iterdir())
    metrics = [json.loads((r / "metrics.json").read_text()) for r in runs]
    summary = pd.read_csv(out / "replications_summary.csv")
    state = summary[
        (summary["condition"] == "Append/Native") & (summary["name"] == "state_correctness")
    ]
    values = [m["conditions"]["Append/Native"]["state_correctness"] for m in metrics]
    assert json.loads(state["values"].iloc[0]) == values
    assert values[0] != values[1]  # two trajectories, two different stores
    assert state["mean"].iloc[0] == pytest.approx(np.mean(values))
    study = load_replications([real_study])
    pd.testing.assert_frame_equal(study.summary, load_replications([real_study], False).summary)
    assert study.paths == [r.resolve() for r in runs]


@pytest.mark.integration
def test_plain_compare_is_unchanged(
    real_study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runs = [str(r) for r in sorted(real_study.iterdir())]
    assert main(["compare", *runs]) == 0
    assert (tmp_path / "comparison" / "tables.md").is_file()
    assert not (tmp_path / "replications").exists()
    # A multirun root is not a run directory for the plain compare.
    assert main(["compare", str(real_study)]) == 2
