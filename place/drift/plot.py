"""drift.png: mean D^c_t against t (docs/method.md §13), drawn from drift.json alone.

A row of panels per trajectory, a panel per ε, a line per N; the guides are ε·t (the
unreconciled drift Theorem 1 bounds, before any healing) and, per N > 0, the horizontal N·ε
in that line's colour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

DPI = 120
"""As the run plots (place/report/plots.py): no date in the PNG metadata, so the same
drift.json gives the same bytes."""


def write_plot(doc: dict[str, Any], path: Path) -> None:
    header = doc["header"]
    trajectories = [t["id"] for t in header["trajectories"]]
    eps_list, every_list = header["eps"], header["every"]
    cells = {(c["trajectory"], c["eps"], c["every"]): c for c in doc["cells"]}
    colors = plt.get_cmap("tab10")
    fig, axes = plt.subplots(
        len(trajectories),
        len(eps_list),
        figsize=(3.2 * len(eps_list) + 0.6, 2.8 * len(trajectories) + 0.4),
        squeeze=False,
        sharex="row",
        layout="constrained",
    )
    for i, traj in enumerate(trajectories):
        for j, eps in enumerate(eps_list):
            ax = axes[i][j]
            top = 0.0
            for k, every in enumerate(every_list):
                c = cells[(traj, eps, every)]
                t = range(1, len(c["mean_D"]) + 1)
                label = "N = 0 (never)" if every == 0 else f"N = {every}"
                ax.plot(t, c["mean_D"], color=colors(k), lw=1.1, label=label)
                top = max(top, max(c["mean_D"], default=0.0))
                if every and eps:
                    ax.axhline(every * eps, color=colors(k), lw=0.8, ls=":")
                    top = max(top, every * eps)
            horizon = max(len(cells[(traj, eps, n)]["mean_D"]) for n in every_list)
            ax.plot([0, horizon], [0, eps * horizon], color="k", lw=0.7, ls="--", label="ε·t")
            ax.set_ylim(0, max(top * 1.15, 0.5))
            ax.set_title(f"{traj}, ε = {eps:g}", fontsize=9)
            ax.set_xlabel("t (world-a post-update checkpoint)", fontsize=8)
            if j == 0:
                ax.set_ylabel(r"mean $D^c_t$ over seeds", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(color="0.92", lw=0.5)
    handles, labels = axes[0][0].get_legend_handles_labels()
    handles.append(Line2D([], [], color="0.4", lw=0.8, ls=":"))
    labels.append("N·ε (in the colour of N)")
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
