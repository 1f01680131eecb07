"""Honest plots (issue #26): every condition of a design has its own colour, a missing value
is drawn as no data and never as a zero, counts are shown, and legends never cover data.

Colours are compared in CIELAB, converted here independently of `place.report.plots`.
The threshold is ΔE76 ≥ 10: about four times the just-noticeable difference (≈ 2.3) of
two patches side by side, because plot colours are seen as thin lines, small markers and
legend keys apart from each other, where a pair must differ at a glance, not on close
inspection. It is also the lightness step the palette keeps between shades up to six read
policies, so a failure means two conditions a reader could confuse.

Figures are inspected as matplotlib objects (artists found by their gid, window extents),
not as pixels.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.transforms import Bbox

from place.design import DESIGNS, EXTENDED, PAPER, Design
from place.policies import POLICIES, register_policy
from place.producers import PRODUCERS, register_producer
from place.records import RunRecords
from place.report.metrics import MetricsDocument
from place.report.plots import (
    COLORS,
    aoep_figure,
    color,
    effects_figure,
    families_figure,
    palette,
    state_figure,
    write_plots,
)
from place.report.replications import forest_figure, summarise
from place.trajectory.model import FAMILIES

MIN_DELTA_E = 10.0

WIDER = Design("wider", (*EXTENDED.producers, "userlog"), (*EXTENDED.policies, "fresh"))
"""The extended design with a producer and a policy no shipped code knows (not registered)."""


def _shipped() -> list[Design]:
    """Every design a user can choose (`design=<name>`: configs/design/*.yaml)."""
    import yaml

    out = []
    for path in sorted((Path(__file__).parents[2] / "configs" / "design").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.append(Design(doc["name"], tuple(doc["producers"]), tuple(doc["policies"])))
    return out


SHIPPED = _shipped()


def lab(colour: str) -> tuple[float, float, float]:
    """sRGB hex to CIELAB (D65)."""
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: str, b: str) -> float:
    return math.dist(lab(a), lab(b))


def assert_distinct(colours: dict[str, str]) -> None:
    assert len(set(colours.values())) == len(colours), colours
    close = [
        (a, b, round(delta_e(colours[a], colours[b]), 1))
        for a, b in itertools.combinations(colours, 2)
        if delta_e(colours[a], colours[b]) < MIN_DELTA_E
    ]
    assert not close, f"conditions a reader could confuse (ΔE76 < {MIN_DELTA_E}): {close}"


def by_gid(fig: Any) -> dict[str, Any]:
    return {a.get_gid(): a for a in fig.findobj() if a.get_gid()}


def right_labels(fig: Any) -> list[str]:
    """The tick labels of the axes' right-hand scales (where the counts are)."""
    return [t.get_text() for ax in fig.axes for a in ax.child_axes for t in a.get_yticklabels()]


@pytest.fixture(autouse=True)
def _close_figures() -> Any:
    yield
    plt.close("all")


# --- the palette --------------------------------------------------------------------------


@pytest.mark.parametrize("design", [*DESIGNS.values(), *SHIPPED, WIDER], ids=lambda d: d.name)
def test_every_condition_of_a_design_has_its_own_colour(design: Design) -> None:
    colours = palette(design.names, design)
    assert list(colours) == list(design.names)
    assert_distinct(colours)
    # The notebooks and the replication plots name only the conditions: same colours.
    assert {c: color(c, list(design.names)) for c in design.names} == colours
    assert palette(design.names, design) == colours  # deterministic


def test_registered_later_producer_and_policy_get_a_hue_and_a_shade() -> None:
    with PRODUCERS.scoped(), POLICIES.scoped():
        register_producer("userlog", display="UserLog")(lambda store, context: None)
        register_policy("fresh", display="Fresh")(lambda context: None)
        design = Design("later", WIDER.producers, WIDER.policies)
        assert "UserLog/Fresh" in design.names
        colours = palette(design.names, design)
        assert_distinct(colours)
        assert {c: color(c, list(design.names)) for c in design.names} == colours


def test_producer_is_the_hue_and_policy_the_shade() -> None:
    colours = palette(EXTENDED.names, EXTENDED)

    def lch(c: str) -> tuple[float, float, float]:
        lightness, a, b = lab(colours[c])
        return lightness, math.hypot(a, b), math.degrees(math.atan2(b, a)) % 360

    for producer, row in EXTENDED.rows.items():
        shades = [lch(c) for c in row]
        assert [s[0] for s in shades] == sorted(s[0] for s in shades)  # darkest first
        if producer == "native":
            assert all(s[1] < 1 for s in shades)  # the native store is grey
        else:
            hues = [s[2] for s in shades if s[1] > 10]
            assert max(hues) - min(hues) < 20, (producer, hues)
    # the policies' shades are the same across producers
    for policy in EXTENDED.policies:
        column = [lch(EXTENDED.condition_name(p, policy))[0] for p in EXTENDED.producers]
        assert max(column) - min(column) < 1.0


def test_the_paper_keeps_its_figures_colours_and_shipped_hues_do_not_move() -> None:
    assert palette(PAPER.names, PAPER) == COLORS
    extended = palette(EXTENDED.names, EXTENDED)
    replication = Design("replication", ("append", "css"), EXTENDED.policies)
    again = palette(replication.names, replication)
    assert all(again[c] == extended[c] for c in replication.names)


# --- the plots use the palette ------------------------------------------------------------


def full_scores(conditions: tuple[str, ...], value: float = 0.5) -> dict[str, Any]:
    return {c: {f: [value, value] for f in FAMILIES} for c in conditions}


@pytest.mark.parametrize("design", [*DESIGNS.values(), WIDER], ids=lambda d: d.name)
def test_bars_and_points_are_drawn_in_distinct_colours(design: Design) -> None:
    names = list(design.names)
    artists = by_gid(families_figure(full_scores(design.names), names, design))
    drawn = {c: to_hex(artists[f"bar|{c}|{FAMILIES[0]}"].get_facecolor()) for c in names}
    assert drawn == palette(names, design)
    assert_distinct(drawn)
    points = by_gid(aoep_figure(metrics_doc(design), design)[0])
    marks = {c: to_hex(points[f"point|{c}"].get_facecolor()[0]) for c in names}
    assert marks == palette(names, design)


# --- no data is not zero ------------------------------------------------------------------


def test_a_family_without_queries_is_no_data_and_a_zero_score_is_zero() -> None:
    names = list(EXTENDED.names)
    scores = full_scores(EXTENDED.names)
    scores["CSS"]["deletion"] = []  # no query of that family: no value
    scores["PLACE"]["scope"] = [0.0, 0.0]  # a true zero
    scores["QASC"]["scope"] = [0.0, 1.0]
    artists = by_gid(families_figure(scores, names, EXTENDED))

    empty = artists["no-data|CSS|deletion"]
    assert empty.get_hatch() and empty.get_facecolor()[3] == 0  # hatched, not filled
    assert empty.get_height() == pytest.approx(1.0)  # the whole slot, visibly empty
    assert "bar|CSS|deletion" not in artists and "zero|CSS|deletion" not in artists

    zero = artists["zero|PLACE|scope"]
    assert list(zero.get_ydata()) == [0, 0] and zero.get_linewidth() >= 3
    assert to_hex(zero.get_color()) == palette(names, EXTENDED)["PLACE"]
    assert artists["zero-label|PLACE|scope"].get_text() == "0"
    assert "no-data|PLACE|scope" not in artists and "bar|PLACE|scope" not in artists

    assert artists["bar|QASC|scope"].get_height() == pytest.approx(0.5)
    assert sum(1 for g in artists if g.startswith("no-data|")) == 1


def test_family_ticks_show_the_number_of_queries() -> None:
    names = list(PAPER.names)
    scores = full_scores(PAPER.names)
    scores["CSS"]["scope"] = [1.0]
    ax = families_figure(scores, names, PAPER).axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[FAMILIES.index("scope")] == "scope\nn=1–2"
    assert labels[FAMILIES.index("deletion")] == "deletion\nn=2"


def test_an_effect_without_estimate_is_marked_and_its_n_shown() -> None:
    fig = effects_figure(metrics_doc(EXTENDED))
    artists = by_gid(fig)
    assert "effect|Zero" in artists and "no-data|Zero" not in artists
    assert list(artists["effect|Zero"].get_xdata()) == [0.0]
    assert "effect|Missing" not in artists
    assert artists["no-data|Missing"].get_text().strip().startswith("n/a")
    assert right_labels(fig) == ["n=4 conversations", "n=12 pairs", "n=0 pairs"]


def test_a_forest_row_without_values_is_no_data_and_zeros_are_drawn() -> None:
    conditions = ["Append/Native", "CSS", "Append/QASC", "PLACE"]
    design = Design("replication", ("append", "css"), ("native", "qasc"))
    docs = [metrics_doc(design, joint={"Append/Native": None, "CSS": 0.0}, sha=i) for i in range(3)]
    fig = forest_figure(docs, summarise(docs))
    artists = by_gid(fig)
    assert "no-data|Append/Native" in artists and "mean|Append/Native" not in artists
    zero = artists["mean|CSS"]
    assert list(zero.get_xdata()) == [0.0]
    assert to_hex(zero.get_color()) == palette(conditions, design)["CSS"]
    n_labels = right_labels(fig)
    assert n_labels[-4:] == ["n=0 of 3", "n=3", "n=3", "n=3"]


# --- legends never cover data -------------------------------------------------------------


def legends_clear_of_axes(fig: Any) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert Bbox.intersection(box, fig.bbox) is not None
        assert box.x0 >= fig.bbox.x0 - 1 and box.x1 <= fig.bbox.x1 + 1  # not cut off
        assert box.y0 >= fig.bbox.y0 - 1 and box.y1 <= fig.bbox.y1 + 1
        for ax in fig.axes:
            data = ax.get_window_extent(renderer)
            overlap = Bbox.intersection(box, data)
            assert overlap is None or overlap.width * overlap.height == 0, (box, data)


@pytest.mark.parametrize("design", [*DESIGNS.values(), WIDER], ids=lambda d: d.name)
def test_the_families_legend_does_not_cover_the_bars(design: Design) -> None:
    legends_clear_of_axes(families_figure(full_scores(design.names), list(design.names), design))


@pytest.mark.parametrize("design", [*DESIGNS.values(), WIDER], ids=lambda d: d.name)
def test_the_condition_legend_of_the_state_plot_does_not_cover_the_lines(design: Design) -> None:
    fig = state_figure(RunRecords(), list(design.names), design)
    legends_clear_of_axes(fig)
    no_data = [t for ax in fig.axes for t in ax.texts if t.get_gid() == "no-data"]
    assert len(no_data) == len(design.producers)  # no checkpoint: said, not drawn at 0
    assert not any(line.get_gid() for ax in fig.axes for line in ax.lines)


def test_write_plots_keeps_its_files_and_is_deterministic(tmp_path: Path) -> None:
    m = metrics_doc(EXTENDED)
    first = write_plots(RunRecords(), m, tmp_path / "a")
    again = write_plots(RunRecords(), m, tmp_path / "b")
    assert [p.name for p in first] == [
        "state_correctness.png",
        "effects.png",
        "families.png",
        "aoep.png",
    ]
    for a, b in zip(first, again, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


# --- hand-made metrics documents ----------------------------------------------------------


def metrics_doc(
    design: Design, joint: dict[str, float | None] | None = None, sha: int = 0
) -> MetricsDocument:
    joint = joint or {}

    def endpoints(c: str) -> dict[str, Any]:
        return {
            "state_correctness": 0.5,
            "leakage_rate": 0.25,
            "leakage_n": 4,
            "answer_correctness": 0.5,
            "joint_success": joint.get(c, 0.25),
            "needed_support": 1.0,
            "exposure_rate": 0.0,
            "conflict_harm": 0.25,
            "deletion_residue": 0.0,
            "closed_loop": {"state_correctness": 0.5, "exposure_rate": 0.0, "joint_success": 0.25},
        }

    def family(passed: int, total: int) -> dict[str, Any]:
        return {"passed": passed, "total": total, "kinds": {}}

    return MetricsDocument.model_validate(
        {
            "schema": "place-metrics/3",
            "trajectory": {"id": f"t{sha}", "sha256": f"{sha:064x}"},
            "model": {"name": "tiny"},
            "counts": {"conversations": 4},
            "design": design.to_json(),
            "conditions": {c: endpoints(c) for c in design.names},
            "effects": {
                "Block": {"estimate": 0.5, "interval": [0.25, 0.75], "loco_range": [0.4, 0.6]},
                "Zero": {"estimate": 0.0, "interval": [0.0, 0.0], "n": 12},
                "Missing": {"estimate": None, "interval": None, "n": 0},
            },
            "factorization": {"ok": True, "checkpoints": 1, "mismatches": 0},
            "aoep": {
                c: {"obligations": family(i, 15), "invariants": family(18 - i, 18)}
                for i, c in enumerate(design.names)
            },
            "bootstrap": {"seed": 0, "resamples": 10},
        }
    )
