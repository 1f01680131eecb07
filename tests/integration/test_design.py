"""Producers × read policies: the design object, the new policies on hand-built stores, the
append producer on a real store, and whole factorials in-process through the real runner,
records and report (real Qdrant local mode and MiniLM; FAKE scripted models)."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import inprocess
import pytest
from fakes.stores import FakeStore

from place.design import EXTENDED, PAPER, Design, make_design
from place.eligibility import Interpretation, admits
from place.errors import PlaceError
from place.governance.authorizer import NativeRead, QASCRead
from place.lexicon import Lexicon
from place.memory.item import StoredItem
from place.policies.decay import DecayParams, DecayRead, weight
from place.policies.posthoc import PosthocRead
from place.readback import Readback
from place.reference.validate import load_trajectory

ROOT = Path(__file__).parents[2]
SMOKE = load_trajectory(ROOT / "trajectories" / "smoke.yaml")
READBACK = Readback(Lexicon(SMOKE.schema, SMOKE.principal))
DAY = dt.date(2026, 5, 10)
TAU = Interpretation("sam", "desk_number", "global", DAY)


# --- the design object --------------------------------------------------------------------


def test_paper_design_keeps_the_paper_names_and_order() -> None:
    assert PAPER.names == ("Native", "CSS", "QASC", "PLACE")
    assert PAPER.rows == {"native": ("Native", "QASC"), "css": ("CSS", "PLACE")}
    assert PAPER.is_paper and not EXTENDED.is_paper


def test_extended_design_has_twelve_named_conditions() -> None:
    names = EXTENDED.names
    assert len(names) == 12
    assert {"Native", "CSS", "QASC", "PLACE"} <= set(names)
    assert {"Append/Native", "Append/QASC", "CSS/Posthoc", "Native/Decay"} <= set(names)
    assert EXTENDED.row("append") == (
        "Append/Native",
        "Append/Posthoc",
        "Append/Decay",
        "Append/QASC",
    )
    assert Design.from_json(EXTENDED.to_json()) == EXTENDED
    assert Design.from_json(None) == PAPER  # runs recorded before designs existed


def test_unknown_or_repeated_names_are_refused() -> None:
    with pytest.raises(PlaceError, match=r"unknown producer 'mem0x'.*registered: "):
        make_design("x", ["mem0x"], ["native"])
    with pytest.raises(PlaceError, match="names one twice"):
        make_design("x", ["css", "css"], ["native"])
    assert make_design("mine", ["append", "css"], ["qasc"]).names == ("Append/QASC", "PLACE")


# --- read policies on hand-built stores ---------------------------------------------------


def item(i: str, text: str, score: float, **meta: str) -> StoredItem:
    return StoredItem(i, text, meta, score)


def test_posthoc_loses_eligible_support_that_qasc_keeps() -> None:
    store = FakeStore(
        [
            item("a", "Rita sits at desk 22", 0.9),  # ineligible: Rita's desk
            item("b", "My sister's desk is 14", 0.8),  # ineligible: Rita's desk
            item("c", "I sit at desk 14", 0.5),  # eligible: Sam's desk
        ]
    )
    native = NativeRead(2).read(store, "desk?", TAU, DAY)
    posthoc = PosthocRead(2, READBACK).read(store, "desk?", TAU, DAY)
    qasc = QASCRead(2, READBACK).read(store, "desk?", TAU, DAY)
    assert [i.id for i in native.items] == ["a", "b"]
    assert posthoc.items == () and posthoc.admitted == 0  # the eligible item ranked below k
    assert [i.id for i in qasc.items] == ["c"] and qasc.admitted == 1


def test_posthoc_never_exposes_an_ineligible_item() -> None:
    store = FakeStore(
        [
            item("a", "I sit at desk 14", 0.9),
            item("b", "Rita sits at desk 22", 0.8),
            item("c", "I no longer sit at desk 22, now desk 14", 0.7),
        ]
    )
    out = PosthocRead(3, READBACK).read(store, "desk?", TAU, DAY)
    assert [i.id for i in out.items] == ["a", "c"]
    assert all(admits(READBACK, i, TAU, DAY) for i in out.items)


def test_decay_weight_is_the_ssgm_freshness_curve() -> None:
    assert weight(0, 30, 1.5) == 1.0
    assert weight(30, 30, 1.5) == pytest.approx(math.exp(-1))
    assert weight(-5, 30, 1.5) == 1.0  # written after as_of: fresh
    assert weight(60, 30, 1.5) == pytest.approx(math.exp(-(2**1.5)))


def test_decay_drops_old_records_and_ranks_by_weighted_score() -> None:
    store = FakeStore(
        [
            item("old", "I sit at desk 14", 0.9, written_on="2026-01-01"),  # 129 days: w < 0.1
            item("recent", "I sit at desk 22", 0.6, written_on="2026-05-01"),  # w = 0.848
            item("undated", "desk 14 it is", 0.55),  # no written_on: w = 1
        ]
    )
    out = DecayRead(5, DecayParams(eta=30, kappa=1.5, theta=0.1)).read(store, "desk?", TAU, DAY)
    assert [i.id for i in out.items] == ["undated", "recent"]
    assert out.admitted == 2
    assert out.items[1].score == pytest.approx(0.6 * weight(9, 30, 1.5))
    # k truncates after weighting
    assert [i.id for i in DecayRead(1).read(store, "desk?", TAU, DAY).items] == ["undated"]


# --- the append producer on a real store --------------------------------------------------


@pytest.mark.integration
def test_append_stores_each_message_verbatim_one_record_per_message(tmp_path: Path) -> None:
    from place.producers import build_writer

    conv = SMOKE.conversations[0]
    turns = conv.turns[:3]
    with inprocess.backend(tmp_path) as backend:
        store = backend.open("append", SMOKE.principal)
        writer = build_writer("append", store, SMOKE.schema, READBACK)
        done = writer.write(turns, conv)
        points = store.scan().points
    expected = [
        t.text if t.role != "tool" else f"(forwarded from {t.source}) {t.text}" for t in turns
    ]
    assert [op["memory"] for op in done.operations] == expected
    assert sorted(p.text for p in points) == sorted(expected)
    assert all(p.metadata.get("written_on") == conv.date.isoformat() for p in points)


# --- whole factorials in-process ----------------------------------------------------------


def run_inprocess(run_dir: Path, design: Design, table: dict[str, str] | None = None) -> dict:
    """The smoke trajectory through the real runner, records and report, with FAKE models."""
    return inprocess.run_inprocess(run_dir, SMOKE, design, table=table)


@pytest.fixture(scope="module")
def extended_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("extended") / "run"
    return run_dir, run_inprocess(run_dir, EXTENDED)


@pytest.mark.integration
def test_extended_factorial_runs_in_process(extended_run: tuple[Path, dict]) -> None:
    run_dir, m = extended_run
    c = m["conditions"]
    assert list(c) == list(EXTENDED.names)
    assert m["design"]["name"] == "extended"
    assert m["factorization"]["ok"], m["factorization"]
    # The fake Mem0 LLM extracts nothing: the Native row is empty; append keeps raw turns.
    assert c["Native"]["state_correctness"] < c["Append/Native"]["state_correctness"] < 1.0
    assert c["CSS"]["state_correctness"] == c["PLACE"]["state_correctness"] == 1.0
    for producer in ("Native", "Append", "CSS"):
        posthoc = "CSS/Posthoc" if producer == "CSS" else f"{producer}/Posthoc"
        assert c[posthoc]["exposure_rate"] == 0.0  # post-hoc filtering never exposes
    assert c["Append/Native"]["exposure_rate"] > c["Append/QASC"]["exposure_rate"] == 0.0
    effects = m["effects"]
    for name in (
        "StateGain",
        "LeakageDrop",
        "JointGain",
        "InteractionGain",
        "StateGain_Append",
        "LeakageDrop_Append",
        "SupportCost_Posthoc",
        "ExposureGap_Posthoc",
        "SupportCost_Decay",
        "ExposureGap_Decay",
    ):
        assert name in effects, name
    assert effects["StateGain_Append"]["estimate"] == pytest.approx(
        1.0 - c["Append/Native"]["state_correctness"], abs=1e-6
    )
    steps = [json.loads(x) for x in (run_dir / "records" / "steps.jsonl").read_text().splitlines()]
    assert {s["producer"] for s in steps} == {"native", "append", "css"}
    tables = (run_dir / "tables" / "tables.md").read_text()
    assert "Append/QASC" in tables and "SupportCost_Decay" in tables
    assert (run_dir / "plots" / "families.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.integration
def test_extended_report_is_recomputed_from_records(extended_run: tuple[Path, dict]) -> None:
    from place.report.report import recompute

    run_dir, m = extended_run
    assert recompute(run_dir).to_json() == m


@pytest.mark.integration
def test_a_subset_design_runs_and_keeps_the_paper_layout_only_for_the_paper(
    tmp_path: Path,
) -> None:
    m = run_inprocess(tmp_path / "run", make_design("mine", ["append", "css"], ["native", "qasc"]))
    assert list(m["conditions"]) == ["Append/Native", "CSS", "Append/QASC", "PLACE"]
    assert set(m["effects"]) == {"LeakageDrop", "StateGain_Append", "LeakageDrop_Append"}
    paper = run_inprocess(tmp_path / "paper", PAPER)
    assert "design" not in paper and list(paper["conditions"]) == list(PAPER.names)
    assert list(paper["effects"]) == ["StateGain", "JointGain", "InteractionGain", "LeakageDrop"]


@pytest.mark.integration
def test_extended_figures_are_recomputed_independently(extended_run: tuple[Path, dict]) -> None:
    from recompute import recompute as independent

    run_dir, m = extended_run
    assert independent(run_dir) == m
