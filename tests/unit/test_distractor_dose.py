"""The distractor dose-response report (issue #39, docs/replications.md "Distractors:
dose-response by kind"): grouping by kind and dose with dose 0 shared, its refusals, the paired
change from dose 0 recomputed here with numpy alone, the tables, the figures and
`place compare --dose-response` on runs that carry distractors.

Nothing is run: the metrics documents are the committed replication study's
(experiments/replications/smollm2-135m, seeds 0-3) relabelled as distracted runs, with values
set by hand where a test needs to know them."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from recompute import trajectory_interval

from place.errors import PlaceError
from place.report import distractors as dis
from place.report.dose import group_docs
from place.report.metrics import MetricsDocument, load_metrics

ROOT = Path(__file__).parents[2]
STUDY = ROOT / "experiments" / "replications" / "smollm2-135m"
SEEDS = (0, 1, 2, 3)
KINDS = ("entity", "hypothetical")
DOSES = (4, 16)
CONDITION = "PLACE"


def _committed() -> dict[int, MetricsDocument]:
    docs = [load_metrics(p) for p in sorted(STUDY.glob("*/metrics.json"))]
    by_seed = {d.trajectory["generated"]["seed"]: d for d in docs}
    return {s: by_seed[s] for s in SEEDS}


BASE = _committed()
BOOT = (BASE[0].bootstrap.seed, BASE[0].bootstrap.resamples)


def at(seed: int, kind: str | None, dose: int, **values: float | None) -> MetricsDocument:
    """Seed `seed`'s committed document as if run with `dose` distractors of `kind` (None:
    none), with its own trajectory hash, and PLACE's endpoints set to `values`."""
    raw = BASE[seed].to_json()
    t = raw["trajectory"]
    if kind is not None:
        t["generated"].update(distract=kind, dose=dose, distract_seed=seed)
        t["id"] = f"{t['id']}.distract-{kind}-{dose}-s{seed}"
        t["sha256"] = hashlib.sha256(f"{t['sha256']}:{kind}:{dose}".encode()).hexdigest()
    raw["conditions"][CONDITION].update(values)
    return MetricsDocument.model_validate(raw)


SC = {
    (None, 0): [1.0, 0.9, 0.8, 1.0],
    ("entity", 4): [1.0, 0.9, 0.8, 1.0],
    ("entity", 16): [0.5, 0.7, 0.8, 0.6],
    ("hypothetical", 4): [0.9, 0.9, 0.7, 1.0],
    ("hypothetical", 16): [0.2, 0.3, 0.4, 0.1],
}
"""PLACE's StateCorrectness by hand per (kind, dose) and seed."""


def study_docs() -> list[MetricsDocument]:
    docs = [at(s, None, 0, state_correctness=SC[(None, 0)][i]) for i, s in enumerate(SEEDS)]
    for k in KINDS:
        for d in DOSES:
            docs += [at(s, k, d, state_correctness=SC[(k, d)][i]) for i, s in enumerate(SEEDS)]
    return docs


def row(summary: pd.DataFrame, distractor: str, dose: int, kind: str, name: str) -> pd.Series:
    hit = summary[
        (summary["distractor"] == distractor)
        & (summary["dose"] == dose)
        & (summary["kind"] == kind)
        & (summary["condition"] == CONDITION)
        & (summary["name"] == name)
    ]
    assert len(hit) == 1, (distractor, dose, kind, name)
    return hit.iloc[0]


def test_runs_are_grouped_by_kind_and_dose_with_dose_0_shared() -> None:
    docs = study_docs()
    random.Random(5).shuffle(docs)
    assert dis.carries_distractors(docs)
    study = dis.group_distractors(docs)
    assert study.kinds == list(KINDS)  # the order of DISTRACTOR_KINDS, not of the input
    assert study.doses == list(DOSES)
    assert study.seeds == list(SEEDS)
    for k in KINDS:
        for d in DOSES:
            assert [x.trajectory["generated"]["seed"] for x in study.cells[k][d]] == list(SEEDS)
    assert not dis.carries_distractors(study.baseline)


def test_the_change_from_dose_0_is_paired_over_seeds() -> None:
    summary = dis.distractor_summary(dis.group_distractors(study_docs()))
    for k in KINDS:
        for d in DOSES:
            diffs = [b - a for a, b in zip(SC[(None, 0)], SC[(k, d)], strict=True)]
            r = row(summary, k, d, "change", "state_correctness")
            assert r["mean"] == pytest.approx(np.mean(diffs))
            assert (r["lo"], r["hi"]) == pytest.approx(trajectory_interval(diffs, *BOOT))
            assert r["values"] == pytest.approx(diffs)
            level = row(summary, k, d, "endpoint", "state_correctness")
            assert level["mean"] == pytest.approx(np.mean(SC[(k, d)]))
    base = row(summary, dis.BASELINE, 0, "endpoint", "state_correctness")
    assert base["mean"] == pytest.approx(np.mean(SC[(None, 0)]))
    # A change that is 0 on every seed is 0 with a degenerate interval, not a movement.
    r = row(summary, "entity", 4, "change", "state_correctness")
    assert r["mean"] == 0 and r["lo"] == 0 and r["hi"] == 0


def test_the_headline_table_shows_each_kind_at_the_top_dose() -> None:
    summary = dis.distractor_summary(dis.group_distractors(study_docs()))
    table = dis.change_table(summary, ["state_correctness"])
    assert table.header == ["Condition", "Endpoint", "dose 0", *KINDS]
    line = next(r for r in table.rows if r[0] == CONDITION)
    assert line[2].startswith("0.925 [")
    assert line[3].startswith("-0.275 [")
    assert line[4].startswith("-0.675 [")
    per_kind = dis.kind_table(summary, "hypothetical", ["state_correctness"])
    assert per_kind.header[2:] == ["dose 0", "dose 4", "dose 16", "Δ dose 4", "Δ dose 16"]


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        (lambda d: d.trajectory["generated"].get("distract") is None, "no run without distractors"),
        (
            lambda d: d.trajectory["generated"].get("distract") is not None,
            "no run with distractors",
        ),
        (
            lambda d: (
                d.trajectory["generated"].get("distract") == "entity"
                and d.trajectory["generated"]["dose"] == 16
                and d.trajectory["generated"]["seed"] == 2
            ),
            "entity at dose 16 lacks seed 2",
        ),
    ],
)
def test_a_study_with_a_hole_is_refused(drop: Any, message: str) -> None:
    docs = [d for d in study_docs() if not drop(d)]
    with pytest.raises(PlaceError, match=message):
        dis.group_distractors(docs)


def test_a_cell_given_twice_is_refused_and_history_grouping_refuses_distractors() -> None:
    docs = study_docs()
    with pytest.raises(PlaceError, match="occurs twice"):
        dis.group_distractors([*docs, docs[-1]])
    with pytest.raises(PlaceError, match="grouped by kind and dose"):
        group_docs(docs)


def test_the_files_and_figures_are_written_and_deterministic(tmp_path: Path) -> None:
    study = dis.group_distractors(study_docs())
    dis.write_distractors(study, tmp_path / "a")
    dis.write_distractors(study, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert "distractors.md" in names and "distractors_summary.csv" in names
    assert "distractors_change.csv" in names and "distractors_hypothetical.csv" in names
    assert dis.figure_name("state_correctness") in names
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), n


def test_the_figure_has_one_panel_per_kind_and_starts_at_0() -> None:
    summary = dis.distractor_summary(dis.group_distractors(study_docs()))
    fig = dis.distractor_figure(summary, "state_correctness")
    titled = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in titled] == list(KINDS)
    line = next(ln for ln in titled[1].get_lines() if ln.get_gid() == f"hypothetical|{CONDITION}")
    ys = list(line.get_ydata())
    assert ys[0] == 0.0
    assert ys[2] == pytest.approx(
        np.mean([b - a for a, b in zip(SC[(None, 0)], SC[("hypothetical", 16)], strict=True)])
    )
