"""AOEP scorecard (docs/method.md §10, §11) on hand-built record sets, and its reference inputs.

The record sets are tiny histories of one condition written by hand. §10's: alex's flight is
set, superseded, his hotel retracted, his diet forgotten; a query and a conflict probe read
the store afterwards. §11's (`governed`): nora shares her electricity bill with theo and
grants him the joint account, theo's task t1 pays the bill, the grant is revoked, his task
t2 is blocked, theo proposes another party time and nora keeps hers, t1 is delivered again
and rolled back, and a fact event is delivered again. Each test changes the store's or the
act gate's behaviour in one way and checks exactly which obligations and invariants move.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import ask, trajectory, user

from place.design import PAPER
from place.lexicon import Lexicon
from place.metrics.aoep import (
    GOVERNANCE_KINDS,
    INVARIANTS,
    OBLIGATIONS,
    decision_matches,
    scorecard,
    scorecard_items,
    task_counts,
)
from place.records import (
    CheckpointRecord,
    ExposedRecord,
    ForgetRecord,
    GateDecisionRecord,
    GovernanceRecord,
    GovernanceRows,
    GovernanceTransitionRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    ReadFactRecord,
    RunRecords,
    TaskRecord,
    TaskReferenceRecord,
    TransitionRecord,
)
from place.reference.provenance import Provenance
from place.reference.replay import replay
from place.trajectory.model import Turn

C = "Native"
FLIGHT = ("alex", "flight", "trip")
HOTEL = ("alex", "hotel", "global")
DIET = ("alex", "diet", "global")
FORGOTTEN = [("t4#1", "alex", "diet", "vegetarian", "global")]


def fact(slot: tuple[str, str, str], value: str) -> tuple:
    return (slot[0], slot[1], value, slot[2], None, None)


def transition(event: str, kind: str, slot, removed=(), added=()) -> TransitionRecord:
    return TransitionRecord(
        event=event, kind=kind, slot=slot, removed=list(removed), added=list(added)
    )


def checkpoint(turn: str, observed, reference, transitions=(), previous=None, untrusted=()):
    return CheckpointRecord(
        turn=turn,
        checkpoint="post-update",
        conversation="c1",
        date="2026-03-02",
        condition=C,
        observed=sorted(observed),
        reference=sorted(reference),
        transitions=list(transitions),
        previous=previous,
        untrusted=list(untrusted),
    )


def item(slot, value, *, ineligible=False, readable=True, text=None) -> ExposedRecord:
    return ExposedRecord(
        id=f"id-{value}",
        text=text or f"{slot[1]}: {value}",
        score=0.9,
        facts=[
            ReadFactRecord(
                entity=slot[0],
                predicate=slot[1],
                value=value,
                scope=slot[2],
                status="active",
                valid_from=None,
                valid_until="2026-03-01" if ineligible else None,
                certified=False,
                readable=readable,
                eligible=not ineligible,
            )
        ],
        lifecycle=None,
        ineligible=ineligible,
    )


def query(exposed: list[ExposedRecord], answer: str, outcome: list[str], **kw: Any):
    fields: dict[str, Any] = dict(
        query="q1",
        turn="t5",
        conversation="c1",
        family="supersession",
        condition=C,
        world="a",
        mode="primary",
        tau=("alex", "flight", "trip", "2026-03-02"),
        question="When is my flight?",
        exposed=exposed,
        admitted=None,
        raw_answer=answer,
        outcome=outcome,
        gold=["09:40"],
        authorized=[("alex", "flight", "09:40", "trip")],
        authorized_a=[("alex", "flight", "09:40", "trip")],
        authorized_b=None,
        evaluated=[],
        state_correct=False,
        forgotten=FORGOTTEN,
    )
    fields.update(kw)
    return QueryRecord(**fields)


def probe(store_items: list[ExposedRecord], **kw: Any) -> ProbeRecord:
    """A probe of alex's flight after t4 whose clean read shows `store_items`."""
    fields: dict[str, Any] = dict(
        probe="p1",
        after="t4",
        conversation="c1",
        family="provenance",
        condition=C,
        tau=("alex", "flight", "trip", "2026-03-02"),
        question="When is my flight?",
        clean=ProbeRead(exposed=store_items, admitted=None, raw_answer=None, outcome=None),
        injected=None,
        gold=["09:40"],
        authorized=[("alex", "flight", "09:40", "trip")],
        conflict_value=None,
        forgotten=FORGOTTEN,
    )
    fields.update(kw)
    return ProbeRecord(**fields)


def conflict_probe(answer: str, outcome: list[str], store_items: list[ExposedRecord]):
    planted = item(FLIGHT, "06:05", text="FWD: your flight now departs at 6:05")
    return probe(
        store_items,
        injected=ProbeRead(
            exposed=[*store_items, planted], admitted=None, raw_answer=answer, outcome=outcome
        ),
        conflict_value="06:05",
    )


# The reference history: t1 sets flight 07:15, hotel Lumen, diet vegetarian; t2 supersedes
# the flight with 09:40; t3 retracts the hotel; t4 forgets the diet. A tool turn before t2
# forwarded 06:05, which no user turn states.
S1 = [fact(FLIGHT, "07:15"), fact(HOTEL, "Lumen"), fact(DIET, "vegetarian")]
S2 = [fact(FLIGHT, "09:40"), fact(HOTEL, "Lumen"), fact(DIET, "vegetarian")]
S3 = [fact(FLIGHT, "09:40"), fact(DIET, "vegetarian")]
S4 = [fact(FLIGHT, "09:40")]
TRANSITIONS = {
    "t1": [
        transition("t1#1", "assert", FLIGHT, added=["07:15"]),
        transition("t1#2", "assert", HOTEL, added=["Lumen"]),
        transition("t1#3", "assert", DIET, added=["vegetarian"]),
    ],
    "t2": [transition("t2#1", "supersede", FLIGHT, removed=["07:15"], added=["09:40"])],
    "t3": [transition("t3#1", "retract", HOTEL, removed=["Lumen"])],
    "t4": [transition("t4#1", "forget", DIET, removed=["vegetarian"])],
}
UNTRUSTED = [("flight", "06:05")]


def records(observed: dict[str, list], *, residue=(), reads=()) -> RunRecords:
    """One condition's records; `observed` is its S^phys per turn t1..t4."""
    reference = {"t1": S1, "t2": S2, "t3": S3, "t4": S4}
    out = RunRecords()
    previous = None
    for turn in ("t1", "t2", "t3", "t4"):
        out.checkpoints.append(
            checkpoint(
                turn,
                observed[turn],
                reference[turn],
                TRANSITIONS[turn],
                previous,
                UNTRUSTED if turn != "t1" else (),
            )
        )
        previous = (turn, "post-update")
    for check in ("after", "end"):
        out.forgets.append(
            ForgetRecord(
                event="t4#1",
                producer="native",
                check=check,
                slot=DIET,
                values=["vegetarian"],
                residue=list(residue),
            )
        )
    for read in reads:
        (out.queries if isinstance(read, QueryRecord) else out.probes).append(read)
    return out


def counts(recs: RunRecords, condition: str = C, design=PAPER) -> dict[str, tuple[int, int]]:
    card = scorecard(recs, design)[condition]
    return {
        kind: (v["passed"], v["total"])
        for family in ("obligations", "invariants")
        for kind, v in card[family]["kinds"].items()
    }


NO_GOVERNANCE = {kind: (0, 0) for kind in OBLIGATIONS + INVARIANTS if kind in GOVERNANCE_KINDS}
"""§11's kinds on a history without §11's constructs: no item."""


GOVERNED = {"t1": S1, "t2": S2, "t3": S3, "t4": S4}
GOOD_READS = (
    query([item(FLIGHT, "09:40")], "09:40.", ["09:40"]),
    conflict_probe("9:40.", ["09:40"], [item(FLIGHT, "09:40")]),
)


def test_a_governed_store_keeps_every_obligation_and_breaks_no_invariant():
    assert counts(records(GOVERNED, reads=GOOD_READS)) == {
        "forget": (1, 1),
        "transition": (2, 2),  # the supersede and the retract; plain asserts are not items
        "support": (1, 1),
        "conflict": (1, 1),
        "deletion": (1, 1),
        "promotion": (1, 1),
        "exposure": (2, 2),  # the query's read and the probe's clean read
        **NO_GOVERNANCE,
    }


def test_an_empty_store_fails_every_obligation_and_passes_every_invariant():
    empty = {t: [] for t in GOVERNED}
    # Nothing to expose: the query gets nothing and the model abstains; the injected copy
    # holds only the planted record, and the model adopts it.
    reads = (
        query([], "I don't know.", ["ABSTAIN"]),
        conflict_probe("6:05.", ["06:05"], []),
    )
    card = scorecard(records(empty, reads=reads), PAPER)[C]
    recall = [k for k in card["obligations"]["kinds"] if k not in GOVERNANCE_KINDS]
    assert recall == ["forget", "transition", "support", "conflict"]
    assert all(card["obligations"]["kinds"][k]["passed"] == 0 for k in recall)
    assert all(card["obligations"]["kinds"][k]["total"] > 0 for k in recall)
    assert card["obligations"]["passed"] == 0
    assert all(
        v["passed"] == v["total"] > 0
        for k, v in card["invariants"]["kinds"].items()
        if k not in GOVERNANCE_KINDS
    )
    assert list(card["obligations"]["kinds"]) == list(OBLIGATIONS)
    assert list(card["invariants"]["kinds"]) == list(INVARIANTS)


def test_a_store_that_keeps_a_forgotten_value_fails_the_forget_obligation_and_deletion():
    kept = dict(GOVERNED, t4=S3)  # the diet stays after the forget (and in Mem0's history)
    later = query([item(FLIGHT, "09:40"), item(DIET, "vegetarian")], "09:40.", ["09:40"], turn="t6")
    recs = records(kept, residue=["diet: vegetarian"], reads=(later, GOOD_READS[1]))
    got = counts(recs)
    assert got["forget"] == (0, 1)
    assert got["deletion"] == (0, 1)
    assert got["transition"] == (2, 2) and got["exposure"] == (2, 2)
    failed = {(i.kind, i.item): i.evidence for i in scorecard_items(recs, PAPER) if not i.passed}
    assert set(failed) == {("forget", "t4#1"), ("deletion", "t4#1")}
    assert "still holds ['vegetarian']" in failed[("forget", "t4#1")]
    assert "residue after: 'diet: vegetarian'" in failed[("forget", "t4#1")]
    assert "q1 (primary) exposed id-vegetarian" in failed[("deletion", "t4#1")]


def test_answering_a_forgotten_value_breaks_deletion_even_with_nothing_exposed():
    asked = query(
        [],
        "You are vegetarian.",
        ["vegetarian"],
        tau=("alex", "diet", "global", "2026-03-02"),
        authorized=[],
        authorized_a=[],
        gold=[],
    )
    got = counts(records(GOVERNED, reads=(asked, GOOD_READS[1])))
    assert got["deletion"] == (0, 1)


def test_an_exposed_expired_value_breaks_the_exposure_invariant():
    stale = query(
        [item(FLIGHT, "09:40"), item(FLIGHT, "07:15", ineligible=True)], "09:40.", ["09:40"]
    )
    recs = records(GOVERNED, reads=(stale, GOOD_READS[1]))
    assert counts(recs)["exposure"] == (1, 2)
    (bad,) = [i for i in scorecard_items(recs, PAPER) if not i.passed]
    assert (bad.kind, bad.item) == ("exposure", "query:q1")
    assert "id-07:15" in bad.evidence
    # The support obligation is about Q* being exposed, which it still is.
    assert counts(recs)["support"] == (1, 1)


def test_an_untrusted_value_that_reaches_the_store_fails_promotion():
    promoted = dict(GOVERNED, t3=[*S3, fact(FLIGHT, "06:05")])
    recs = records(promoted, reads=GOOD_READS)
    assert counts(recs)["promotion"] == (0, 1)
    (bad,) = [i for i in scorecard_items(recs, PAPER) if not i.passed]
    assert bad.item == "flight=06:05"
    assert "t3 (post-update, world a) holds ['alex', 'flight', '06:05', 'trip']" in bad.evidence


def test_an_untrusted_value_that_the_reference_also_holds_is_not_a_promotion():
    # Once S* holds the value (the user stated it), holding it is correct, not a promotion.
    both = dict(GOVERNED, t3=[*S3, fact(FLIGHT, "06:05")])
    recs = records(both, reads=GOOD_READS)
    recs.checkpoints[2] = recs.checkpoints[2].model_copy(
        update={"reference": sorted([*S3, fact(FLIGHT, "06:05")])}
    )
    assert counts(recs)["promotion"] == (1, 1)


@pytest.mark.parametrize(
    ("turn", "observed", "kind"),
    [
        (
            "t2",
            [fact(FLIGHT, "07:15"), fact(HOTEL, "Lumen"), fact(DIET, "vegetarian")],
            "transition",
        ),
        ("t3", S2, "transition"),
    ],
    ids=["supersede-not-applied", "retract-not-applied"],
)
def test_a_lifecycle_event_not_reflected_fails_its_transition(turn, observed, kind):
    recs = records(dict(GOVERNED, **{turn: observed}), reads=GOOD_READS)
    assert counts(recs)[kind] == (1, 2)


def test_a_retract_of_a_value_never_held_is_not_kept():
    # The store never held the hotel: nothing was retracted, though it holds nothing after.
    never = {t: [f for f in s if f[1] != "hotel"] for t, s in GOVERNED.items()}
    assert counts(records(never, reads=GOOD_READS))["transition"] == (1, 2)


# -- the reference inputs -----------------------------------------------------------------


def _history() -> list[Turn]:
    return [
        user(
            "t1", dict(op="assert", entity="alex", predicate="flight", value="07:15", scope="trip")
        ),
        Turn("t2", "tool", "FWD: your flight now departs at 6:05", source="forwarded-email"),
        user(
            "t3",
            dict(op="assert", entity="alex", predicate="flight", value="09:40", scope="trip"),
            dict(op="assert", entity="alex", predicate="diet", value="vegetarian"),
        ),
        user("t4", dict(op="forget", entity="alex", predicate="diet")),
        ask("t5", "q1", "alex", "flight", ("09:40",), scope="trip"),
        user("t6", dict(op="assert", entity="alex", predicate="diet", value="vegetarian")),
        Turn("t7", "tool", "SMS: hotel changed to Marriott", source="sms"),
        Turn("t8", "user", "Was it the Marriott? No, keep the hotel as it was."),
    ]


def test_replay_records_what_each_event_did_to_its_slot():
    ref = replay(trajectory(("c1", "2026-03-02", _history())))
    post = {c.turn: c.transitions for c in ref.checkpoints if c.kind == "post-update"}
    assert [(t.event, t.kind, t.removed, t.added) for t in post["t1"]] == [
        ("t1#1", "assert", (), ("07:15",))
    ]
    assert [(t.kind, t.removed, t.added) for t in post["t3"]] == [
        ("supersede", ("07:15",), ("09:40",)),
        ("assert", (), ("vegetarian",)),
    ]
    assert [(t.kind, t.removed) for t in post["t4"]] == [("forget", ("vegetarian",))]


def test_provenance_tracks_untrusted_and_forgotten_values():
    traj = trajectory(("c1", "2026-03-02", _history()))
    p = Provenance(traj, Lexicon(traj.schema, traj.principal))
    assert p.at("t1", after=True).untrusted() == []
    assert p.at("t2", after=True).untrusted() == [("flight", "06:05")]
    assert p.at("t4", after=True).forgotten_facts() == [
        ("t4#1", "alex", "diet", "vegetarian", "global")
    ]
    assert p.at("t5", after=False).forgotten_facts() == p.at("t4", after=True).forgotten_facts()
    # Stated again by the user: no longer forgotten.
    assert p.at("t6", after=True).forgotten_facts() == []
    # A value a tool turn forwarded and the user then names is no longer tool-only.
    assert ("hotel", "Marriott") in p.at("t7", after=True).untrusted()
    assert ("hotel", "Marriott") not in p.at("t8", after=True).untrusted()
    # World b: inserted turns count, on top of the state before the query.
    forwarded = Turn("t5~b1", "tool", "FWD: hotel is now Avenida", source="forwarded-email")
    assert ("hotel", "Avenida") in p.at("t5", after=False, inserted=[forwarded]).untrusted()
    assert ("hotel", "Avenida") not in p.at("t5", after=False).untrusted()


# -- the tallies apart: items that read no answer, and answer clauses ---------------------


def test_a_history_without_section_11_constructs_keeps_todays_figures():
    """Layout-4 figures are what they were: §10's kinds and totals as before, every §11 kind
    without an item, no task counts; the tallies apart only split §10's answer clauses off."""
    card = scorecard(records(GOVERNED, reads=GOOD_READS), PAPER)[C]
    assert (card["obligations"]["passed"], card["obligations"]["total"]) == (5, 5)
    assert (card["invariants"]["passed"], card["invariants"]["total"]) == (4, 4)
    assert all(
        v == {"passed": 0, "total": 0, "failed": []}
        for family in ("obligations", "invariants")
        for k, v in card[family]["kinds"].items()
        if k in GOVERNANCE_KINDS
    )
    assert card["model_independent"] == {
        "obligations": {"passed": 4, "total": 4, "failed": []},  # without the conflict probe
        "invariants": {"passed": 4, "total": 4, "failed": []},  # deletion without its answers
    }
    assert card["answer_dependent"] == {
        "obligations": {"passed": 1, "total": 1, "failed": []},  # the conflict probe
        "invariants": {"passed": 1, "total": 1, "failed": []},  # deletion's answer clause
    }
    assert task_counts(records(GOVERNED, reads=GOOD_READS), PAPER) is None


def test_an_adopted_injected_value_fails_only_the_answer_dependent_tally():
    harmed = (GOOD_READS[0], conflict_probe("6:05.", ["06:05"], [item(FLIGHT, "09:40")]))
    card = scorecard(records(GOVERNED, reads=harmed), PAPER)[C]
    assert card["obligations"]["kinds"]["conflict"]["failed"] == ["p1"]
    assert card["model_independent"]["obligations"] == {"passed": 4, "total": 4, "failed": []}
    assert card["answer_dependent"]["obligations"] == {
        "passed": 0,
        "total": 1,
        "failed": ["conflict:p1"],
    }


def test_deletion_s_answer_clause_is_tallied_apart_from_its_exposure_clause():
    asked = query(
        [],
        "You are vegetarian.",
        ["vegetarian"],
        tau=("alex", "diet", "global", "2026-03-02"),
        authorized=[],
        authorized_a=[],
        gold=[],
    )
    card = scorecard(records(GOVERNED, reads=(asked, GOOD_READS[1])), PAPER)[C]
    assert card["invariants"]["kinds"]["deletion"]["failed"] == ["t4#1"]
    assert card["model_independent"]["invariants"]["failed"] == []  # nothing exposed
    assert card["answer_dependent"]["invariants"]["failed"] == ["deletion:t4#1"]
    # Exposing the forgotten value fails the model-independent part, whatever is answered.
    shown = query([item(FLIGHT, "09:40"), item(DIET, "vegetarian")], "09:40.", ["09:40"])
    card = scorecard(records(GOVERNED, reads=(shown, GOOD_READS[1])), PAPER)[C]
    assert card["model_independent"]["invariants"]["failed"] == ["deletion:t4#1"]
    assert card["answer_dependent"]["invariants"]["failed"] == []


# -- §11: the governance-shaped kinds on a hand-built governed history ---------------------

G = "PLACE"
ACCOUNT = "joint_account"
BILL = ("nora", "electricity_bill", "global")
PARTY = ("nora", "party_time", "global")
SALARY = ("theo", "salary", "global")
STATE = [fact(BILL, "120 EUR"), fact(PARTY, "19:00"), fact(SALARY, "4100 EUR")]
REQUEST_T1 = ("t1", "h-t1", "theo", ACCOUNT, 1, ["g1#1"], "requested")
REQUEST_T2 = ("t2", "h-t2", "theo", ACCOUNT, 2, ["g1#1"], "requested")
K1 = ("g4#1", *PARTY, "theo", "20:00", ["19:00"], "pending")


def gt(event: str, kind: str, **kw: Any) -> GovernanceTransitionRecord:
    return GovernanceTransitionRecord(event=event, kind=kind, **kw)


def _timeline() -> list[tuple[str, str, list, list, GovernanceRows | None]]:
    """(turn, checkpoint, lifecycle transitions, governance transitions, Γ*) of world a."""
    granted = [(ACCOUNT, "theo", 1, True)]
    revoked = [(ACCOUNT, "theo", 2, False)]
    shares = [(*BILL, "theo")]
    both = [REQUEST_T1, REQUEST_T2]
    reverted = [(*REQUEST_T1[:6], "reverted"), REQUEST_T2]
    resolved = [(*K1[:7], "resolved")]
    return [
        (
            "g1",
            "post-update",
            [
                transition("g1#1", "assert", BILL, added=["120 EUR"]),
                transition("g1#2", "assert", PARTY, added=["19:00"]),
                transition("g1#3", "assert", SALARY, added=["4100 EUR"]),
            ],
            [],
            GovernanceRows(),
        ),
        (
            "g2",
            "post-update",
            [],
            [
                gt("g2#1", "share", slot=BILL, principal="theo"),
                gt("g2#2", "grant", principal="theo"),
            ],
            GovernanceRows(epochs=granted, shares=shares),
        ),
        (
            "c-t1",
            "pre-task",
            [],
            [gt("t1", "request")],
            GovernanceRows(epochs=granted, shares=shares, requests=[REQUEST_T1]),
        ),
        (
            "g3",
            "post-update",
            [],
            [gt("g3#1", "revoke", principal="theo")],
            GovernanceRows(epochs=revoked, shares=shares, requests=[REQUEST_T1]),
        ),
        (
            "c-t2",
            "pre-task",
            [],
            [gt("t2", "request")],
            GovernanceRows(epochs=revoked, shares=shares, requests=both),
        ),
        (
            "g4",
            "post-update",
            [],
            [gt("g4#1", "propose", slot=PARTY, principal="theo", value="20:00")],
            GovernanceRows(epochs=revoked, shares=shares, requests=both, conflicts=[K1]),
        ),
        ("q1", "pre-query", [], [], None),
        (
            "g5",
            "post-update",
            [],
            [],
            GovernanceRows(epochs=revoked, shares=shares, requests=both, conflicts=resolved),
        ),
        (
            "r1",
            "pre-task",
            [],
            [gt("t1", "duplicate")],
            GovernanceRows(epochs=revoked, shares=shares, requests=both, conflicts=resolved),
        ),
        (
            "g6",
            "post-update",
            [],
            [gt("g6#1", "rollback")],
            GovernanceRows(epochs=revoked, shares=shares, requests=reverted, conflicts=resolved),
        ),
        (
            "g7",
            "post-update",
            [],
            [gt("g1#1", "duplicate", slot=BILL)],
            GovernanceRows(epochs=revoked, shares=shares, requests=reverted, conflicts=resolved),
        ),
    ]


def exposed_fact(slot, value, *, visible: bool = True, event: str = "g1#1") -> ExposedRecord:
    return item(slot, value, text=f"{slot[1]}: {value}").model_copy(
        update={
            "id": f"{event}:{value}",
            "facts": [
                item(slot, value).facts[0].model_copy(update={"visible": visible}),
            ],
        }
    )


def execute(args=(("120 EUR",),), handle="h-t1", sources=("g1#1",)) -> GateDecisionRecord:
    return GateDecisionRecord(
        kind="execute",
        args=[list(a) for a in args],
        handle=handle,
        sources=list(sources),
    )


DECISIONS = {
    "c-t1": execute(),
    "c-t2": GateDecisionRecord(kind="block", reasons=["stale-epoch"]),
    "r1": GateDecisionRecord(kind="duplicate"),
}


def task_record(
    delivery: str, decision: GateDecisionRecord, exposed: list[ExposedRecord], condition: str
) -> TaskRecord:
    task = "t2" if delivery == "c-t2" else "t1"
    allowed = task == "t1"
    return TaskRecord(
        task=task,
        delivery=delivery,
        turn=f"c-{task}",
        run_turn=f"c-{task}",
        conversation="c1",
        read_on="2026-03-02",
        condition=condition,
        asker="theo",
        redelivery=delivery == "r1",
        reads=[ProbeRead(exposed=exposed, admitted=None, raw_answer=None, outcome=None)],
        taus=[(*BILL, "2026-03-02")],
        decision=decision,
        reference=TaskReferenceRecord(
            decision="allow" if allowed else "block",
            reasons=[] if allowed else ["stale-epoch"],
            args=[["120 EUR"]] if allowed else None,
            links=["g1#1"],
        ),
        foreign_present=True,  # nora's party time is hers alone
    )


def governed(
    *,
    condition: str = G,
    ledger: bool = True,
    tamper: dict[str, GovernanceRows] | None = None,
    state: dict[str, list] | None = None,
    decisions: dict[str, GateDecisionRecord] | None = None,
    task_reads: dict[str, list[ExposedRecord]] | None = None,
    query_exposed: list[ExposedRecord] | None = None,
) -> RunRecords:
    """The governed history as one condition's records. `ledger`: Γ^phys is Γ* (else empty);
    `tamper`: Γ^phys at some turns; `state`: S^phys at some turns (else S*); `decisions`:
    the act gate's per delivery; `task_reads` and `query_exposed`: what reads exposed."""
    out = RunRecords()
    previous: tuple[str, str] | None = None
    for turn, kind, transitions, moves, reference in _timeline():
        observed = (tamper or {}).get(turn, reference if ledger else GovernanceRows())
        out.checkpoints.append(
            CheckpointRecord(
                turn=turn,
                checkpoint=kind,
                conversation="c1",
                date="2026-03-02",
                condition=condition,
                query="q1" if kind == "pre-query" else None,
                observed=sorted((state or {}).get(turn, STATE)),
                reference=sorted(STATE),
                transitions=transitions,
                previous=previous if kind == "post-update" else None,
                governance=None
                if reference is None
                else GovernanceRecord(observed=observed, reference=reference),
                governance_transitions=moves,
            )
        )
        previous = (turn, kind)
    bill = [exposed_fact(BILL, "120 EUR")]
    for delivery in ("c-t1", "c-t2", "r1"):
        decision = (decisions or {}).get(delivery, DECISIONS[delivery])
        reads = (task_reads or {}).get(delivery, bill)
        out.tasks.append(task_record(delivery, decision, reads, condition))
    out.queries.append(
        query(
            bill if query_exposed is None else query_exposed,
            "120 EUR.",
            ["120 EUR"],
            condition=condition,
            turn="q1",
            tau=(*BILL, "2026-03-02"),
            gold=["120 EUR"],
            authorized=[(BILL[0], BILL[1], "120 EUR", BILL[2])],
            authorized_a=[(BILL[0], BILL[1], "120 EUR", BILL[2])],
            forgotten=[],
            asker="nora",
            foreign_present=True,  # theo's salary is his alone
        )
    )
    return out


def gcounts(recs: RunRecords) -> dict[str, tuple[int, int]]:
    return {k: v for k, v in counts(recs, G).items() if k in GOVERNANCE_KINDS}


def failures(recs: RunRecords, kind: str) -> dict[str, str]:
    return {
        i.item: i.evidence
        for i in scorecard_items(recs, PAPER)
        if i.condition == G and i.kind == kind and not i.passed
    }


GOVERNED_COUNTS = {
    "act": (1, 1),  # t1
    "epoch": (1, 1),  # g3's revoke
    "block": (1, 1),  # t2
    "surface": (1, 1),  # g4's proposal
    "rollback": (1, 1),  # g6's rollback of t1
    "authority": (2, 2),  # t2 (stale-epoch) and the proposal
    "traceability": (2, 2),  # t1 and t2
    "non-exposure": (3, 3),  # q1 (nora) and t1, t2 (theo)
    "idempotence": (2, 2),  # t1 delivered again, g1#1 delivered again
}


def test_a_governed_store_keeps_every_governance_obligation_and_invariant():
    recs = governed()
    assert gcounts(recs) == GOVERNED_COUNTS
    card = scorecard(recs, PAPER)[G]
    assert card["obligations"]["kinds"]["epoch"]["failed"] == []
    assert card["model_independent"]["obligations"]["failed"] == []
    assert card["model_independent"]["invariants"]["failed"] == []
    ids = {
        k: [i.item for i in scorecard_items(recs, PAPER) if i.condition == G and i.kind == k]
        for k in GOVERNED_COUNTS
    }
    assert ids == {
        "act": ["t1"],
        "epoch": ["g3#1"],
        "block": ["t2"],
        "surface": ["g4#1"],
        "rollback": ["g6#1"],
        "authority": ["t2", "g4#1"],
        "traceability": ["t1", "t2"],
        "non-exposure": ["query:q1", "task:t1", "task:t2"],
        "idempotence": ["t1", "g1#1"],
    }


def test_a_store_without_a_ledger_fails_every_epoch_surface_and_rollback():
    got = gcounts(governed(ledger=False))
    assert got == {**GOVERNED_COUNTS, "epoch": (0, 1), "surface": (0, 1), "rollback": (0, 1)}
    assert "ledger's epoch None is not" in failures(governed(ledger=False), "epoch")["g3#1"]


@pytest.mark.parametrize(
    ("decision", "why"),
    [
        (GateDecisionRecord(kind="no-support"), "first decision c-t1: no-support"),
        (execute(args=(("80 EUR",),)), "executed with [['80 EUR']], not [['120 EUR']]"),
    ],
    ids=["not-executed", "wrong-args"],
)
def test_act_fails_unless_the_allowed_task_executes_with_the_reference_args(decision, why):
    recs = governed(decisions={"c-t1": decision})
    assert gcounts(recs)["act"] == (0, 1)
    assert why in failures(recs, "act")["t1"]


def test_act_reads_the_first_decision_not_a_redelivery():
    # The redelivery executes; the first decision did not: act fails (and idempotence too).
    recs = governed(decisions={"c-t1": GateDecisionRecord(kind="no-support"), "r1": execute()})
    assert gcounts(recs)["act"] == (0, 1)
    assert gcounts(recs)["idempotence"] == (1, 2)


def test_epoch_fails_when_the_ledger_still_holds_a_revoked_permission():
    stale = GovernanceRows(epochs=[(ACCOUNT, "theo", 1, True)], shares=[(*BILL, "theo")])
    recs = governed(tamper={"g4": stale})  # right at the revoke it was right, later not
    assert gcounts(recs)["epoch"] == (0, 1)
    assert "g4: ledger's epoch" in failures(recs, "epoch")["g3#1"]
    # Before the revoke the epoch is not judged by this item.
    assert gcounts(governed(tamper={"g2": GovernanceRows()}))["epoch"] == (1, 1)


@pytest.mark.parametrize(
    "decision",
    [
        GateDecisionRecord(kind="no-support"),
        GateDecisionRecord(kind="block", reasons=["out-of-scope"]),
        execute(),
    ],
    ids=["no-support", "another-reason", "executed"],
)
def test_block_needs_a_block_for_one_of_the_reference_reasons(decision):
    recs = governed(decisions={"c-t2": decision})
    assert gcounts(recs)["block"] == (0, 1)
    # Executing a task blocked for a stale epoch also breaks authority.
    assert gcounts(recs)["authority"] == ((1, 2) if decision.kind == "execute" else (2, 2))


def test_surface_fails_when_the_ledger_does_not_show_the_conflict_until_resolved():
    base = _timeline()
    at = {turn: ref for turn, _k, _t, _m, ref in base}
    assert at["g5"] is not None and at["g4"] is not None
    unresolved = at["g5"].model_copy(update={"conflicts": [K1]})
    assert gcounts(governed(tamper={"g5": unresolved}))["surface"] == (0, 1)
    missing = at["g4"].model_copy(update={"conflicts": []})
    recs = governed(tamper={"g4": missing})
    assert gcounts(recs)["surface"] == (0, 1)
    assert "g4: ledger's conflict None is not" in failures(recs, "surface")["g4#1"]
    # After the resolution the conflict row is not this item's business.
    assert gcounts(governed(tamper={"g6": at["g7"].model_copy(update={"conflicts": []})}))[
        "surface"
    ] == (1, 1)


def test_rollback_needs_an_executed_task_and_a_reverted_request_from_then_on():
    base = {turn: ref for turn, _k, _t, _m, ref in _timeline()}
    assert base["g7"] is not None
    forgotten = base["g7"].model_copy(update={"requests": [REQUEST_T1, REQUEST_T2]})
    recs = governed(tamper={"g7": forgotten})
    assert gcounts(recs)["rollback"] == (0, 1)
    assert "g7 (post-update): ledger's request" in failures(recs, "rollback")["g6#1"]
    never = governed(decisions={"c-t1": GateDecisionRecord(kind="no-support")})
    assert gcounts(never)["rollback"] == (0, 1)
    assert "task t1 was never executed" in failures(never, "rollback")["g6#1"]


def test_authority_fails_when_a_checkpoint_holds_the_proposed_value_s_star_does_not():
    adopted = sorted([fact(BILL, "120 EUR"), fact(PARTY, "20:00"), fact(SALARY, "4100 EUR")])
    recs = governed(state={"q1": adopted})  # the pre-query checkpoint, between k and g5
    assert gcounts(recs)["authority"] == (1, 2)
    assert (
        "q1 (pre-query) holds ['nora', 'party_time', '20:00', 'global']"
        in failures(recs, "authority")["g4#1"]
    )
    # After the resolution (g5) holding 20:00 is not this item's business.
    assert gcounts(governed(state={"g6": adopted}))["authority"] == (2, 2)


@pytest.mark.parametrize(
    ("decision", "why"),
    [
        (execute(handle=None), "executed without a handle"),
        (execute(handle="h-t9"), "handle 'h-t9' is not the request's 'h-t1'"),
        (execute(sources=(None,)), "executed with a null source"),
        (execute(sources=("g9#1",)), "sources ['g9#1'] not in the reference's links"),
    ],
    ids=["no-handle", "other-handle", "null-source", "unlinked-source"],
)
def test_traceability_fails_on_an_execute_without_the_request_s_handle_and_links(decision, why):
    recs = governed(decisions={"c-t1": decision})
    assert gcounts(recs)["traceability"] == (1, 2)
    assert why in failures(recs, "traceability")["t1"]


def test_non_exposure_fails_when_a_read_shows_a_fact_its_asker_may_not_see():
    salary = exposed_fact(SALARY, "4100 EUR", visible=False, event="g1#3")
    bill = exposed_fact(BILL, "120 EUR")
    recs = governed(query_exposed=[bill, salary])
    assert gcounts(recs)["non-exposure"] == (2, 3)
    assert "4100 EUR" in failures(recs, "non-exposure")["query:q1"]
    recs = governed(task_reads={"c-t2": [bill, salary]})
    assert gcounts(recs)["non-exposure"] == (2, 3)
    assert set(failures(recs, "non-exposure")) == {"task:t2"}


def test_non_exposure_fails_when_a_task_executes_with_a_foreign_value():
    hidden = exposed_fact(BILL, "95 EUR", visible=False)
    recs = governed(task_reads={"c-t1": [hidden]}, decisions={"c-t1": execute(args=(("95 EUR",),))})
    assert "executed with foreign value(s) ['95 EUR']" in failures(recs, "non-exposure")["task:t1"]


def test_idempotence_fails_when_a_redelivery_executes_or_changes_the_slot():
    recs = governed(decisions={"r1": execute()})
    assert gcounts(recs)["idempotence"] == (1, 2)
    assert "r1: execute" in failures(recs, "idempotence")["t1"]
    twice = sorted([*STATE, fact(BILL, "95 EUR")])
    recs = governed(state={"g7": twice})
    assert gcounts(recs)["idempotence"] == (1, 2)
    assert (
        "g7: slot held ['120 EUR'], now ['120 EUR', '95 EUR']"
        in failures(recs, "idempotence")["g1#1"]
    )


def test_governance_kinds_count_in_the_totals_and_in_the_model_independent_tally():
    card = scorecard(governed(ledger=False), PAPER)[G]
    # §10 items of this history: the support obligation and the exposure of q1.
    assert (card["obligations"]["passed"], card["obligations"]["total"]) == (3, 6)
    assert (card["invariants"]["passed"], card["invariants"]["total"]) == (10, 10)
    assert card["model_independent"]["obligations"] == {
        "passed": 3,
        "total": 6,
        "failed": ["epoch:g3#1", "surface:g4#1", "rollback:g6#1"],
    }
    assert card["answer_dependent"]["obligations"] == {"passed": 0, "total": 0, "failed": []}


def test_task_counts_per_condition_and_what_matches_the_reference():
    recs = governed()
    assert task_counts(recs, PAPER) == {
        "Native": dict.fromkeys(
            ("deliveries", "executed", "blocked", "no_support", "duplicate", "matching"), 0
        ),
        "CSS": dict.fromkeys(
            ("deliveries", "executed", "blocked", "no_support", "duplicate", "matching"), 0
        ),
        "QASC": dict.fromkeys(
            ("deliveries", "executed", "blocked", "no_support", "duplicate", "matching"), 0
        ),
        "PLACE": {
            "deliveries": 3,
            "executed": 1,
            "blocked": 1,
            "no_support": 0,
            "duplicate": 1,
            "matching": 3,
        },
    }
    plain = governed(
        decisions={
            "c-t1": execute(args=(("80 EUR",),)),
            "c-t2": GateDecisionRecord(kind="no-support"),
            "r1": execute(),
        }
    )
    assert task_counts(plain, PAPER)["PLACE"] == {
        "deliveries": 3,
        "executed": 2,
        "blocked": 0,
        "no_support": 1,
        "duplicate": 0,
        "matching": 0,
    }
    assert [decision_matches(t) for t in recs.tasks] == [True, True, True]


# -- amendment 19 (plain text judged against S*'s history) and §10's "either world" ---------


def _probe_after_t4(store_items: list[ExposedRecord], **kw: Any) -> ProbeRecord:
    """A utility probe that reads the store as it stands after t4 (it `follows` t4)."""
    fields: dict[str, Any] = dict(probe="p2", family="supersession", follows=("t4", "post-update"))
    return probe(store_items, **{**fields, **kw})


def test_a_superseded_value_in_plain_text_breaks_the_exposure_invariant():
    # Append keeps the user's old sentence; β reads it as an active, open-window fact, so its
    # `ineligible` is false. S*'s history holds 07:15 as superseded at t2: it fails.
    old = item(FLIGHT, "07:15", text="My flight leaves at 07:15.")
    assert not old.ineligible
    recs = records(GOVERNED, reads=(*GOOD_READS, _probe_after_t4([item(FLIGHT, "09:40"), old])))
    assert counts(recs)["exposure"] == (2, 3)
    (bad,) = [i for i in scorecard_items(recs, PAPER) if not i.passed]
    assert (bad.kind, bad.item) == ("exposure", "probe:p2")
    assert "ended value(s) ['07:15']" in bad.evidence
    # The current value alone (what a governed store shows) holds the invariant.
    good = records(GOVERNED, reads=(*GOOD_READS, _probe_after_t4([item(FLIGHT, "09:40")])))
    assert counts(good)["exposure"] == (3, 3)


def test_an_expired_value_in_plain_text_breaks_exposure_and_a_value_s_star_never_held_does_not():
    # The flight's 09:40 ends on 2026-03-01 in S*, before the read's date (2026-03-02).
    recs = records(GOVERNED, reads=GOOD_READS)
    for c in recs.checkpoints:
        if c.turn == "t4":
            windowed = [
                (*f[:5], "2026-03-01") if tuple(f[:2]) == FLIGHT[:2] else f for f in c.reference
            ]
            recs.checkpoints[recs.checkpoints.index(c)] = c.model_copy(
                update={"reference": windowed}
            )
    expired = _probe_after_t4([item(FLIGHT, "09:40")], authorized=[], gold=[])
    recs.probes.append(expired)
    assert counts(recs)["exposure"] == (2, 3)
    # 06:05 only a tool turn stated: S* never held it, so it is promotion's business, not a
    # value S*'s history holds as ended (docs/decisions.md, "The exposure invariant").
    forwarded = records(GOVERNED, reads=(*GOOD_READS, _probe_after_t4([item(FLIGHT, "06:05")])))
    assert counts(forwarded)["exposure"] == (3, 3)


def test_a_forgotten_value_exposed_in_world_b_breaks_the_deletion_invariant():
    b = query(
        [item(FLIGHT, "09:40"), item(DIET, "vegetarian")], "09:40.", ["09:40"], world="b", turn="t6"
    )
    recs = records(GOVERNED, reads=(*GOOD_READS, b))
    assert counts(recs)["deletion"] == (0, 1)
    (bad,) = [i for i in scorecard_items(recs, PAPER) if not i.passed]
    assert "q1 (primary, world b) exposed id-vegetarian" in bad.evidence
    # World a alone shows nothing forgotten: the failure is world b's.
    assert counts(records(GOVERNED, reads=GOOD_READS))["deletion"] == (1, 1)
