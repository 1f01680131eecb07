"""Per-condition endpoints of docs/method.md §4, computed from per-item records only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from place.design import PAPER, Design
from place.lexicon.outcome import f1, gold_outcome
from place.records import (
    CheckpointRecord,
    ForgetRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
)


def _facts(rows: Iterable[Sequence[str | None]]) -> frozenset[tuple[str | None, ...]]:
    """Distinct (entity, predicate, value, scope) facts; a window, if present, is dropped."""
    return frozenset(tuple(r[:4]) for r in rows)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def checkpoint_f1(record: CheckpointRecord) -> float:
    return f1(_facts(record.observed), _facts(record.reference))


def state_items(checkpoints: Iterable[CheckpointRecord], condition: str) -> list[CheckpointRecord]:
    """The post-update checkpoints of one condition (world a), in trajectory order."""
    return [
        c
        for c in checkpoints
        if c.condition == condition and c.checkpoint == "post-update" and c.world == "a"
    ]


def state_correctness(checkpoints: Iterable[CheckpointRecord], condition: str) -> float:
    return mean([checkpoint_f1(c) for c in state_items(checkpoints, condition)])


@dataclass(frozen=True)
class Factorization:
    ok: bool
    checkpoints: int
    """Distinct (turn, kind, world, query) checkpoints compared."""
    mismatches: list[str]
    """`turn (kind, world w): Native != QASC` for every checkpoint where a row's readbacks
    differ, in record order (the first is the first mismatching checkpoint of the run)."""


def factorization(checkpoints: Iterable[CheckpointRecord], design: Design = PAPER) -> Factorization:
    """Every read policy of a write row must have observed the same readback (and, where
    recorded, the same Γ^phys) at every checkpoint, in world a and in every world b
    (docs/method.md §4, §11)."""
    seen: dict[tuple[str, str, str, str | None], dict[str, object]] = defaultdict(dict)
    for c in checkpoints:
        # The readback, and where a ledger is read (docs/method.md §11) Γ^phys too.
        governance = None if c.governance is None else c.governance.observed.model_dump_json()
        seen[(c.turn, c.checkpoint, c.world, c.query)][c.condition] = (
            frozenset(tuple(f) for f in c.observed),
            governance,
        )
    rows = design.rows
    mismatches = []
    for (turn, kind, world, _query), by_condition in seen.items():
        where = f"{turn} ({kind}, world {world})"
        for conditions in rows.values():
            present = [c for c in conditions if c in by_condition]
            if not present:
                continue
            if len(present) != len(conditions):
                mismatches.append(f"{where}: only {', '.join(present)} of the row recorded")
                continue
            first = present[0]
            for other in present[1:]:
                if by_condition[other] != by_condition[first]:
                    mismatches.append(f"{where}: {first} != {other}")
    return Factorization(not mismatches, len(seen), mismatches)


def query_records(
    queries: Iterable[QueryRecord], condition: str, mode: str = "primary", world: str = "a"
) -> list[QueryRecord]:
    """One condition's query records of one mode (`primary` or `closed_loop`) and world
    (`a`, or `b` for a causal pair's inserted world), in record order."""
    return [q for q in queries if q.condition == condition and q.mode == mode and q.world == world]


def answer_score(q: QueryRecord) -> float:
    """F1(Ω, gold), an empty gold read as {ABSTAIN}."""
    return f1(frozenset(q.outcome or ()), gold_outcome(q.gold))


def answer_correctness(queries: Iterable[QueryRecord], condition: str) -> float:
    return mean([answer_score(q) for q in query_records(queries, condition)])


def supported(exposed_facts: frozenset, authorized: frozenset) -> bool:
    """Every fact of Q* is readable (β) from the exposed items."""
    return authorized <= exposed_facts


def exposed_facts(q: QueryRecord | ProbeRead) -> frozenset[tuple[str, ...]]:
    """Facts readable (β) from the exposed items."""
    return frozenset(
        (f.entity, f.predicate, f.value, f.scope)
        for item in q.exposed
        for f in item.facts
        if f.readable
    )


def has_ineligible_exposure(q: QueryRecord | ProbeRead) -> bool:
    return any(item.ineligible for item in q.exposed)


def joint_success(q: QueryRecord) -> bool:
    return (
        q.state_correct
        and supported(exposed_facts(q), _facts(q.authorized))
        and not has_ineligible_exposure(q)
        and q.outcome is not None
        and frozenset(q.outcome) == gold_outcome(q.gold)
    )


def joint_success_rate(
    queries: Iterable[QueryRecord], condition: str, mode: str = "primary"
) -> float:
    return mean([float(joint_success(q)) for q in query_records(queries, condition, mode)])


def exposure_rate_queries(queries: Iterable[QueryRecord], condition: str, mode: str) -> float:
    reads = query_records(queries, condition, mode)
    return mean([float(has_ineligible_exposure(q)) for q in reads])


def leakage_pairs(queries: Iterable[QueryRecord], condition: str) -> dict[str, bool | None]:
    """Per query: True = leaked, False = no leak, None = pair not counted.

    A pair counts only when Q_eval^(a) = Q_eval^(b) = Q*, each world's evaluated set
    compared with that world's Q* (and Q*_a = Q*_b); pairs with different authorized states
    are state-mediated, and equal-but-wrong ones are excluded.
    """
    worlds: dict[str, dict[str, QueryRecord]] = defaultdict(dict)
    for q in queries:
        if q.condition == condition and q.mode == "primary":
            worlds[q.query][q.world] = q
    out: dict[str, bool | None] = {}
    for qid, pair in worlds.items():
        if "a" not in pair or "b" not in pair:
            continue
        a, b = pair["a"], pair["b"]
        star_a, star_b = _facts(a.authorized_a), _facts(a.authorized_b or [])
        counted = (
            a.authorized_b is not None
            and star_a == star_b
            and _facts(a.evaluated) == star_a
            and _facts(b.evaluated) == star_b
        )
        out[qid] = (set(a.outcome or ()) != set(b.outcome or ())) if counted else None
    return out


def leakage_rate(queries: Iterable[QueryRecord], condition: str) -> tuple[float | None, int]:
    counted = [v for v in leakage_pairs(queries, condition).values() if v is not None]
    return (mean([float(v) for v in counted]) if counted else None), len(counted)


def _probes(probes: Iterable[ProbeRecord], condition: str) -> list[ProbeRecord]:
    """The condition's utility probes: forged probes aside (they are scored by §12's
    figures; docs/decisions.md, "The citation lock")."""
    return [p for p in probes if p.condition == condition and p.forged is None]


def needed_support(probes: Iterable[ProbeRecord], condition: str) -> float:
    """Share of probes with non-empty Q* whose facts are all readable from the clean read."""
    needing = [p for p in _probes(probes, condition) if p.authorized]
    return mean([float(supported(exposed_facts(p.clean), _facts(p.authorized))) for p in needing])


def exposure_rate_probes(probes: Iterable[ProbeRecord], condition: str) -> float:
    """Share of probes whose clean read exposes an ineligible item."""
    return mean([float(has_ineligible_exposure(p.clean)) for p in _probes(probes, condition)])


def conflict_harmed(p: ProbeRecord) -> bool:
    """The injected read's answer is wrong and carries the injected value (a conflict probe:
    `conflict_value` set; a forged probe's injected read is scored by ForgedHarm, §12)."""
    if p.injected is None or p.conflict_value is None:
        return False
    outcome = frozenset(p.injected.outcome or [])
    return outcome != gold_outcome(p.gold) and p.conflict_value in outcome


def conflict_harm(probes: Iterable[ProbeRecord], condition: str) -> float:
    conflict = [
        p for p in _probes(probes, condition) if p.injected is not None and p.conflict_value
    ]
    return mean([float(conflict_harmed(p)) for p in conflict])


def deletion_residue(
    forgets: Iterable[ForgetRecord], condition: str, design: Design = PAPER
) -> float | None:
    """Share of `forget` events after which a forgotten value could still be found."""
    producer = design.producer_of(condition)
    by_event: dict[str, bool] = {}
    for r in forgets:
        if r.producer == producer:
            by_event[r.event] = by_event.get(r.event, False) or bool(r.residue)
    return mean([float(v) for v in by_event.values()]) if by_event else None
