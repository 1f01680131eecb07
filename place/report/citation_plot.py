"""`citation.png`: the citation lock's figures per condition (docs/method.md §12.5).

Left, ForgedExposure per forgery kind: one group of bars per kind, a bar per condition (its
colour from the run's palette), each labelled with its n. Right, the provenance audit of
what each condition exposed: a stacked bar per condition, openable, pointer-only and
orphaned shares of its exposed occurrences. Drawn only for a run with forged probes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from place.records import PROVENANCE_CLASSES, ProvenanceClass
from place.trajectory.model import FORGED_KINDS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from place.report.metrics import MetricsDocument

GREYS: dict[ProvenanceClass, str] = {"openable": "0.25", "pointer_only": "0.6", "orphaned": "0.88"}
"""Each audit class's grey; they stack in `PROVENANCE_CLASSES` order."""


def has_forged(metrics: MetricsDocument) -> bool:
    return any((m.value("forged.n") or 0) > 0 for m in metrics.conditions.values())


def citation_figure(metrics: MetricsDocument, colors: dict[str, str]) -> Figure:
    conditions = list(metrics.conditions)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(11, 4.8), layout="constrained", width_ratios=(3, 2)
    )
    width = 0.8 / max(len(conditions), 1)
    for i, c in enumerate(conditions):
        card = metrics.conditions[c]
        for j, kind in enumerate(FORGED_KINDS):
            value = card.value(f"forged.exposure_{kind}")
            n = card.value(f"forged.n_{kind}") or 0
            x = j - 0.4 + width * (i + 0.5)
            if value is None:
                continue
            left.bar(x, value, width, color=colors[c], edgecolor="k", lw=0.4, gid=f"bar|{c}|{kind}")
            if len(conditions) <= 12:
                left.annotate(f"{n}", (x, value), ha="center", va="bottom", fontsize=6)
    left.set_xticks(range(len(FORGED_KINDS)), FORGED_KINDS)
    left.set_ylim(0, 1.1)
    left.set_ylabel("ForgedExposure (n forged probes above each bar)")
    left.set_title("Forged records exposed, by what the pointer points at", fontsize=9)
    left.grid(axis="y", color="0.9", lw=0.6)
    for i, c in enumerate(conditions):
        card = metrics.conditions[c]
        if not card.value("provenance.exposed_n"):
            right.annotate("nothing exposed", (0.01, i), va="center", fontsize=7, color="0.4")
            continue
        start = 0.0
        for which in PROVENANCE_CLASSES:
            grey = GREYS[which]
            share = card.value(f"provenance.exposed_{which}") or 0.0
            right.barh(i, share, left=start, color=grey, edgecolor="k", lw=0.3)
            start += share
    right.set_yticks(range(len(conditions)), conditions, fontsize=7)
    right.invert_yaxis()
    right.set_xlim(0, 1)
    right.set_xlabel("share of exposed occurrences")
    right.set_title("Provenance audit of what each condition exposed", fontsize=9)
    right.legend(
        handles=[
            Patch(facecolor=GREYS[w], edgecolor="k", label=w.replace("_", "-"))
            for w in PROVENANCE_CLASSES
        ],
        fontsize=7,
        loc="lower right",
    )
    handles = [Patch(facecolor=colors[c], edgecolor="k", label=c) for c in conditions]
    fig.legend(
        handles=handles, loc="outside lower center", ncol=min(len(conditions), 6), fontsize=7
    )
    fig.suptitle(f"Citation lock: {metrics.model['name']}", fontsize=10)
    return fig
