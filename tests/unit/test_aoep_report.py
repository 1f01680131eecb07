"""The AOEP scorecard (docs/method.md §10) in the report: its table and its plot.

The metrics documents are written by hand (only the keys the report reads), so every cell
of the table and every point of the plot is known in advance.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from place.design import EXTENDED, PAPER
from place.records import RunRecords
from place.report.metrics import MetricsDocument
from place.report.plots import aoep_scorecard, write_plots
from place.report.tables import (
    Table,
    all_tables,
    aoep,
    citation,
    reads,
    reads_apart,
    table1a,
    table1b,
    table2a,
    table2b,
    to_csv,
    to_latex,
    to_markdown,
)

HEADER = [
    "Model",
    "Condition",
    "Obligations",
    "Forget",
    "Transition",
    "Support",
    "Conflict",
    "Invariants",
    "Deletion",
    "Promotion",
    "Exposure",
]
TITLE = "AOEP scorecard: obligations kept and negative invariants held (docs/method.md §10)"


def kinds(counts: dict[str, tuple[int, int]]) -> dict[str, Any]:
    return {
        k: {"passed": p, "total": t, "failed": [f"{k}-{i}" for i in range(t - p)]}
        for k, (p, t) in counts.items()
    }


def card(
    forget=(1, 1),
    transition=(4, 4),
    support=(6, 6),
    conflict=(3, 4),
    deletion=(1, 1),
    promotion=(3, 3),
    exposure=(14, 14),
) -> dict[str, Any]:
    """One condition's scorecard as `scorecard()` writes it (families summed over kinds)."""
    out = {}
    for family, counts in (
        (
            "obligations",
            {"forget": forget, "transition": transition, "support": support, "conflict": conflict},
        ),
        ("invariants", {"deletion": deletion, "promotion": promotion, "exposure": exposure}),
    ):
        per = kinds(counts)
        out[family] = {
            "passed": sum(v["passed"] for v in per.values()),
            "total": sum(v["total"] for v in per.values()),
            "kinds": per,
        }
    return out


def empty_card() -> dict[str, Any]:
    """A store that keeps nothing: no obligation kept, every invariant held."""
    return card(forget=(0, 1), transition=(0, 4), support=(0, 6), conflict=(0, 4))


def doc(
    name: str, conditions: tuple[str, ...], cards: dict[str, Any] | None, ok: bool = True
) -> MetricsDocument:
    m: dict[str, Any] = {
        "schema": "place-metrics/3",
        "trajectory": {"id": "t", "sha256": "0" * 64},
        "model": {"name": name},
        "counts": {},
        "conditions": {
            c: {
                "state_correctness": 0.5,
                "leakage_rate": 0.25,
                "leakage_n": 4,
                "answer_correctness": 0.5,
                "joint_success": 0.25,
                "needed_support": 1.0,
                "exposure_rate": 0.0,
                "conflict_harm": 0.25,
                "deletion_residue": 0.0,
                "closed_loop": {
                    "state_correctness": 0.5,
                    "exposure_rate": 0.0,
                    "joint_success": 0.25,
                },
            }
            for c in conditions
        },
        "effects": {"StateGain": {"estimate": 0.5, "interval": [0.25, 0.75], "n": 4}},
        "factorization": {
            "ok": ok,
            "checkpoints": 1,
            "mismatches": 0 if ok else 1,
            "first_mismatch": None if ok else "t1 (post-update)",
        },
        "bootstrap": {"seed": 0, "resamples": 10},
    }
    if cards is not None:
        m["aoep"] = cards
    return MetricsDocument.model_validate(m)


def paper_doc(name: str = "tiny") -> MetricsDocument:
    return doc(
        name,
        PAPER.names,
        {
            "Native": empty_card(),
            "CSS": card(exposure=(1, 14)),
            "QASC": empty_card(),
            "PLACE": card(),
        },
    )


def test_paper_design_rows_and_columns() -> None:
    t = aoep([paper_doc()], paper=False)
    assert t.name == "aoep" and t.title == TITLE and t.banner is None
    assert t.header == HEADER
    assert t.rows == [
        ["tiny", "Native", "0/15", "0/1", "0/4", "0/6", "0/4", "18/18", "1/1", "3/3", "14/14"],
        ["tiny", "CSS", "14/15", "1/1", "4/4", "6/6", "3/4", "5/18", "1/1", "3/3", "1/14"],
        ["tiny", "QASC", "0/15", "0/1", "0/4", "0/6", "0/4", "18/18", "1/1", "3/3", "14/14"],
        ["tiny", "PLACE", "14/15", "1/1", "4/4", "6/6", "3/4", "18/18", "1/1", "3/3", "14/14"],
    ]


def test_extended_design_keeps_design_order_and_several_runs() -> None:
    assert len(EXTENDED.names) == 12
    cards = {
        c: card(support=(i % 7, 6), exposure=(14 - i, 14)) for i, c in enumerate(EXTENDED.names)
    }
    runs = [doc("small", EXTENDED.names, cards), paper_doc("large")]
    t = aoep(runs, paper=False)
    # Several runs: each row names its model and trajectory (`place compare`).
    small, large = "small on t", "large on t"
    assert [r[:2] for r in t.rows] == [[small, c] for c in EXTENDED.names] + [
        [large, c] for c in PAPER.names
    ]
    by = {(r[0], r[1]): dict(zip(HEADER, r, strict=True)) for r in t.rows}
    assert by[(small, "Append/Decay")]["Support"] == "0/6"  # i = 7
    assert by[(small, "Append/Decay")]["Obligations"] == "8/15"
    assert by[(small, "PLACE")]["Exposure"] == "3/14"  # i = 11
    assert by[(small, "PLACE")]["Invariants"] == "7/18"
    assert by[(large, "CSS")]["Exposure"] == "1/14"


def test_a_document_without_aoep_gives_no_rows() -> None:
    old = doc("old", PAPER.names, None)
    assert aoep([old], paper=False).rows == []
    t = aoep([old, paper_doc("new")], paper=True)
    assert [r[0] for r in t.rows] == ["new on t"] * 4  # the paper publishes no scorecard


def test_paper_values_add_no_scorecard_rows() -> None:
    tables = {t.name: t for t in all_tables([paper_doc()], paper=True)}
    assert [r[0] for r in tables["aoep"].rows] == ["tiny"] * 4
    # Not the paper's trajectory: its rows say they are of another one.
    assert any(
        r[0].startswith("paper (its own trajectory, not this one): ")
        for r in tables["table1a"].rows
    )


@pytest.mark.parametrize("paper", [False, True])
def test_all_tables_appends_the_scorecard_and_keeps_the_others(paper: bool) -> None:
    runs = [paper_doc()]
    tables = all_tables(runs, paper=paper)
    names = ["table1a", "table1b", "table2a", "table2b", "citation", "reads", "reads_apart", "aoep"]
    assert [t.name for t in tables] == names
    makers = (table1a, table1b, table2a, table2b, citation, reads, reads_apart, aoep)
    for t, f in zip(tables, makers, strict=True):
        assert t == f(runs, paper)


def test_an_invalid_run_puts_its_banner_on_the_scorecard_too() -> None:
    m = doc("tiny", PAPER.names, paper_doc().aoep, ok=False)
    tables = all_tables([m])
    assert all(t.banner and t.banner.startswith("INVALID: factorization") for t in tables)
    assert to_csv(tables[-1]).startswith("# INVALID")


def test_markdown_latex_and_csv_render() -> None:
    t: Table = aoep([paper_doc()], paper=False)
    md = to_markdown(t).splitlines()
    assert md[0] == f"**{TITLE}**"
    assert md[2] == "| " + " | ".join(HEADER) + " |"
    assert md[3] == "|" + "|".join(["---"] * 11) + "|"
    assert "| tiny | CSS | 14/15 | 1/1 | 4/4 | 6/6 | 3/4 | 5/18 | 1/1 | 3/3 | 1/14 |" in md
    tex = to_latex(t)
    assert r"\begin{tabular}{llrrrrrrrrr}" in tex
    assert rf"\caption{{{TITLE}}}" in tex
    assert r"tiny & PLACE & 14/15 & 1/1 & 4/4 & 6/6 & 3/4 & 18/18 & 1/1 & 3/3 & 14/14 \\" in tex
    rows = list(csv.reader(io.StringIO(to_csv(t))))
    assert rows[0] == HEADER
    assert rows[1:] == t.rows


def test_plot_points_are_the_pass_rates(tmp_path: Path) -> None:
    m = paper_doc()
    m.aoep["PLACE"] = card(conflict=(1, 4), exposure=(5, 14))
    path = tmp_path / "aoep.png"
    points = aoep_scorecard(m, path)
    assert points == {
        "Native": (0.0, 1.0),
        "CSS": (14 / 15, 5 / 18),
        "QASC": (0.0, 1.0),
        "PLACE": (12 / 15, 9 / 18),
    }
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_plot_leaves_out_a_condition_without_items(tmp_path: Path) -> None:
    m = paper_doc()
    m.aoep["QASC"]["invariants"] = {"passed": 0, "total": 0, "kinds": {}}
    assert list(aoep_scorecard(m, tmp_path / "aoep.png")) == ["Native", "CSS", "PLACE"]
    old = doc("old", PAPER.names, None)
    assert aoep_scorecard(old, tmp_path / "old.png") == {}
    assert (tmp_path / "old.png").read_bytes()[:4] == b"\x89PNG"


def test_write_plots_adds_the_scorecard(tmp_path: Path) -> None:
    paths = write_plots(RunRecords(), paper_doc(), tmp_path / "plots")
    assert [p.name for p in paths] == [
        "state_correctness.png",
        "effects.png",
        "families.png",
        "aoep.png",
    ]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    first = (tmp_path / "plots" / "aoep.png").read_bytes()
    aoep_scorecard(paper_doc(), tmp_path / "again.png")
    assert (tmp_path / "again.png").read_bytes() == first  # deterministic


# -- place-metrics/4: §11's kinds and the tallies apart ------------------------------------

GOVERNANCE = {
    "obligations": ("act", "epoch", "block", "surface", "rollback"),
    "invariants": ("authority", "traceability", "non-exposure", "idempotence"),
}


def card4(base: dict[str, Any], **governance: tuple[int, int]) -> dict[str, Any]:
    """A /4 scorecard: `base`'s §10 kinds, §11's kinds (no item unless given) and the
    tallies apart (their values do not reach the scorecard table)."""
    out: dict[str, Any] = {}
    for family, names in GOVERNANCE.items():
        per = dict(base[family]["kinds"])
        per.update(kinds({k: governance.get(k.replace("-", "_"), (0, 0)) for k in names}))
        out[family] = {
            "passed": sum(v["passed"] for v in per.values()),
            "total": sum(v["total"] for v in per.values()),
            "kinds": per,
        }
    tally = {"passed": 0, "total": 0, "failed": []}
    out["model_independent"] = {"obligations": tally, "invariants": tally}
    out["answer_dependent"] = {"obligations": tally, "invariants": tally}
    return out


def test_an_ungoverned_place_metrics_4_document_renders_today_s_scorecard(tmp_path: Path) -> None:
    old = paper_doc()
    assert old.aoep is not None
    new = doc("tiny", PAPER.names, {c: card4(v) for c, v in old.aoep.items()})
    new = new.model_copy(update={"schema_": "place-metrics/4"})
    assert aoep([new], paper=False) == aoep([old], paper=False)
    assert aoep_scorecard(new, tmp_path / "new.png") == aoep_scorecard(old, tmp_path / "old.png")
    assert (tmp_path / "new.png").read_bytes() == (tmp_path / "old.png").read_bytes()


def test_section_11_kinds_get_their_columns_when_a_run_has_items() -> None:
    old = paper_doc()
    assert old.aoep is not None
    governed = {
        c: card4(v, act=(1, 1), block=(0, 4), non_exposure=(7, 8)) for c, v in old.aoep.items()
    }
    t = aoep([doc("tiny", PAPER.names, governed)], paper=False)
    assert t.header == [
        *HEADER[:7], "Act", "Block",
        *HEADER[7:], "Non-exposure",
    ]  # fmt: skip
    assert t.title.endswith("§10, §11)")
    place = dict(zip(t.header, t.rows[3], strict=True))
    assert place["Obligations"] == "15/20" and place["Act"] == "1/1" and place["Block"] == "0/4"
    assert place["Invariants"] == "25/26" and place["Non-exposure"] == "7/8"


def _recorded(name: str) -> MetricsDocument:
    from place.report.metrics import load_metrics

    root = Path(__file__).resolve().parents[2] / "experiments" / name / "smollm2-135m"
    return load_metrics(root / "metrics.json")


def test_the_citation_table_notes_the_floor_s_forged_exposure() -> None:
    # The no-memory floor's store holds the forgery alone (docs/method.md §12.5): its
    # ForgedExposure is measured, and the note says what it measures.
    pilot = citation([_recorded("aoep-pilot")], False)
    assert pilot.note is not None
    assert "None/Native" in pilot.note and "measures the read policy, not a memory" in pilot.note
    floor_rows = [r for r in pilot.rows if r[1].startswith("None/")]
    assert floor_rows, "the pilot's design has the floor"
    # The paper's design has no `none` producer: no note.
    assert citation([_recorded("primary")], False).note is None
