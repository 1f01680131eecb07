"""A replication study: one design run on N trajectories (docs/method.md §9, docs/replications.md).

The trajectory is the random unit. Per condition, every endpoint of `metrics.json` is
averaged over the trajectories, with a 95 % percentile bootstrap interval that resamples
trajectories (not conversations or queries) and the spread (min, max); the same for every
effect's estimate and the AOEP pass rates.

    >>> from place.report.replications import load_replications
    >>> study = load_replications(["multirun/all/2026-05-10_12-00-00"])
    >>> study.summary.query("kind == 'effect'")[["name", "n", "mean", "lo", "hi"]]

`place compare --replications DIR...` writes the tables and the forest plot.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from place import atomic
from place.design import Design
from place.errors import PlaceError
from place.mappings import flatten
from place.metrics.catalog import replicated
from place.report.metrics import OPTIONAL_GROUPS, MetricsDocument, load_metrics
from place.report.outputs import save_png, write_summary_csv
from place.report.plots import palette
from place.report.tables import Table, fmt, to_csv, to_latex, to_markdown

CONFIDENCE = (2.5, 97.5)
"""Percentiles of the bootstrap distribution of the mean: a 95 % interval."""


FOREST_ENDPOINT = ("JointSuccess", "joint_success")
"""The endpoint drawn per condition in the forest plot, below the effects."""
FOREST_ANSWER_FREE = ("StateCorrectness", "state_correctness")
"""It, in an answer-free study (JointSuccess reads answers: not measured there)."""
NOT_MEASURED = "not measured"
FOREST_DPI = 120


def unmeasured(docs: Sequence[MetricsDocument]) -> set[str]:
    """What every run of the study lists as not measured (answer-free runs, docs/method.md
    §15): its cells read `not measured`, not `–`."""
    sets = [set(d.not_measured or ()) for d in docs]
    return set.intersection(*sets) if sets else set()


def forest_endpoint(docs: Sequence[MetricsDocument]) -> tuple[str, str]:
    """(display, key) of the endpoint the forest plot draws per condition."""
    return FOREST_ANSWER_FREE if FOREST_ENDPOINT[1] in unmeasured(docs) else FOREST_ENDPOINT


AOEP_FAMILIES = ("obligations", "invariants")

COLUMNS = ["kind", "condition", "name", "n", "mean", "lo", "hi", "min", "max", "values"]

ALLOWED = (
    "a run directory (with manifest.json) or a directory whose immediate subdirectories "
    "are all run directories (a Hydra multirun root such as multirun/all/<time>/)"
)
SAME = (
    "a replication study is one design and one model run on different trajectories "
    "(only the trajectory may differ)"
)


# --- the runs ---------------------------------------------------------------------------


def _natural(path: Path) -> list[Any]:
    """Sort key: digits compare as numbers, so job 10_x comes after 2_x."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(path))]


def _manifest(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise PlaceError(f"{run_dir}: manifest.json cannot be read ({exc})") from exc


def _runs_in(d: Path) -> list[Path]:
    if not d.is_dir():
        raise PlaceError(f"{d}: no such directory; each DIR must be {ALLOWED}")
    if (d / "manifest.json").is_file():
        return [d]
    subdirs = sorted(
        (p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")), key=_natural
    )
    runs = [p for p in subdirs if (p / "manifest.json").is_file()]
    if not runs:
        raise PlaceError(
            f"{d}: holds no run (no manifest.json in it or its subdirectories); "
            f"each DIR must be {ALLOWED}"
        )
    for p in subdirs:
        if p not in runs:
            raise PlaceError(
                f"{p}: not a run directory (no manifest.json), in {d}; each DIR must be "
                f"{ALLOWED}, and every job of a study must have finished"
            )
    return runs


def _conditions_of(header: dict[str, Any]) -> tuple[str, ...]:
    return Design.from_json(header.get("design")).names


def collect(dirs: Iterable[str | Path]) -> list[Path]:
    """The run directories of a study, in natural order of their resolved paths (so the
    order does not depend on the order of `dirs`). Each DIR is a run directory or a
    directory whose immediate subdirectories are run directories. Every run must be
    complete, all must share the design's conditions and the model name, and no trajectory
    (sha256) may occur twice."""
    paths = [Path(d) for d in dirs]
    if not paths:
        raise PlaceError(f"no directory given; each DIR must be {ALLOWED}")
    runs = sorted({p.resolve() for d in paths for p in _runs_in(d)}, key=_natural)
    first: tuple[Path, tuple[str, ...], str] | None = None
    seen: dict[str, Path] = {}
    for run in runs:
        manifest = _manifest(run)
        status = manifest.get("status")
        if status != "complete":
            raise PlaceError(
                f"{run}: the run is not complete (manifest status {status!r}); only complete "
                f"runs can be replications: finish it (rerun the same `place run` command to "
                f"resume) or leave it out"
            )
        header = manifest.get("header") or {}
        conditions = _conditions_of(header)
        model = str((header.get("model") or {}).get("name"))
        if first is None:
            first = (run, conditions, model)
        elif conditions != first[1]:
            raise PlaceError(
                f"{run}: design conditions {list(conditions)} differ from {first[0]}'s "
                f"{list(first[1])}; {SAME}"
            )
        elif model != first[2]:
            raise PlaceError(
                f"{run}: model {model!r} differs from {first[0]}'s {first[2]!r}; {SAME}"
            )
        sha = str((header.get("trajectory") or {}).get("sha256"))
        if sha in seen:
            raise PlaceError(
                f"{run}: same trajectory (sha256 {sha[:12]}…) as {seen[sha]}; runs on one "
                f"trajectory are not replications: {SAME}, each on its own trajectory"
            )
        seen[sha] = run
    return runs


@dataclass(frozen=True)
class Replications:
    paths: list[Path]
    """The run directories, in study (run) order."""
    docs: list[MetricsDocument]
    """Their metrics documents, in the same order."""
    summary: pd.DataFrame
    """`summarise(docs)`."""


def load_replications(dirs: Iterable[str | Path], recompute: bool = True) -> Replications:
    """A study's runs (`collect`), their metrics documents and the summary. `recompute`:
    recompute each run's metrics from its records (as `place compare` does); else read each
    run's `metrics.json`."""
    paths, docs = load_docs(dirs, recompute)
    return Replications(paths, docs, summarise(docs))


def load_docs(
    dirs: Iterable[str | Path], recompute: bool = True
) -> tuple[list[Path], list[MetricsDocument]]:
    """A study's runs (`collect`) and their metrics documents, in run order: recomputed from
    each run's records (`recompute`, as `place compare` does), else read from its
    `metrics.json`."""
    from place.report.report import recompute as from_records

    paths = collect(dirs)
    docs = []
    for p in paths:
        if recompute:
            docs.append(from_records(p))
            continue
        metrics = p / "metrics.json"
        if not metrics.is_file():
            raise PlaceError(f"{p}: no metrics.json; run `place report {p}` first")
        docs.append(load_metrics(metrics))
    return paths, docs


# --- the statistics -----------------------------------------------------------------------


def bootstrap_mean(values: Sequence[float], seed: int, resamples: int) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the mean, resampling the values (trajectories)
    with replacement; NaN, NaN for fewer than two values."""
    return _bootstrap_mean(tuple(float(x) for x in values), seed, resamples)


@functools.lru_cache(maxsize=65536)
def _bootstrap_mean(values: tuple[float, ...], seed: int, resamples: int) -> tuple[float, float]:
    # Memoized: the interval is a pure function of the values and the seed, and a study's
    # summary asks for the same vector again and again (measured on the 13-seed distractor
    # study: 89,397 intervals, 2,725 distinct vectors; unchanged conditions give the same
    # zeros in every cell).
    v = np.asarray(values, dtype=float)
    n = len(v)
    if n < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    lo, hi = np.percentile(v[idx].mean(axis=1), CONFIDENCE)
    return float(lo), float(hi)


def stats(values: list[float | None], seed: int, resamples: int) -> dict[str, Any]:
    """One quantity over the runs: n, mean, the bootstrap interval lo, hi, min and max of
    its non-missing values (NaN where undefined), and the per-run `values` as given."""
    present = [v for v in values if v is not None]
    lo, hi = bootstrap_mean(present, seed, resamples)
    return {
        "n": len(present),
        "mean": float(np.mean(present)) if present else math.nan,
        "lo": lo,
        "hi": hi,
        "min": min(present) if present else math.nan,
        "max": max(present) if present else math.nan,
        "values": values,
    }


def _present(endpoints: dict[str, Any]) -> dict[str, Any]:
    """A condition's endpoints without the groups its layout lacks (a /4 document has no
    §12 groups: they read as None and are not endpoints of that run)."""
    return {k: v for k, v in endpoints.items() if not (k in OPTIONAL_GROUPS and v is None)}


def _number(x: Any) -> float | None:
    if x is None or isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return None if x != x else float(x)


def _rate(family: dict[str, Any] | None) -> float | None:
    if not family or not family.get("total"):
        return None
    return family["passed"] / family["total"]


def _label(doc: MetricsDocument) -> str:
    t = doc.trajectory
    return str(t.get("id") or t.get("sha256") or "?")


def check_docs(docs: Sequence[MetricsDocument]) -> list[str]:
    """The study's conditions (design order); PlaceError unless the documents share them and
    the model name, and no trajectory occurs twice."""
    if not docs:
        raise PlaceError("no run given; a replication study needs at least one run")
    conditions = list(docs[0].conditions)
    model = docs[0].model["name"]
    seen: dict[str, str] = {}
    for d in docs:
        if list(d.conditions) != conditions:
            raise PlaceError(
                f"trajectory {_label(d)}: conditions {list(d.conditions)} differ from "
                f"{_label(docs[0])}'s {conditions}; {SAME}"
            )
        if d.model["name"] != model:
            raise PlaceError(
                f"trajectory {_label(d)}: model {d.model['name']!r} differs from "
                f"{_label(docs[0])}'s {model!r}; {SAME}"
            )
        sha = str(d.trajectory["sha256"])
        if sha in seen:
            raise PlaceError(
                f"trajectories {seen[sha]} and {_label(d)} are the same (sha256 {sha[:12]}…); "
                f"runs on one trajectory are not replications"
            )
        seen[sha] = _label(d)
    return conditions


def _names(entries: Iterable[Iterable[str]]) -> list[str]:
    names: list[str] = []
    for keys in entries:
        names += [k for k in keys if k not in names]
    return names


def summarise(docs: Sequence[MetricsDocument]) -> pd.DataFrame:
    """One row per quantity (docs/replications.md): every endpoint of every condition (design
    order, metrics.json order, nested ones as `closed_loop.joint_success`), every effect's
    estimate, and per condition the AOEP obligation and invariant pass rates; each with `n`
    (trajectories with a value), `mean`, the bootstrap interval `lo`, `hi`, `min`, `max` and
    the per-trajectory `values` in run order (None where a run has no value)."""
    conditions = check_docs(docs)
    seed = docs[0].bootstrap.seed
    resamples = docs[0].bootstrap.resamples
    flat = [{c: flatten(_present(d.conditions[c].model_dump())) for c in conditions} for d in docs]
    quantities: list[tuple[str, str | None, str, list[float | None]]] = []
    for c in conditions:
        for name in _names(f[c] for f in flat):
            quantities.append(("endpoint", c, name, [_number(f[c].get(name)) for f in flat]))
    for name in _names(d.effects for d in docs):
        values = [_number(e.estimate if (e := d.effects.get(name)) else None) for d in docs]
        quantities.append(("effect", None, name, values))
    for c in conditions:
        for family in AOEP_FAMILIES:
            values = [_rate(((d.aoep or {}).get(c) or {}).get(family)) for d in docs]
            quantities.append(("aoep", c, family, values))
    rows = [
        {"kind": kind, "condition": condition, "name": name, **stats(values, seed, resamples)}
        for kind, condition, name, values in quantities
    ]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    # pandas 3 infers a string dtype, which turns None into NaN: effects have no condition.
    frame["condition"] = pd.Series([r["condition"] for r in rows], dtype=object)
    frame.attrs.update(
        trajectories=[_label(d) for d in docs],
        conditions=conditions,
        seed=seed,
        resamples=resamples,
    )
    return frame


# --- tables -------------------------------------------------------------------------------


def _row(summary: pd.DataFrame, kind: str, condition: str | None, name: str) -> pd.Series | None:
    cond = summary["condition"].isna() if condition is None else summary["condition"] == condition
    hit = summary[(summary["kind"] == kind) & cond & (summary["name"] == name)]
    return None if hit.empty else hit.iloc[0]


def _num(x: float) -> float | None:
    return None if x != x else float(x)


def cell(row: pd.Series | None, runs: int) -> str:
    """`mean [lo, hi] (min–max)`, 3 decimals; ` n=k` when only k of the runs have a value;
    `–` for no value."""
    if row is None or row["n"] == 0:
        return "–"
    text = (
        f"{fmt(row['mean'])} [{fmt(_num(row['lo']))}, {fmt(_num(row['hi']))}] "
        f"({fmt(row['min'])}–{fmt(row['max'])})"
    )
    return text if row["n"] == runs else f"{text} n={row['n']}"


def header_line(docs: Sequence[MetricsDocument]) -> str:
    """N trajectories (and how they were drawn), the design, the model and the bootstrap."""
    conditions = check_docs(docs)
    generated = [d.trajectory.get("generated") for d in docs]
    if all(generated):
        drawn = [g for g in generated if g]
        kinds = sorted({f"design {g['design']}, filler {g['filler']}" for g in drawn})
        seeds = ", ".join(str(g["seed"]) for g in drawn)
        origin = f"generated ({'; '.join(kinds)}), seeds {seeds}"
    else:
        origin = ", ".join(_label(d) for d in docs)
    design = (docs[0].design or {}).get("name", "paper")
    b = docs[0].bootstrap
    free = (
        "; answer-free runs (experiment=state): what reads an answer is not measured"
        if unmeasured(docs)
        else ""
    )
    return (
        f"Replication study: {len(docs)} trajectories ({origin}); design {design} "
        f"({', '.join(conditions)}); model {docs[0].model['name']}; 95 % percentile "
        f"bootstrap over trajectories, {b.resamples} resamples, seed {b.seed}{free}"
    )


def _banner(docs: Sequence[MetricsDocument]) -> str | None:
    failed = [_label(d) for d in docs if not d.factorization.ok]
    if not failed:
        return None
    return (
        "INVALID: factorization check failed on trajectories " + ", ".join(failed) + " (the "
        "read policies of a write row observed different stores), so read-side comparisons "
        "are not valid"
    )


def endpoints_table(docs: Sequence[MetricsDocument], summary: pd.DataFrame) -> Table:
    """A row per condition, a column per endpoint declared for the replication table
    (place.metrics.catalog `replicate=True`); the summary has every endpoint."""
    runs = len(docs)
    columns = replicated()
    skip = unmeasured(docs)
    rows = [
        [
            c,
            *[
                NOT_MEASURED if e.key in skip else cell(_row(summary, "endpoint", c, e.key), runs)
                for e in columns
            ],
        ]
        for c in check_docs(docs)
    ]
    return Table(
        "replications_endpoints",
        f"Replications: endpoints per condition over {runs} trajectories, "
        "mean [95 % trajectory-bootstrap interval] (min–max)",
        ["Condition", *[e.display for e in columns]],
        rows,
        banner=_banner(docs),
    )


def effects_table(docs: Sequence[MetricsDocument], summary: pd.DataFrame) -> Table:
    runs = len(docs)
    skip = unmeasured(docs)
    rows = []
    for _, r in summary[summary["kind"] == "effect"].iterrows():
        if r["name"] in skip:
            rows.append([r["name"], "0", NOT_MEASURED, "–"])
            continue
        positive = sum(1 for v in r["values"] if v is not None and v > 0)
        rows.append([r["name"], str(r["n"]), cell(r, r["n"]), f"{positive}/{r['n']}"])
    return Table(
        "replications_effects",
        f"Replications: effect estimates over {runs} trajectories, "
        "mean [95 % trajectory-bootstrap interval] (min–max)",
        ["Effect", "Trajectories", "Estimate", "> 0"],
        rows,
        banner=_banner(docs),
    )


def replication_tables(
    docs: Sequence[MetricsDocument], summary: pd.DataFrame | None = None
) -> list[Table]:
    summary = summarise(docs) if summary is None else summary
    return [endpoints_table(docs, summary), effects_table(docs, summary)]


def markdown(docs: Sequence[MetricsDocument], summary: pd.DataFrame | None = None) -> str:
    """`replications.md`: the header line, then both tables."""
    tables = replication_tables(docs, summary)
    return "\n".join([f"_{header_line(docs)}_\n", *(to_markdown(t) for t in tables)])


# --- the forest plot ----------------------------------------------------------------------


def _forest_rows(
    summary: pd.DataFrame, kind: str, docs: Sequence[MetricsDocument]
) -> list[pd.Series]:
    skip = unmeasured(docs)
    if kind == "effect":
        effects = summary[summary["kind"] == "effect"]
        return [r for _, r in effects.iterrows() if r["name"] not in skip]
    key = forest_endpoint(docs)[1]
    hit = summary[(summary["kind"] == "endpoint") & (summary["name"] == key)]
    return [r for _, r in hit.iterrows()]


def _n_label(r: pd.Series, runs: int) -> str:
    """What a row rests on: its trajectories (`n=10`, or `n=7 of 10` when some have none)."""
    n = int(r["n"])
    text = f"n={n}" if n == runs else f"n={n} of {runs}"
    return f"{text}, no interval" if n == 1 else text


def _draw(ax: Any, rows: list[pd.Series], colors: dict[str, str], zero: bool, runs: int) -> None:
    for i, r in enumerate(rows):
        c = "#333333" if r["condition"] is None else colors[r["condition"]]
        dots = [v for v in r["values"] if v is not None]
        ax.scatter(dots, [i + 0.22] * len(dots), s=14, color=c, alpha=0.75, lw=0, zorder=2)
        # Equal values print as one dot: say how many trajectories it is.
        for value in sorted(set(dots)):
            k = dots.count(value)
            if k > 1:
                ax.annotate(
                    f"×{k}",
                    (value, i + 0.22),
                    xytext=(4, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=6,
                    color="0.3",
                )
        if r["n"] == 0:
            ax.text(
                0,
                i,
                "  n/a: no value on any trajectory",
                va="center",
                fontsize=8,
                color="0.35",
                style="italic",
                gid=f"no-data|{r['condition'] or r['name']}",
            )
            continue
        gid = f"mean|{r['condition'] or r['name']}"
        if r["n"] >= 2:
            err = [[r["mean"] - r["lo"]], [r["hi"] - r["mean"]]]
            ax.errorbar(r["mean"], i, xerr=err, fmt="o", color=c, capsize=4, zorder=3, gid=gid)
        else:
            ax.plot(r["mean"], i, "o", color=c, zorder=3, gid=gid)
    labels = [r["name"] if r["condition"] is None else r["condition"] for r in rows]
    ax.set_yticks(range(len(rows)), labels)
    ax.set_ylim(len(rows) - 0.5, -0.6)
    right = ax.secondary_yaxis("right")
    right.set_yticks(range(len(rows)), [_n_label(r, runs) for r in rows], fontsize=8)
    right.tick_params(length=0)
    if zero:
        ax.axvline(0, color="k", lw=0.8)
    else:  # a rate
        ax.set_xlim(-0.05, 1.05)
    ax.grid(axis="x", color="0.9", lw=0.6)


def forest_figure(docs: Sequence[MetricsDocument], summary: pd.DataFrame | None = None) -> Any:
    """Effects (top) and each condition's JointSuccess (bottom): the mean over trajectories
    with its 95 % interval, the per-trajectory values as dots just below (`×k` where k
    trajectories share a value), and on the right the number of trajectories with a value.
    Conditions take their colours from `place.report.plots.palette`."""
    summary = summarise(docs) if summary is None else summary
    conditions = check_docs(docs)
    design = Design.from_json(docs[0].design)
    colors = palette(conditions, design if set(conditions) <= set(design.names) else None)
    panels = [
        (rows, kind)
        for kind in ("effect", "endpoint")
        if (rows := _forest_rows(summary, kind, docs))
    ]
    heights = [max(len(rows), 1) for rows, _ in panels]
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(7.5, 1.4 + 0.42 * sum(heights) + 0.6 * len(panels)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
        layout="constrained",
    )
    for ax, (rows, kind) in zip(axes[:, 0], panels, strict=True):
        _draw(ax, rows, colors, zero=kind == "effect", runs=len(docs))
        ax.set_xlabel(
            "effect estimate" if kind == "effect" else f"{forest_endpoint(docs)[0]} per condition"
        )
    design_name = (docs[0].design or {}).get("name", "paper")
    free = (
        "\nanswer-free runs: effects that read answers are not measured" if unmeasured(docs) else ""
    )
    axes[0, 0].set_title(
        f"{docs[0].model['name']}, design {design_name}: mean over {len(docs)} trajectories\n"
        "with 95 % trajectory-bootstrap interval; dots: one per trajectory (×k: k share a value)"
        + free,
        fontsize=9,
    )
    return fig


def write_replications(docs: Sequence[MetricsDocument], out_dir: Path) -> pd.DataFrame:
    """`replications.md` (header and both tables), per table `.tex` and `.csv`,
    `replications_summary.csv` (the whole summary at full precision) and `forest.png`.
    Returns the summary."""
    out_dir = Path(out_dir)
    summary = summarise(docs)
    tables = replication_tables(docs, summary)
    for table in tables:
        atomic.write_text(out_dir / f"{table.name}.tex", to_latex(table))
        atomic.write_text(out_dir / f"{table.name}.csv", to_csv(table))
    atomic.write_text(out_dir / "replications.md", markdown(docs, summary))
    write_summary_csv(summary, out_dir / "replications_summary.csv")
    save_png(forest_figure(docs, summary), out_dir / "forest.png", FOREST_DPI)
    return summary
