"""PNG plots of a run, drawn from its records and metrics only.

Colours come from `palette` (the one place they are defined; the replication plots and the
notebooks use it through `color`): in a design's plots every condition has its own colour,
its write producer as hue and its read policy as shade (docs/records.md, "Plots"). Legends sit
outside the axes, a value that does not exist is drawn as no data (never as a zero), and
where a plotted value rests on a count the count is shown. Each plot has a `*_figure`
function that returns the matplotlib Figure (what the tests inspect) and a function that
writes the PNG.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from place.design import PAPER_NAMES, Design
from place.metrics import endpoints as ep
from place.records import RunRecords
from place.report.citation_plot import citation_figure, has_forged
from place.report.core_plot import core_figure, core_points
from place.report.metrics import MetricsDocument, PairEffect
from place.report.tables import pilot_values
from place.trajectory.model import FAMILIES

DPI = 120
"""Every PNG is written at this resolution (with matplotlib's default PNG metadata, which
holds no date: the same inputs give the same bytes)."""

# --- colours ------------------------------------------------------------------------------

COLORS = {"Native": "#7f7f7f", "CSS": "#1f77b4", "QASC": "#ff7f0e", "PLACE": "#2ca02c"}
"""The paper's 2 × 2 keeps the colours of its figures (grey, blue, orange, green)."""

PRODUCER_HUES: dict[str, float | None] = {"native": None, "css": 265.0, "append": 59.0}
"""A shipped producer's hue in every design, as a CIE LCh hue angle (degrees; css is the
hue of matplotlib's blue, append of its orange); None is grey (no chroma): the native Mem0
store, the baseline."""

SPARE_HUES = (138.0, 312.0, 200.0, 25.0, 100.0, 345.0)
"""Hues for producers not in `PRODUCER_HUES` (registered later), in the design's order of
producers: green, purple, teal, red, olive, pink; further ones step by the golden angle."""

CHROMA = 50.0
"""Chroma of a producer's hue, lowered where sRGB cannot show it at a shade's lightness."""


def _srgb(lightness: float, chroma: float, hue: float) -> tuple[float, float, float] | None:
    """CIE LCh (D65) to gamma-encoded sRGB in [0, 1]; None outside the sRGB gamut."""
    a = chroma * math.cos(math.radians(hue))
    b = chroma * math.sin(math.radians(hue))
    fy = (lightness + 16) / 116
    fx, fz = fy + a / 500, fy - b / 200
    d = 6 / 29

    def finv(t: float) -> float:
        return t**3 if t > d else 3 * d * d * (t - 4 / 29)

    x, y, z = 0.95047 * finv(fx), finv(fy), 1.08883 * finv(fz)
    linear = (
        3.2404542 * x - 1.5371385 * y - 0.4985314 * z,
        -0.9692660 * x + 1.8760108 * y + 0.0415560 * z,
        0.0556434 * x - 0.2040259 * y + 1.0572252 * z,
    )
    if any(c < -1e-9 or c > 1 + 1e-9 for c in linear):
        return None
    clipped = [min(max(c, 0.0), 1.0) for c in linear]
    r, g, bl = (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055 for c in clipped)
    return r, g, bl


def _lch_hex(lightness: float, chroma: float, hue: float) -> str:
    """The colour of that lightness and hue with the largest chroma up to `chroma` that
    sRGB shows (bisection, so the result is exact and the same on every machine)."""
    rgb = _srgb(lightness, chroma, hue)
    if rgb is None:
        lo, hi = 0.0, chroma
        for _ in range(40):
            mid = (lo + hi) / 2
            if _srgb(lightness, mid, hue) is None:
                hi = mid
            else:
                lo = mid
        rgb = _srgb(lightness, lo, hue)
    assert rgb is not None  # chroma 0 is always in gamut
    return "#" + "".join(f"{round(255 * c):02x}" for c in rgb)


def shades(count: int) -> list[float]:
    """CIELAB lightness of each of `count` read policies, darkest first: 22 apart for two
    or three policies, the range 25–75 shared out from four to six (12.5 apart for five, 10
    for six), and from seven on a range widened to keep them 10.5 apart (18.5–81.5 for
    seven, `design=population`): shades of one hue stay about ΔE 10 apart or more
    (tests/unit/test_plot_colours.py checks ≥ 10 for every shipped design)."""
    if count <= 1:
        return [50.0]
    span = min(50.0, 22.0 * (count - 1)) if count <= 6 else 10.5 * (count - 1)
    return [50.0 - span / 2 + span * i / (count - 1) for i in range(count)]


def _hue(index: int) -> float:
    if index < len(SPARE_HUES):
        return SPARE_HUES[index]
    return (SPARE_HUES[-1] + 137.508 * (index - len(SPARE_HUES) + 1)) % 360


def _registered(display: str, kind: str) -> str:
    """The registered name spelled `display` in condition names (the display itself when
    no registered component spells it so)."""
    from place.policies import POLICIES
    from place.producers import PRODUCERS

    registry: Any = PRODUCERS if kind == "producer" else POLICIES
    for name, spec in registry.items():
        if spec.display == display:
            return str(name)
    return display


def _parts(name: str) -> tuple[str, str]:
    """A condition's (producer, policy) from its name alone: the paper's names, then
    `<Producer>/<Policy>`; any other name is a producer of its own read natively."""
    for pair, paper in PAPER_NAMES.items():
        if paper == name:
            return pair
    if "/" in name:
        producer, policy = name.split("/", 1)
        return _registered(producer, "producer"), _registered(policy, "policy")
    return name, "native"


def grid(
    conditions: Sequence[str], design: Design | None = None
) -> tuple[dict[str, tuple[str, str]], list[str], list[str]]:
    """Each condition's (producer, policy), and the producers and the policies in design
    order. From `design` when it has every condition, else read off the names (so that
    `color(c, conditions)` needs nothing but the names)."""
    known = {c.name: (c.producer, c.policy) for c in design.conditions} if design else {}
    pairs = {c: known.get(c) or _parts(c) for c in conditions}
    producers = list(dict.fromkeys(p for p, _ in pairs.values()))
    policies = list(dict.fromkeys(r for _, r in pairs.values()))
    if design is not None and all(c in known for c in conditions):
        producers = [p for p in design.producers if p in producers]
        policies = [r for r in design.policies if r in policies]
    return pairs, producers, policies


def palette(conditions: Sequence[str], design: Design | None = None) -> dict[str, str]:
    """A colour (`#rrggbb`) per condition, all different: the write producer is the hue,
    the read policy the shade (CIELAB lightness, `shades`, darkest for the design's first
    policy). Shipped producers keep their hue in every design (`PRODUCER_HUES`: native grey,
    css blue, append orange); others take `SPARE_HUES` in the design's order. The paper's
    2 × 2 (exactly Native, CSS, QASC, PLACE) keeps its figures' colours (`COLORS`).
    Deterministic: the same conditions give the same colours."""
    if sorted(conditions) == sorted(COLORS):
        return {c: COLORS[c] for c in conditions}
    pairs, producers, policies = grid(conditions, design)
    spare = iter(range(len(producers)))
    hues = {p: PRODUCER_HUES[p] if p in PRODUCER_HUES else _hue(next(spare)) for p in producers}
    lightness = dict(zip(policies, shades(len(policies)), strict=True))
    out = {}
    for c in conditions:
        producer, policy = pairs[c]
        hue = hues[producer]
        out[c] = _lch_hex(lightness[policy], 0.0 if hue is None else CHROMA, hue or 0.0)
    return out


def color(condition: str, conditions: list[str], design: Design | None = None) -> str:
    """The colour of `condition` among the plotted `conditions` (see `palette`)."""
    return palette(conditions, design)[condition]


def _design(metrics: MetricsDocument) -> Design | None:
    design = Design.from_json(metrics.design)
    return design if set(metrics.conditions) <= set(design.names) else None


def _save(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def _legend(
    fig: Figure, conditions: Sequence[str], design: Design | None, handles: list[Any]
) -> None:
    """The conditions' legend below the axes: a column per read policy, a row per write
    producer (the conditions are in policy-major design order)."""
    _, _, policies = grid(conditions, design)
    legend = fig.legend(
        handles,
        [h.get_label() for h in handles],
        loc="outside lower center",
        ncol=max(1, min(len(policies), len(handles))),
        fontsize=8,
        frameon=False,
    )
    # A wide grid (many policies, long names) widens the figure rather than being cut off.
    width = legend.get_window_extent().width / fig.dpi
    if width + 0.4 > fig.get_figwidth():
        fig.set_figwidth(width + 0.4)


# --- StateCorrectness across checkpoints --------------------------------------------------


def _n(counts: Sequence[int]) -> str:
    """`n=8`, or `n=4–8` when the conditions' counts differ."""
    values = sorted(set(counts))
    if not values:
        return "n=0"
    return f"n={values[0]}" if len(values) == 1 else f"n={values[0]}–{values[-1]}"


def state_figure(
    records: RunRecords, conditions: list[str], design: Design | None = None
) -> Figure:
    """One panel per write producer, a line per condition reading its store. The policies
    of a row observe the same store, so their lines coincide by design: they are drawn
    widest first, so that every one stays visible. A condition without checkpoints is
    named in the legend with a hatched key (and its panel says so when no line is left)."""
    colors = palette(conditions, design)
    pairs, producers, policies = grid(conditions, design)
    series = {
        c: [ep.checkpoint_f1(r) for r in ep.state_items(records.checkpoints, c)] for c in conditions
    }
    fig, axes = plt.subplots(
        len(producers),
        1,
        figsize=(9, 1.5 + 1.5 * len(producers)),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    handles: dict[str, Any] = {}
    for ax, producer in zip(axes[:, 0], producers, strict=True):
        row = [c for c in conditions if pairs[c][0] == producer]
        for c in row:
            values = series[c]
            if not values:
                label = f"{c}: no data"
                handles[c] = Patch(facecolor="none", edgecolor="0.5", hatch="////", label=label)
                continue
            rank = policies.index(pairs[c][1])
            ax.plot(
                range(1, len(values) + 1),
                values,
                color=colors[c],
                lw=1.2 + 1.4 * (len(policies) - 1 - rank),
                solid_capstyle="butt",
                label=c,
                gid=f"state|{c}",
            )
            handles[c] = Line2D([], [], color=colors[c], lw=2.5, label=c)
        if not any(series[c] for c in row):
            ax.text(
                0.5,
                0.5,
                "no post-update checkpoint",
                transform=ax.transAxes,
                ha="center",
                va="center",
                color="0.35",
                gid="no-data",
            )
        ax.set_ylim(-0.04, 1.04)
        ax.set_ylabel("F1", fontsize=8)
        ax.set_title(f"write producer {producer}: {', '.join(row)}", fontsize=8, loc="left")
        ax.grid(axis="y", color="0.92", lw=0.6)
    n = _n([len(v) for v in series.values() if v])
    axes[-1, 0].set_xlabel(f"post-update checkpoint ({n} per condition)")
    fig.suptitle(
        "StateCorrectness F1(S^phys, S*) across checkpoints: the read policies of one "
        "producer see the same store,\nso their lines coincide (drawn widest first)",
        fontsize=9,
    )
    _legend(fig, conditions, design, [handles[c] for c in conditions])
    return fig


def state_across_checkpoints(
    records: RunRecords, conditions: list[str], path: Path, design: Design | None = None
) -> None:
    _save(state_figure(records, conditions, design), path)


# --- effects ------------------------------------------------------------------------------


def _effect_n(metrics: MetricsDocument, name: str) -> str:
    """What an effect's interval rests on: its pairs, or the conversations it resamples."""
    e = metrics.effects[name]
    if isinstance(e, PairEffect):
        return f"n={e.n} pairs"
    blocks = metrics.counts.get("conversations")
    return "blocks: conversations" if blocks is None else f"n={blocks} conversations"


def effects_figure(metrics: MetricsDocument) -> Figure:
    """Each effect's estimate with its 95 % interval; on the right what it rests on (its
    pairs, or the conversations of a block bootstrap). An effect without an estimate is
    marked `n/a` at its row (not drawn at 0)."""
    names = list(metrics.effects)
    fig, ax = plt.subplots(figsize=(7.5, max(3.2, 0.4 * len(names) + 1.4)), layout="constrained")
    for i, name in enumerate(names):
        e = metrics.effects[name]
        if e.estimate is None:
            why = " (no counted pairs)" if isinstance(e, PairEffect) and e.n == 0 else ""
            said = f"n/a: not estimable{why}"
            if name in (metrics.not_measured or ()):
                said = "not measured: it reads answers (answer-free run)"
            ax.text(
                0,
                i,
                f"  {said}",
                va="center",
                fontsize=8,
                color="0.35",
                style="italic",
                gid=f"no-data|{name}",
            )
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
            gid=f"effect|{name}",
        )
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    right = ax.secondary_yaxis("right")
    right.set_yticks(range(len(names)), [_effect_n(metrics, n) for n in names], fontsize=8)
    right.tick_params(length=0)
    ax.set_xlabel("effect (95 % interval)")
    ax.grid(axis="x", color="0.92", lw=0.6)
    ax.set_title(f"Effects: {metrics.model['name']}")
    return fig


def effects_with_intervals(metrics: MetricsDocument, path: Path) -> None:
    _save(effects_figure(metrics), path)


# --- AnswerCorrectness per family ---------------------------------------------------------


def family_scores(
    records: RunRecords, conditions: list[str], answers: bool = True
) -> dict[str, dict[str, list[float]]]:
    """Per condition and query family, the AnswerCorrectness of each primary query of
    world a (an empty list: the condition has no query of that family); without `answers`
    (an answer-free run, which has none), whether the query's read exposed every fact of
    Q* (1) or not (0), as QuerySupport."""
    scores: dict[str, dict[str, list[float]]] = {c: {f: [] for f in FAMILIES} for c in conditions}
    for q in records.queries:
        row = scores.get(q.condition, {})
        if q.mode == "primary" and q.world == "a" and q.family in row:
            row[q.family].append(ep.answer_score(q) if answers else query_support(q))
    return scores


def query_support(q: Any) -> float:
    """1 when every fact of the query's Q* is readable from what its read exposed."""
    authorized = frozenset(tuple(f) for f in q.authorized)
    return float(ep.supported(ep.exposed_facts(q), authorized))


def families_figure(
    scores: Mapping[str, Mapping[str, Sequence[float]]],
    conditions: list[str],
    design: Design | None = None,
    measure: str = "AnswerCorrectness",
) -> Figure:
    """A group of bars per query family, a bar per condition: the mean AnswerCorrectness
    of its queries, with the number of queries under the family. A score of 0 is a short
    thick mark on the zero line; a slot without queries is hatched and empty."""
    colors = palette(conditions, design)
    fig, ax = plt.subplots(
        figsize=(max(9.0, 2.0 + 0.13 * len(conditions) * len(FAMILIES)), 4.4),
        layout="constrained",
    )
    width = 0.84 / len(conditions)
    for j, c in enumerate(conditions):
        for i, family in enumerate(FAMILIES):
            x = i + (j - (len(conditions) - 1) / 2) * width
            values = scores.get(c, {}).get(family, [])
            if not values:
                ax.bar(
                    x,
                    1.0,
                    width,
                    facecolor="none",
                    edgecolor="0.6",
                    hatch="////",
                    lw=0,
                    gid=f"no-data|{c}|{family}",
                )
                continue
            value = ep.mean(values)
            if value == 0:
                ax.plot(
                    [x - width * 0.45, x + width * 0.45],
                    [0, 0],
                    color=colors[c],
                    lw=3.5,
                    solid_capstyle="butt",
                    gid=f"zero|{c}|{family}",
                    clip_on=False,
                    zorder=3,
                )
                ax.text(
                    x,
                    0.012,
                    "0",
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    color="0.25",
                    gid=f"zero-label|{c}|{family}",
                )
            else:
                ax.bar(x, value, width, color=colors[c], gid=f"bar|{c}|{family}")
    counts = {
        f: _n([len(v) for c in conditions if (v := scores.get(c, {}).get(f, []))]) for f in FAMILIES
    }
    ax.set_xticks(range(len(FAMILIES)), [f"{f}\n{counts[f]}" for f in FAMILIES])
    ax.set_xlim(-0.5, len(FAMILIES) - 0.5)
    ax.axhline(0, color="k", lw=0.6, zorder=2)
    ax.set_ylabel(measure)
    ax.set_ylim(-0.03, 1.05)
    ax.grid(axis="y", color="0.92", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(
        "query family (n: its queries per condition); a thick mark on the zero line is a "
        "score of 0, a hatched empty slot has no query",
        fontsize=8,
    )
    ax.set_title(
        f"{measure} per query family"
        if measure == "AnswerCorrectness"
        else f"{measure} per query family (answer-free run: AnswerCorrectness not measured)"
    )
    handles = [Patch(facecolor=colors[c], label=c) for c in conditions]
    _legend(fig, conditions, design, handles)
    return fig


def per_family_bars(
    records: RunRecords,
    conditions: list[str],
    path: Path,
    design: Design | None = None,
    answers: bool = True,
) -> None:
    """AnswerCorrectness per family; in an answer-free run, which has no answer, QuerySupport
    (every fact of Q* exposed), titled so."""
    measure = "AnswerCorrectness" if answers else "QuerySupport"
    scores = family_scores(records, conditions, answers)
    _save(families_figure(scores, conditions, design, measure), path)


# --- the AOEP scorecard -------------------------------------------------------------------


def _rate(family: dict[str, Any]) -> float | None:
    return family["passed"] / family["total"] if family["total"] else None


def _totals(card: Mapping[str, Any], family: str) -> str:
    totals = sorted({int(v[family]["total"]) for v in card.values() if v[family]["total"]})
    if not totals:
        return "total"
    return str(totals[0]) if len(totals) == 1 else f"total ({totals[0]}–{totals[-1]})"


LABEL_WIDTH = 60
"""Characters per line of a point's label in the scorecard plot."""


def aoep_figure(
    metrics: MetricsDocument, design: Design | None = None
) -> tuple[Figure, dict[str, tuple[float, float]]]:
    """`aoep_scorecard`'s figure and points."""
    conditions = list(metrics.conditions)
    colors = palette(conditions, design if design is not None else _design(metrics))
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
    groups: dict[tuple[float, float], list[str]] = {}
    for c, xy in points.items():
        groups.setdefault(xy, []).append(c)
    fig, ax = plt.subplots(figsize=(6.5, 5.8), layout="constrained")
    placed: list[tuple[float, float]] = []
    for (x, y), names in sorted(groups.items(), key=lambda g: (-g[0][1], g[0][0])):
        for i, c in enumerate(names):
            ax.scatter(
                x,
                y,
                s=140 * 0.45**i,
                color=colors[c],
                edgecolors="k",
                linewidths=0.6,
                zorder=3 + i,
                gid=f"point|{c}",
            )
        right = x > 0.75  # label on the left near the right edge, to stay inside the axes
        # Labels of nearby points (e.g. two policies on one producer) would print over each
        # other: each one steps down a line per label already placed close above it.
        crowd = sum(1 for px, py in placed if abs(px - x) < 0.12 and abs(py - y) < 0.04)
        placed.append((x, y))
        # Many conditions on one point (a design's no-memory row) wrap onto more lines, which
        # hang below a point at the top and stand above any other.
        lines = textwrap.wrap(", ".join(names), LABEL_WIDTH)
        ax.annotate(
            "\n".join(lines),
            (x, y),
            xytext=(-8 if right else 8, (-4 if y > 0.95 else 5) - 11 * crowd),
            textcoords="offset points",
            ha="right" if right else "left",
            va="baseline" if len(lines) == 1 else "top" if y > 0.95 else "bottom",
            fontsize=8,
        )
    if not card:
        ax.text(
            0.5,
            0.5,
            "no AOEP scorecard in metrics.json",
            ha="center",
            va="center",
            gid="no-data",
        )
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel(
        f"obligations kept (passed / {_totals(card, 'obligations')})"
        + (f"\nnot plotted (no items on an axis): {', '.join(skipped)}" if skipped else "")
    )
    ax.set_ylabel(f"negative invariants held (passed / {_totals(card, 'invariants')})")
    ax.grid(color="0.9", lw=0.6)
    ax.set_title(
        f"AOEP scorecard: {metrics.model['name']}\n"
        "a store that keeps nothing sits at the top left "
        "(passes every invariant, keeps no obligation)"
        + (
            "\nanswer-free run: items judged without their answer clauses, conflict not measured"
            if metrics.not_measured
            else ""
        ),
        fontsize=9,
    )
    return fig, points


def aoep_scorecard(metrics: MetricsDocument, path: Path) -> dict[str, tuple[float, float]]:
    """Obligation pass rate against negative-invariant pass rate, one point per condition
    (docs/method.md §10): the two are never blended, since a store that keeps nothing sits at the
    top left. Returns the plotted points, in design order. The axes name the item totals
    the rates rest on.

    A condition with no obligation or no invariant item has no rate on that axis: it is left
    out of the plot and named under it (no point is invented for it). A metrics document
    without `aoep` (schema place-metrics/2) gives an empty plot that says so. Conditions at
    the same point share one label and are drawn as concentric markers, largest first, so
    every colour stays visible."""
    fig, points = aoep_figure(metrics)
    _save(fig, path)
    return points


# --- the AOEP-v0 pilot table ---------------------------------------------------------------


def _share(passed: int, total: int) -> float | None:
    return passed / total if total else None


def aoep_pilot_figure(
    metrics: MetricsDocument, design: Design | None = None
) -> tuple[Figure, dict[str, tuple[float | None, float | None]]]:
    """`aoep_pilot_plot`'s figure and points."""
    rows = metrics.aoep_pilot or []
    values = pilot_values()
    published = {s["system"]: s for s in values["systems"]}
    conditions = list(metrics.conditions)
    colors = palette(conditions, design if design is not None else _design(metrics))
    fig, axes = plt.subplots(
        1,
        2,
        figsize=(11.5, 1.6 + 0.62 * max(len(rows), 1)),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    points: dict[str, tuple[float | None, float | None]] = {}
    for ax, family, title in zip(
        axes[0],
        ("obligations", "invariants"),
        ("Obligations kept", "Negative invariants held"),
        strict=True,
    ):
        total_key = f"{family}_total"
        for y, r in enumerate(rows):
            part = getattr(r, family)
            mine, answer = part.model_independent, part.answer_dependent
            color = colors.get(r.condition, "#7f7f7f")
            rate = _share(mine.passed, mine.total)
            label = f"{mine.passed}/{mine.total} {mine.mark}"
            if answer is not None and answer.total:
                label += f"; {answer.passed}/{answer.total} A"
            if rate is None:
                ax.barh(
                    y - 0.2,
                    1.0,
                    0.38,
                    facecolor="none",
                    edgecolor="0.6",
                    hatch="////",
                    lw=0,
                    gid=f"no-data|{family}|{r.condition}",
                )
                label = "no items"
            else:
                ax.barh(y - 0.2, rate, 0.38, color=color, gid=f"run|{family}|{r.condition}")
            ax.text((rate or 0.0) + 0.02, y - 0.2, label, va="center", fontsize=7)
            pub = published.get(r.system)
            if pub is not None:
                shown = pub[family] / values[total_key]
                ax.barh(
                    y + 0.2,
                    shown,
                    0.38,
                    facecolor="white",
                    edgecolor=color,
                    hatch="xxx",
                    lw=0.8,
                    gid=f"published|{family}|{r.condition}",
                )
                ax.text(
                    shown + 0.02,
                    y + 0.2,
                    f"{pub[family]}/{values[total_key]} pilot",
                    va="center",
                    fontsize=7,
                    color="0.35",
                )
            old = points.get(r.condition, (None, None))
            points[r.condition] = (rate, old[1]) if family == "obligations" else (old[0], rate)
        ax.set_xlim(0, 1.35)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_xlabel("pass rate", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="x", color="0.92", lw=0.6)
        ax.set_axisbelow(True)
    axes[0, 0].set_yticks(
        range(len(rows)), [f"{r.system}\n{r.condition}" for r in rows], fontsize=8
    )
    axes[0, 0].set_ylim(len(rows) - 0.5, -0.5)
    if not rows:
        axes[0, 0].text(
            0.5,
            0.5,
            "no pilot table in metrics.json",
            ha="center",
            va="center",
            transform=axes[0, 0].transAxes,
            gid="no-data",
        )
    fig.legend(
        handles=[
            Patch(
                facecolor="0.5",
                label="this run: items that read no answer, with their mark "
                "(A: the items that read an answer)",
            ),
            Patch(
                facecolor="white",
                edgecolor="0.4",
                hatch="xxx",
                label="AOEP-v0 pilot, published (its own episodes, items and reader)",
            ),
        ],
        loc="outside lower center",
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    fig.suptitle(
        f"AOEP-v0 pilot table: {metrics.model['name']} (fixed: by definition, D: rank-dependent, "
        "A: answer model, M: Mem0's LLM)",
        fontsize=9,
    )
    return fig, points


def aoep_pilot_plot(
    metrics: MetricsDocument, path: Path
) -> dict[str, tuple[float | None, float | None]]:
    """The pilot table (docs/method.md §11) as bars: per pilot system, the pass rate of its
    condition's items that read no answer (filled, in the condition's colour, labelled
    `passed/total mark` and the answer-dependent tally beside it) over the pilot's published
    rate (hatched, labelled as the pilot's), obligations and invariants in two panels. A part
    without items is hatched and empty, never drawn as 0. Returns, per condition, its
    (obligation, invariant) rates, None where it has no item."""
    fig, points = aoep_pilot_figure(metrics)
    _save(fig, path)
    return points


def write_plots(records: RunRecords, metrics: MetricsDocument, out_dir: Path) -> list[Path]:
    """The run's PNGs; `aoep_pilot.png` only when metrics.json has the pilot table,
    `citation.png` only when the run had forged probes, and `core.png` only when its design
    has `ssgm` (the scorecard's `core` tallies, docs/method.md §13)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [
        out_dir / "state_correctness.png",
        out_dir / "effects.png",
        out_dir / "families.png",
        out_dir / "aoep.png",
    ]
    conditions = list(metrics.conditions)
    design = _design(metrics)
    state_across_checkpoints(records, conditions, paths[0], design)
    effects_with_intervals(metrics, paths[1])
    per_family_bars(records, conditions, paths[2], design, answers=not metrics.not_measured)
    aoep_scorecard(metrics, paths[3])
    if metrics.aoep_pilot:
        paths.append(out_dir / "aoep_pilot.png")
        aoep_pilot_plot(metrics, paths[-1])
    if has_forged(metrics):
        paths.append(out_dir / "citation.png")
        _save(citation_figure(metrics, palette(conditions, design)), paths[-1])
    points = core_points(
        metrics.aoep or {},
        [[c.name, c.producer, c.policy] for c in Design.from_json(metrics.design).conditions],
    )
    if points:
        paths.append(out_dir / "core.png")
        _save(
            core_figure(
                points, f"Stability and plasticity of core memory: {metrics.trajectory['id']}"
            ),
            paths[-1],
        )
    return paths
