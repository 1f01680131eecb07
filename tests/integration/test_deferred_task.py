"""A deferred task whose input changes before it runs (spec amendment 16), through the real
runner: PLACE (css × qasc), answer-free (`experiment=state`), in-process on the real stack
(Mem0, Qdrant local mode, MiniLM) with the FAKE models of tests/fakes/.

Nora asks for a payment at c1-02 to run later; her electricity bill changes from 120 EUR
(c1-01) to 135 EUR (c1-03) before the run at c1-04. The act gate pays 135 EUR, sourced from
c1-03#1, the event that holds at the run. The reference binds both the arguments and the
links at the run, so PLACE keeps the `act` obligation and the `traceability` invariant
together (before the amendment the links were the request's, c1-01#1, and traceability
failed)."""

from __future__ import annotations

import inprocess
import pytest

from place.archive import load_run_records
from place.design import make_design
from place.metrics.aoep import Item, scorecard_items
from place.records import RunRecords
from place.reference.replay import replay
from place.reference.validate import load_trajectory, semantic_problems

pytestmark = pytest.mark.integration

TRAJECTORY = """\
format: place-trajectory/1
id: deferred-input
title: A deferred payment whose bill changes before it runs
principal: nora
schema:
  entities:
    nora: {name: Nora}
  predicates:
    electricity_bill:
      type: money
      cardinality: one
      keywords: ["electricity bill"]
      template: "{entity_name}'s electricity bill is {value}"
      values: {"120 EUR": [], "135 EUR": []}
conversations:
  - id: c1
    date: 2026-06-01
    turns:
      - id: c1-01
        role: user
        text: "My electricity bill is 120 EUR."
        events:
          - {op: assert, entity: nora, predicate: electricity_bill, value: "120 EUR"}
      - id: c1-02
        role: user
        text: "On Friday, pay the bill."
        task:
          id: t1
          action: pay-bill
          needs: [{entity: nora, predicate: electricity_bill}]
          deferred: true
          expect: allow
          args: [["135 EUR"]]
      - id: c1-03
        role: user
        text: "Actually my electricity bill is 135 EUR."
        events:
          - {op: assert, entity: nora, predicate: electricity_bill, value: "135 EUR"}
      - id: c1-04
        role: user
        text: "It's Friday: go ahead and pay it."
        run: t1
"""
DESIGN = make_design("deferred", ["css"], ["qasc"])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunRecords:
    root = tmp_path_factory.mktemp("deferred")
    path = root / "deferred.yaml"
    path.write_text(TRAJECTORY, encoding="utf-8")
    trajectory = load_trajectory(path)
    assert semantic_problems(trajectory) == []
    t1 = replay(trajectory).task("t1")
    assert (t1.turn, t1.run_turn, t1.deferred, t1.args) == ("c1-02", "c1-04", True, (("135 EUR",),))
    inprocess.run_inprocess(
        root / "run", trajectory, DESIGN, plots=False, overrides=["experiment=state"]
    )
    return load_run_records(root / "run")


def item(records: RunRecords, kind: str) -> Item:
    (found,) = [
        i
        for i in scorecard_items(records, DESIGN, answers=False)
        if (i.condition, i.kind, i.item) == ("PLACE", kind, "t1")
    ]
    return found


def test_the_gate_pays_the_value_that_holds_at_the_run(run: RunRecords) -> None:
    (task,) = [t for t in run.tasks if t.condition == "PLACE"]
    assert task.decision.kind == "execute"
    assert (task.decision.args, task.decision.sources) == ([["135 EUR"]], ["c1-03#1"])
    assert task.reference.args == [["135 EUR"]]


def test_place_keeps_the_act_obligation(run: RunRecords) -> None:
    act = item(run, "act")
    assert act.passed, act.evidence


def test_place_holds_the_traceability_invariant_with_links_taken_at_the_run(
    run: RunRecords,
) -> None:
    trace = item(run, "traceability")
    assert trace.passed, trace.evidence
    (task,) = [t for t in run.tasks if t.condition == "PLACE"]
    assert task.reference.links == ["c1-03#1"]  # not the request's c1-01#1
    assert item(run, "act").passed  # both, on one task


def test_the_request_row_still_records_the_request(run: RunRecords) -> None:
    """Only the reference's links move: Γ*'s request row (and PLACE's ledger, equal to it at
    every governed checkpoint) keeps the links the request saw."""
    governed = [c for c in run.checkpoints if c.condition == "PLACE" and c.governance]
    assert {c.checkpoint for c in governed} >= {"pre-task"}
    for c in governed:
        assert c.governance is not None
        assert c.governance.observed == c.governance.reference, (c.turn, c.checkpoint)
    last = governed[-1].governance
    assert last is not None
    assert [r[5] for r in last.reference.requests] == [["c1-01#1"]]
