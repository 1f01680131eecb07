"""Metrics on hand-built records whose values were computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from place.metrics import effects as fx
from place.metrics import endpoints as ep
from place.records import (
    CheckpointRecord,
    ExposedRecord,
    ForgetRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    ReadFactRecord,
)

HOTEL = ("alex", "hotel", "Lumen", "global")
STALE = ("alex", "hotel", "Avenida", "global")
DANA = ("dana", "hotel", "Marriott", "global")


def item(*facts: tuple[str, str, str, str], ineligible: bool = False) -> ExposedRecord:
    return ExposedRecord(
        id="m",
        text="t",
        score=1.0,
        ineligible=ineligible,
        lifecycle=None,
        facts=[
            ReadFactRecord(
                entity=f[0],
                predicate=f[1],
                value=f[2],
                scope=f[3],
                status="active",
                valid_from=None,
                valid_until=None,
                certified=False,
                readable=True,
                eligible=not ineligible,
            )
            for f in facts
        ],
    )


def query(
    qid: str = "q1",
    condition: str = "PLACE",
    world: str = "a",
    mode: str = "primary",
    outcome=("Lumen",),
    gold=("Lumen",),
    exposed=(),
    evaluated=(HOTEL,),
    authorized=(HOTEL,),
    authorized_b=(HOTEL,),
    state_correct: bool = True,
    conversation: str = "c1",
) -> QueryRecord:
    return QueryRecord(
        query=qid,
        turn="t",
        conversation=conversation,
        family="scope",
        condition=condition,
        world=world,
        mode=mode,
        tau=("alex", "hotel", "global", "2026-03-02"),
        question="?",
        exposed=list(exposed),
        admitted=None,
        raw_answer="x",
        outcome=list(outcome),
        gold=list(gold),
        authorized=[list(f) for f in (authorized if world == "a" else authorized_b)],
        authorized_a=[list(f) for f in authorized],
        authorized_b=None if authorized_b is None else [list(f) for f in authorized_b],
        evaluated=[list(f) for f in evaluated],
        state_correct=state_correct,
    )


def checkpoint(
    turn: str,
    condition: str,
    observed,
    reference,
    kind: str = "post-update",
    conversation: str = "c1",
    world: str = "a",
) -> CheckpointRecord:
    return CheckpointRecord(
        turn=turn,
        checkpoint=kind,
        conversation=conversation,
        date="2026-03-02",
        condition=condition,
        world=world,
        query=None if kind == "post-update" else "q1",
        observed=[[*f, None, None][:6] for f in observed],
        reference=[[*f, None, None][:6] for f in reference],
    )


def test_state_correctness_is_mean_f1_over_post_update_checkpoints() -> None:
    records = [
        checkpoint("t1", "Native", [HOTEL], [HOTEL]),  # 1.0
        checkpoint("t2", "Native", [HOTEL, STALE], [HOTEL]),  # P=1/2 R=1 -> 2/3
        checkpoint("t3", "Native", [], []),  # both empty -> 1.0
        checkpoint("t4", "Native", [STALE], [HOTEL], kind="pre-query"),  # ignored
    ]
    assert ep.state_correctness(records, "Native") == pytest.approx((1 + 2 / 3 + 1) / 3)


def test_factorization_reports_where_rows_disagree() -> None:
    records = [
        checkpoint("t1", "Native", [HOTEL], [HOTEL]),
        checkpoint("t1", "QASC", [HOTEL], [HOTEL]),
        checkpoint("t1", "CSS", [HOTEL], [HOTEL]),
        checkpoint("t1", "PLACE", [STALE], [HOTEL]),
    ]
    report = ep.factorization(records)
    assert not report.ok
    assert report.mismatches == ["t1 (post-update, world a): CSS != PLACE"]
    assert ep.factorization([*records[:3], checkpoint("t1", "PLACE", [HOTEL], [HOTEL])]).ok


def test_factorization_checks_world_b_and_windows() -> None:
    pre = dict(kind="pre-query", world="b")
    agree = [checkpoint("t2", c, [HOTEL], [HOTEL], **pre) for c in ("Native", "QASC")]
    assert ep.factorization(agree).ok
    differ = [
        checkpoint("t2", "Native", [HOTEL], [HOTEL], **pre),
        checkpoint("t2", "QASC", [], [HOTEL], **pre),
    ]
    report = ep.factorization(differ)
    assert report.mismatches == ["t2 (pre-query, world b): Native != QASC"]
    # The same fact read with another window is another observation.
    windowed = CheckpointRecord(
        **{**agree[1].model_dump(by_alias=True), "observed": [[*HOTEL, "2026-01-01", None]]}
    )
    assert not ep.factorization([agree[0], windowed]).ok
    # A row with one policy missing is a mismatch, never silently passed.
    assert not ep.factorization(agree[:1]).ok


def test_state_correctness_compares_facts_not_windows() -> None:
    c = CheckpointRecord(
        **{
            **checkpoint("t1", "CSS", [HOTEL], [HOTEL]).model_dump(by_alias=True),
            "observed": [[*HOTEL, None, None], [*HOTEL, "2026-01-01", "2026-02-01"]],
        }
    )
    assert ep.checkpoint_f1(c) == 1.0


def test_leakage_excludes_state_mediated_and_equal_but_wrong_pairs() -> None:
    rows = [
        # q1: counted, outcomes differ -> leak
        query("q1", world="a", outcome=("Lumen",)),
        query("q1", world="b", outcome=("Avenida",)),
        # q2: counted, same outcome -> no leak
        query("q2", world="a"),
        query("q2", world="b"),
        # q3: world b's authorized state differs -> state-mediated, excluded
        query("q3", world="a"),
        query("q3", world="b", evaluated=(STALE,), outcome=("Avenida",)),
        # q4: both worlds equal but wrong (differ from Q*) -> excluded
        query("q4", world="a", evaluated=(STALE,)),
        query("q4", world="b", evaluated=(STALE,), outcome=("Avenida",)),
        # q5: each world's evaluated set equals world a's Q*, but world b's own Q* differs
        # -> not counted (Q*_a and Q*_b must agree and each world must match its own)
        query("q5", world="a", authorized_b=(STALE,)),
        query("q5", world="b", authorized_b=(STALE,), outcome=("Avenida",)),
        # q6: no world b recorded -> no pair
        query("q6", world="a", authorized_b=None),
    ]
    assert ep.leakage_pairs(rows, "PLACE") == {
        "q1": True,
        "q2": False,
        "q3": None,
        "q4": None,
        "q5": None,
    }
    assert ep.leakage_rate(rows, "PLACE") == (0.5, 2)
    assert ep.leakage_rate(rows, "CSS") == (None, 0)


def test_joint_success_needs_state_support_no_exposure_and_right_answer() -> None:
    ok = query(exposed=[item(HOTEL)])
    assert ep.joint_success(ok)
    assert not ep.joint_success(query(exposed=[item(HOTEL)], state_correct=False))
    assert not ep.joint_success(query(exposed=[]))  # Q* not readable from exposed items
    assert not ep.joint_success(query(exposed=[item(HOTEL), item(DANA, ineligible=True)]))
    assert not ep.joint_success(query(exposed=[item(HOTEL)], outcome=("Avenida",)))
    # Abstention gold with empty Q*: supported trivially.
    assert ep.joint_success(
        query(exposed=[], outcome=("ABSTAIN",), gold=(), authorized=(), evaluated=())
    )
    # The metric itself reads the trajectory's empty gold as ABSTAIN: an empty Ω is wrong.
    assert not ep.joint_success(query(exposed=[], outcome=(), gold=(), authorized=(), evaluated=()))


def test_answer_correctness_is_f1_of_outcome_against_gold() -> None:
    rows = [
        query("q1", outcome=("Lumen",)),  # 1
        query("q2", outcome=("Lumen", "Avenida")),  # P=1/2 R=1 -> 2/3
        query("q3", outcome=(), gold=()),  # gold [] read as {ABSTAIN}; empty Ω -> 0
        query("q5", outcome=("ABSTAIN",), gold=()),  # 1
        query("q4", world="b", outcome=()),  # world b ignored
    ]
    assert ep.answer_correctness(rows, "PLACE") == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)


def probe(
    pid: str,
    exposed,
    authorized=(HOTEL,),
    conflict: str | None = None,
    outcome=None,
    gold=("Lumen",),
    condition: str = "Native",
    injected_exposed=None,
) -> ProbeRecord:
    injected = None
    if conflict is not None:
        injected = ProbeRead(
            exposed=list(exposed if injected_exposed is None else injected_exposed),
            admitted=None,
            raw_answer="x",
            outcome=list(outcome or ()),
        )
    return ProbeRecord(
        probe=pid,
        after="t",
        conversation="c1",
        family="scope",
        condition=condition,
        tau=("alex", "hotel", "global", "2026-03-02"),
        question="?",
        clean=ProbeRead(exposed=list(exposed), admitted=None, raw_answer=None, outcome=None),
        injected=injected,
        gold=list(gold),
        authorized=[list(f) for f in authorized],
        conflict_value=conflict,
    )


def test_utility_probe_metrics() -> None:
    rows = [
        probe("p1", [item(HOTEL)]),  # supported
        probe("p2", [item(STALE)]),  # not supported
        probe("p3", [], authorized=(), gold=()),  # no need: excluded
        probe("p4", [item(HOTEL), item(DANA, ineligible=True)]),  # supported, exposed
        probe("p5", [item(HOTEL)], conflict="Avenida", outcome=("Avenida",)),  # harmed
        probe("p6", [item(HOTEL)], conflict="Avenida", outcome=("Lumen",)),  # right
        probe("p7", [item(HOTEL)], conflict="Avenida", outcome=("Lumen", "Avenida")),  # wrong+value
        probe("p8", [item(HOTEL)], conflict="Avenida", outcome=("Marriott",)),  # wrong, no value
    ]
    assert ep.needed_support(rows, "Native") == pytest.approx(6 / 7)
    assert ep.exposure_rate_probes(rows, "Native") == pytest.approx(1 / 8)
    assert ep.conflict_harm(rows, "Native") == pytest.approx(2 / 4)


def test_conflict_probe_support_and_exposure_come_from_the_clean_read() -> None:
    conflict = item(("alex", "hotel", "Avenida", "global"), ineligible=True)
    # The injected record displaced the eligible item from the injected read only.
    rows = [
        probe(
            "p1",
            [item(HOTEL)],
            conflict="Avenida",
            outcome=("Avenida",),
            injected_exposed=[conflict],
        )
    ]
    assert ep.needed_support(rows, "Native") == 1.0
    assert ep.exposure_rate_probes(rows, "Native") == 0.0
    assert ep.conflict_harm(rows, "Native") == 1.0
    # A conflict probe with an abstention gold: adopting the injected value is harm.
    abstain = probe("p2", [], authorized=(), gold=(), conflict="Avenida", outcome=("Avenida",))
    assert ep.conflict_harmed(abstain)


def _forget(
    event: str, check: str, residue: list[str], where: list[str] | None = None
) -> ForgetRecord:
    return ForgetRecord(
        event=event,
        producer="native",
        check=check,
        slot=("alex", "diet", "global"),
        values=["vegetarian"],
        residue=residue,
        where=where if where is not None else ["point"] * len(residue),
    )


def test_deletion_residue_counts_events_with_residue_at_either_check() -> None:
    rows = [
        _forget("e1", "after", ["vegetarian diet"]),
        _forget("e1", "end", ["vegetarian diet"]),
        _forget("e2", "after", []),
        _forget("e2", "end", []),
        _forget("e3", "after", ["vegetarian diet"]),
        _forget("e3", "end", []),
    ]
    assert ep.deletion_residue(rows, "QASC") == pytest.approx(2 / 3)
    assert ep.deletion_residue(rows, "PLACE") is None


def test_deletion_residue_counts_only_what_precedes_the_forget() -> None:
    """docs/method.md §16.4: a string first found at the end was stored after the forget (a
    later mention: new information), unless a summary holds it (a derived copy)."""
    later = [_forget("e1", "after", []), _forget("e1", "end", ["vegetarian again, hypothetically"])]
    assert ep.deletion_residue(later, "QASC") == 0.0
    summary = [
        _forget("e1", "after", []),
        _forget("e1", "end", ["diet: vegetarian"], ["history+summary"]),
    ]
    assert ep.deletion_residue(summary, "QASC") == 1.0
    kept = ep.counted_residue(
        [*later, _forget("e2", "after", ["x"]), _forget("e2", "end", ["x", "y"])]
    )
    assert [k for _, k in kept] == [[], [], [0], [0]]


def _joint_rows(successes: dict[str, list[tuple[str, bool]]]) -> list[QueryRecord]:
    rows = []
    for condition, items in successes.items():
        for i, (conv, good) in enumerate(items):
            rows.append(
                query(
                    f"q{i}",
                    condition=condition,
                    conversation=conv,
                    exposed=[item(HOTEL)],
                    state_correct=good,
                )
            )
    return rows


def test_did_interaction_gain_by_hand() -> None:
    # JS: Native 0/4, QASC 1/4, CSS 2/4, PLACE 4/4 -> JointGain 1.0,
    # InteractionGain (1 - 0.5) - (0.25 - 0) = 0.25
    convs = ["c1", "c1", "c2", "c2"]
    pattern = {
        "Native": [False] * 4,
        "QASC": [True, False, False, False],
        "CSS": [True, True, False, False],
        "PLACE": [True] * 4,
    }
    rows = _joint_rows({c: list(zip(convs, v, strict=True)) for c, v in pattern.items()})
    out = fx.longitudinal_effects([], rows, ["c1", "c2"], seed=7, resamples=500)
    assert out["JointGain"].estimate == pytest.approx(1.0)
    assert out["InteractionGain"].estimate == pytest.approx(0.25)
    # LOCO: dropping c1 -> (1-0)-(0-0)=1; dropping c2 -> (1-1)-(0.5-0)=-0.5
    assert out["InteractionGain"].loco_range == pytest.approx((-0.5, 1.0))
    lo, hi = out["InteractionGain"].interval
    assert -0.5 <= lo <= 0.25 <= hi <= 1.0


def test_pair_bootstrap_is_seeded_and_reproducible() -> None:
    left = np.array([1.0, 0, 1, 1, 0, 1, 0, 0] * 5 + [0.0, 1, 1])
    right = np.array([0.0, 0, 1, 0, 0, 0, 1, 0] * 5 + [1.0, 0, 0])
    a = fx.pair_bootstrap(left, right, seed=11)
    b = fx.pair_bootstrap(left, right, seed=11)
    c = fx.pair_bootstrap(left, right, seed=12)
    assert a == b
    assert a.interval != c.interval
    assert a.estimate == pytest.approx((22 - 11) / 43) and a.n == 43


def test_pair_bootstrap_covers_a_known_difference() -> None:
    # Paired Bernoulli(0.3) vs Bernoulli(0.1): the 95 % interval should cover 0.2 about 95 %
    # of the time; with 300 datasets of 60 pairs, coverage far outside [0.88, 0.99] is a bug.
    rng = np.random.default_rng(2026)
    covered = 0
    trials = 300
    for t in range(trials):
        left = (rng.random(60) < 0.3).astype(float)
        right = (rng.random(60) < 0.1).astype(float)
        lo, hi = fx.pair_bootstrap(left, right, seed=t, resamples=1000).interval
        covered += lo <= 0.2 <= hi
    assert 0.88 <= covered / trials <= 0.99


def test_empty_leakage_gives_no_estimate() -> None:
    effect = fx.leakage_drop([], seed=1)
    assert effect.estimate is None and effect.n == 0
    assert math.isnan(ep.mean([]))


def _shown(entity: str, value: str, *, predicate: str = "flight", readable: bool = True):
    from place.records import ReadFactRecord

    return ReadFactRecord(
        entity=entity,
        predicate=predicate,
        value=value,
        scope="trip",
        status="active",
        valid_from=None,
        valid_until=None,
        certified=False,
        readable=readable,
        eligible=True,
    )


def _item(*facts, distractor: str | None = None):
    from place.records import ExposedRecord

    return ExposedRecord(
        id="m",
        text="t",
        score=1.0,
        facts=list(facts),
        lifecycle=None,
        ineligible=False,
        distractor=distractor,
    )


def test_read_level_judges_move_on_cases_built_to_move_them() -> None:
    """docs/method.md §16.3: each judge on a read that shows what it names, and on one that
    does not (where it must stay put)."""
    tau = ("alex", "flight", "trip", "2026-01-01")
    gold = frozenset({("alex", "flight", "09:40", "trip")})
    clean = ep.Read(tau, [_item(_shown("alex", "09:40"))], gold)
    stale = ep.Read(tau, [_item(_shown("alex", "07:15"))], gold)  # plain text, eligible
    other = ep.Read(tau, [_item(_shown("rita", "10:05"), distractor="entity")], gold)
    ended = ep.Read(tau, [_item(_shown("alex", "07:15", readable=False))], gold)
    assert (ep.wrong_value_shown(clean), ep.wrong_value_shown(stale)) == (False, True)
    assert not ep.wrong_value_shown(ended)  # a certified record that says it ended
    assert (ep.wrong_entity_shown(clean), ep.wrong_entity_shown(other)) == (False, True)
    assert (ep.distractor_share(clean), ep.distractor_share(other)) == (0.0, 1.0)
    assert ep.distractor_share(ep.Read(tau, [], gold)) is None
    assert (ep.current_in_context(clean), ep.current_in_context(stale)) == (True, False)
    assert ep.current_in_context(ep.Read(tau, [], frozenset())) is None
