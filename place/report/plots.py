"""PNG plots of a run, drawn from its records and metrics only."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from place.metrics import endpoints as ep
from place.records import RunRecords
from place.report.metrics import MetricsDocument
from place.trajectory.model import FAMILIES

COLORS = {"Native": "#7f7f7f", "CSS": "#1f77b4", "QASC": "#ff7f0e", "PLACE": "#2ca02c"}
_EXTRA = plt.get_cmap("tab20").colors  # type: ignore[attr-defined]  # reason: a ListedColormap; the stub types it as the Colormap base


def color(condition: str, conditions: list[str]) -> Any:
    """The paper's four keep their colours; other conditions take tab20 colours in order."""
    if condition in COLORS:
        return COLORS[condition]
    others = [c for c in conditions if c not in COLORS]
    return _EXTRA[others.index(condition) % len(_EXTRA)]


def _dashed(condition: str) -> bool:
    # Conditions that read through a non-native policy overlap their row's Native read.
    return condition in ("QASC", "PLACE") or (
        "/" in condition and not condition.endswith("/Native")
    )


def state_across_checkpoints(records: RunRecords, conditions: list[str], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for condition in conditions:
        items = ep.state_items(records.checkpoints, condition)
        ax.plot(
            range(1, len(items) + 1),
            [ep.checkpoint_f1(c) for c in items],
            label=condition,
            color=color(condition, conditions),
            lw=1.4,
            ls="--" if _dashed(condition) else "-",
        )
    ax.set_xlabel("post-update checkpoint")
    ax.set_ylabel("F1(S^phys, S*)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("StateCorrectness across checkpoints (policies of a row overlap by design)")
    ax.legend(ncol=4, fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def effects_with_intervals(metrics: MetricsDocument, path: Path) -> None:
    names = list(metrics.effects)
    fig, ax = plt.subplots(figsize=(6.5, max(3.2, 0.4 * len(names) + 1.2)))
    for i, name in enumerate(names):
        e = metrics.effects[name]
        if e.estimate is None:
            ax.text(0, i, "  not estimable (no counted pairs)", va="center", fontsize=8)
            continue
        lo, hi = e.interval or (e.estimate, e.estimate)
        lo = e.estimate if lo is None else lo  # an undefined bound draws no whisker
        hi = e.estimate if hi is None else hi
        ax.errorbar(
            e.estimate,
            i,
            xerr=[[e.estimate - lo], [hi - e.estimate]],
            fmt="o",
            color="#1f77b4",
            capsize=4,
        )
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("effect (95 % interval)")
    ax.set_title(f"Effects: {metrics.model['name']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def per_family_bars(records: RunRecords, conditions: list[str], path: Path) -> None:
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q in records.queries:
        if q.mode == "primary" and q.world == "a":
            scores[q.condition][q.family].append(ep.answer_score(q))
    fig, ax = plt.subplots(figsize=(9, 3.4))
    width = 0.8 / len(conditions)
    for j, condition in enumerate(conditions):
        values = [ep.mean(scores[condition][f]) if scores[condition][f] else 0.0 for f in FAMILIES]
        ax.bar(
            [i + (j - (len(conditions) - 1) / 2) * width for i in range(len(FAMILIES))],
            values,
            width,
            label=condition,
            color=color(condition, conditions),
        )
    ax.set_xticks(range(len(FAMILIES)), FAMILIES)
    ax.set_ylabel("AnswerCorrectness")
    ax.set_ylim(0, 1.05)
    ax.legend(ncol=4, fontsize=8)
    ax.set_title("AnswerCorrectness per query family")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _rate(family: dict[str, Any]) -> float | None:
    return family["passed"] / family["total"] if family["total"] else None


def aoep_scorecard(metrics: MetricsDocument, path: Path) -> dict[str, tuple[float, float]]:
    """Obligation pass rate against negative-invariant pass rate, one point per condition
    (docs/method.md §10): the two are never blended, since a store that keeps nothing sits at the
    top left. Returns the plotted points, in design order.

    A condition with no obligation or no invariant item has no rate on that axis: it is left
    out of the plot and named under it (no point is invented for it). A metrics document
    without `aoep` (schema place-metrics/2) gives an empty plot that says so. Conditions at
    the same point share one label and are drawn as concentric markers, largest first, so
    every colour stays visible."""
    conditions = list(metrics.conditions)
    card = metrics.aoep or {}
    points: dict[str, tuple[float, float]] = {}
    skipped = []
    for c in conditions:
        if c not in card:
            continue
        x, y = _rate(card[c]["obligations"]), _rate(card[c]["invariants"])
        if x is None or y is None:
            skipped.append(c)
        else:
            points[c] = (x, y)
    groups: dict[tuple[float, float], list[str]] = defaultdict(list)
    for c, xy in points.items():
        groups[xy].append(c)
    fig, ax = plt.subplots(figsize=(6.5, 5.6))
    placed: list[tuple[float, float]] = []
    for (x, y), names in sorted(groups.items(), key=lambda g: (-g[0][1], g[0][0])):
        for i, c in enumerate(names):
            ax.scatter(
                x,
                y,
                s=140 * 0.45**i,
                color=color(c, conditions),
                edgecolors="k",
                linewidths=0.6,
                zorder=3 + i,
            )
        right = x > 0.75  # label on the left near the right edge, to stay inside the axes
        # Labels of nearby points (e.g. two policies on one producer) would print over each
        # other: each one steps down a line per label already placed close above it.
        crowd = sum(1 for px, py in placed if abs(px - x) < 0.12 and abs(py - y) < 0.04)
        placed.append((x, y))
        ax.annotate(
            ", ".join(names),
            (x, y),
            xytext=(-8 if right else 8, (-4 if y > 0.95 else 5) - 11 * crowd),
            textcoords="offset points",
            ha="right" if right else "left",
            fontsize=8,
        )
    if not card:
        ax.text(0.5, 0.5, "no AOEP scorecard in metrics.json", ha="center", va="center")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel(
        "obligations kept (passed / total)"
        + (f"\nnot plotted (no items on an axis): {', '.join(skipped)}" if skipped else "")
    )
    ax.set_ylabel("negative invariants held (passed / total)")
    ax.grid(color="0.9", lw=0.6)
    ax.set_title(
        f"AOEP scorecard: {metrics.model['name']}\n"
        "a store that keeps nothing sits at the top left "
        "(passes every invariant, keeps no obligation)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return points


def write_plots(records: RunRecords, metrics: MetricsDocument, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [
        out_dir / "state_correctness.png",
        out_dir / "effects.png",
        out_dir / "families.png",
        out_dir / "aoep.png",
    ]
    conditions = list(metrics.conditions)
    state_across_checkpoints(records, conditions, paths[0])
    effects_with_intervals(metrics, paths[1])
    per_family_bars(records, conditions, paths[2])
    aoep_scorecard(metrics, paths[3])
    return paths
