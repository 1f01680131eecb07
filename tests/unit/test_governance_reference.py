"""Γ*, visibility and task decisions (docs/method.md §11) on small hand-computed trajectories.

Each test pins the rows and decisions a rule produces, and would fail if the rule were
broken on purpose (visibility ignored, a revoke not counted, a redelivery applied twice, a
deferred task's captured epoch not compared, ...)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from builders import (
    ask,
    gev,
    governed,
    redeliver,
    request,
    run,
    said,
    tool,
    trajectory,
    user,
)

from place.cli import reference_json
from place.eligibility import Interpretation
from place.lexicon import Lexicon
from place.reference.governance import (
    ConflictRow,
    DeletionRow,
    EpochRow,
    Governance,
    GovernanceTransition,
    QuarantineRow,
    RequestRow,
    ShareRow,
)
from place.reference.provenance import Provenance
from place.reference.replay import Checkpoint, Reference, replay
from place.reference.validate import load_trajectory, semantic_problems
from place.trajectory.model import Fact, Probe, Slot, Trajectory

A, D = "alex", "dana"
DATA = Path(__file__).parents[1] / "data"
HOTEL = Slot(A, "hotel", "global")
DANA_HOTEL = Slot(D, "hotel", "global")
P = "card"


def hotel(value: str, entity: str = A) -> dict:
    return dict(op="assert", entity=entity, predicate="hotel", value=value)


def share(turn: str, i: int, with_: str, entity: str = A) -> object:
    return gev(turn, i, "share", entity=entity, predicate="hotel", with_=with_)


def checkpoint(ref: Reference, turn: str, kind: str = "post-update") -> Checkpoint:
    return next(c for c in ref.checkpoints if (c.turn, c.kind) == (turn, kind))


def gamma(ref: Reference, turn: str, kind: str = "post-update") -> Governance:
    governance = checkpoint(ref, turn, kind).governance
    assert governance is not None
    return governance


# ---------------------------------------------------------------- one principal


def test_with_one_principal_visibility_changes_nothing() -> None:
    """Every query's Q* is §1's (no visibility filter) and nobody is foreign."""
    traj = trajectory(
        (
            "c1",
            "2026-03-02",
            [
                user("t1", hotel("Lumen"), hotel("Avenida", entity=D)),
                ask("t2", "mine", A, "hotel", ("Lumen",)),
                ask("t3", "hers", D, "hotel", ("Avenida",)),
            ],
        )
    )
    ref = replay(traj)
    assert [q.support.values for q in ref.queries] == [("Lumen",), ("Avenida",)]
    assert [(q.asker, q.foreign_present) for q in ref.queries] == [(A, False), (A, False)]
    assert semantic_problems(traj) == []
    assert not traj.governed and ref.tasks == ()
    assert {c.kind for c in ref.checkpoints} == {"post-update", "pre-query"}


def test_files_without_governance_keep_their_checkpoints_and_empty_governance() -> None:
    ref = replay(load_trajectory(DATA / "good" / "minimal.yaml"))
    kinds = [(c.turn, c.kind) for c in ref.checkpoints]
    assert kinds == [
        ("s1-01", "post-update"),
        ("s1-03", "post-update"),
        ("s1-05", "pre-query"),
        ("s2-01", "post-update"),
        ("s2-02", "post-update"),
        ("s2-03", "pre-query"),
        ("s2-04", "pre-query"),
    ]
    last = ref.checkpoints[-1].governance
    assert last is not None
    assert (last.epochs, last.shares, last.conflicts, last.requests) == ((), (), (), ())
    # §10's tool turn is quarantined; the forget of s2-02 is a deletion row.
    assert last.quarantine == (
        QuarantineRow("s1-04", Fact("kim", "train_time", "10:05", "conference")),
    )
    assert last.deletions == (DeletionRow("s2-02#2", Slot("kim", "allergy", "global")),)
    assert all(not c.governance_events for c in ref.checkpoints)


# ---------------------------------------------------------------- owners and visibility


def test_a_fact_is_visible_to_its_owner_and_the_principals_it_is_shared_with() -> None:
    traj = governed(
        (
            "c1",
            "2026-03-02",
            [
                said("t1", hotel("Lumen", entity=D), speaker=D),
                ask("t2", "before", D, "hotel", ()),
                said("t3", share("t3", 1, A, entity=D), speaker=D),
                ask("t4", "shared", D, "hotel", ("Lumen",)),
                said(
                    "t5", gev("t5", 1, "unshare", entity=D, predicate="hotel", with_=A), speaker=D
                ),
                ask("t6", "unshared", D, "hotel", ()),
            ],
        )
    )
    ref = replay(traj)
    assert [q.support.values for q in ref.queries] == [(), ("Lumen",), ()]
    assert [q.foreign_present for q in ref.queries] == [True, False, True]
    assert gamma(ref, "t3").shares == (ShareRow(DANA_HOTEL, A),)
    assert gamma(ref, "t5").shares == ()
    assert checkpoint(ref, "t3").governance_events == (
        GovernanceTransition("t3#1", "share", DANA_HOTEL, principal=A),
    )
    assert semantic_problems(traj) == []


def test_the_owner_is_the_speaker_not_the_entity() -> None:
    """Dana states a fact about Alex: it is Dana's, and Alex does not see it."""
    traj = governed(
        ("c1", "2026-03-02", [said("t1", hotel("Lumen"), speaker=D), ask("t2", "q", A, "hotel")])
    )
    ref = replay(traj)
    assert ref.query("q").support.values == ()
    assert ref.query("q").state == {Fact(A, "hotel", "Lumen", "global")}  # S* still holds it
    probe = Probe("p1", "t1", "scope", "?", A, "hotel", "global", ("Lumen",), asker=D)
    with_probe = dataclasses.replace(traj, probes=(probe,))
    assert replay(with_probe).probes[0].support.values == ("Lumen",)


def test_share_by_someone_who_does_not_own_the_slot_is_refused() -> None:
    traj = governed(
        ("c1", "2026-03-02", [said("t1", hotel("Lumen")), said("t2", share("t2", 1, D), speaker=D)])
    )
    [problem] = semantic_problems(traj)
    assert problem.location == "conversation c1 > turn t2 > event t2#1"
    assert "by 'dana', who does not own it (its owner is 'alex')" in problem.message


def test_only_the_owner_retracts() -> None:
    traj = governed(
        (
            "c1",
            "2026-03-02",
            [
                said("t1", hotel("Lumen")),
                said("t2", dict(op="retract", entity=A, predicate="hotel"), speaker=D),
            ],
        )
    )
    [problem] = semantic_problems(traj)
    assert "retract of slot (alex, hotel, global) by 'dana'" in problem.message


# ---------------------------------------------------------------- proposals


def test_a_proposal_leaves_the_state_and_opens_a_conflict_the_owner_resolves() -> None:
    traj = governed(
        (
            "c1",
            "2026-03-02",
            [
                said("t1", hotel("Lumen"), share("t1", 2, D)),
                said("t2", hotel("Avenida"), speaker=D),
                said("t3", hotel("Lumen"), speaker=D),  # the active value: not a proposal
                said("t4", hotel("Lumen")),  # the owner's next event on the slot
            ],
        ),
        probes=(Probe("p1", "t2", "conflict", "?", A, "hotel", "global", ("Lumen",), asker=D),),
    )
    ref = replay(traj)
    lumen = {Fact(A, "hotel", "Lumen", "global")}
    assert [checkpoint(ref, t).state for t in ("t1", "t2", "t3", "t4")] == [lumen] * 4
    k = ConflictRow("t2#1", HOTEL, D, "Avenida", ("Lumen",), "pending")
    assert gamma(ref, "t2").conflicts == (k,)
    assert checkpoint(ref, "t2").transitions == ()
    assert checkpoint(ref, "t2").governance_events == (
        GovernanceTransition("t2#1", "propose", HOTEL, principal=D, value="Avenida"),
    )
    assert gamma(ref, "t3").conflicts == (k,)  # Dana's event does not resolve it
    assert gamma(ref, "t4").conflicts == (dataclasses.replace(k, status="resolved"),)
    assert ref.probes[0].support.values == ("Lumen",)
    assert semantic_problems(traj) == []


def test_on_an_empty_slot_an_assert_is_normal_and_its_speaker_becomes_the_owner() -> None:
    traj = governed(
        (
            "c1",
            "2026-03-02",
            [
                said("t1", hotel("Lumen")),
                said("t2", dict(op="retract", entity=A, predicate="hotel")),
                said("t3", hotel("Avenida"), speaker=D),
                ask("t4", "q", A, "hotel"),
            ],
        )
    )
    ref = replay(traj)
    assert checkpoint(ref, "t3").state == {Fact(A, "hotel", "Avenida", "global")}
    assert gamma(ref, "t3").conflicts == ()
    assert ref.query("q").support.values == ()  # Dana's now, and not shared
    assert semantic_problems(traj) == []


# ---------------------------------------------------------------- epochs and tasks


def _grants(*ops: str) -> list:
    return [said(f"g{i}", gev(f"g{i}", 1, op, permission=P, to=D)) for i, op in enumerate(ops, 1)]


def test_epochs_count_every_grant_and_revoke() -> None:
    traj = governed(
        ("c1", "2026-03-02", [said("t0", hotel("Lumen")), *_grants("grant", "revoke", "grant")]),
        permissions={P: A},
    )
    ref = replay(traj)
    assert [gamma(ref, f"g{i}").epochs for i in (1, 2, 3)] == [
        (EpochRow(P, D, 1, True),),
        (EpochRow(P, D, 2, False),),
        (EpochRow(P, D, 3, True),),
    ]
    assert checkpoint(ref, "g2").governance_events == (
        GovernanceTransition("g2#1", "revoke", principal=D, permission=P),
    )


def _bill(*turns, permissions=None) -> Trajectory:
    """Alex's hotel, shared with Dana; the turns after it."""
    opening = [said("t0", hotel("Lumen"), share("t0", 2, D))]
    return governed(("c1", "2026-03-02", opening + list(turns)), permissions=permissions or {P: A})


def test_an_allowed_task_gets_args_and_a_request_row() -> None:
    traj = _bill(*_grants("grant"), request("r1", "t1", (A, "hotel"), speaker=D, permission=P))
    ref = replay(traj)
    t1 = ref.task("t1")
    assert (t1.decision, t1.reasons, t1.args) == ("allow", (), (("Lumen",),))
    assert (t1.turn, t1.run_turn, t1.asker, t1.epoch, t1.epoch_at_run, t1.held) == (
        "r1",
        "r1",
        D,
        1,
        1,
        True,
    )
    assert t1.taus == (Interpretation(A, "hotel", "global", t1.taus[0].as_of),)
    row = RequestRow("t1", "h-t1", D, P, 1, ("t0#1",), "requested")
    assert gamma(ref, "r1", "pre-task").requests == (row,)
    assert checkpoint(ref, "r1", "pre-task").governance_events == (
        GovernanceTransition("t1", "request", principal=D, task="t1"),
    )
    assert semantic_problems(traj) == []


def test_a_revoke_makes_a_task_stale() -> None:
    traj = _bill(
        *_grants("grant", "revoke"),
        request("r1", "t1", (A, "hotel"), speaker=D, permission=P, expect="block"),
    )
    t1 = replay(traj).task("t1")
    assert (t1.decision, t1.reasons, t1.held, t1.epoch_at_run) == (
        "block",
        ("stale-epoch",),
        False,
        2,
    )
    assert semantic_problems(traj) == []


def test_without_a_grant_a_task_is_stale_but_the_owner_always_holds() -> None:
    traj = _bill(
        request("r1", "t1", (A, "hotel"), speaker=D, permission=P, expect="block"),
        request("r2", "t2", (A, "hotel"), permission=P),
    )
    ref = replay(traj)
    assert (ref.task("t1").decision, ref.task("t1").reasons) == ("block", ("stale-epoch",))
    assert (ref.task("t2").decision, ref.task("t2").held) == ("allow", True)
    assert gamma(ref, "r2", "pre-task").epochs == ()


def test_a_deferred_task_compares_its_captured_epoch() -> None:
    """Held again at the run, but the epoch moved since the request: stale."""
    moved = _bill(
        *_grants("grant"),
        request("r1", "t1", (A, "hotel"), speaker=D, permission=P, deferred=True, expect="block"),
        said("g8", gev("g8", 1, "revoke", permission=P, to=D)),
        said("g9", gev("g9", 1, "grant", permission=P, to=D)),
        run("u1", "t1", speaker=D),
    )
    ref = replay(moved)
    t1 = ref.task("t1")
    assert (t1.turn, t1.run_turn, t1.held, t1.epoch, t1.epoch_at_run) == ("r1", "u1", True, 1, 3)
    assert (t1.decision, t1.reasons) == ("block", ("stale-epoch",))
    assert [(c.turn, c.kind) for c in ref.checkpoints if c.kind == "pre-task"] == [
        ("r1", "pre-task"),
        ("u1", "pre-task"),
    ]
    assert checkpoint(ref, "u1", "pre-task").governance_events == ()
    unmoved = _bill(
        *_grants("grant"),
        request("r1", "t1", (A, "hotel"), speaker=D, permission=P, deferred=True),
        run("u1", "t1", speaker=D),
    )
    assert replay(unmoved).task("t1").decision == "allow"
    assert semantic_problems(moved) == [] and semantic_problems(unmoved) == []


def test_a_deferred_task_reads_the_state_at_its_run_turn() -> None:
    """Its arguments and its links are both taken at the run (spec amendment 16): the value
    superseded since the request is traced to the event that holds at the run; Γ*'s request
    row keeps what the request saw."""
    traj = _bill(
        request("r1", "t1", (A, "hotel"), deferred=True),
        said("t2", hotel("Avenida")),
        run("u1", "t1"),
    )
    ref = replay(traj)
    t1 = ref.task("t1")
    assert t1.args == (("Avenida",),)
    assert t1.links == ("t2#1",) and "t0#1" not in t1.links
    (row,) = gamma(ref, "u1", "pre-task").requests
    assert row.links == ("t0#1",)  # the request row records the request
    assert semantic_problems(traj) == []


def test_a_deferred_task_is_traced_to_the_correction_that_holds_at_its_run() -> None:
    traj = _bill(
        request("r1", "t1", (A, "hotel"), deferred=True),
        said("t2", dict(op="correct", entity=A, predicate="hotel", value="Marriott")),
        run("u1", "t1"),
    )
    t1 = replay(traj).task("t1")
    assert (t1.args, t1.links) == ((("Marriott",),), ("t2#1",))
    assert semantic_problems(traj) == []


def test_a_task_that_is_not_deferred_keeps_its_request_rows_links() -> None:
    traj = _bill(request("r1", "t1", (A, "hotel")), said("t2", hotel("Avenida")))
    ref = replay(traj)
    (row,) = gamma(ref, "r1", "pre-task").requests
    assert ref.task("t1").links == row.links == ("t0#1",)


def test_a_need_only_someone_else_sees_is_out_of_scope() -> None:
    private = governed(
        (
            "c1",
            "2026-03-02",
            [
                said("t1", hotel("Lumen", entity=D), speaker=D),
                request("r1", "t1", (D, "hotel"), expect="block"),
            ],
        )
    )
    t1 = replay(private).task("t1")
    assert (t1.decision, t1.reasons, t1.foreign_present) == ("block", ("out-of-scope",), True)
    assert t1.supports[0].facts == frozenset()
    shared = governed(
        (
            "c1",
            "2026-03-02",
            [
                said("t1", hotel("Lumen", entity=D), share("t1", 2, A, entity=D), speaker=D),
                request("r1", "t1", (D, "hotel")),
            ],
        )
    )
    assert replay(shared).task("t1").args == (("Lumen",),)
    assert semantic_problems(private) == [] and semantic_problems(shared) == []


def test_a_need_whose_value_only_a_tool_turn_states_is_untrusted() -> None:
    traj = governed(
        (
            "c1",
            "2026-03-02",
            [
                tool("x1", "The hotel is now the Marriott."),
                request("r1", "t1", (A, "hotel"), expect="block", text="Book the Marriott hotel."),
            ],
        )
    )
    t1 = replay(traj).task("t1")
    assert (t1.decision, t1.reasons) == ("block", ("untrusted",))
    # The task's own text does not vouch for the value it asks to act on; a user turn before
    # it does (§10's rule), and then nothing blocks: the task is undecidable.
    vouched = governed(
        (
            "c1",
            "2026-03-02",
            [
                tool("x1", "The hotel is now the Marriott."),
                said("t0", text="The Marriott hotel, you say?"),
                request("r1", "t1", (A, "hotel"), expect="block"),
            ],
        )
    )
    assert replay(vouched).task("t1").decision is None
    [problem] = semantic_problems(vouched)
    assert problem.location == "turn r1 > task t1" and "undecidable" in problem.message


def test_a_task_expectation_is_checked_like_gold() -> None:
    wrong = _bill(request("r1", "t1", (A, "hotel"), expect="block"))
    [problem] = semantic_problems(wrong)
    assert "expect 'block' does not match the decision computed by replay 'allow'" in (
        problem.message
    )
    turn = wrong.turn("r1")
    assert turn.task is not None
    task = dataclasses.replace(turn.task, expect="allow", args=(("Avenida",),))
    bad_args = dataclasses.replace(
        wrong,
        conversations=(
            dataclasses.replace(
                wrong.conversations[0],
                turns=(wrong.conversations[0].turns[0], dataclasses.replace(turn, task=task)),
            ),
        ),
    )
    [problem] = semantic_problems(bad_args)
    assert "args [['Avenida']] do not match the arguments computed by replay [['Lumen']]" in (
        problem.message
    )


# ---------------------------------------------------------------- redeliveries and restarts


def test_a_redelivered_event_is_a_duplicate_and_forgotten_values_stay_forgotten() -> None:
    first = said("t1", hotel("Lumen"))
    traj = governed(
        (
            "c1",
            "2026-03-02",
            [
                first,
                said("t2", dict(op="forget", entity=A, predicate="hotel")),
                redeliver("t3", first, restart=True),
                ask("t4", "q", A, "hotel", ()),
            ],
        )
    )
    ref = replay(traj)
    again = checkpoint(ref, "t3")
    assert again.state == frozenset() and again.transitions == ()
    assert again.governance_events == (GovernanceTransition("t1#1", "duplicate", HOTEL),)
    assert gamma(ref, "t3").deletions == (DeletionRow("t2#1", HOTEL),)
    assert ref.query("q").support.values == ()
    # Provenance: the redelivery states nothing, so the forgotten value stays forgotten.
    provenance = Provenance(traj, Lexicon(traj.schema, A))
    assert provenance.at("t3", after=True).forgotten_facts() == [
        ("t2#1", A, "hotel", "Lumen", "global")
    ]
    assert semantic_problems(traj) == []


def test_a_redelivered_task_never_runs_again() -> None:
    asked = request("r1", "t1", (A, "hotel"))
    traj = _bill(asked, redeliver("r2", asked, restart=True))
    ref = replay(traj)
    assert [t.id for t in ref.tasks] == ["t1"]
    t1 = ref.task("t1")
    assert (t1.run_turn, t1.redeliveries) == ("r1", ("r2",))
    assert checkpoint(ref, "r2", "pre-task").governance_events == (
        GovernanceTransition("t1", "duplicate", task="t1"),
    )
    assert len(gamma(ref, "r2", "pre-task").requests) == 1


def test_a_rollback_reverts_the_request_row_once() -> None:
    traj = _bill(
        request("r1", "t1", (A, "hotel")),
        said("b1", gev("b1", 1, "rollback", task="t1")),
    )
    ref = replay(traj)
    assert gamma(ref, "r1", "pre-task").requests[0].status == "requested"
    assert gamma(ref, "b1").requests[0].status == "reverted"
    assert checkpoint(ref, "b1").governance_events == (
        GovernanceTransition("b1#1", "rollback", task="t1"),
    )
    twice = _bill(
        request("r1", "t1", (A, "hotel")),
        said("b1", gev("b1", 1, "rollback", task="t1")),
        said("b2", gev("b2", 1, "rollback", task="t1")),
    )
    [problem] = semantic_problems(twice)
    assert "already rolled back" in problem.message


def test_a_restart_changes_nothing() -> None:
    turns = [
        said("t1", hotel("Lumen"), share("t1", 2, D)),
        said("t2", hotel("Avenida"), speaker=D),
        request("r1", "t1", (A, "hotel")),
    ]
    restarted = [dataclasses.replace(t, restart=True) for t in turns]
    assert replay(governed(("c1", "2026-03-02", turns))) == replay(
        governed(("c1", "2026-03-02", restarted))
    )


# ---------------------------------------------------------------- quarantine and forget


def test_tool_turns_are_quarantined_and_a_forget_redacts_its_slot() -> None:
    traj = governed(
        (
            "c1",
            "2026-03-02",
            [
                said("t1", hotel("Lumen"), share("t1", 2, D)),
                tool("x1", "Dana's hotel is the Avenida, and your hotel is the Marriott.", D),
                said("t2", hotel("Avenida"), speaker=D),
                said("t3", dict(op="forget", entity=A, predicate="hotel")),
            ],
        )
    )
    ref = replay(traj)
    quarantined = gamma(ref, "t2").quarantine
    assert {q.turn for q in quarantined} == {"x1"}
    assert Fact(D, "hotel", "Avenida", "global") in {q.fact for q in quarantined}
    assert len(gamma(ref, "t2").conflicts) == 1
    after = gamma(ref, "t3")
    assert after.conflicts == ()
    assert all(q.fact.entity != A or q.fact.predicate != "hotel" for q in after.quarantine)
    assert after.deletions == (DeletionRow("t3#1", HOTEL),)


# ---------------------------------------------------------------- the example file and the CLI


@pytest.fixture(scope="module")
def example() -> Trajectory:
    return load_trajectory(DATA / "good" / "governance.yaml")


def test_the_example_file_decides_every_task(example: Trajectory) -> None:
    ref = replay(example)
    decided = {t.id: (t.decision, t.reasons, t.args, t.run_turn) for t in ref.tasks}
    assert decided == {
        "t1": ("allow", (), (("120 EUR",),), "c2-03"),
        "t2": ("block", ("stale-epoch",), None, "c2-05"),
        "t3": ("block", ("stale-epoch",), None, "c3-02"),
        "t4": ("block", ("out-of-scope",), None, "c3-05"),
        "t5": ("block", ("untrusted",), None, "c4-02"),
        "t6": ("allow", (), (("120 EUR",),), "c4-03"),
    }
    final = ref.checkpoints[-1].governance
    assert final is not None
    assert final.epochs == (EpochRow("joint_account", "theo", 3, True),)
    assert [r.status for r in final.requests] == ["requested"] * 5 + ["reverted"]
    assert ref.query("q1").support.values == ()  # the redelivered assert stays forgotten
    assert ref.query("q2").support.values == ()  # Theo's salary is his
    assert ref.probes[0].asker == "theo" and ref.probes[0].support.values == ("19:00",)


def test_reference_json_shows_governance_only_for_files_that_use_it(example: Trajectory) -> None:
    plain = reference_json(load_trajectory(DATA / "good" / "minimal.yaml"))
    assert set(plain) == {"checkpoints", "queries", "probes"}
    assert set(plain["checkpoints"][0]) == {"turn", "kind", "date", "state"}
    assert set(plain["queries"][0]) == {"id", "authorized", "authorized_b"}
    doc = json.loads(json.dumps(reference_json(example)))
    assert set(doc) == {"checkpoints", "queries", "probes", "tasks"}
    assert {"governance", "governance_events"} <= set(doc["checkpoints"][0])
    t3 = next(t for t in doc["tasks"] if t["id"] == "t3")
    assert t3 == {
        "id": "t3",
        "turn": "c2-06",
        "run_turn": "c3-02",
        "asker": "theo",
        "handle": "bill-next-week",
        "permission": "joint_account",
        "deferred": True,
        "decision": "block",
        "reasons": ["stale-epoch"],
        "args": None,
        "epoch": 2,
        "epoch_at_run": 3,
        "held": True,
        "links": ["c2-01#1"],
        "redeliveries": [],
    }
    assert doc["probes"] == [{"id": "p1", "authorized": ["19:00"], "asker": "theo"}]
