"""Per-condition endpoints of docs/method.md §4, computed from per-item records only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from place.design import PAPER, Design
from place.lexicon.outcome import f1, gold_outcome
from place.records import (
    CheckpointRecord,
    ExposedRecord,
    ForgetRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    RunRecords,
    StepRecord,
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


def counted_residue(forgets: Iterable[ForgetRecord]) -> list[tuple[ForgetRecord, list[int]]]:
    """Each forget record with the indices of the residue strings that count (docs/method.md
    §16): only what precedes the forget. Right after the forget's step everything stored came
    from the turns up to it, so every string counts; at the end a string counts when it was
    already residue right after the forget (same event and producer), or when it is held by
    a derived summary (a copy made from records the forget should have removed). A string
    first stored after the forget is a later mention of the value: new information."""
    forgets = list(forgets)
    after = {(f.event, f.producer): set(f.residue) for f in forgets if f.check == "after"}
    out = []
    for f in forgets:
        if f.check == "after":
            out.append((f, list(range(len(f.residue)))))
            continue
        before = after.get((f.event, f.producer), set())
        kept = [
            i
            for i, text in enumerate(f.residue)
            if text in before or (i < len(f.where) and "summary" in f.where[i].split("+"))
        ]
        out.append((f, kept))
    return out


def deletion_residue(
    forgets: Iterable[ForgetRecord], condition: str, design: Design = PAPER
) -> float | None:
    """Share of `forget` events after which a forgotten value stated before the forget could
    still be found (`counted_residue`)."""
    producer = design.producer_of(condition)
    by_event: dict[str, bool] = {}
    for r, kept in counted_residue(forgets):
        if r.producer == producer:
            by_event[r.event] = by_event.get(r.event, False) or bool(kept)
    return mean([float(v) for v in by_event.values()]) if by_event else None


# --- read-level endpoints (docs/method.md §16) --------------------------------------------

ReadPart = Literal["all", "probes", "queries"]
"""Which recorded reads a read-level endpoint is over: probes' clean reads, world-a primary
query reads, or both."""


class Read(NamedTuple):
    tau: tuple[str, str, str, str]
    exposed: list[ExposedRecord]
    authorized: frozenset[tuple[str | None, ...]]


def recorded_reads(records: RunRecords, condition: str, part: ReadPart = "all") -> list[Read]:
    """The condition's reads: its utility probes' clean reads (forged probes aside, as for
    NeededSupport), then its world-a primary query reads."""
    reads: list[Read] = []
    if part in ("all", "probes"):
        reads += [
            Read(p.tau, p.clean.exposed, _facts(p.authorized))
            for p in _probes(records.probes, condition)
        ]
    if part in ("all", "queries"):
        reads += [
            Read(q.tau, q.exposed, _facts(q.authorized))
            for q in query_records(records.queries, condition)
        ]
    return reads


def _shown(read: Read) -> list[tuple[str, str, str, str]]:
    """The facts β yields from the read's exposed items (certified or plain text, eligible
    or not): a plain record's text counts whatever E would say of it."""
    return [
        (f.entity, f.predicate, f.value, f.scope)
        for item in read.exposed
        for f in item.facts
        if f.readable
    ]


def wrong_value_shown(read: Read) -> bool:
    """The exposed items yield a fact of the read's own slot whose value is not in Q*."""
    entity, predicate, scope, _ = read.tau
    gold = {f[2] for f in read.authorized}
    return any(
        (e, p, s) == (entity, predicate, scope) and v not in gold for e, p, v, s in _shown(read)
    )


def wrong_entity_shown(read: Read) -> bool:
    """The exposed items yield a fact of the queried predicate for another entity."""
    entity, predicate, _, _ = read.tau
    return any(p == predicate and e != entity for e, p, _v, _s in _shown(read))


def distractor_share(read: Read) -> float | None:
    """Share of the read's exposed items written from a distractor turn (None: none shown)."""
    if not read.exposed:
        return None
    return sum(item.distractor is not None for item in read.exposed) / len(read.exposed)


def current_in_context(read: Read) -> bool | None:
    """Every fact of a non-empty Q* is readable from the exposed items (None: Q* is empty)."""
    if not read.authorized:
        return None
    return supported(exposed_facts_of(read.exposed), read.authorized)


def exposed_facts_of(exposed: Iterable[ExposedRecord]) -> frozenset[tuple[str, ...]]:
    return frozenset(
        (f.entity, f.predicate, f.value, f.scope)
        for item in exposed
        for f in item.facts
        if f.readable
    )


ReadJudge = Callable[[Read], bool | float | None]
"""A read-level judgement: its value for one read, None where it is undefined."""


def read_share(
    records: RunRecords,
    condition: str,
    part: ReadPart,
    judge: ReadJudge,
) -> float | None:
    """Mean of `judge` over the reads it is defined on (None: no such read)."""
    values = [v for r in recorded_reads(records, condition, part) if (v := judge(r)) is not None]
    return mean([float(v) for v in values]) if values else None


STORE_EVENTS = frozenset({"ADD", "UPDATE", "DELETE"})


def store_operations(step: StepRecord) -> int:
    """What a step did to the store: Mem0's ADD/UPDATE/DELETE events, a certified record
    change (css, ssgm), but not a NONE decision or the bounded producer's budget entry."""
    return sum(
        1
        for op in step.operations
        if op.get("op") != "bounded" and op.get("event", "ADD") in STORE_EVENTS
    )


def distractor_writes(steps: Iterable[StepRecord], condition: str, design: Design) -> int:
    """Store operations of the producer's world-a steps that write a distractor block."""
    producer = design.producer_of(condition)
    return sum(
        store_operations(s)
        for s in steps
        if s.producer == producer and s.world == "a" and s.distractor is not None
    )
