"""The dose-response report (issue #30, docs/replications.md "History length: dose-response"):
grouping by history length and its refusals, the per-length summary and the paired change
recomputed here with numpy alone, the table cells (`not measured` included), the figure and
the written files, and `place compare --dose-response`.

Nothing is run: the metrics documents are the committed study's
(experiments/replications/smollm2-135m, seeds 0-3, filler 0) relabelled as other lengths,
with values set by hand where a test needs to know them."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from recompute import trajectory_interval

from place.cli import main
from place.design import Design
from place.errors import PlaceError
from place.report import dose
from place.report.dose import (
    dose_cell,
    dose_effects_table,
    dose_figure,
    dose_markdown,
    dose_summary,
    dose_table,
    group_docs,
    load_dose,
    write_dose,
)
from place.report.metrics import MetricsDocument, load_metrics
from place.report.plots import palette

ROOT = Path(__file__).parents[2]
STUDY = ROOT / "experiments" / "replications" / "smollm2-135m"
SEEDS = (0, 1, 2, 3)
LENGTHS = (0, 100, 500)
CONDITION = "PLACE"
"""The condition whose values the tests set by hand."""


def _committed() -> dict[int, MetricsDocument]:
    docs = [load_metrics(p) for p in sorted(STUDY.glob("*/metrics.json"))]
    by_seed = {d.trajectory["generated"]["seed"]: d for d in docs}
    return {s: by_seed[s] for s in SEEDS}


BASE = _committed()


def at(seed: int, filler: int, **values: float | None) -> MetricsDocument:
    """Seed `seed`'s committed document as if generated with `filler` turns, with its own
    trajectory hash, and PLACE's endpoints set to `values` (metrics.json keys)."""
    raw = BASE[seed].to_json()
    t = raw["trajectory"]
    t["generated"]["filler"] = filler
    t["id"] = f"{t['id']}-f{filler}"
    t["sha256"] = hashlib.sha256(f"{t['sha256']}:{filler}".encode()).hexdigest()
    raw["conditions"][CONDITION].update(values)
    return MetricsDocument.model_validate(raw)


def groups(**per_length: dict[int, dict[str, float | None]]) -> dict[int, list[MetricsDocument]]:
    """Every seed at every length; `per_length["f100"] = {seed: {key: value}}` sets values."""
    return {f: [at(s, f, **per_length.get(f"f{f}", {}).get(s, {})) for s in SEEDS] for f in LENGTHS}


def flat(g: dict[int, list[MetricsDocument]]) -> list[MetricsDocument]:
    return [d for ds in g.values() for d in ds]


def row(summary: pd.DataFrame, filler: int, kind: str, cond: str | None, name: str) -> pd.Series:
    c = summary["condition"].isna() if cond is None else summary["condition"] == cond
    hit = summary[
        (summary["filler"] == filler) & (summary["kind"] == kind) & c & (summary["name"] == name)
    ]
    assert len(hit) == 1, (filler, kind, cond, name)
    return hit.iloc[0]


BOOT = (BASE[0].bootstrap.seed, BASE[0].bootstrap.resamples)

EXPOSURE = {
    "f0": {0: {"exposure_rate": 0.1}, 1: {"exposure_rate": 0.0}, 2: {"exposure_rate": 0.3}},
    "f500": {
        0: {"exposure_rate": 0.5},
        1: {"exposure_rate": 0.2},
        2: {"exposure_rate": 0.9},
        3: {"exposure_rate": 0.44},
    },
}
"""PLACE's ExposureRate by hand: at filler 0 seeds 0-2 (seed 3 keeps its committed 0.0), at
filler 500 all four; filler 100 keeps the committed values."""


# --- grouping and its refusals --------------------------------------------------------------


def test_runs_are_grouped_by_length_in_seed_order_whatever_their_order() -> None:
    docs = flat(groups())
    random.Random(3).shuffle(docs)
    grouped = group_docs(docs)
    assert list(grouped) == list(LENGTHS)
    for f, ds in grouped.items():
        assert [d.trajectory["generated"]["seed"] for d in ds] == list(SEEDS)
        assert {d.trajectory["generated"]["filler"] for d in ds} == {f}


def test_a_seed_missing_at_one_length_is_refused_naming_seed_and_length() -> None:
    g = groups()
    g[100] = [d for d in g[100] if d.trajectory["generated"]["seed"] != 2]
    with pytest.raises(PlaceError, match=r"filler 100 lacks seed 2\b") as info:
        group_docs(flat(g))
    assert "filler 0" not in str(info.value) and "filler 500" not in str(info.value)
    with pytest.raises(PlaceError, match="filler 100 lacks seed 2"):
        dose_summary(g)


def test_one_length_is_refused() -> None:
    with pytest.raises(PlaceError, match="two or more history lengths"):
        group_docs([at(s, 100) for s in SEEDS])


def test_a_hand_written_trajectory_is_refused_naming_it() -> None:
    docs = flat(groups())
    raw = docs[5].to_json()
    del raw["trajectory"]["generated"]
    raw["trajectory"]["id"] = "primary"
    docs[5] = MetricsDocument.model_validate(raw)
    with pytest.raises(PlaceError, match="primary: not a generated trajectory"):
        group_docs(docs)


def test_another_generator_design_is_refused() -> None:
    docs = flat(groups())
    raw = docs[-1].to_json()
    raw["trajectory"]["generated"]["design"] = "paper"
    docs[-1] = MetricsDocument.model_validate(raw)
    with pytest.raises(PlaceError, match="generator design 'paper'"):
        group_docs(docs)


def fake_runs(root: Path, g: dict[int, list[MetricsDocument]]) -> dict[int, list[Path]]:
    """A Hydra multirun root with a run directory (manifest.json + metrics.json) per document,
    jobs numbered so that natural order is not (filler, seed) order."""
    paths: dict[int, list[Path]] = {}
    docs = [(f, d) for f, ds in g.items() for d in ds]
    for job, (f, d) in enumerate(reversed(docs)):
        run = root / f"{job}_smollm2-135m"
        run.mkdir(parents=True)
        header = {"trajectory": d.trajectory, "model": d.model, "design": d.design}
        manifest = {"status": "complete", "header": header}
        (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        (run / "metrics.json").write_text(json.dumps(d.to_json()), encoding="utf-8")
        paths.setdefault(f, []).append(run.resolve())
    return paths


def test_load_dose_groups_the_runs_and_names_a_bad_run_directory(tmp_path: Path) -> None:
    g = groups()
    paths = fake_runs(tmp_path / "study", g)
    study = load_dose([tmp_path / "study"], recompute=False)
    assert study.lengths == list(LENGTHS) and study.seeds == list(SEEDS)
    for f in LENGTHS:
        assert [d.trajectory["id"] for d in study.groups[f]] == [d.trajectory["id"] for d in g[f]]
        # Each run directory stays with its document.
        by_id = {
            json.loads((p / "metrics.json").read_text())["trajectory"]["id"]: p for p in paths[f]
        }
        assert study.paths[f] == [by_id[d.trajectory["id"]] for d in study.groups[f]]
    bad = tmp_path / "study" / "0_smollm2-135m"
    metrics = json.loads((bad / "metrics.json").read_text())
    del metrics["trajectory"]["generated"]
    (bad / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(PlaceError, match="not a generated trajectory") as info:
        load_dose([tmp_path / "study"], recompute=False)
    assert str(bad.resolve()) in str(info.value)


# --- the summary, recomputed here -----------------------------------------------------------


def test_per_length_rows_are_the_trajectory_summary_in_seed_order() -> None:
    docs = groups(**EXPOSURE)
    shuffled = {f: list(reversed(ds)) for f, ds in docs.items()}
    s = dose_summary(shuffled)
    assert list(s.columns) == dose.COLUMNS
    assert list(dict.fromkeys(s["filler"])) == list(LENGTHS)
    assert list(dict.fromkeys(s["kind"])) == ["endpoint", "effect", "aoep", "change"]
    assert (s[s["kind"] == "change"]["filler"] == 500).all()
    r = row(s, 500, "endpoint", CONDITION, "exposure_rate")
    assert r["values"] == [0.5, 0.2, 0.9, 0.44]  # seed order, though handed in reverse
    assert r["n"] == 4 and r["mean"] == pytest.approx(0.51)
    assert (r["lo"], r["hi"]) == trajectory_interval([0.5, 0.2, 0.9, 0.44], *BOOT)  # exactly
    assert (r["min"], r["max"]) == (0.2, 0.9)
    committed = [BASE[s].conditions["Append/Native"].state_correctness for s in SEEDS]
    assert row(s, 100, "endpoint", "Append/Native", "state_correctness")["values"] == committed


def test_the_change_is_paired_over_the_seeds_present_at_both_ends() -> None:
    g = groups(**EXPOSURE)
    g[0][1] = at(1, 0, exposure_rate=None)  # seed 1 has no value at the shortest length
    s = dose_summary(g)
    change = row(s, 500, "change", CONDITION, "exposure_rate")
    short = [0.1, None, 0.3, BASE[3].conditions[CONDITION].exposure_rate]
    long = [0.5, 0.2, 0.9, 0.44]
    d = [b - a for a, b in zip(short, long, strict=True) if a is not None]
    assert change["values"] == [0.5 - 0.1, None, 0.9 - 0.3, 0.44 - short[3]]
    assert change["n"] == 3 and change["of_kind"] == "endpoint"
    assert change["mean"] == pytest.approx(np.mean(d))
    assert (change["lo"], change["hi"]) == trajectory_interval(d, *BOOT)
    # Paired: not the difference of the two lengths' own means (which uses seed 1 at 500).
    unpaired = row(s, 500, "endpoint", CONDITION, "exposure_rate")["mean"] - np.mean(
        [x for x in short if x is not None]
    )
    assert change["mean"] != pytest.approx(unpaired)
    effect = row(s, 500, "change", None, "ExposureGap_Decay")
    assert effect["of_kind"] == "effect" and effect["values"] == [0.0] * 4


# --- the tables -----------------------------------------------------------------------------


def test_cells_show_the_mean_interval_and_missing_trajectories() -> None:
    g = groups(**EXPOSURE)
    g[0][1] = at(1, 0, exposure_rate=None)
    s = dose_summary(g)
    table = dose_table(s)
    assert table.header == [
        "Condition",
        "Endpoint",
        "filler 0",
        "filler 100",
        "filler 500",
        "change (longest − shortest)",
    ]
    names = [r[1] for r in table.rows if r[0] == CONDITION]
    assert names == ["StateCorrectness", "NeededSupport", "ExposureRate", "DeletionResidue"]
    cells = next(r for r in table.rows if r[:2] == [CONDITION, "ExposureRate"])
    lo, hi = trajectory_interval([0.5, 0.2, 0.9, 0.44], *BOOT)
    assert cells[4] == f"0.510 [{lo:.3f}, {hi:.3f}]"  # set by hand: (0.5 + 0.2 + 0.9 + 0.44) / 4
    short = [0.1, 0.3, BASE[3].conditions[CONDITION].exposure_rate]
    lo0, hi0 = trajectory_interval(short, *BOOT)
    assert cells[2] == f"{np.mean(short):.3f} [{lo0:.3f}, {hi0:.3f}] n=3"
    assert cells[5].endswith(" n=3")
    assert [r[0] for r in dose_effects_table(s).rows][:2] == ["StateGain_Append", "LeakageDrop"]
    # A value missing on every trajectory (the closed loop was not run) is `–`, not 0.
    closed = dose_table(s, ["closed_loop.joint_success"])
    assert all(c == "–" for r in closed.rows for c in r[2:])
    with pytest.raises(PlaceError, match="no endpoint nonsense"):
        dose_table(s, ["nonsense"])


def test_a_quantity_listed_as_not_measured_reads_not_measured() -> None:
    g = groups()
    # filler 500 answer-free: joint_success None and listed, one run even carrying a 0.0
    # that must not be counted; the effect listed at every length.
    for f, ds in g.items():
        for i, d in enumerate(ds):
            skipped = ["StateGain_Append"] + (["joint_success"] if f == 500 else [])
            if f == 500:
                d = at(SEEDS[i], f, joint_success=0.0 if i == 0 else None)
            g[f][i] = d.model_copy(update={"not_measured": skipped})
    s = dose_summary(g)
    r = row(s, 500, "endpoint", CONDITION, "joint_success")
    assert r["n"] == 0 and r["values"] == [None] * 4 and bool(r["not_measured"])
    cells = next(x for x in dose_table(s, ["joint_success"]).rows if x[0] == CONDITION)
    assert cells[2] != "not measured" and cells[3] != "not measured"  # measured at 0, 100
    assert cells[4:] == ["not measured", "not measured"]
    effect = next(x for x in dose_effects_table(s).rows if x[0] == "StateGain_Append")
    assert effect[1:] == ["not measured"] * 4
    # Not listed: a missing value stays `–`.
    assert dose_cell({"n": 0, "not_measured": False}, 4) == "–"


def test_markdown_has_the_header_line_then_both_tables() -> None:
    s = dose_summary(groups())
    md = dose_markdown(s)
    first = md.splitlines()[0]
    for part in (
        "3 history lengths",
        "0, 100, 500",
        "4 trajectories per length",
        "design small, seeds 0, 1, 2, 3",
        "design replication",
        "model smollm2-135m",
        f"{BOOT[1]} resamples, seed {BOOT[0]}",
    ):
        assert part in first, part
    assert md.index("endpoints per condition") < md.index("effect estimates")


# --- the figure and the files ---------------------------------------------------------------


def test_figure_has_a_panel_per_endpoint_and_the_run_plots_colours() -> None:
    import matplotlib.pyplot as plt

    s = dose_summary(groups(**EXPOSURE))
    fig = dose_figure(s)
    try:
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_title() for ax in axes] == [
            "StateCorrectness",
            "NeededSupport",
            "ExposureRate",
            "DeletionResidue",
        ]
        assert [t.get_text() for t in axes[0].get_xticklabels()] == ["0", "100", "500"]
        conditions = list(BASE[0].conditions)
        colours = palette(conditions, Design.from_json(BASE[0].design))
        line = next(
            ln for ln in axes[2].get_lines() if ln.get_gid() == f"exposure_rate|{CONDITION}"
        )
        assert to_hex(line.get_color()) == colours[CONDITION]
        assert list(line.get_ydata()) == pytest.approx([np.mean([0.1, 0.0, 0.3, 0.0]), 0.0, 0.51])
    finally:
        plt.close(fig)


def test_written_files_are_complete_and_byte_identical(tmp_path: Path) -> None:
    a = write_dose(groups(**EXPOSURE), tmp_path / "a")
    write_dose(groups(**EXPOSURE), tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == [
        "dose_response.md",
        "dose_response.png",
        "dose_response_effects.csv",
        "dose_response_endpoints.csv",
        "dose_response_summary.csv",
    ]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "dose_response.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "a" / "dose_response.md").read_text(encoding="utf-8") == dose_markdown(a)
    full = pd.read_csv(tmp_path / "a" / "dose_response_summary.csv")
    hit = full[
        (full["filler"] == 500)
        & (full["kind"] == "endpoint")
        & (full["condition"] == CONDITION)
        & (full["name"] == "exposure_rate")
    ]
    assert json.loads(hit["values"].iloc[0]) == [0.5, 0.2, 0.9, 0.44]
    assert (
        hit["lo"].iloc[0] == trajectory_interval([0.5, 0.2, 0.9, 0.44], *BOOT)[0]
    )  # full precision
    endpoints = (tmp_path / "a" / "dose_response_endpoints.csv").read_text(encoding="utf-8")
    assert endpoints.splitlines()[0].startswith("Condition,Endpoint,filler 0,filler 100")


# --- the command ----------------------------------------------------------------------------


def test_cli_refuses_dose_response_with_replications_or_paper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_runs(tmp_path / "study", groups())
    study = str(tmp_path / "study")
    assert main(["compare", "--dose-response", "--replications", study]) == 2
    err = capsys.readouterr().err
    assert err.startswith("place: error: --dose-response and --replications")
    assert "Traceback" not in err
    assert main(["compare", "--dose-response", "--paper", study]) == 2
    assert "--paper does not apply with --dose-response" in capsys.readouterr().err
    assert not (tmp_path / "dose-response").exists()


def test_cli_writes_the_report_and_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import place.report.report as report

    fake_runs(tmp_path / "study", groups(**EXPOSURE))
    # The fake runs have no records: read what recomputing them would give, their metrics.json.
    monkeypatch.setattr(report, "recompute", lambda p: load_metrics(Path(p) / "metrics.json"))
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--dose-response", "study"]) == 0
    printed = capsys.readouterr().out
    out = tmp_path / "dose-response"  # the default --out
    assert printed.rstrip("\n") == (out / "dose_response.md").read_text().rstrip("\n")
    assert "3 history lengths" in printed
    # A study missing a run exits 2 with the message.
    victim = next(p for p in (tmp_path / "study").iterdir() if p.name.startswith("3_"))
    seed = json.loads((victim / "metrics.json").read_text())["trajectory"]["generated"]
    for f in victim.iterdir():
        f.unlink()
    victim.rmdir()
    assert main(["compare", "--dose-response", "study"]) == 2
    assert f"filler {seed['filler']} lacks seed {seed['seed']}" in capsys.readouterr().err


def test_values_are_kept_as_python_numbers() -> None:
    # Guards the JSON of the summary CSV: numpy scalars would not serialise.
    s = dose_summary(groups(**EXPOSURE))
    for values in s["values"]:
        json.dumps(values)
    assert isinstance(row(s, 500, "change", CONDITION, "exposure_rate")["values"][0], float)
