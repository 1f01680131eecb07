"""The `place` CLI on the smoke trajectory (values computed by hand from the file) and on every
malformed fixture (exit 2, location and rule in the message, never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from place.cli import main

ROOT = Path(__file__).parents[2]
SMOKE = str(ROOT / "trajectories" / "smoke.yaml")
BAD = sorted((ROOT / "tests" / "data" / "bad").iterdir())


def test_validate_smoke_summary(capsys) -> None:
    assert main(["validate", SMOKE]) == 0
    out = capsys.readouterr().out
    # 12 event-carrying turns and 8 query turns in the file; 6 probes, 4 with a conflict.
    assert "2 conversations, 36 turns, 12 post-update and 8 pre-query checkpoints" in out
    assert "8 queries (supersession 1, correction 1, deletion 1, scope 1, temporal 3, " in out
    assert "8 pairs, 6 probes (4 with conflicts)" in out


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_validate_refuses_every_malformed_file(path: Path, capsys) -> None:
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert "Traceback" not in err


def test_reference_json_matches_hand_computed_values(capsys) -> None:
    assert main(["reference", SMOKE, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    first = doc["checkpoints"][0]
    assert first == {
        "turn": "c1-001",
        "kind": "post-update",
        "date": "2026-05-04",
        "state": [["sam", "flight_time", "07:15", "trip-rome"]],
    }
    by_turn = {(c["turn"], c["kind"]): c["state"] for c in doc["checkpoints"]}
    # c1-010 asserts 1200 EUR now and 1500 EUR from June 1: a scheduled fact is already state.
    budgets = [f for f in by_turn[("c1-010", "post-update")] if f[1] == "trip_budget"]
    assert budgets == [
        ["sam", "trip_budget", "1200 EUR", "trip-rome"],
        ["sam", "trip_budget", "1500 EUR", "trip-rome"],
    ]
    # c1-012 corrects the flight: 07:15 leaves the state, 09:40 enters.
    flights = [f for f in by_turn[("c1-012", "post-update")] if f[1] == "flight_time"]
    assert flights == [["sam", "flight_time", "09:40", "trip-rome"]]
    queries = {q["id"]: q for q in doc["queries"]}
    assert queries["s-correction"]["authorized"] == ["09:40"]
    assert queries["s-temporal-budget"]["authorized"] == ["1200 EUR"]  # as of the conversation
    assert queries["s-temporal-june"]["authorized"] == ["1500 EUR"]  # as_of 2026-06-02
    assert queries["s-deletion"]["authorized"] == []  # abstain
    assert all(q["authorized_b"] == q["authorized"] for q in doc["queries"])
    kinds = [c["kind"] for c in doc["checkpoints"]]
    assert kinds.count("post-update") == 12 and kinds.count("pre-query") == 8


def test_parse_reads_facts_and_outcome(capsys) -> None:
    assert (
        main(
            [
                "parse",
                SMOKE,
                "--text",
                "Oops, the flight is at 9:40, not 7:15.",
                "--predicate",
                "flight_time",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "fact: (sam, flight_time, 09:40, trip-rome)" in out
    assert "07:15" not in out.split("outcome:")[0]
    assert "outcome: ['09:40']" in out


def test_parse_unknown_predicate_exits_2(capsys) -> None:
    assert main(["parse", SMOKE, "--text", "x", "--predicate", "nope"]) == 2
    assert "allowed:" in capsys.readouterr().err
