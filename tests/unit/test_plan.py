"""The run plan: update steps, query units and probe units in trajectory order."""

from __future__ import annotations

from pathlib import Path

from builders import ask, trajectory, user

from place.reference.validate import load_trajectory
from place.runner.plan import build_plan
from place.trajectory.model import Probe, Turn

A = "alex"


def reply(turn_id: str) -> Turn:
    return Turn(turn_id, "assistant", "ok")


def tool(turn_id: str) -> Turn:
    return Turn(turn_id, "tool", "FWD: ...", source="sms")


def shape(traj) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (u.kind, tuple(t.id for t in u.turns) or tuple(p.id for p in u.probes))
        for u in build_plan(traj)
    ]


def test_exchanges_hold_at_most_one_event_turn_and_queries_are_not_written() -> None:
    e = dict(op="assert", entity=A, predicate="hotel", value="Lumen")
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user("u1", e),
                user("u2", dict(e, value="Avenida")),
                reply("a1"),
                tool("t1"),
                reply("a2"),
                ask("q1", "q", A, "hotel", ("Avenida",)),
                reply("a3"),
                user("u3", text="chit-chat"),
                user("u4", dict(e, value="Marriott")),
                reply("a4"),
            ],
        )
    )
    assert shape(traj) == [
        ("step", ("u1",)),
        ("step", ("u2", "a1")),
        ("step", ("t1", "a2")),
        ("query", ("q1",)),
        ("step", ("u3", "u4", "a4")),
    ]
    steps = [u.step for u in build_plan(traj) if u.kind == "step"]
    assert steps == [1, 2, 3, 4]


def test_probes_run_after_the_unit_holding_their_turn() -> None:
    e = dict(op="assert", entity=A, predicate="hotel", value="Lumen")
    probes = (
        Probe("p1", "u1", "scope", "?", A, "hotel", "global", ("Lumen",)),
        Probe("p2", "a1", "scope", "?", A, "hotel", "global", ("Lumen",)),
        Probe("p3", "q1", "scope", "?", A, "hotel", "global", ("Lumen",)),
    )
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user("u1", e),
                reply("a1"),
                ask("q1", "q", A, "hotel", ("Lumen",)),
                reply("a2"),
                user("u2", dict(e, value="Avenida")),
                reply("a3"),
            ],
        ),
        probes=probes,
    )
    assert shape(traj) == [
        ("step", ("u1", "a1")),
        ("probes", ("p1", "p2")),
        ("query", ("q1",)),
        ("probes", ("p3",)),
        ("step", ("u2", "a3")),
    ]


def test_a_waiting_probe_closes_the_step_before_the_next_user_turn() -> None:
    e = dict(op="assert", entity=A, predicate="hotel", value="Lumen")
    probe = Probe("p1", "u1", "scope", "?", A, "hotel", "global", ())
    traj = trajectory(
        ("c1", "2026-03-02", [user("u1", text="hello"), user("u2", e), reply("a1")]),
        probes=(probe,),
    )
    assert shape(traj) == [("step", ("u1",)), ("probes", ("p1",)), ("step", ("u2", "a1"))]


def test_every_event_turn_and_query_of_the_smoke_trajectory_is_planned_once() -> None:
    traj = load_trajectory(Path(__file__).parents[2] / "trajectories" / "smoke.yaml")
    units = build_plan(traj)
    event_turns = [t.id for u in units if u.kind == "step" for t in u.turns if t.events]
    assert event_turns == [t.id for _, t in traj.turns() if t.events]
    assert [u.turns[0].id for u in units if u.kind == "query"] == [
        t.id for _, t, _ in traj.queries()
    ]
    assert sorted(p.id for u in units for p in u.probes) == sorted(p.id for p in traj.probes)


def test_governance_turns_make_task_units_restart_flags_and_speaker_steps() -> None:
    """docs/method.md §11: task and run turns are reads (their own `task` unit), a restart
    turn's unit carries the flag, and a step is one speaker's."""
    from pathlib import Path

    from place.reference.validate import load_trajectory

    traj = load_trajectory(Path(__file__).parents[1] / "data" / "good" / "governance.yaml")
    units = build_plan(traj)
    task_turns = {t.id for u in units if u.kind == "task" for t in u.turns}
    assert task_turns == {t.id for _c, t in traj.turns() if t.task is not None or t.run is not None}
    restarted = [u for u in units if u.restart]
    assert [u.turns[0].id for u in restarted] == [t.id for _c, t in traj.turns() if t.restart]
    for u in units:
        if u.kind == "step":
            said = {traj.speaker_of(t) for t in u.turns if t.role != "assistant"}
            assert len(said) == 1, (u.index, [t.id for t in u.turns])
        if u.kind == "task":
            assert u.writes  # a ledger records the request before the gate decides


def test_a_compaction_point_runs_after_the_step_holding_its_turn() -> None:
    """docs/method.md §11: the summaries are written right after the update step that holds
    the compaction's turn (c4-01 and its reply c4-02), before the forget at c4-03."""
    traj = load_trajectory(Path(__file__).parents[2] / "trajectories" / "aoep-pilot.yaml")
    units = build_plan(traj)
    (point,) = [u for u in units if u.kind == "compaction"]
    assert point.writes and point.compaction == traj.compactions[0]
    before, after = units[point.index - 1], units[point.index + 1]
    assert [t.id for t in before.turns] == ["c4-01", "c4-02"]
    assert after.turns[0].id == "c4-03"
    # Without compactions, the plan has no such unit.
    smoke = load_trajectory(Path(__file__).parents[2] / "trajectories" / "smoke.yaml")
    assert "compaction" not in {u.kind for u in build_plan(smoke)}
