"""The citation lock's figures (docs/method.md §12.5), from a run's records alone.

- The provenance audit: of the producer's store at the end (`records/audits.jsonl`), and of
  every exposed occurrence in the condition's reads (world-a primary queries, clean probe
  reads, task reads), the share of records in each class (openable, pointer-only,
  orphaned) and how many there were.
- Hearsay: over the same reads, how many admitted records the lock excluded, and in how
  many reads.
- Forged probes: ForgedExposure, the share of forged probes whose injected read exposes the
  forged record; ForgedHarm, the share whose answer on it is wrong and carries the forged
  value; both per kind too.
"""

from __future__ import annotations

from collections.abc import Iterator

from place.design import Design
from place.lexicon import gold_outcome
from place.records import ExposedRecord, ProbeRead, ProbeRecord, ProvenanceClass, RunRecords


def _share(hits: int, n: int) -> float | None:
    return None if n == 0 else hits / n


def reads(records: RunRecords, condition: str) -> Iterator[tuple[list[ExposedRecord], list[str]]]:
    """(exposed, hearsay) of every read the exposed audit and the hearsay counts cover."""
    for q in records.queries:
        if q.condition == condition and q.world == "a" and q.mode == "primary":
            yield q.exposed, q.hearsay
    for p in records.probes:
        if p.condition == condition:
            yield p.clean.exposed, p.clean.hearsay
    for t in records.tasks:
        if t.condition == condition:
            for r in t.reads:
                yield r.exposed, r.hearsay


def store_audit(records: RunRecords, condition: str, design: Design) -> list[ProvenanceClass]:
    """The classes of the condition's producer's stored records at the end."""
    producer = design.producer_of(condition)
    return [i.provenance for a in records.audits if a.producer == producer for i in a.items]


def exposed_audit(records: RunRecords, condition: str) -> list[ProvenanceClass]:
    return [e.provenance for exposed, _h in reads(records, condition) for e in exposed]


def audit_share(classes: list[ProvenanceClass], which: ProvenanceClass) -> float | None:
    return _share(sum(c == which for c in classes), len(classes))


def hearsay_items(records: RunRecords, condition: str) -> int:
    return sum(len(h) for _e, h in reads(records, condition))


def reads_with_hearsay(records: RunRecords, condition: str) -> int:
    return sum(bool(h) for _e, h in reads(records, condition))


def read_count(records: RunRecords, condition: str) -> int:
    return sum(1 for _ in reads(records, condition))


def forged_probes(
    records: RunRecords, condition: str, kind: str | None = None
) -> list[ProbeRecord]:
    return [
        p
        for p in records.probes
        if p.condition == condition
        and p.forged is not None
        and (kind is None or p.forged.kind == kind)
    ]


def forged_exposed(p: ProbeRecord) -> bool:
    """The injected read exposes the forged record."""
    assert p.forged is not None and p.injected is not None
    return any(e.id == p.forged.item for e in p.injected.exposed)


def forged_harmed(p: ProbeRecord) -> bool:
    """The answer on the injected read is wrong and carries the forged value."""
    assert p.forged is not None
    read: ProbeRead | None = p.injected
    if read is None:
        return False
    outcome = frozenset(read.outcome or [])
    return outcome != gold_outcome(p.gold) and p.forged.value in outcome


def forged_exposure(records: RunRecords, condition: str, kind: str | None = None) -> float | None:
    probes = forged_probes(records, condition, kind)
    return _share(sum(forged_exposed(p) for p in probes), len(probes))


def forged_harm(records: RunRecords, condition: str) -> float | None:
    probes = forged_probes(records, condition)
    return _share(sum(forged_harmed(p) for p in probes), len(probes))
