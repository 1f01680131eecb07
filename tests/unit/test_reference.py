"""Reference replay (docs/method.md §1) on small hand-computed trajectories."""

from __future__ import annotations

import pytest
from builders import ask, d, trajectory, user
from hypothesis import given, settings
from hypothesis import strategies as st

from place.eligibility import Interpretation
from place.reference.lifecycle import LifecycleError, LifecycleState
from place.reference.replay import replay
from place.reference.validate import semantic_problems
from place.trajectory.model import Fact, Probe, Turn

A = "alex"


def F(pred: str, value: str, scope: str = "global", entity: str = A) -> Fact:
    return Fact(entity, pred, value, scope)


def states(traj) -> list[tuple[str, str, frozenset[Fact]]]:
    return [(c.turn, c.kind, c.state) for c in replay(traj).checkpoints]


def test_assert_on_one_slot_supersedes_other_value() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user(
                    "t1",
                    dict(op="assert", entity=A, predicate="flight", value="07:15", scope="trip"),
                ),
                user(
                    "t2",
                    dict(op="assert", entity=A, predicate="flight", value="09:40", scope="trip"),
                ),
            ],
        )
    )
    assert states(traj) == [
        ("t1", "post-update", {F("flight", "07:15", "trip")}),
        ("t2", "post-update", {F("flight", "09:40", "trip")}),
    ]


def test_same_value_is_kept_once_and_its_window_widened() -> None:
    state = LifecycleState(trajectory().schema)
    t1 = user(
        "t1",
        dict(
            op="assert",
            entity=A,
            predicate="city",
            value="Porto",
            valid_from="2026-03-02",
            valid_until="2026-03-10",
        ),
    )
    t2 = user(
        "t2",
        dict(
            op="assert",
            entity=A,
            predicate="city",
            value="Porto",
            valid_from="2026-03-01",
            valid_until="2026-03-20",
        ),
    )
    state.apply(t1.events[0], d("2026-03-02"))
    transition = state.apply(t2.events[0], d("2026-03-02"))
    assert not transition.added
    assert len(state.records) == 1
    record = state.records[0]
    assert (record.valid_from, record.valid_until) == (d("2026-03-01"), d("2026-03-20"))


def test_scheduled_change_keeps_old_value_until_its_date() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user(
                    "t1",
                    dict(op="assert", entity=A, predicate="hotel", value="Avenida", scope="trip"),
                ),
                user(
                    "t2",
                    dict(
                        op="assert",
                        entity=A,
                        predicate="hotel",
                        value="Lumen",
                        scope="trip",
                        valid_from="2026-03-05",
                    ),
                ),
                ask("t3", "before", A, "hotel", ("Avenida",), scope="trip", as_of="2026-03-04"),
                ask("t4", "after", A, "hotel", ("Lumen",), scope="trip", as_of="2026-03-05"),
            ],
        ),
        (
            "c2",
            "2026-03-06",
            [
                ask("t5", "later", A, "hotel", ("Lumen",), scope="trip", as_of="2026-03-06"),
            ],
        ),
    )
    ref = replay(traj)
    # Both are in S* on 03-02 (a scheduled fact is already part of the state).
    assert ref.checkpoints[1].state == {F("hotel", "Avenida", "trip"), F("hotel", "Lumen", "trip")}
    assert ref.query("before").support.values == ("Avenida",)
    assert ref.query("after").support.values == ("Lumen",)
    # On 03-06 Avenida's window [open, 03-05) has ended: it left the state.
    assert ref.checkpoints[-1].state == {F("hotel", "Lumen", "trip")}
    assert semantic_problems(traj) == []


def test_correction_replaces_whatever_the_dates() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user(
                    "t1",
                    dict(
                        op="assert",
                        entity=A,
                        predicate="hotel",
                        value="Avenida",
                        scope="trip",
                        valid_from="2026-03-10",
                    ),
                ),
                user(
                    "t2",
                    dict(op="correct", entity=A, predicate="hotel", value="Lumen", scope="trip"),
                ),
            ],
        )
    )
    ref = replay(traj)
    assert ref.checkpoints[-1].state == {F("hotel", "Lumen", "trip")}


def test_correct_marks_old_record_corrected_and_links_it() -> None:
    state = LifecycleState(trajectory().schema)
    t1 = user("t1", dict(op="assert", entity=A, predicate="hotel", value="Avenida"))
    t2 = user("t2", dict(op="correct", entity=A, predicate="hotel", value="Lumen"))
    state.apply(t1.events[0], d("2026-03-02"))
    transition = state.apply(t2.events[0], d("2026-03-02"))
    assert [r.status for r in state.records] == ["corrected", "active"]
    assert transition.added[0].supersedes == ("t1#1",)
    assert transition.added[0].version == 2


def test_many_slot_accumulates_and_retract_removes_named_value() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user(
                    "t1",
                    dict(op="assert", entity=A, predicate="diet", value="vegetarian"),
                    dict(op="assert", entity=A, predicate="diet", value="nut-free"),
                ),
                user("t2", dict(op="assert", entity=A, predicate="diet", value="vegetarian")),
                user("t3", dict(op="retract", entity=A, predicate="diet", value="vegetarian")),
            ],
        )
    )
    assert [s for _, _, s in states(traj)] == [
        {F("diet", "vegetarian"), F("diet", "nut-free")},
        {F("diet", "vegetarian"), F("diet", "nut-free")},
        {F("diet", "nut-free")},
    ]


def test_retract_on_one_slot_without_value_keeps_history() -> None:
    state = LifecycleState(trajectory().schema)
    t1 = user("t1", dict(op="assert", entity=A, predicate="hotel", value="Lumen"))
    t2 = user("t2", dict(op="retract", entity=A, predicate="hotel"))
    state.apply(t1.events[0], d("2026-03-02"))
    state.apply(t2.events[0], d("2026-03-02"))
    assert [r.status for r in state.records] == ["retracted"]
    assert state.state_at(d("2026-03-02")) == frozenset()


def test_forget_removes_current_and_past_values() -> None:
    state = LifecycleState(trajectory().schema)
    for i, value in enumerate(["Avenida", "Lumen"]):
        event = user(f"t{i}", dict(op="assert", entity=A, predicate="hotel", value=value)).events[0]
        state.apply(event, d("2026-03-02"))
    forget = user("t9", dict(op="forget", entity=A, predicate="hotel")).events[0]
    transition = state.apply(forget, d("2026-03-02"))
    assert {r.value for r in transition.removed} == {"Avenida", "Lumen"}
    assert state.records == []


def test_expiry_leaves_state_and_window_governs_eligibility() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user(
                    "t1",
                    dict(
                        op="assert",
                        entity=A,
                        predicate="city",
                        value="Porto",
                        valid_from="2026-03-02",
                        valid_until="2026-03-10",
                    ),
                ),
                ask("t2", "now", A, "city", ("Porto",), as_of="2026-03-02"),
                ask("t3", "past-end", A, "city", (), as_of="2026-03-10"),
            ],
        ),
        (
            "c2",
            "2026-03-12",
            [
                ask("t4", "expired", A, "city", (), as_of="2026-03-05"),
                user("t5", dict(op="assert", entity=A, predicate="hotel", value="Lumen")),
            ],
        ),
    )
    ref = replay(traj)
    assert ref.query("now").support.values == ("Porto",)
    assert ref.query("past-end").support.values == ()
    # as_of inside the window, but the fact expired before the checkpoint's date.
    assert ref.query("expired").support.values == ()
    assert ref.checkpoints[-1].state == {F("hotel", "Lumen")}


def test_global_facts_are_eligible_in_every_scope_but_not_vice_versa() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user(
                    "t1",
                    dict(op="assert", entity=A, predicate="hotel", value="Marriott", scope="work"),
                    dict(op="assert", entity=A, predicate="diet", value="vegetarian"),
                ),
                ask("t2", "work", A, "hotel", ("Marriott",), scope="work"),
                ask("t3", "trip", A, "hotel", (), scope="trip"),
                ask("t4", "diet", A, "diet", ("vegetarian",), scope="trip"),
                ask("t5", "dana", "dana", "diet", ()),
            ],
        )
    )
    ref = replay(traj)
    assert [q.support.values for q in ref.queries] == [("Marriott",), (), ("vegetarian",), ()]


def test_checkpoint_order_pre_query_before_later_turns() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user("t1", dict(op="assert", entity=A, predicate="hotel", value="Lumen")),
                ask("t2", "q", A, "hotel", ("Lumen",)),
                user("t3", dict(op="assert", entity=A, predicate="hotel", value="Avenida")),
            ],
        )
    )
    assert [(t, k) for t, k, _ in states(traj)] == [
        ("t1", "post-update"),
        ("t2", "pre-query"),
        ("t3", "post-update"),
    ]


def test_world_b_applies_inserted_events_only_for_that_query() -> None:
    irrelevant = (
        Turn(
            "t2~b1",
            "user",
            "Dana...",
            events=(
                user(
                    "t2~b1", dict(op="assert", entity="dana", predicate="hotel", value="Avenida")
                ).events
            ),
        ),
    )
    relevant = (
        Turn(
            "t3~b1",
            "user",
            "moved",
            events=(
                user(
                    "t3~b1", dict(op="assert", entity=A, predicate="hotel", value="Avenida")
                ).events
            ),
        ),
    )
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user("t1", dict(op="assert", entity=A, predicate="hotel", value="Lumen")),
                ask("t2", "ok", A, "hotel", ("Lumen",), insert=irrelevant),
                ask("t3", "bad", A, "hotel", ("Lumen",), insert=relevant),
            ],
        )
    )
    ref = replay(traj)
    assert ref.query("ok").support_b == ref.query("ok").support
    assert ref.query("bad").support_b.values == ("Avenida",)
    problems = semantic_problems(traj)
    assert len(problems) == 1
    assert "query bad > pair" in problems[0].location
    assert "world b" in problems[0].message


def test_probe_support_is_taken_after_its_turn() -> None:
    probe = Probe("p1", "t1", "scope", "?", A, "hotel", "global", ("Lumen",))
    wrong = Probe("p2", "t2", "scope", "?", A, "hotel", "global", ("Lumen",))
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user("t1", dict(op="assert", entity=A, predicate="hotel", value="Lumen")),
                user("t2", dict(op="assert", entity=A, predicate="hotel", value="Avenida")),
            ],
        ),
        probes=(probe, wrong),
    )
    ref = replay(traj)
    assert [p.support.values for p in ref.probes] == [("Lumen",), ("Avenida",)]
    [problem] = semantic_problems(traj)
    assert problem.location == "probe p2" and "gold" in problem.message


def test_gold_mismatch_reports_both_values() -> None:
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user("t1", dict(op="assert", entity=A, predicate="hotel", value="Lumen")),
                ask("t2", "q", A, "hotel", ("Avenida",)),
            ],
        )
    )
    [problem] = semantic_problems(traj)
    assert problem.location == "turn t2 > query q"
    assert "'Avenida'" in problem.message and "'Lumen'" in problem.message


@pytest.mark.parametrize(
    ("events", "phrase"),
    [
        ([dict(op="retract", entity=A, predicate="diet", value="vegetarian")], "not active"),
        ([dict(op="forget", entity=A, predicate="hotel")], "never held"),
    ],
)
def test_illegal_events_are_reported_with_their_turn(events, phrase) -> None:
    traj = trajectory(("c1", "2026-03-02", [user("t1", *events)]))
    [problem] = semantic_problems(traj)
    assert problem.location == "conversation c1 > turn t1 > event t1#1"
    assert phrase in problem.message


def test_retract_of_an_expired_value_is_illegal() -> None:
    state = LifecycleState(trajectory().schema)
    t1 = user(
        "t1", dict(op="assert", entity=A, predicate="city", value="Porto", valid_until="2026-03-10")
    )
    state.apply(t1.events[0], d("2026-03-02"))
    with pytest.raises(LifecycleError, match="not active"):
        state.apply(
            user("t2", dict(op="retract", entity=A, predicate="city")).events[0], d("2026-03-11")
        )


def test_interpretation_uses_as_of() -> None:
    traj = trajectory(("c1", "2026-03-02", [ask("t1", "q", A, "hotel", (), as_of="2026-03-01")]))
    assert replay(traj).query("q").tau == Interpretation(A, "hotel", "global", d("2026-03-01"))


_VALUES = {"hotel": ["Avenida", "Lumen", "Marriott"], "diet": ["vegetarian", "nut-free"]}


@st.composite
def _event_lists(draw) -> list[dict]:
    out = []
    for _ in range(draw(st.integers(0, 12))):
        pred = draw(st.sampled_from(sorted(_VALUES)))
        op = draw(st.sampled_from(["assert", "assert", "retract", "forget"]))
        entity = draw(st.sampled_from([A, "dana"]))
        value = None if op == "forget" else draw(st.sampled_from(_VALUES[pred]))
        out.append(dict(op=op, entity=entity, predicate=pred, value=value))
    return out


@settings(max_examples=150, deadline=None)
@given(_event_lists())
def test_replay_is_deterministic(events: list[dict]) -> None:
    turns = [user(f"t{i}", e) for i, e in enumerate(events)]
    traj = trajectory(("c1", "2026-03-02", turns))
    first, second = replay(traj), replay(traj)
    assert first == second
