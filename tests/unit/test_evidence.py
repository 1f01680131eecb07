"""The evidence log V (docs/method.md §12): one entry per delivered turn, append-only, and a
forget's values redacted from its texts and events. The store is a FAKE (rows in a list);
the real-stack runs are tests/integration/test_governance_run.py and the recorded replays."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from fakes.stores import FakeSideTables

from place.governance.evidence import EVIDENCE, REDACTED, EvidenceLog, redact_text
from place.lexicon import Lexicon
from place.reference.validate import load_trajectory
from place.runner.residue import side_row_holds
from place.trajectory.model import Event, Turn

PILOT = load_trajectory(Path(__file__).parents[2] / "trajectories" / "aoep-pilot.yaml")
LEXICON = Lexicon(PILOT.schema, PILOT.principal)
DAY = dt.date(2026, 6, 22)
ASSERT = Event("c4-01#1", "assert", "nora", "therapist", "global", "Dr Lind")
FORGET = Event("c4-03#1", "forget", "nora", "therapist", "global")


def turn(turn_id: str, role: str, text: str, *events: Event, **kw: Any) -> Turn:
    return Turn(turn_id, role, text, events=tuple(events), **kw)


def test_one_entry_per_delivered_turn_and_a_redelivery_adds_nothing() -> None:
    store = FakeSideTables()
    log = EvidenceLog(store)
    said = turn("c4-01", "user", "I've started seeing a new therapist, Dr Lind.", ASSERT)
    assert log.record(said, "nora", DAY) == "evidence-1"
    assert log.record(turn("c4-02", "assistant", "Noted."), None, DAY) == "evidence-2"
    assert log.record(said, "nora", DAY) is None  # logged already (a resumed step)
    again = turn("c4-09", "user", said.text, ASSERT, redelivers="c4-01")
    assert log.record(again, "nora", DAY) is None
    first, reply = store.side_rows(EVIDENCE)
    assert first.metadata["trust"] == "trusted" and reply.metadata["trust"] == "none"
    assert first.metadata["events"] == [
        {"id": "c4-01#1", "op": "assert", "entity": "nora", "predicate": "therapist"}
        | {"scope": "global", "value": "Dr Lind"}
    ]


def test_a_forget_redacts_the_value_from_texts_and_events_and_leaves_no_residue() -> None:
    store = FakeSideTables()
    log = EvidenceLog(store)
    log.record(
        turn("c4-01", "user", "My new therapist is Dr. Lind, on Tuesdays.", ASSERT), "nora", DAY
    )
    log.record(turn("c4-02", "assistant", "Noted: Dr Lind."), None, DAY)
    log.record(turn("c4-07", "user", "Theo's therapist is Dr Lind too."), "nora", DAY)
    holds = [side_row_holds(r.metadata, FORGET, ["Dr Lind"], LEXICON, "nora") for r in store.rows]
    # Before: the residue check sees both mentions about Nora (the third is about Theo).
    assert holds == [True, True, False]

    changed = log.redact(FORGET, ["Dr Lind"], LEXICON, "nora")
    assert changed == ["evidence-1", "evidence-2"]  # Theo's therapist is not the slot's
    first, reply, theo = (r.metadata for r in store.rows)
    assert first["text"] == f"My new therapist is {REDACTED}, on Tuesdays."
    assert first["events"][0]["value"] == REDACTED
    assert reply["text"] == f"Noted: {REDACTED}."
    assert theo["text"] == "Theo's therapist is Dr Lind too."
    holds = [side_row_holds(r.metadata, FORGET, ["Dr Lind"], LEXICON, "nora") for r in store.rows]
    assert holds == [False, False, False]


def test_redaction_keeps_other_values_and_other_predicates() -> None:
    text = "My therapist was Dr Berg, now Dr Lind; the door code is 2718."
    assert redact_text(text, FORGET, ["Dr Lind"], LEXICON, "nora") == (
        f"My therapist was Dr Berg, now {REDACTED}; the door code is 2718."
    )


def test_a_restarted_log_knows_its_entries() -> None:
    store = FakeSideTables()
    log = EvidenceLog(store)
    log.record(turn("c4-01", "user", "Dr Lind is my therapist.", ASSERT), "nora", DAY)
    restored = EvidenceLog(store)
    restored.adopt(store.side_rows(EVIDENCE))
    assert restored.ids == {"c4-01": "evidence-1"}
    assert restored.record(turn("c4-01", "user", "Dr Lind is my therapist."), "nora", DAY) is None
