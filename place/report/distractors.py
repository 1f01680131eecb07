"""On-topic distractors as a study axis: the dose-response by kind (issue #39, docs/method.md
§16, docs/replications.md "Distractors: dose-response by kind").

A distractor study is a replication study run at several distractor doses of several kinds:
the same generated trajectories' seeds, once without distractors (dose 0, shared by every
kind) and once per (kind, dose) with `trajectory.distract=KIND trajectory.dose=N`. Per
(kind, dose) every quantity is summarised over the trajectories exactly as a replication
study does (`place.report.dose.level_rows`); then, per kind and dose, the paired change from
dose 0 over the seeds with a value at both, with a bootstrap interval that resamples seeds
(`place.report.dose.change_rows`). Because doses nest (a lower dose's distractors are the
first of a higher one's, docs/method.md §16.1), the curve of one kind is one trajectory's
history growing, not independent draws.

    >>> from place.report.distractors import load_distractors, distractor_summary
    >>> study = load_distractors(["studies/distractors/baseline", "studies/distractors/distracted"])
    >>> distractor_summary(study).query("kind == 'change' and dose == 64")

`place compare --dose-response DIR...` writes the tables and figures (`write_distractors`)
when its runs carry distractors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist

from place import atomic
from place.design import Design
from place.errors import PlaceError
from place.metrics.catalog import ENDPOINTS
from place.report.dose import (
    change_rows,
    display_name,
    dose_cell,
    generated_of,
    invalid_banner,
    level_rows,
    run_label,
    seed_list,
)
from place.report.metrics import MetricsDocument
from place.report.outputs import save_png, write_summary_csv
from place.report.plots import DPI, palette
from place.report.replications import COLUMNS as REPLICATION_COLUMNS
from place.report.replications import load_docs
from place.report.tables import Table, to_csv, to_markdown

ENDPOINTS_SHOWN = (
    "state_correctness",
    "needed_support",
    "exposure_rate",
    "deletion_residue",
    "reads.distractor_share",
    "reads.wrong_value_shown",
    "reads.wrong_entity_shown",
    "reads.current_in_context",
    "reads.distractor_writes",
)
"""The default endpoints of the tables: the model-free endpoints of the history-length study
and the read-level endpoints of docs/method.md §16.3, which are what distractors move."""

FIGURES = (
    "state_correctness",
    "reads.distractor_share",
    "reads.wrong_value_shown",
    "reads.wrong_entity_shown",
    "needed_support",
    "reads.distractor_writes",
)
"""One figure per endpoint (`distractors_<endpoint>.png`), one panel per kind."""

FOCUS_POLICIES = ("native", "qasc")
"""The figures draw every producer under these policies, plus every history reader of
`HISTORY_PRODUCER`; forty-two lines in a panel read as none. The tables keep every condition."""
HISTORY_POLICIES = ("recency", "fullcontext")
HISTORY_PRODUCER = "append"

COLUMNS = ["distractor", "dose", *REPLICATION_COLUMNS, "of_kind", "not_measured"]
"""`summarise`'s columns with the distractor kind and dose in front (`none`, 0 for the runs
without distractors); `of_kind` and `not_measured` as in `place.report.dose.COLUMNS`. A
`change` row is the paired change of its kind at its dose from dose 0."""

BASELINE = "none"
"""The `distractor` of the dose-0 rows: no distractor, shared by every kind."""

SAME_SEEDS = (
    "a distractor study compares the same trajectories' seeds at every kind and dose, with "
    "the runs without distractors as dose 0: run the missing ones or leave those seeds out "
    "everywhere"
)


@dataclass(frozen=True)
class DistractorStudy:
    """A distractor study's runs: dose 0 and each (kind, dose), every group in seed order."""

    baseline: list[MetricsDocument]
    """The runs without distractors (dose 0 of every kind)."""
    cells: dict[str, dict[int, list[MetricsDocument]]]
    """kind -> dose -> the runs of that kind at that dose; kinds in first-seen order of
    `place.trajectory.model.DISTRACTOR_KINDS`, doses ascending."""

    @property
    def kinds(self) -> list[str]:
        return list(self.cells)

    @property
    def doses(self) -> list[int]:
        return sorted({d for by_dose in self.cells.values() for d in by_dose})

    @property
    def seeds(self) -> list[int]:
        return [int(_generated(d, "")["seed"]) for d in self.baseline]


HOW = (
    "a distractor study runs trajectories from `place generate` (trajectory=generated) with "
    "trajectory.distract and trajectory.dose"
)


def _generated(doc: MetricsDocument, name: str) -> dict[str, Any]:
    return generated_of(doc, name, HOW)


def carries_distractors(docs: Sequence[MetricsDocument]) -> bool:
    """Whether any run's trajectory was given distractors (`trajectory.distract`): such a
    study is grouped by kind and dose, not by history length."""
    return any(
        isinstance(g := d.trajectory.get("generated"), dict) and g.get("distract") for d in docs
    )


def cell_of(doc: MetricsDocument, name: str = "") -> tuple[str, int]:
    """(kind, dose) of a run; (`BASELINE`, 0) for one without distractors (or dose 0)."""
    g = _generated(doc, name)
    kind, dose = g.get("distract"), int(g.get("dose") or 0)
    return (BASELINE, 0) if not kind or dose == 0 else (str(kind), dose)


def group_distractors(
    docs: Sequence[MetricsDocument], names: Sequence[str] | None = None
) -> DistractorStudy:
    """The documents grouped by (kind, dose). PlaceError unless every run is of a generated
    trajectory, all share the generator design and filler, the design's conditions, the
    model and the bootstrap settings, no (seed, kind, dose) occurs twice, there are runs
    without distractors and runs with them, and every group has the same seeds."""
    from place.trajectory.model import DISTRACTOR_KINDS

    labels = list(names) if names is not None else [run_label(d) for d in docs]
    if not docs:
        raise PlaceError(
            "no run given; a distractor study needs runs at dose 0 and with distractors"
        )
    first, name0 = docs[0], labels[0]
    g0 = _generated(first, name0)
    where: dict[tuple[int, str, int], str] = {}
    groups: dict[tuple[str, int], list[MetricsDocument]] = {}
    for doc, name in zip(docs, labels, strict=True):
        g = _generated(doc, name)
        for field, what in (("design", "generator design"), ("filler", "filler")):
            if g[field] != g0[field]:
                raise PlaceError(
                    f"{name}: {what} {g[field]!r} differs from {name0}'s {g0[field]!r}; "
                    f"{SAME_SEEDS}, drawn by one generator design and filler"
                )
        if list(doc.conditions) != list(first.conditions):
            raise PlaceError(
                f"{name}: design conditions {list(doc.conditions)} differ from {name0}'s "
                f"{list(first.conditions)}; a distractor study is one design and one model"
            )
        if doc.model["name"] != first.model["name"]:
            raise PlaceError(
                f"{name}: model {doc.model['name']!r} differs from {name0}'s "
                f"{first.model['name']!r}; a distractor study is one design and one model"
            )
        if doc.bootstrap != first.bootstrap:
            raise PlaceError(
                f"{name}: bootstrap seed/resamples {doc.bootstrap.seed}/"
                f"{doc.bootstrap.resamples} differ from {name0}'s {first.bootstrap.seed}/"
                f"{first.bootstrap.resamples}; run every cell with the same seeds.bootstrap "
                "and seeds.resamples"
            )
        kind, dose = cell_of(doc, name)
        key = (int(g["seed"]), kind, dose)
        if key in where:
            raise PlaceError(
                f"{name}: seed {key[0]} with {kind} distractors at dose {dose} occurs twice "
                f"(also {where[key]}); give each (seed, kind, dose) once"
            )
        where[key] = name
        groups.setdefault((kind, dose), []).append(doc)
    if (BASELINE, 0) not in groups:
        raise PlaceError(
            "no run without distractors: a distractor study measures each change from dose 0; "
            "add the same seeds run without trajectory.distract"
        )
    if len(groups) < 2:
        raise PlaceError(
            "no run with distractors: every run is at dose 0 (use trajectory.distract=KIND "
            "trajectory.dose=N, or `place compare --replications` for one dose)"
        )
    seeds = {cell: {int(_generated(d, "")["seed"]) for d in ds} for cell, ds in groups.items()}
    everywhere = set().union(*seeds.values())
    missing = [
        f"{'no distractor' if k == BASELINE else f'{k} at dose {d}'} lacks seed"
        f"{'s' if len(everywhere - s) > 1 else ''} {seed_list(everywhere - s)}"
        for (k, d), s in sorted(seeds.items())
        if everywhere - s
    ]
    if missing:
        raise PlaceError("; ".join(missing) + f"; {SAME_SEEDS}")

    def ordered(ds: list[MetricsDocument]) -> list[MetricsDocument]:
        return sorted(ds, key=lambda d: int(_generated(d, "")["seed"]))

    rank = {k: i for i, k in enumerate(DISTRACTOR_KINDS)}
    kinds = sorted({k for k, _ in groups if k != BASELINE}, key=lambda k: rank.get(k, len(rank)))
    cells = {
        k: {d: ordered(groups[(k, d)]) for d in sorted(d for kk, d in groups if kk == k)}
        for k in kinds
    }
    return DistractorStudy(ordered(groups[(BASELINE, 0)]), cells)


def load_distractors(dirs: Iterable[str | Path], recompute: bool = True) -> DistractorStudy:
    """A distractor study's runs (`replications.collect`) grouped by kind and dose
    (`group_distractors`). `recompute`: recompute each run's metrics from its records (as
    `place compare` does); else read its `metrics.json`."""
    paths, docs = load_docs(dirs, recompute)
    return group_distractors(docs, [str(p) for p in paths])


# --- the statistics -------------------------------------------------------------------------


def _rows(kind: str, dose: int, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        r = {k: v for k, v in r.items() if k != "filler"}
        out.append({"distractor": kind, "dose": dose, **r})
    return out


def distractor_summary(study: DistractorStudy) -> pd.DataFrame:
    """One row per quantity at dose 0 (`distractor` = `BASELINE`), then per kind and dose
    (`summarise`'s order within; `values` in seed order, index i the same seed everywhere);
    then one `change` row per (kind, dose, quantity): the paired change from dose 0.
    docs/replications.md says how each number is computed. `attrs`: kinds, doses, seeds,
    conditions, design, generator, filler, model, seed, resamples, invalid (runs whose
    factorization check failed)."""
    first = study.baseline[0]
    seed, resamples = first.bootstrap.seed, first.bootstrap.resamples
    base = level_rows(0, study.baseline)
    rows = _rows(BASELINE, 0, base)
    changes: list[dict[str, Any]] = []
    for kind, by_dose in study.cells.items():
        for dose, docs in by_dose.items():
            level = level_rows(dose, docs)
            rows += _rows(kind, dose, level)
            changes += _rows(kind, dose, change_rows(base, level, dose, seed, resamples))
    frame = pd.DataFrame(rows + changes, columns=COLUMNS)
    # pandas 3 infers a string dtype, which turns None into NaN: effects have no condition.
    frame["condition"] = pd.Series([r["condition"] for r in rows + changes], dtype=object)
    g = _generated(first, "")
    groups = [(BASELINE, 0, study.baseline)] + [
        (k, d, ds) for k, by_dose in study.cells.items() for d, ds in by_dose.items()
    ]
    frame.attrs.update(
        kinds=study.kinds,
        doses=study.doses,
        seeds=study.seeds,
        conditions=list(first.conditions),
        design=first.design,
        generator=str(g["design"]),
        filler=int(g["filler"]),
        model=str(first.model["name"]),
        seed=seed,
        resamples=resamples,
        invalid=[
            f"seed {_generated(d, '')['seed']} ({k} at dose {n})"
            for k, n, ds in groups
            for d in ds
            if not d.factorization.ok
        ],
    )
    return frame


# --- tables ---------------------------------------------------------------------------------


def _lookup(summary: pd.DataFrame) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {
        (r["distractor"], r["dose"], r["kind"], r["of_kind"], r["condition"], r["name"]): r
        for r in summary.to_dict("records")
    }


def shown_endpoints(summary: pd.DataFrame, endpoints: Sequence[str] | None = None) -> list[str]:
    """`endpoints` (metrics.json keys, default `ENDPOINTS_SHOWN` that the summary has);
    PlaceError for one it does not have."""
    have = set(summary.loc[summary["of_kind"] == "endpoint", "name"])
    if endpoints is None:
        return [e for e in ENDPOINTS_SHOWN if e in have]
    unknown = [e for e in endpoints if e not in have]
    if unknown:
        raise PlaceError(f"no endpoint {', '.join(unknown)} in the study; it has {sorted(have)}")
    return list(endpoints)


Lookup = dict[tuple[Any, ...], dict[str, Any]]


def change_table(
    summary: pd.DataFrame, endpoints: Sequence[str] | None = None, *, lookup: Lookup | None = None
) -> Table:
    """The headline: a row per (condition, endpoint), the dose-0 level, then a column per
    kind with its paired change at the highest dose. `lookup`: `_lookup(summary)`, when
    already made (one pass over the summary serves every table)."""
    a = summary.attrs
    table = _lookup(summary) if lookup is None else lookup
    top, runs = a["doses"][-1], len(a["seeds"])
    shown, rows = shown_endpoints(summary, endpoints), []
    for c in a["conditions"]:
        for e in shown:
            level = table.get((BASELINE, 0, "endpoint", "endpoint", c, e))
            cells = [
                dose_cell(table.get((k, top, "change", "endpoint", c, e)), runs) for k in a["kinds"]
            ]
            rows.append([c, display_name(e), dose_cell(level, runs), *cells])
    return Table(
        "distractors_change",
        f"Distractors: change of each endpoint at dose {top} from dose 0, per kind, over "
        f"{runs} trajectories, mean [95 % trajectory-bootstrap interval], paired over seeds",
        ["Condition", "Endpoint", "dose 0", *a["kinds"]],
        rows,
        banner=invalid_banner(summary),
    )


def kind_table(
    summary: pd.DataFrame,
    kind: str,
    endpoints: Sequence[str] | None = None,
    *,
    lookup: Lookup | None = None,
) -> Table:
    """One kind: a row per (condition, endpoint), a column per dose (0 first), then the paired
    change from dose 0 at each dose. `lookup` as for `change_table`."""
    a = summary.attrs
    table = _lookup(summary) if lookup is None else lookup
    runs = len(a["seeds"])
    measured = {k[1] for k in table if k[0] == kind and k[2] == "endpoint"}
    doses = [d for d in a["doses"] if d in measured]
    shown, rows = shown_endpoints(summary, endpoints), []
    for c in a["conditions"]:
        for e in shown:
            levels = [dose_cell(table.get((BASELINE, 0, "endpoint", "endpoint", c, e)), runs)]
            levels += [
                dose_cell(table.get((kind, d, "endpoint", "endpoint", c, e)), runs) for d in doses
            ]
            deltas = [
                dose_cell(table.get((kind, d, "change", "endpoint", c, e)), runs) for d in doses
            ]
            rows.append([c, display_name(e), *levels, *deltas])
    return Table(
        f"distractors_{kind}",
        f"Distractors of kind {kind}: each endpoint at each dose over {runs} trajectories, "
        "mean [95 % trajectory-bootstrap interval], and its paired change from dose 0",
        [
            "Condition",
            "Endpoint",
            "dose 0",
            *(f"dose {d}" for d in doses),
            *(f"Δ dose {d}" for d in doses),
        ],
        rows,
        banner=invalid_banner(summary),
    )


def distractor_tables(
    summary: pd.DataFrame, endpoints: Sequence[str] | None = None, *, lookup: Lookup | None = None
) -> list[Table]:
    lookup = lookup if lookup is not None else _lookup(summary)
    return [
        change_table(summary, endpoints, lookup=lookup),
        *(kind_table(summary, k, endpoints, lookup=lookup) for k in summary.attrs["kinds"]),
    ]


def header_line(summary: pd.DataFrame) -> str:
    """Kinds, doses, seeds, generator and study design, model and the bootstrap."""
    a = summary.attrs
    design = (a["design"] or {}).get("name", "paper")
    return (
        f"Distractor study: kinds {', '.join(a['kinds'])} at doses "
        f"{', '.join(str(d) for d in a['doses'])} (distractor turns added to the trajectory; "
        f"dose 0: none), {len(a['seeds'])} trajectories per cell (generated, design "
        f"{a['generator']}, filler {a['filler']}, seeds {seed_list(a['seeds'])}, the same in "
        f"every cell); design {design} ({len(a['conditions'])} conditions); model {a['model']}; "
        f"95 % percentile bootstrap over trajectories, {a['resamples']} resamples, seed "
        f"{a['seed']}; change: paired over seeds, dose − dose 0"
    )


def distractor_markdown(
    summary: pd.DataFrame,
    endpoints: Sequence[str] | None = None,
    tables: Sequence[Table] | None = None,
) -> str:
    """`distractors.md`: the header line, the headline table, then one table per kind
    (`tables`: those of `distractor_tables`, when already made)."""
    tables = distractor_tables(summary, endpoints) if tables is None else tables
    return "\n".join([f"_{header_line(summary)}_\n", *(to_markdown(t) for t in tables)])


# --- the figures ----------------------------------------------------------------------------


def focus_conditions(summary: pd.DataFrame) -> list[str]:
    """The conditions a figure draws, in design order: every producer under `FOCUS_POLICIES`
    and `HISTORY_PRODUCER` under `HISTORY_POLICIES`; all of them when the design has ten or
    fewer."""
    a = summary.attrs
    conditions = list(a["conditions"])
    if len(conditions) <= 10:
        return conditions
    design = Design.from_json(a["design"])
    keep = []
    for c in design.conditions:
        if c.policy in FOCUS_POLICIES or (
            c.producer == HISTORY_PRODUCER and c.policy in HISTORY_POLICIES
        ):
            keep.append(c.name)
    return keep


def distractor_figure(summary: pd.DataFrame, endpoint: str, *, lookup: Lookup | None = None) -> Any:
    """One panel per kind: per drawn condition (`focus_conditions`), the paired change of
    `endpoint` from dose 0 at each dose with its 95 % interval as error bars, joined by a
    line from 0 at dose 0; doses at equal steps (a categorical axis). A dose without a value
    is a gap, never a zero. Conditions take the run plots' colours; the legend sits in the
    last cell."""
    a = summary.attrs
    kinds, doses = a["kinds"], a["doses"]
    drawn = focus_conditions(summary)
    design = Design.from_json(a["design"])
    colors = palette(a["conditions"], design if set(a["conditions"]) <= set(design.names) else None)
    table = _lookup(summary) if lookup is None else lookup
    ncols = 4
    nrows = -(-(len(kinds) + 1) // ncols)
    fig, grid = plt.subplots(
        nrows,
        ncols,
        figsize=(3.4 * ncols, 0.8 + 2.9 * nrows),
        squeeze=False,
        sharey=True,
        layout="constrained",
    )
    axes = list(grid.flat)
    x = np.arange(len(doses) + 1, dtype=float)
    offsets = (np.arange(len(drawn)) - (len(drawn) - 1) / 2) * (0.5 / max(len(drawn), 1))
    for ax, kind in zip(axes, kinds, strict=False):
        for c, dx in zip(drawn, offsets, strict=True):
            rows = [table.get((kind, d, "change", "endpoint", c, endpoint)) for d in doses]
            mean = np.array([0.0] + [r["mean"] if r and r["n"] else np.nan for r in rows])
            lo = np.array([0.0] + [r["lo"] if r and r["n"] else np.nan for r in rows])
            hi = np.array([0.0] + [r["hi"] if r and r["n"] else np.nan for r in rows])
            if np.isnan(mean[1:]).all():
                continue
            ax.plot(x + dx, mean, "-o", color=colors[c], ms=3, lw=1.1, label=c, gid=f"{kind}|{c}")
            ok = ~np.isnan(lo)
            ok[0] = False
            ax.errorbar(
                (x + dx)[ok],
                mean[ok],
                yerr=[mean[ok] - lo[ok], hi[ok] - mean[ok]],
                fmt="none",
                ecolor=colors[c],
                capsize=2,
                lw=0.8,
            )
        ax.axhline(0.0, color="0.6", lw=0.6)
        ax.set_xticks(x, ["0", *(str(d) for d in doses)])
        ax.set_title(kind, fontsize=10)
        ax.set_xlabel("distractor turns")
        ax.grid(axis="y", color="0.9", lw=0.6)
    for ax in axes[: len(kinds) : ncols]:
        ax.set_ylabel(f"Δ {display_name(endpoint)}")
    legend_ax = axes[len(kinds)]
    legend_ax.axis("off")
    for spare in axes[len(kinds) + 1 :]:
        spare.set_visible(False)
    handles: dict[str, Artist] = {}
    for ax in axes[: len(kinds)]:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    ordered = [c for c in drawn if c in handles]
    if ordered:
        legend_ax.legend([handles[c] for c in ordered], ordered, loc="center", fontsize=7, ncols=2)
    else:
        legend_ax.text(0.5, 0.5, "no value", ha="center", va="center", style="italic")
    e = ENDPOINTS.get(endpoint)
    unit = "" if e is None or e.kind == "rate" else " (count)"
    fig.suptitle(
        f"{a['model']}, design {(a['design'] or {}).get('name', 'paper')}: change of "
        f"{display_name(endpoint)}{unit} from dose 0, mean over {len(a['seeds'])} trajectories "
        "with 95 % paired trajectory-bootstrap interval",
        fontsize=9,
    )
    return fig


def figure_name(endpoint: str) -> str:
    return f"distractors_{endpoint.replace('reads.', '')}.png"


# --- writing --------------------------------------------------------------------------------


def write_distractors(
    study: DistractorStudy, out_dir: Path, endpoints: Sequence[str] | None = None
) -> pd.DataFrame:
    """`distractors.md` (header, headline and per-kind tables), a CSV per table,
    `distractors_summary.csv` (the whole summary at full precision, `values` as a JSON list)
    and a figure per endpoint of `FIGURES` the study has (`figure_name`). Returns the
    summary."""
    out_dir = Path(out_dir)
    summary = distractor_summary(study)
    lookup = _lookup(summary)  # one pass over the summary serves every table and figure
    tables = distractor_tables(summary, endpoints, lookup=lookup)
    for table in tables:
        atomic.write_text(out_dir / f"{table.name}.csv", to_csv(table))
    atomic.write_text(out_dir / "distractors.md", distractor_markdown(summary, tables=tables))
    write_summary_csv(summary, out_dir / "distractors_summary.csv")
    have = set(summary.loc[summary["of_kind"] == "endpoint", "name"])
    for endpoint in FIGURES:
        if endpoint in have:
            fig = distractor_figure(summary, endpoint, lookup=lookup)
            save_png(fig, out_dir / figure_name(endpoint), DPI)
    return summary
