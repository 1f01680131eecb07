"""The answer-free run (`experiment=state`, docs/method.md §15) through the real runner, on
real Qdrant (local mode) and MiniLM, with the FAKE answer model of tests/fakes: it asks no
answer, and every figure it measures is the full run's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import inprocess
import pytest
from fakes.scripted_chat import ScriptedChat

from place.design import make_design
from place.mappings import flatten
from place.reference.validate import load_trajectory

ROOT = Path(__file__).parents[2]
SMOKE = load_trajectory(ROOT / "trajectories" / "smoke.yaml")
DESIGN = make_design("state-test", ["append", "css"], ["native", "posthoc", "qasc", "cited"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("state")
    full_chat, state_chat = ScriptedChat(), ScriptedChat()
    full = inprocess.run_inprocess(
        root / "full", SMOKE, DESIGN, chat=full_chat, plots=False,
        overrides=["experiment.closed_loop=false"],
    )  # fmt: skip
    state = inprocess.run_inprocess(
        root / "state", SMOKE, DESIGN, chat=state_chat, plots=False,
        overrides=["experiment=state"],
    )  # fmt: skip
    return {
        "full": full, "state": state, "root": root,
        "full_calls": len(full_chat.calls), "state_calls": len(state_chat.calls),
    }  # fmt: skip


def test_no_answer_is_asked(runs: dict[str, Any]) -> None:
    assert runs["full_calls"] > 0  # the same chat answers the full run
    assert runs["state_calls"] == 0
    queries = (runs["root"] / "state" / "records" / "queries.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in queries]
    assert rows and all(r["raw_answer"] is None and r["outcome"] is None for r in rows)
    # World b is made (its checkpoints are scorecard items), not answered.
    assert {r["world"] for r in rows} == {"a", "b"}


def test_what_needs_an_answer_is_not_measured(runs: dict[str, Any]) -> None:
    state = runs["state"]
    unmeasured = set(state["not_measured"])
    assert {"answer_correctness", "joint_success", "leakage_rate"} <= unmeasured
    assert "leakage_n" not in unmeasured  # the pairs are counted; their answers are not
    assert {"conflict_harm", "forged.harm", "LeakageDrop", "aoep.answer_dependent"} <= unmeasured
    assert "state_correctness" not in unmeasured and "forged.exposure" not in unmeasured
    for condition, values in state["conditions"].items():
        for key in ("answer_correctness", "joint_success", "leakage_rate"):
            assert values[key] is None, (condition, key)  # not measured: None, never 0
    for name in ("LeakageDrop",):
        assert state["effects"][name]["estimate"] is None
    for card in state["aoep"].values():
        assert card["answer_dependent"] is None
        assert card["obligations"]["kinds"]["conflict"] is None
    assert "not_measured" not in runs["full"]  # a run that asked answers is as it was
    tables = (runs["root"] / "state" / "tables" / "tables.md").read_text()
    assert "not measured" in tables and "answer-free run" in tables


def test_every_measured_figure_is_the_full_runs(runs: dict[str, Any]) -> None:
    full, state = runs["full"], runs["state"]
    unmeasured = set(state["not_measured"])
    assert list(state["conditions"]) == list(full["conditions"])
    compared = 0
    for condition in state["conditions"]:
        mine = flatten(state["conditions"][condition])
        theirs = flatten(full["conditions"][condition])
        for key, value in mine.items():
            if key not in unmeasured:
                assert value == theirs[key], (condition, key)
                compared += 1
        # The scorecard: an answer-free run counts each item by its answer-free clauses,
        # which is the full run's model-independent tally.
        card, full_card = state["aoep"][condition], full["aoep"][condition]
        assert card["model_independent"] == full_card["model_independent"]
        for family in ("obligations", "invariants"):
            tally = full_card["model_independent"][family]
            assert (card[family]["passed"], card[family]["total"]) == (
                tally["passed"],
                tally["total"],
            )
    assert compared >= 20 * len(state["conditions"])
    for name, effect in state["effects"].items():
        if name not in unmeasured:
            assert effect == full["effects"][name], name


def test_the_family_plot_shows_support_not_zeros(runs: dict[str, Any]) -> None:
    from place.archive import load_run_records
    from place.report.plots import family_scores, query_support

    records = load_run_records(runs["root"] / "state")
    conditions = list(runs["state"]["conditions"])
    scores = family_scores(records, conditions, answers=False)
    values = [v for c in conditions for f in scores[c].values() for v in f]
    assert values and set(values) <= {0.0, 1.0} and 1.0 in values
    css = [q for q in records.queries if q.condition == "PLACE" and q.world == "a"]
    assert all(query_support(q) == 1.0 for q in css)  # PLACE exposes every fact of Q*

