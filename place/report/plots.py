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
from place.trajectory.model import FAMILIES

COLORS = {"Native": "#7f7f7f", "CSS": "#1f77b4", "QASC": "#ff7f0e", "PLACE": "#2ca02c"}
_EXTRA = plt.get_cmap("tab20").colors


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


def effects_with_intervals(metrics: dict[str, Any], path: Path) -> None:
    names = list(metrics["effects"])
    fig, ax = plt.subplots(figsize=(6.5, max(3.2, 0.4 * len(names) + 1.2)))
    for i, name in enumerate(names):
        e = metrics["effects"][name]
        if e["estimate"] is None:
            ax.text(0, i, "  not estimable (no counted pairs)", va="center", fontsize=8)
            continue
        lo, hi = e["interval"] or (e["estimate"], e["estimate"])
        ax.errorbar(
            e["estimate"],
            i,
            xerr=[[e["estimate"] - lo], [hi - e["estimate"]]],
            fmt="o",
            color="#1f77b4",
            capsize=4,
        )
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("effect (95 % interval)")
    ax.set_title(f"Effects: {metrics['model']['name']}")
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


def write_plots(records: RunRecords, metrics: dict[str, Any], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "state_correctness.png", out_dir / "effects.png", out_dir / "families.png"]
    conditions = list(metrics["conditions"])
    state_across_checkpoints(records, conditions, paths[0])
    effects_with_intervals(metrics, paths[1])
    per_family_bars(records, conditions, paths[2])
    return paths
