"""CSS, the write-side certifier: G_t = F_CSS(G_{t-1}, e_t), realized through Mem0, verified.

The certifier derives each transition from trusted events only (it never sees untrusted
turns, the LLM or the evaluator's reference state), realizes it with Mem0 `infer=False`
writes that carry lifecycle metadata, and then reads the store back: if the store does not
hold exactly G_t, it raises. Ended records stay, marked; forgotten slots are removed from
Qdrant and from Mem0's history database.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Protocol

from place import faults
from place.eligibility import ELIGIBILITY_KEY, eligibility_key, key_of
from place.readback import LIFECYCLE_MARKER, LIFECYCLE_VERSION, Readback, is_certified
from place.reference.lifecycle import FactRecord, LifecycleState, Transition
from place.trajectory.model import GLOBAL_SCOPE, Event, Schema

OPEN_FROM = 0
OPEN_UNTIL = 99_999_999
"""Ordinal sentinels for open window ends, so Qdrant range filters can test windows."""
TRUST = "trusted-user-event"


class CertifiedStore(Protocol):
    """The writes and the scan the certifier needs from a memory store."""

    def add_record(self, text: str, metadata: dict[str, Any]) -> str: ...
    def update_metadata(self, memory_id: str, changes: dict[str, Any]) -> None: ...
    def remove(self, memory_ids: list[str]) -> None: ...
    def scan(self) -> Any: ...


class RecordSequence(Protocol):
    """The store's record counter (`written_seq`) the certifier numbers added records with
    (`place.producers.registry.RecordCounter`)."""

    def take(self) -> int: ...


class CertificationError(RuntimeError):
    """The store does not hold exactly the governed state after a certified write."""


def ordinal(day: dt.date | None, open_value: int) -> int:
    return open_value if day is None else day.toordinal()


def window_metadata(valid_from: dt.date | None, valid_until: dt.date | None) -> dict[str, Any]:
    return {
        "valid_from": valid_from.isoformat() if valid_from else None,
        "valid_until": valid_until.isoformat() if valid_until else None,
        "valid_from_ord": ordinal(valid_from, OPEN_FROM),
        "valid_until_ord": ordinal(valid_until, OPEN_UNTIL),
    }


@dataclass(frozen=True)
class Provenance:
    turn: str
    conversation: str
    recorded_at: dt.date
    speaker: str | None = None
    """Who said the event's turn (the record's `speaker`); None writes no `speaker` key."""


def render(schema: Schema, record: FactRecord) -> str:
    """The record text: the predicate's template (a neutral sentence when it has none)."""
    predicate = schema.predicates[record.predicate]
    entity = schema.entities[record.entity]
    scope = schema.scopes.get(record.scope)
    scope_name = scope.aliases[0] if scope and scope.aliases else record.scope
    template = predicate.template or (
        "{entity_name}'s "
        + predicate.id.replace("_", " ")
        + " is {value}"
        + ("" if record.scope == GLOBAL_SCOPE else " ({scope})")
    )
    return template.format(entity_name=entity.name, value=record.value, scope=scope_name)


def metadata_for(
    record: FactRecord, provenance: Provenance, written_seq: int | None = None
) -> dict[str, Any]:
    # Every producer's records carry who said them and the store's record counter
    # (docs/method.md §8.10); neither is lifecycle, and β does not read them.
    order = {} if written_seq is None else {"written_seq": written_seq}
    speaker = {} if provenance.speaker is None else {"speaker": provenance.speaker}
    return {
        LIFECYCLE_MARKER: LIFECYCLE_VERSION,
        "entity": record.entity,
        "predicate": record.predicate,
        ELIGIBILITY_KEY: eligibility_key(
            record.entity, record.predicate, record.scope, record.status
        ),
        "value": record.value,
        "scope": record.scope,
        "status": record.status,
        **window_metadata(record.valid_from, record.valid_until),
        "version": record.version,
        "supersedes": list(record.supersedes),
        "event_id": record.event_id,
        "source_turn": provenance.turn,
        "conversation": provenance.conversation,
        "recorded_at": provenance.recorded_at.isoformat(),
        # Every producer's records carry the date they were written on (decay reads it).
        "written_on": provenance.recorded_at.isoformat(),
        **order,
        **speaker,
        "trust": TRUST,
    }


def _governed_key(status: str, meta_or_record: Any) -> tuple:
    get = (
        meta_or_record.get
        if isinstance(meta_or_record, dict)
        else (lambda k: getattr(meta_or_record, k))
    )
    until, start = get("valid_until"), get("valid_from")
    return (
        get("event_id"),
        get("entity"),
        get("predicate"),
        get("value"),
        get("scope"),
        status,
        start.isoformat() if isinstance(start, dt.date) else start,
        until.isoformat() if isinstance(until, dt.date) else until,
    )


@dataclass
class CertificationRecord:
    """What one event did in the store, for the run record."""

    event_id: str
    op: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    verified: bool = False
    noop: bool = False


class Certifier:
    """Drives its own lifecycle state G and keeps the store equal to it."""

    def __init__(self, store: CertifiedStore, schema: Schema, readback: Readback) -> None:
        self.store = store
        self.schema = schema
        self.readback = readback
        self.governed = LifecycleState(schema)
        self.memory_ids: dict[str, str] = {}
        """event id of a governed record -> its Mem0 memory id."""
        self.applied: set[str] = set()

    def adopt_store(self) -> None:
        """Learn memory ids of records already in the store (a resumed run re-applies events)."""
        for point in self.store.scan().points:
            if is_certified(point.metadata):
                meta = point.metadata
                if meta.get(ELIGIBILITY_KEY) != key_of(meta):
                    # QASC pre-selects certified records by this key: a record whose key is
                    # missing or stale (a store written by an older place) would be skipped.
                    raise CertificationError(
                        f"certified record {point.id} has no valid {ELIGIBILITY_KEY!r}; the "
                        "store was written by an older place: start the run in a new directory"
                    )
                self.memory_ids[str(meta["event_id"])] = point.id

    def fork(self, store: CertifiedStore) -> Certifier:
        """A certifier for a clone of this store (world b): same G, same memory ids."""
        twin = Certifier(store, self.schema, self.readback)
        twin.governed = self.governed.copy()
        twin.memory_ids = dict(self.memory_ids)
        twin.applied = set(self.applied)
        return twin

    def apply(
        self, event: Event, provenance: Provenance, sequence: RecordSequence | None = None
    ) -> CertificationRecord:
        """Certify one trusted event; re-applying an applied event is a no-op. Records it
        adds take their `written_seq` from `sequence` (none without one)."""
        if event.id in self.applied:
            return CertificationRecord(event.id, event.op, noop=True, verified=True)
        transition = self.governed.apply(event, provenance.recorded_at)
        record = self._realize(transition, provenance, sequence)
        self.applied.add(event.id)
        self.verify(provenance.recorded_at, transition)
        record.verified = True
        return record

    def _realize(
        self,
        transition: Transition,
        provenance: Provenance,
        sequence: RecordSequence | None = None,
    ) -> CertificationRecord:
        out = CertificationRecord(transition.event.id, transition.event.op)
        for before, after in transition.changed:
            memory_id = self.memory_ids[before.event_id]
            changes = {
                "status": after.status,
                ELIGIBILITY_KEY: eligibility_key(
                    after.entity, after.predicate, after.scope, after.status
                ),
                **window_metadata(after.valid_from, after.valid_until),
            }
            self.store.update_metadata(memory_id, changes)
            out.changed.append(memory_id)
        for added in transition.added:
            if added.event_id not in self.memory_ids:  # present after a resumed, partial step
                text = render(self.schema, added)
                seq = None if sequence is None else sequence.take()
                self.memory_ids[added.event_id] = self.store.add_record(
                    text, metadata_for(added, provenance, seq)
                )
            out.added.append(self.memory_ids[added.event_id])
        removed_ids = [
            self.memory_ids.pop(r.event_id)
            for r in transition.removed
            if r.event_id in self.memory_ids
        ]
        if removed_ids:
            self.store.remove(removed_ids)
            out.removed.extend(removed_ids)
        return out

    def verify(self, day: dt.date, transition: Transition | None = None) -> None:
        """Read the store back; it must hold exactly G (records, statuses, windows, state)."""
        faults.kill_point("css-verify")
        scan = self.store.scan()
        stored = {
            _governed_key(str(p.metadata.get("status")), dict(p.metadata))
            for p in scan.points
            if is_certified(p.metadata)
        }
        expected = {_governed_key(r.status, r) for r in self.governed.records}
        problems: list[str] = []
        if stored != expected:
            problems.append(
                f"records differ: missing {sorted(expected - stored)}, "
                f"unexpected {sorted(stored - expected)}"
            )
        uncertified = [p.id for p in scan.points if not is_certified(p.metadata)]
        if uncertified:
            problems.append(f"records without lifecycle metadata: {uncertified}")
        stale = [
            p.id
            for p in scan.points
            if is_certified(p.metadata) and p.metadata.get(ELIGIBILITY_KEY) != key_of(p.metadata)
        ]
        if stale:
            problems.append(f"records whose {ELIGIBILITY_KEY} is not their lifecycle's: {stale}")
        phys = self.readback.state(scan.points, day)
        if phys != self.governed.state_at(day):
            problems.append(
                f"readback {sorted(phys)} != governed state {sorted(self.governed.state_at(day))}"
            )
        if transition is not None and transition.removed:
            problems.extend(self._residue(scan, transition))
        if problems:
            raise CertificationError(
                f"certified write of event {transition.event.id if transition else '?'} "
                "failed verification: " + "; ".join(problems)
            )

    def _residue(self, scan: Any, transition: Transition) -> list[str]:
        texts = {render(self.schema, r) for r in transition.removed}
        left = [t for t in scan.texts() if t in texts]
        return [f"forgotten records still in storage: {left}"] if left else []
