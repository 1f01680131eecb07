"""§14's bounded producer through the real runner (docs/method.md §14): aoep-pilot with
append, css and bounded × native, qasc, in-process on the real stack (Mem0, Qdrant local
mode, MiniLM) with the FAKE answer model of tests/fakes/; and bounded × qasc again with
`retain: [evidence]`. The facts §14 says hold on every model are checked on the records,
and the `bounded` group of metrics.json is recomputed independently (tests/recompute.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import inprocess
import pytest
from recompute import recompute

from place.design import make_design
from place.reference.validate import load_trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PILOT = ROOT / "trajectories" / "aoep-pilot.yaml"
DESIGN = make_design("bounded", ["append", "css", "bounded"], ["native", "qasc"])
RETAINING = make_design("bounded-retain", ["bounded"], ["qasc"])
BUDGET = 2
"""Small enough that the pilot's superseded and retracted records are folded."""


def pilot_run(
    factory: pytest.TempPathFactory, name: str, design: Any, *extra: str
) -> tuple[Path, dict[str, Any]]:
    """aoep-pilot in-process under `design`, with the budget and `extra` overrides."""
    run_dir = factory.mktemp(name) / "run"
    overrides = [f"design.bounded.budget.state={BUDGET}", *extra]
    metrics = inprocess.run_inprocess(
        run_dir, load_trajectory(PILOT), design, plots=False, overrides=overrides
    )
    return run_dir, metrics


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    return pilot_run(tmp_path_factory, "bounded", DESIGN)


@pytest.fixture(scope="module")
def retaining(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    return pilot_run(
        tmp_path_factory, "bounded-retain", RETAINING, "design.bounded.retain=[evidence]"
    )


def records(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records" / f"{name}.jsonl").open()]


def shown(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a read exposed, store ids aside: each item's text and the facts it holds (sorted:
    two items of equal score are ordered by their store's ids)."""
    return sorted((e["text"], json.dumps(e.get("facts"), sort_keys=True)) for e in items)


def test_the_budget_folds_and_bounded_reads_back_what_css_does(run) -> None:
    run_dir, m = run
    figures = m["bounded"]["Bounded/QASC"]
    assert figures == m["bounded"]["Bounded/Native"]
    assert figures["budget_state"] == BUDGET and figures["folds"] > 0, figures
    assert figures["versions"] > 0 and figures["rebuild_checks"] > 0, figures

    def key(c: dict[str, Any]) -> tuple[Any, ...]:
        return (c["turn"], c["checkpoint"], c["world"], c.get("query"))

    css = {key(c): c for c in records(run_dir, "checkpoints") if c["condition"] == "CSS"}
    ours = {
        key(c): c for c in records(run_dir, "checkpoints") if c["condition"] == "Bounded/Native"
    }
    assert css.keys() == ours.keys()
    compared = 0
    for k, c in css.items():
        assert sorted(map(str, c["observed"])) == sorted(map(str, ours[k]["observed"])), k
        compared += 1
    assert compared > 0


def test_bounded_under_qasc_exposes_exactly_what_place_does(run) -> None:
    run_dir, _m = run
    queries = records(run_dir, "queries")
    place = {(q["query"], q["world"], q["mode"]): q for q in queries if q["condition"] == "PLACE"}
    ours = {
        (q["query"], q["world"], q["mode"]): q for q in queries if q["condition"] == "Bounded/QASC"
    }
    assert place.keys() == ours.keys() and place
    for k, q in place.items():
        assert shown(q["exposed"]) == shown(ours[k]["exposed"]), k
    probes = records(run_dir, "probes")
    place = {p["probe"]: p for p in probes if p["condition"] == "PLACE"}
    ours = {p["probe"]: p for p in probes if p["condition"] == "Bounded/QASC"}
    assert place.keys() == ours.keys() and place
    for k, p in place.items():
        for read in ("clean", "injected"):
            if p[read] is None:
                assert ours[k][read] is None
                continue
            assert shown(p[read]["exposed"]) == shown(ours[k][read]["exposed"]), (k, read)
    tasks = records(run_dir, "tasks")
    decide = {
        c: [(t["task"], t["delivery"], t["decision"]) for t in tasks if t["condition"] == c]
        for c in ("PLACE", "Bounded/QASC")
    }
    assert decide["PLACE"] == decide["Bounded/QASC"] and decide["PLACE"]


def test_every_deletion_row_is_done_and_accurate(run) -> None:
    _run_dir, m = run
    deletion = m["bounded"]["Bounded/QASC"]["deletion"]
    assert deletion == {"done": 2, "pending": 0, "retained": 0, "total": 2, "accurate": 2}


def test_with_retained_evidence_forgets_are_retained_and_fail_their_obligation(retaining) -> None:
    run_dir, m = retaining
    deletion = m["bounded"]["Bounded/QASC"]["deletion"]
    assert deletion == {"done": 0, "pending": 0, "retained": 2, "total": 2, "accurate": 2}
    forgets = [f for f in records(run_dir, "forgets") if f["check"] == "after"]
    assert forgets and all(f["residue"] for f in forgets)
    assert {w for f in forgets for entry in f["where"] for w in entry.split("+")} == {"evidence"}
    card = m["aoep"]["Bounded/QASC"]["obligations"]["kinds"]["forget"]
    assert card["passed"] == 0 and card["total"] == 2, card


def test_append_s_plain_summary_keeps_dr_lind_css_s_and_bounded_s_do_not(run) -> None:
    run_dir, _m = run
    written = {c["producer"]: c for c in records(run_dir, "compactions")}
    (op,) = written["append"]["operations"]
    assert "Dr Lind" in op["memory"]
    for producer in ("css", "bounded"):
        (derived,) = written[producer]["operations"]
        assert len(derived["added"]) == 1, producer
    therapist = [f for f in records(run_dir, "forgets") if f["slot"][1] == "therapist"]
    for f in therapist:
        where = {w for entry in f["where"] for w in entry.split("+")}
        if f["producer"] == "append":
            assert "summary" in where, f
        else:
            assert f["residue"] == [], f


def test_the_bounded_group_recomputes_from_the_records(run, retaining) -> None:
    for run_dir, m in (run, retaining):
        assert recompute(run_dir)["bounded"] == m["bounded"]
