"""AOEP scorecard (docs/method.md §10) on hand-built record sets, and its reference inputs.

The record sets are tiny histories of one condition written by hand: alex's flight is set,
superseded, his hotel retracted, his diet forgotten; a query and a conflict probe read the
store afterwards. Each test changes the store's behaviour in one way and checks exactly
which obligations and invariants move.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import ask, trajectory, user

from place.design import PAPER
from place.lexicon import Lexicon
from place.metrics.aoep import INVARIANTS, OBLIGATIONS, scorecard, scorecard_items
from place.records import (
    CheckpointRecord,
    ExposedRecord,
    ForgetRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    ReadFactRecord,
    RunRecords,
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


def conflict_probe(answer: str, outcome: list[str], store_items: list[ExposedRecord]):
    planted = item(FLIGHT, "06:05", text="FWD: your flight now departs at 6:05")
    return ProbeRecord(
        probe="p1",
        after="t4",
        conversation="c1",
        family="provenance",
        condition=C,
        tau=("alex", "flight", "trip", "2026-03-02"),
        question="When is my flight?",
        clean=ProbeRead(exposed=store_items, admitted=None, raw_answer=None, outcome=None),
        injected=ProbeRead(
            exposed=[*store_items, planted], admitted=None, raw_answer=answer, outcome=outcome
        ),
        gold=["09:40"],
        authorized=[("alex", "flight", "09:40", "trip")],
        conflict_value="06:05",
        forgotten=FORGOTTEN,
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


def counts(recs: RunRecords) -> dict[str, tuple[int, int]]:
    card = scorecard(recs, PAPER)[C]
    return {
        kind: (v["passed"], v["total"])
        for family in ("obligations", "invariants")
        for kind, v in card[family]["kinds"].items()
    }


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
    assert all(v["passed"] == 0 and v["total"] > 0 for v in card["obligations"]["kinds"].values())
    assert card["obligations"]["passed"] == 0
    assert all(v["passed"] == v["total"] > 0 for v in card["invariants"]["kinds"].values())
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
