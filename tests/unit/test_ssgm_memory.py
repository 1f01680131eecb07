"""SSGM's memory M and its reconciliation (docs/method.md §13), without a store: observe
turns in order, replay the log, redact it on forget. On aoep-pilot, `door_code` is core:
c3-01 asserts 1357, c3-03 asserts 2718 (a supersede by assert), the tool turn c3-05 claims
9999."""

from __future__ import annotations

from pathlib import Path

import pytest

from place.governance.ssgm_gate import core_predicates
from place.governance.ssgm_memory import (
    UNTRUSTED,
    Observed,
    SSGMMemory,
    redact_log,
)
from place.producers.registry import speakers
from place.reference.validate import load_trajectory
from place.trajectory.model import Event, Trajectory

ROOT = Path(__file__).resolve().parents[2]
PILOT = ROOT / "trajectories" / "aoep-pilot.yaml"
PRIMARY = ROOT / "trajectories" / "primary.yaml"


def observed(traj: Trajectory) -> list[Observed]:
    """Every delivered turn, as the producer observes it (redeliveries left out)."""
    out = []
    for conv in traj.conversations:
        said = speakers(conv.turns, traj.principal)
        for turn, speaker in zip(conv.turns, said, strict=True):
            if turn.redelivers is None:
                out.append(Observed.delivered(turn, speaker, conv))
    return out


def memory(traj: Trajectory, *, gate: bool = True, core: str | None = None) -> SSGMMemory:
    return SSGMMemory(traj.schema, traj.principal, core_predicates(traj.schema, core), gate)


@pytest.fixture(scope="module")
def pilot() -> Trajectory:
    return load_trajectory(PILOT)


def door(m: SSGMMemory, day) -> set[str]:
    return {f.value for f in m.state_at(day) if f.predicate == "door_code"}


def upto(turns: list[Observed], turn_id: str) -> list[Observed]:
    return turns[: next(i for i, t in enumerate(turns) if t.id == turn_id) + 1]


def test_the_gate_keeps_core_against_a_supersede_and_a_tool_claim(pilot) -> None:
    m = memory(pilot)
    rejected = []
    for turn in upto(observed(pilot), "c3-05"):
        rejected += [(p.event.id, p.event.value, p.source) for p in m.observe(turn).rejected]
    day = observed(pilot)[0].day.replace(year=2100)
    assert door(m, day) == {"1357"}
    assert rejected == [("c3-03#1", "2718", "user"), ("c3-05~tool#1.1", "9999", "tool")]


def test_without_the_gate_the_tool_claim_is_held_as_untrusted(pilot) -> None:
    m = memory(pilot, gate=False)
    for turn in upto(observed(pilot), "c3-05"):
        assert m.observe(turn).rejected == []
    held = [r for r in m.records() if r.predicate == "door_code" and r.status == "active"]
    assert [(r.value, m.origins[r.event_id].trust) for r in held] == [("9999", UNTRUSTED)]


@pytest.mark.parametrize("path", [PILOT, PRIMARY], ids=["aoep-pilot", "primary"])
@pytest.mark.parametrize("gate", [True, False], ids=["gate", "no-gate"])
def test_reconciliation_without_corruption_changes_nothing(path: Path, gate: bool) -> None:
    """R replays the log into an empty M': at every turn, M' holds exactly M's records,
    with the same origins (so the store is left as it is)."""
    traj = load_trajectory(path)
    m, log = memory(traj, gate=gate, core="all"), []
    for turn in observed(traj):
        seen = m.observe(turn)
        log.append(turn)
        for t in seen.transitions:
            if t.event.op == "forget" and t.removed:
                values = sorted({r.value for r in t.removed})
                log = redact_log(log, t.event, values, m.lexicon(traj.principal))
        fresh, _ = m.replay(log)
        assert fresh.records() == m.records(), turn.id
        assert fresh.origins == m.origins, turn.id


def test_a_corrupted_value_is_healed_by_reconciliation(pilot) -> None:
    m = memory(pilot)
    log = upto(observed(pilot), "c3-05")
    for turn in log:
        m.observe(turn)
    record = next(r for r in m.state.records if r.predicate == "door_code")
    m.state.records[m.state.records.index(record)] = record.__class__(
        **{**record.__dict__, "value": "4444"}
    )
    day = log[-1].day
    assert door(m, day) == {"4444"}
    fresh, _ = m.replay(log)
    assert door(fresh, day) == {"1357"}


def test_events_that_no_longer_apply_are_skipped_and_counted(pilot) -> None:
    m = memory(pilot)
    turn = Observed(
        "x-1",
        "user",
        pilot.principal,
        "forget it",
        (Event("x-1#1", "retract", "nora", "door_code", "global", "2718"),),
        observed(pilot)[0].day,
    )
    seen = m.observe(turn)
    assert seen.transitions == [] and seen.rejected == []
    assert [p.event.id for p, _why in seen.skipped] == ["x-1#1"]


def test_redacting_the_log_leaves_out_the_forgotten_values(pilot) -> None:
    log = upto(observed(pilot), "c3-05")
    forget = Event("f#1", "forget", "nora", "door_code", "global")
    m = memory(pilot)
    out = redact_log(log, forget, ["1357", "9999"], m.lexicon(pilot.principal))
    by_id = {t.id: t for t in out}
    assert by_id["c3-01"].events == ()
    assert "9999" not in by_id["c3-05"].text and "[forgotten]" in by_id["c3-05"].text
    assert by_id["c3-03"].events == next(t for t in log if t.id == "c3-03").events  # 2718 kept
    fresh, _ = m.replay(out)
    # replayed, the redacted log holds neither forgotten value, only c3-03's 2718
    assert door(fresh, log[-1].day) == {"2718"}


def test_a_forget_deletes_every_value_proposed_for_the_slot_rejected_ones_too(pilot) -> None:
    """c3-03's 2718 and c3-05's 9999 were rejected (M holds only 1357), yet the user asked
    for the door code to be forgotten: all three leave the log."""
    m = memory(pilot)
    log = upto(observed(pilot), "c3-05")
    for turn in log:
        m.observe(turn)
    forget = Observed(
        "x-1",
        "user",
        pilot.principal,
        "Forget my door code.",
        (Event("x-1#1", "forget", "nora", "door_code", "global"),),
        log[-1].day,
    )
    seen = m.observe(forget)
    assert [(e.id, values) for e, values in seen.forgotten] == [("x-1#1", ("1357", "2718", "9999"))]
