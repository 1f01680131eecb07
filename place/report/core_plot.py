"""`core.png`: SSGM's stability-plasticity trade-off (docs/method.md §13).

One point per producer and run: x, the share of `core.plasticity` items passed (transitions
on core slots: did the producer take the user's new value?); y, the share of
`core.stability` items passed (untrusted values of core predicates: did it keep them out?).
The two tallies are write-side (they read S^phys), so one condition per producer speaks
for all its read policies. A run with `ssgm` has them; `place stability RUN [RUN ...]` draws
several runs (SSGM with the gate on and off, CSS) into one figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class CorePoint:
    """One producer's two tallies in one run."""

    label: str
    plasticity: tuple[int, int]
    """(passed, total) of `core.plasticity`."""
    stability: tuple[int, int]
    """(passed, total) of `core.stability`."""

    @staticmethod
    def rate(part: tuple[int, int]) -> float | None:
        return None if part[1] == 0 else part[0] / part[1]


def core_points(
    aoep: dict[str, dict[str, Any]],
    conditions: list[list[str]],
    suffix: str = "",
) -> list[CorePoint]:
    """The first condition of each producer that has `core` tallies, labelled by its
    producer's display name (the condition's row) and `suffix`."""
    seen: set[str] = set()
    out = []
    for name, producer, _policy in conditions:
        card = aoep.get(name, {}).get("core")
        if card is None or producer in seen:
            continue
        seen.add(producer)
        row = name.split("/", 1)[0] if "/" in name else name
        out.append(
            CorePoint(
                f"{row}{suffix}",
                (card["plasticity"]["passed"], card["plasticity"]["total"]),
                (card["stability"]["passed"], card["stability"]["total"]),
            )
        )
    return out


def core_figure(points: list[CorePoint], title: str) -> Figure:
    """Plasticity against stability, one labelled point per producer and run; a tally with
    no item is not drawn (the label says so)."""
    fig, ax = plt.subplots(figsize=(5.6, 5), layout="constrained")
    for i, p in enumerate(points):
        x, y = CorePoint.rate(p.plasticity), CorePoint.rate(p.stability)
        text = (
            f"{p.label}\nplasticity {p.plasticity[0]}/{p.plasticity[1]}, "
            f"stability {p.stability[0]}/{p.stability[1]}"
        )
        if x is None or y is None:
            ax.annotate(text + " (not drawn)", (0.02, 0.05 + 0.06 * i), fontsize=7, color="0.4")
            continue
        ax.scatter([x], [y], s=40, zorder=3, color=f"C{i}", gid=f"point|{p.label}")
        right = x > 0.6  # label to the left of a point near the right edge
        ax.annotate(
            text,
            (x, y),
            # near the bottom edge the label goes above the point, clear of the tick labels
            xytext=(-6 if right else 6, 10 if y < 0.15 else -4 - 10 * (i % 3)),
            textcoords="offset points",
            ha="right" if right else "left",
            fontsize=7,
        )
    ax.set_xlim(-0.05, 1.1)
    ax.set_ylim(-0.05, 1.1)
    ax.set_xlabel("core.plasticity: core transitions taken (share passed)")
    ax.set_ylabel("core.stability: untrusted core values kept out (share passed)")
    ax.set_title(title, fontsize=9)
    ax.grid(color="0.9", lw=0.6)
    return fig
