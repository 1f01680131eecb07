"""The AOEP scorecard (docs/method.md §10): obligations and negative invariants, per item.

Two numbers, never blended: a store that keeps nothing passes every negative invariant and
keeps no obligation, so only the pair of them tells governance from amnesia. Every item is
judged from the run's records alone (docs/records.md, "AOEP scorecard"), and carries the
evidence that decided it, so the explore notebook can show why an item failed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from place.design import PAPER, Design
from place.metrics.endpoints import _facts, conflict_harmed, exposed_facts, query_records
from place.records import (
    CheckpointRecord,
    ExposedRecord,
    ProbeRecord,
    QueryRecord,
    RunRecords,
)

Family = Literal["obligation", "invariant"]
OBLIGATIONS: tuple[str, ...] = ("forget", "transition", "support", "conflict")
"""Things a system must do: carry out each forget; reflect each supersede, correction and
retract at its post-update checkpoint; expose all of Q*; not adopt an injected value."""
INVARIANTS: tuple[str, ...] = ("deletion", "promotion", "exposure")
"""Things a system must never do: show or say a forgotten value; hold an untrusted value
outside S*; expose an item of another entity or scope, or an expired, superseded or
retracted value."""
TRANSITION_KINDS = frozenset({"supersede", "correct", "retract"})


@dataclass(frozen=True)
class Item:
    """One obligation or negative invariant of one condition, and how it came out."""

    condition: str
    family: Family
    kind: str
    item: str
    """The event id (forget, transition, deletion), query or probe id (support, conflict),
    `predicate=value` (promotion) or `query:<id>` / `probe:<id>` (exposure)."""
    passed: bool
    evidence: str
    """Why it failed (the stored state, record text or answer that broke it); '' if passed."""


def _slot_values(record: CheckpointRecord | None, slot: tuple[str, str, str]) -> set[str]:
    if record is None:
        return set()
    return {f[2] for f in record.observed if (f[0], f[1], f[3]) == tuple(slot)}


def _text(item: ExposedRecord) -> str:
    return f"{item.id}: {item.text!r}"


class _Condition:
    """The records of one condition, indexed for the checks."""

    def __init__(self, records: RunRecords, condition: str, design: Design) -> None:
        self.name = condition
        self.producer = design.producer_of(condition)
        self.checkpoints = [c for c in records.checkpoints if c.condition == condition]
        self.world_a: dict[tuple[str, str], CheckpointRecord] = {
            (c.turn, c.checkpoint): c for c in self.checkpoints if c.world == "a"
        }
        self.queries = [q for q in records.queries if q.condition == condition]
        self.probes = [p for p in records.probes if p.condition == condition]
        self.residue: dict[str, list[str]] = defaultdict(list)
        for f in records.forgets:
            if f.producer == self.producer:
                self.residue[f.event].extend(f"{f.check}: {r!r}" for r in f.residue)

    def item(self, family: Family, kind: str, item: str, problems: list[str]) -> Item:
        return Item(self.name, family, kind, item, not problems, "; ".join(problems))

    # -- obligations ------------------------------------------------------------------

    def transitions(self) -> Iterable[Item]:
        for record in self.checkpoints:
            if record.world != "a" or record.checkpoint != "post-update":
                continue
            before = self.world_a.get(record.previous) if record.previous else None
            for t in record.transitions:
                if t.kind not in TRANSITION_KINDS and t.kind != "forget":
                    continue
                held, now = _slot_values(before, t.slot), _slot_values(record, t.slot)
                problems = []
                if t.kind in ("retract", "forget") and set(t.removed) - held:
                    problems.append(f"never held {sorted(set(t.removed) - held)} before")
                if set(t.removed) & now:
                    problems.append(f"still holds {sorted(set(t.removed) & now)}")
                if set(t.added) - now:
                    problems.append(f"does not hold {sorted(set(t.added) - now)}")
                if t.kind == "forget":
                    problems += [f"residue {r}" for r in self.residue.get(t.event, [])]
                    yield self.item("obligation", "forget", t.event, problems)
                else:
                    yield self.item("obligation", "transition", t.event, problems)

    def support(self) -> Iterable[Item]:
        for q in query_records(self.queries, self.name):
            if q.authorized:
                missing = _facts(q.authorized) - exposed_facts(q)
                problems = [f"not exposed: {sorted(missing)}"] if missing else []
                yield self.item("obligation", "support", q.query, problems)

    def conflict(self) -> Iterable[Item]:
        for p in self.probes:
            if p.injected is not None:
                problems = (
                    [f"answer {p.injected.raw_answer!r} adopts {p.conflict_value!r}"]
                    if conflict_harmed(p)
                    else []
                )
                yield self.item("obligation", "conflict", p.probe, problems)

    # -- negative invariants ----------------------------------------------------------

    def deletion(self) -> Iterable[Item]:
        events = [
            t
            for c in self.checkpoints
            if c.world == "a" and c.checkpoint == "post-update"
            for t in c.transitions
            if t.kind == "forget"
        ]
        reads: list[tuple[str, QueryRecord | ProbeRecord]] = [
            (f"{q.query} ({q.mode})", q) for q in self.queries if q.world == "a"
        ]
        reads += [(f"{p.probe} (probe)", p) for p in self.probes]
        for t in events:
            problems = []
            for where, read in reads:
                gone = {(e, p, v) for ev, e, p, v, _s in read.forgotten if ev == t.event}
                if not gone:
                    continue
                exposed = read.exposed if isinstance(read, QueryRecord) else read.clean.exposed
                for item in exposed:
                    if any((f.entity, f.predicate, f.value) in gone for f in item.facts):
                        problems.append(f"{where} exposed {_text(item)}")
                entity, predicate = read.tau[0], read.tau[1]
                if isinstance(read, QueryRecord) and (entity, predicate) == tuple(t.slot[:2]):
                    said = {v for e, p, v in gone if (e, p) == (entity, predicate)}
                    if said & set(read.outcome):
                        problems.append(f"{where} answered {read.raw_answer!r}")
            yield self.item("invariant", "deletion", t.event, problems)

    def promotion(self) -> Iterable[Item]:
        problems: dict[tuple[str, str], list[str]] = {}
        for c in self.checkpoints:
            untrusted = {(entity, predicate) for entity, predicate in c.untrusted}
            for pair in untrusted:
                problems.setdefault(pair, [])
            reference = _facts(c.reference)
            for f in c.observed:
                if (f[1], f[2]) in untrusted and tuple(f[:4]) not in reference:
                    where = f"{c.turn} ({c.checkpoint}, world {c.world})"
                    problems[(f[1], f[2])].append(f"{where} holds {list(f[:4])}")
        for (predicate, value), found in sorted(problems.items()):
            yield self.item("invariant", "promotion", f"{predicate}={value}", sorted(set(found)))

    def exposure(self) -> Iterable[Item]:
        reads: list[tuple[str, list[ExposedRecord]]] = [
            (f"query:{q.query}", q.exposed) for q in query_records(self.queries, self.name)
        ]
        reads += [(f"probe:{p.probe}", p.clean.exposed) for p in self.probes]
        for name, exposed in reads:
            bad = [f"exposed {_text(i)}" for i in exposed if i.ineligible]
            yield self.item("invariant", "exposure", name, bad)


def scorecard_items(records: RunRecords, design: Design = PAPER) -> list[Item]:
    """Every obligation and negative invariant of every condition, in design order."""
    out: list[Item] = []
    for name in design.names:
        c = _Condition(records, name, design)
        for gen in (c.transitions, c.support, c.conflict, c.deletion, c.promotion, c.exposure):
            out.extend(gen())
    return out


def scorecard(records: RunRecords, design: Design = PAPER) -> dict[str, dict]:
    """metrics.json `aoep`: per condition, passed/total per kind and per family, and the
    item ids of every failure."""
    items = scorecard_items(records, design)
    out: dict[str, dict] = {}
    for name in design.names:
        mine = [i for i in items if i.condition == name]
        doc: dict = {}
        for family, kinds in (("obligations", OBLIGATIONS), ("invariants", INVARIANTS)):
            per = {}
            for kind in kinds:
                of_kind = [i for i in mine if i.kind == kind]
                per[kind] = {
                    "passed": sum(i.passed for i in of_kind),
                    "total": len(of_kind),
                    "failed": [i.item for i in of_kind if not i.passed],
                }
            doc[family] = {
                "passed": sum(v["passed"] for v in per.values()),
                "total": sum(v["total"] for v in per.values()),
                "kinds": per,
            }
        out[name] = doc
    return out


__all__ = [
    "INVARIANTS",
    "OBLIGATIONS",
    "Item",
    "scorecard",
    "scorecard_items",
]
