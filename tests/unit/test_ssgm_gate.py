"""SSGM's proposals and write gate (docs/method.md §13), hand-built on aoep-pilot, whose
`door_code` is core: c3-01 asserts 1357, c3-03 asserts 2718, the tool turn c3-05 claims
9999. Each rule is tested alone, so breaking it fails one test."""

from __future__ import annotations

from pathlib import Path

import pytest

from place.governance.ssgm_gate import Proposal, contradicts, core_predicates, proposals
from place.lexicon import Lexicon
from place.reference.validate import load_trajectory
from place.trajectory.model import Event, Fact, Trajectory, Turn

PILOT = Path(__file__).resolve().parents[2] / "trajectories" / "aoep-pilot.yaml"
HELD = [Fact("nora", "door_code", "1357", "global")]


@pytest.fixture(scope="module")
def traj() -> Trajectory:
    return load_trajectory(PILOT)


def turn(traj: Trajectory, turn_id: str) -> Turn:
    return next(t for _c, t in traj.turns() if t.id == turn_id)


def test_a_user_turn_proposes_its_events_and_a_tool_turn_what_beta_reads(traj) -> None:
    lexicon = Lexicon(traj.schema, traj.principal)
    user = proposals(turn(traj, "c3-03"), lexicon, traj.schema)
    assert [(p.event.op, p.event.value, p.trusted) for p in user] == [("assert", "2718", True)]
    tool = proposals(turn(traj, "c3-05"), lexicon, traj.schema)
    assert [(p.event.op, p.event.predicate, p.event.value, p.trusted) for p in tool] == [
        ("assert", "door_code", "9999", False)
    ]
    assert proposals(turn(traj, "c3-02"), lexicon, traj.schema) == []  # an assistant reply


def test_a_tool_turn_with_two_values_for_a_one_slot_proposes_nothing_there(traj) -> None:
    lexicon = Lexicon(traj.schema, traj.principal)
    both = Turn("x-1", "tool", "Door code is 9999, or maybe 4444.", source="sms")
    assert proposals(both, lexicon, traj.schema) == []


def test_the_gate_rejects_an_untrusted_value_that_contradicts_core(traj) -> None:
    core = core_predicates(traj.schema)
    assert core == {"door_code"}
    tool = Proposal(Event("t#1", "assert", "nora", "door_code", "global", "9999"), "tool")
    assert contradicts(tool, HELD, traj.schema, core)
    agreeing = Proposal(Event("t#2", "assert", "nora", "door_code", "global", "1357"), "tool")
    assert not contradicts(agreeing, HELD, traj.schema, core)


def test_a_user_supersede_by_assert_is_rejected_too_a_correction_is_not(traj) -> None:
    # the plasticity the gate costs: a trusted new value is refused unless stated as a
    # correction
    core = core_predicates(traj.schema)
    supersede = Proposal(Event("u#1", "assert", "nora", "door_code", "global", "2718"), "user")
    assert contradicts(supersede, HELD, traj.schema, core)
    correct = Proposal(Event("u#2", "correct", "nora", "door_code", "global", "2718"), "user")
    assert not contradicts(correct, HELD, traj.schema, core)
    untrusted = Proposal(Event("u#3", "correct", "nora", "door_code", "global", "2718"), "tool")
    assert contradicts(untrusted, HELD, traj.schema, core)


def test_retract_forget_and_other_predicates_are_never_gated(traj) -> None:
    core = core_predicates(traj.schema)
    for op in ("retract", "forget"):
        event = Event(f"r#{op}", op, "nora", "door_code", "global", None)
        assert not contradicts(Proposal(event, "user"), HELD, traj.schema, core)
    other = Proposal(Event("o#1", "assert", "nora", "locker_code", "global", "4512"), "tool")
    assert not contradicts(
        other, [Fact("nora", "locker_code", "1111", "global")], traj.schema, core
    )
    assert contradicts(
        other,
        [Fact("nora", "locker_code", "1111", "global")],
        traj.schema,
        core_predicates(traj.schema, "all"),
    )
