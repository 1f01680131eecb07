"""History length as a study axis: the dose-response report (issue #30, docs/replications.md,
"History length: dose-response").

A dose-response study is a replication study (place/report/replications.py) run at several
history lengths: the same generated trajectories' seeds, each generated with `filler` = 0, 100,
... turns of irrelevant chatter per conversation. Per length, every quantity is summarised over
the trajectories exactly as a replication study does (`summarise`); then, per quantity, the
paired change from the shortest to the longest length over the seeds that have a value at
both, with a bootstrap interval that resamples seeds (the pairs), not the two lengths apart.

    >>> from place.report.dose import load_dose, dose_summary
    >>> study = load_dose(["multirun/all/2026-05-10_12-00-00"])
    >>> dose_summary(study.groups).query("kind == 'change'")

`place compare --dose-response DIR...` writes the tables and the figure (`write_dose`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
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
from place.report.metrics import MetricsDocument
from place.report.outputs import save_png, write_summary_csv
from place.report.plots import DPI, palette
from place.report.replications import COLUMNS as REPLICATION_COLUMNS
from place.report.replications import load_docs, stats, summarise
from place.report.tables import Table, fmt, to_csv, to_markdown

MODEL_FREE = ("state_correctness", "needed_support", "exposure_rate", "deletion_residue")
"""The default endpoints of the table and figure: those no answer model is needed for, so a
dose-response study reads the same in an answer-free run."""

COLUMNS = ["filler", *REPLICATION_COLUMNS, "of_kind", "not_measured"]
"""`summarise`'s columns with the length in front; `of_kind`: the kind of quantity a row is
about (for a `change` row, the kind it is the change of; else equal to `kind`);
`not_measured`: a run at that length says the quantity was not measured (answer-free)."""

CHANGE = "change (longest − shortest)"
"""The header of the tables' last column."""

SAME_SEEDS = (
    "a dose-response study compares the same trajectories' seeds at every history length: "
    "run the missing ones or leave those seeds out at every length"
)


@dataclass(frozen=True)
class Dose:
    """A dose-response study's runs, grouped by history length."""

    groups: dict[int, list[MetricsDocument]]
    """filler -> the metrics documents at that length, in seed order; lengths ascending."""
    paths: dict[int, list[Path]]
    """filler -> the run directories, in the same order."""

    @property
    def lengths(self) -> list[int]:
        return list(self.groups)

    @property
    def seeds(self) -> list[int]:
        return [generated_of(d, "")["seed"] for d in next(iter(self.groups.values()))]


# --- the runs -------------------------------------------------------------------------------


def run_label(doc: MetricsDocument) -> str:
    """A run's name in messages: its trajectory id, else its hash."""
    t = doc.trajectory
    return str(t.get("id") or t.get("sha256") or "?")


HOW = (
    "a dose-response study runs trajectories from `place generate` (trajectory=generated) at "
    "several trajectory.filler values"
)


def generated_of(doc: MetricsDocument, name: str, how: str = HOW) -> dict[str, Any]:
    """The manifest header's `trajectory.generated`; PlaceError naming the run (`name`, else
    its label) and saying `how` such a study is run when it is not a generated trajectory."""
    g = doc.trajectory.get("generated")
    if not isinstance(g, dict) or not {"seed", "design", "filler"} <= set(g):
        raise PlaceError(
            f"{name or run_label(doc)}: not a generated trajectory (no trajectory.generated "
            "{seed, design, filler} in its manifest header); " + how
        )
    return g


def seed_list(seeds: Iterable[int]) -> str:
    return ", ".join(str(s) for s in sorted(seeds))


def group_docs(
    docs: Sequence[MetricsDocument], names: Sequence[str] | None = None
) -> dict[int, list[MetricsDocument]]:
    """The documents grouped by history length (`trajectory.generated.filler`, ascending),
    each group in seed order. `names` (the run directories, for messages; default: the
    trajectory ids). PlaceError unless every run is of a generated trajectory, all share the
    generator design, the design's conditions, the model and the bootstrap settings, no
    (seed, length) occurs twice, there are two or more lengths, and every length has the
    same seeds."""
    labels = list(names) if names is not None else [run_label(d) for d in docs]
    if not docs:
        raise PlaceError("no run given; a dose-response study needs runs at two or more lengths")
    first = docs[0]
    g0 = generated_of(first, labels[0])
    where: dict[tuple[int, int], str] = {}
    groups: dict[int, list[MetricsDocument]] = {}
    for doc, name in zip(docs, labels, strict=True):
        g = generated_of(doc, name)
        if g.get("distract"):
            raise PlaceError(
                f"{name}: its trajectory has {g['distract']} distractors; a study with "
                "distractors is grouped by kind and dose (place.report.distractors, which "
                "`place compare --dose-response` uses when a run carries distractors)"
            )
        # The other checks of `replications.collect`, repeated on documents so that
        # `dose_summary` refuses the same things when handed documents directly.
        if g["design"] != g0["design"]:
            raise PlaceError(
                f"{name}: generator design {g['design']!r} differs from {labels[0]}'s "
                f"{g0['design']!r}; {SAME_SEEDS}, drawn by one generator design"
            )
        if list(doc.conditions) != list(first.conditions):
            raise PlaceError(
                f"{name}: design conditions {list(doc.conditions)} differ from {labels[0]}'s "
                f"{list(first.conditions)}; a dose-response study is one design and one model"
            )
        if doc.model["name"] != first.model["name"]:
            raise PlaceError(
                f"{name}: model {doc.model['name']!r} differs from {labels[0]}'s "
                f"{first.model['name']!r}; a dose-response study is one design and one model"
            )
        if doc.bootstrap != first.bootstrap:
            raise PlaceError(
                f"{name}: bootstrap seed/resamples {doc.bootstrap.seed}/"
                f"{doc.bootstrap.resamples} differ from {labels[0]}'s {first.bootstrap.seed}/"
                f"{first.bootstrap.resamples}; run every length with the same seeds.bootstrap "
                "and seeds.resamples"
            )
        key = (int(g["seed"]), int(g["filler"]))
        if key in where:
            raise PlaceError(
                f"{name}: seed {key[0]} at filler {key[1]} occurs twice (also {where[key]}); "
                "give each (seed, length) once"
            )
        where[key] = name
        groups.setdefault(key[1], []).append(doc)
    if len(groups) < 2:
        raise PlaceError(
            f"every run has filler {seed_list(groups)}: a dose-response study needs two or more "
            "history lengths (e.g. trajectory.filler=0,100,500 in the sweep)"
        )
    seeds = {f: {int(generated_of(d, "")["seed"]) for d in ds} for f, ds in groups.items()}
    everywhere = set().union(*seeds.values())
    missing = [
        f"filler {f} lacks seed{'s' if len(everywhere - s) > 1 else ''} {seed_list(everywhere - s)}"
        for f, s in sorted(seeds.items())
        if everywhere - s
    ]
    if missing:
        raise PlaceError("; ".join(missing) + f"; {SAME_SEEDS}")
    return {
        f: sorted(groups[f], key=lambda d: int(generated_of(d, "")["seed"])) for f in sorted(groups)
    }


def load_dose(dirs: Iterable[str | Path], recompute: bool = True) -> Dose:
    """A dose-response study's runs (`replications.collect`: complete runs of one design and
    one model, each on its own trajectory) grouped by history length (`group_docs`).
    `recompute`: recompute each run's metrics from its records (as `place compare` does);
    else read its `metrics.json`."""
    paths, docs = load_docs(dirs, recompute)
    groups = group_docs(docs, [str(p) for p in paths])
    by_doc = {id(d): p for d, p in zip(docs, paths, strict=True)}
    return Dose(groups, {f: [by_doc[id(d)] for d in ds] for f, ds in groups.items()})


# --- the statistics -------------------------------------------------------------------------


def _not_measured(doc: MetricsDocument) -> set[str]:
    # An answer-free run's document lists what no answer model measured; older documents
    # (and the model before that field) have none.
    return set(getattr(doc, "not_measured", None) or [])


def level_rows(filler: int, docs: list[MetricsDocument]) -> list[dict[str, Any]]:
    """`summarise(docs)` as rows with the length; a quantity a run lists as not measured is
    missing on that run (even if the document carries a number for it) and flagged."""
    frame = summarise(docs)
    seed, resamples = docs[0].bootstrap.seed, docs[0].bootstrap.resamples
    skipped = [_not_measured(d) for d in docs]
    rows = []
    for r in frame.to_dict("records"):
        row: dict[str, Any] = {"filler": filler, **r, "of_kind": r["kind"], "not_measured": False}
        if r["kind"] in ("endpoint", "effect"):
            off = [r["name"] in s for s in skipped]
            if any(off):
                row["not_measured"] = True
                masked = [None if o else v for v, o in zip(r["values"], off, strict=True)]
                if masked != r["values"]:
                    row.update(stats(masked, seed, resamples))
        rows.append(row)
    return rows


def change_rows(
    short: list[dict[str, Any]], long: list[dict[str, Any]], filler: int, seed: int, resamples: int
) -> list[dict[str, Any]]:
    """Per quantity (shortest length's order, then any only the longest has), the paired
    change d_i = x_i(longest) − x_i(shortest) over seeds i with a value at both."""
    at_short = {(r["kind"], r["condition"], r["name"]): r for r in short}
    at_long = {(r["kind"], r["condition"], r["name"]): r for r in long}
    rows = []
    for k in [*at_short, *(k for k in at_long if k not in at_short)]:
        a, b = at_short.get(k), at_long.get(k)
        # A quantity one end lacks (a layout without a group) is missing on every seed there.
        n = len(a["values"] if a else b["values"])  # type: ignore[index]  # reason: a or b is set (k comes from one of them)
        xa = a["values"] if a else [None] * n
        xb = b["values"] if b else [None] * n
        diffs = [None if x is None or y is None else y - x for x, y in zip(xa, xb, strict=True)]
        rows.append(
            {
                "filler": filler,
                "kind": "change",
                "condition": k[1],
                "name": k[2],
                **stats(diffs, seed, resamples),
                "of_kind": k[0],
                "not_measured": bool((a and a["not_measured"]) or (b and b["not_measured"])),
            }
        )
    return rows


def dose_summary(groups: Mapping[int, Sequence[MetricsDocument]]) -> pd.DataFrame:
    """One row per (length, quantity): `summarise` of each length's documents (lengths
    ascending, summarise's order within), `values` in seed order (index i is the same seed at
    every length); then one `change` row per quantity: the paired change from the shortest to
    the longest length (`filler` = the longest). docs/replications.md says how each number is
    computed. `attrs`: lengths, seeds, conditions, design, generator, model, seed, resamples,
    invalid (runs whose factorization check failed)."""
    docs = [d for ds in groups.values() for d in ds]
    grouped = group_docs(docs)
    for f, ds in groups.items():
        wrong = [run_label(d) for d in ds if generated_of(d, "")["filler"] != f]
        if wrong:
            raise PlaceError(
                f"group filler {f} holds {', '.join(wrong)}, generated with another filler"
            )
    lengths = list(grouped)
    first = grouped[lengths[0]][0]
    seed, resamples = first.bootstrap.seed, first.bootstrap.resamples
    per_length = {f: level_rows(f, ds) for f, ds in grouped.items()}
    rows = [r for f in lengths for r in per_length[f]]
    rows += change_rows(
        per_length[lengths[0]], per_length[lengths[-1]], lengths[-1], seed, resamples
    )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    # pandas 3 infers a string dtype, which turns None into NaN: effects have no condition.
    frame["condition"] = pd.Series([r["condition"] for r in rows], dtype=object)
    frame.attrs.update(
        lengths=lengths,
        seeds=[int(generated_of(d, "")["seed"]) for d in grouped[lengths[0]]],
        conditions=list(first.conditions),
        design=first.design,
        generator=str(generated_of(first, "")["design"]),
        model=str(first.model["name"]),
        seed=seed,
        resamples=resamples,
        invalid=[
            f"seed {generated_of(d, '')['seed']} at filler {f}"
            for f, ds in grouped.items()
            for d in ds
            if not d.factorization.ok
        ],
    )
    return frame


# --- tables ---------------------------------------------------------------------------------


def _num(x: float) -> float | None:
    return None if x != x else float(x)


def dose_cell(row: Mapping[str, Any] | None, runs: int) -> str:
    """`mean [lo, hi]`, 3 decimals; ` n=k` when only k of the `runs` trajectories have a
    value; `not measured` for a quantity no run measured; `–` for no value."""
    if row is None:
        return "–"
    if row["n"] == 0:
        return "not measured" if row["not_measured"] else "–"
    text = f"{fmt(row['mean'])} [{fmt(_num(row['lo']))}, {fmt(_num(row['hi']))}]"
    return text if row["n"] == runs else f"{text} n={row['n']}"


def display_name(key: str) -> str:
    e = ENDPOINTS.get(key)
    return e.display if e is not None else key


def _lookup(summary: pd.DataFrame) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {
        (r["filler"], r["kind"], r["of_kind"], r["condition"], r["name"]): r
        for r in summary.to_dict("records")
    }


def _cells(
    table: dict[tuple[Any, ...], dict[str, Any]],
    summary: pd.DataFrame,
    of_kind: str,
    condition: str | None,
    name: str,
) -> list[str]:
    runs = len(summary.attrs["seeds"])
    lengths = summary.attrs["lengths"]
    cells = [dose_cell(table.get((f, of_kind, of_kind, condition, name)), runs) for f in lengths]
    change = table.get((lengths[-1], "change", of_kind, condition, name))
    return [*cells, dose_cell(change, runs)]


def _header(summary: pd.DataFrame) -> list[str]:
    return [*(f"filler {f}" for f in summary.attrs["lengths"]), CHANGE]


def invalid_banner(summary: pd.DataFrame) -> str | None:
    invalid = summary.attrs.get("invalid") or []
    if not invalid:
        return None
    return (
        "INVALID: factorization check failed on " + ", ".join(invalid) + " (the read policies "
        "of a write row observed different stores), so read-side comparisons are not valid"
    )


def default_endpoints(summary: pd.DataFrame) -> list[str]:
    """`MODEL_FREE`, those the summary has."""
    have = set(summary.loc[summary["of_kind"] == "endpoint", "name"])
    return [e for e in MODEL_FREE if e in have]


def dose_table(summary: pd.DataFrame, endpoints: Sequence[str] | None = None) -> Table:
    """A row per (condition, endpoint), conditions in design order; a column per length, then
    the paired change. `endpoints`: metrics.json keys (default `default_endpoints`)."""
    endpoints = default_endpoints(summary) if endpoints is None else list(endpoints)
    have = set(summary.loc[summary["of_kind"] == "endpoint", "name"])
    unknown = [e for e in endpoints if e not in have]
    if unknown:
        raise PlaceError(f"no endpoint {', '.join(unknown)} in the study; it has {sorted(have)}")
    table = _lookup(summary)
    rows = [
        [c, display_name(e), *_cells(table, summary, "endpoint", c, e)]
        for c in summary.attrs["conditions"]
        for e in endpoints
    ]
    return Table(
        "dose_response_endpoints",
        f"Dose-response: endpoints per condition at each history length (filler turns per "
        f"conversation) over {len(summary.attrs['seeds'])} trajectories, mean [95 % "
        "trajectory-bootstrap interval]; change: paired over seeds, longest − shortest",
        ["Condition", "Endpoint", *_header(summary)],
        rows,
        banner=invalid_banner(summary),
    )


def dose_effects_table(summary: pd.DataFrame) -> Table:
    """A row per effect (metrics.json order); the columns of `dose_table`."""
    table = _lookup(summary)
    effects = list(dict.fromkeys(summary.loc[summary["of_kind"] == "effect", "name"]))
    return Table(
        "dose_response_effects",
        f"Dose-response: effect estimates at each history length over "
        f"{len(summary.attrs['seeds'])} trajectories, mean [95 % trajectory-bootstrap "
        "interval]; change: paired over seeds, longest − shortest",
        ["Effect", *_header(summary)],
        [[e, *_cells(table, summary, "effect", None, e)] for e in effects],
        banner=invalid_banner(summary),
    )


def dose_tables(summary: pd.DataFrame, endpoints: Sequence[str] | None = None) -> list[Table]:
    return [dose_table(summary, endpoints), dose_effects_table(summary)]


def header_line(summary: pd.DataFrame) -> str:
    """Lengths, seeds per length, generator and study design, model and the bootstrap."""
    a = summary.attrs
    design = (a["design"] or {}).get("name", "paper")
    return (
        f"Dose-response study: {len(a['lengths'])} history lengths (filler turns per "
        f"conversation: {', '.join(str(f) for f in a['lengths'])}), {len(a['seeds'])} "
        f"trajectories per length (generated, design {a['generator']}, seeds "
        f"{seed_list(a['seeds'])}, the same at every length); design {design} "
        f"({', '.join(a['conditions'])}); model {a['model']}; 95 % percentile bootstrap "
        f"over trajectories, {a['resamples']} resamples, seed {a['seed']}; change: paired "
        f"over seeds, filler {a['lengths'][-1]} − filler {a['lengths'][0]}"
    )


def dose_markdown(
    summary: pd.DataFrame,
    endpoints: Sequence[str] | None = None,
    tables: Sequence[Table] | None = None,
) -> str:
    """`dose_response.md`: the header line, then both tables (`tables`: those of
    `dose_tables`, when already made)."""
    tables = dose_tables(summary, endpoints) if tables is None else tables
    return "\n".join([f"_{header_line(summary)}_\n", *(to_markdown(t) for t in tables)])


# --- the figure -----------------------------------------------------------------------------


def dose_figure(summary: pd.DataFrame, endpoints: Sequence[str] | None = None) -> Any:
    """One panel per endpoint: per condition, the mean over trajectories at each history
    length with its 95 % interval as error bars, joined by a line; the lengths sit at equal
    steps (a categorical axis, so 0 shows and long histories do not crowd the short ones).
    A length without a value is a gap, never a zero. Conditions take the run plots' colours
    (`place.report.plots.palette`); the legend sits outside the panels."""
    endpoints = default_endpoints(summary) if endpoints is None else list(endpoints)
    a = summary.attrs
    conditions, lengths = a["conditions"], a["lengths"]
    design = Design.from_json(a["design"])
    colors = palette(conditions, design if set(conditions) <= set(design.names) else None)
    table = _lookup(summary)
    panels = max(len(endpoints), 1)
    # Two panels a row: with ten conditions a single row of four is too narrow to read.
    ncols = min(panels, 2)
    nrows = math.ceil(panels / ncols)
    fig, grid = plt.subplots(
        nrows,
        ncols,
        figsize=(2.0 + 4.2 * ncols, 0.6 + 3.4 * nrows),
        squeeze=False,
        layout="constrained",
    )
    axes = list(grid.flat)
    for spare in axes[len(endpoints) :]:
        spare.set_visible(False)
    x = np.arange(len(lengths), dtype=float)
    # Conditions side by side at each length, so their error bars do not hide each other.
    width = 0.5
    offsets = (np.arange(len(conditions)) - (len(conditions) - 1) / 2) * (
        width / max(len(conditions), 1)
    )
    for ax, name in zip(axes, endpoints, strict=False):
        measured = False
        for c, dx in zip(conditions, offsets, strict=True):
            rows = [table.get((f, "endpoint", "endpoint", c, name)) for f in lengths]
            mean = np.array([r["mean"] if r and r["n"] else np.nan for r in rows])
            lo = np.array([r["lo"] if r and r["n"] else np.nan for r in rows])
            hi = np.array([r["hi"] if r and r["n"] else np.nan for r in rows])
            if np.isnan(mean).all():
                continue
            measured = True
            ax.plot(x + dx, mean, "-o", color=colors[c], ms=4, lw=1.2, label=c, gid=f"{name}|{c}")
            ok = ~np.isnan(lo)
            ax.errorbar(
                (x + dx)[ok],
                mean[ok],
                yerr=[mean[ok] - lo[ok], hi[ok] - mean[ok]],
                fmt="none",
                ecolor=colors[c],
                capsize=2,
                lw=0.9,
            )
        if not measured:
            nm = any(
                (r := table.get((f, "endpoint", "endpoint", c, name))) and r["not_measured"]
                for f in lengths
                for c in conditions
            )
            ax.text(
                0.5,
                0.5,
                "not measured" if nm else "no value",
                transform=ax.transAxes,
                ha="center",
                va="center",
                style="italic",
                color="0.35",
            )
        ax.set_xticks(x, [str(f) for f in lengths])
        ax.set_xlim(-0.5, len(lengths) - 0.5)
        e = ENDPOINTS.get(name)
        if e is None or e.kind == "rate":
            ax.set_ylim(-0.05, 1.05)
        ax.set_title(display_name(name), fontsize=10)
        ax.set_xlabel("filler turns per conversation")
        ax.grid(axis="y", color="0.9", lw=0.6)
    handles: dict[str, Artist] = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if handles:
        ordered = [c for c in conditions if c in handles]
        fig.legend([handles[c] for c in ordered], ordered, loc="outside right upper", fontsize=8)
    fig.suptitle(
        f"{a['model']}, design {(a['design'] or {}).get('name', 'paper')}: mean over "
        f"{len(a['seeds'])} trajectories per length with 95 % trajectory-bootstrap interval",
        fontsize=9,
    )
    return fig


# --- writing --------------------------------------------------------------------------------


def write_dose(
    groups: Mapping[int, Sequence[MetricsDocument]],
    out_dir: Path,
    endpoints: Sequence[str] | None = None,
) -> pd.DataFrame:
    """`dose_response.md` (header and both tables), `dose_response_endpoints.csv`,
    `dose_response_effects.csv`, `dose_response_summary.csv` (the whole summary at full
    precision, `values` as a JSON list) and `dose_response.png`. Returns the summary."""
    out_dir = Path(out_dir)
    summary = dose_summary(groups)
    tables = dose_tables(summary, endpoints)
    for table in tables:
        atomic.write_text(out_dir / f"{table.name}.csv", to_csv(table))
    atomic.write_text(out_dir / "dose_response.md", dose_markdown(summary, tables=tables))
    write_summary_csv(summary, out_dir / "dose_response_summary.csv")
    save_png(dose_figure(summary, endpoints), out_dir / "dose_response.png", DPI)
    return summary
