"""CSS, the write-side certifier: G_t = F_CSS(G_{t-1}, e_t), realized through Mem0, verified.

The certifier derives each transition from trusted events only (it never sees the LLM or
the evaluator's reference state), realizes it with Mem0 `infer=False` writes that carry
lifecycle metadata, and then reads the store back: if the store does not hold exactly G_t,
it raises. Ended records stay, marked; forgotten slots are removed from Qdrant and from
Mem0's history database.

Beside G it keeps the governance state Γ of docs/method.md §11 with the reference's own
rules (`place.reference.governance.GovernedState`: owners, shares, proposals, epochs,
requests, quarantine, deletions), writes it to the store's ledger L
(`place.governance.ledger`: one event row per new event, and a mirror of Γ's rows), and
verifies β_L(L) = Γ after every write as it verifies the state. A tool turn is read only
into quarantine rows, never into state. L keeps the applied event ids, so a certifier
restored from the store and L alone (`Certifier.restore`, a `restart`) recognises a
redelivered event.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from place import faults
from place.eligibility import ELIGIBILITY_KEY, eligibility_key, key_of
from place.governance.evidence import EVIDENCE, EvidenceLog
from place.governance.ledger import (
    EVENT,
    EVENT_TRUST,
    LEDGER,
    LEDGER_MARKER,
    QUARANTINE_TRUST,
    REQUEST_TRUST,
    GammaKey,
    Written,
    applied_events,
    event_fields,
    event_subject,
    gamma_fields,
    gamma_key,
    gamma_row,
    gamma_rows,
    governance_of,
    is_ledger_row,
    ledger_metadata,
)
from place.governance.summaries import DerivedSummaries
from place.lexicon import Lexicon
from place.memory.tables import SideRow
from place.readback import (
    LIFECYCLE_MARKER,
    LIFECYCLE_VERSION,
    OWNER,
    VISIBLE_TO,
    Readback,
    is_certified,
    is_derived,
    record_owner,
    record_visible_to,
)
from place.reference.governance import (
    Governance,
    GovernanceError,
    GovernedState,
)
from place.reference.lifecycle import FactRecord, LifecycleState, Status, Transition
from place.trajectory.model import GLOBAL_SCOPE, Compaction, Event, Fact, Schema, Slot, Task

OPEN_FROM = 0
OPEN_UNTIL = 99_999_999
"""Ordinal sentinels for open window ends, so Qdrant range filters can test windows."""
TRUST = "trusted-user-event"


class CertifiedStore(Protocol):
    """The writes and the scan the certifier needs from a memory store, and its side table
    `ledger` (L)."""

    @property
    def principal(self) -> str: ...

    def add_record(self, text: str, metadata: dict[str, Any]) -> str: ...
    def update_metadata(self, memory_id: str, changes: dict[str, Any]) -> None: ...
    def remove(self, memory_ids: list[str]) -> None: ...
    def scan(self) -> Any: ...
    def add_side_row(self, table: str, metadata: dict[str, Any]) -> str: ...
    def update_side_row(self, table: str, row_id: str, changes: dict[str, Any]) -> None: ...
    def delete_side_rows(self, table: str, row_ids: list[str]) -> None: ...
    def side_rows(self, table: str) -> tuple[SideRow, ...]: ...


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


Visibility = tuple[str, tuple[str, ...]]
"""(owner, visible_to) of a certified record."""


def visibility_metadata(visibility: Visibility, principal: str) -> dict[str, Any]:
    """The `owner` and `visible_to` keys a record needs: each only when it is not the
    default (absent means the principal), so a trajectory with one principal writes neither
    and its records are byte for byte what they were."""
    owner, visible = visibility
    out: dict[str, Any] = {}
    if owner != principal:
        out[OWNER] = owner
    if visible != (principal,):
        out[VISIBLE_TO] = list(visible)
    return out


def metadata_for(
    record: FactRecord,
    provenance: Provenance,
    written_seq: int | None = None,
    visibility: dict[str, Any] | None = None,
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
        **(visibility or {}),
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
    """Drives its own governed state (G and Γ) and keeps the store and its ledger equal to it."""

    redacts_evidence = True
    """Whether a forget redacts V (docs/method.md §12.1). A subclass that keeps V under a
    declared retention (§14's `bounded`, `retain: [evidence]`) turns it off."""

    def __init__(self, store: CertifiedStore, schema: Schema, readback: Readback) -> None:
        self.store = store
        self.schema = schema
        self.readback = readback
        self.world = GovernedState.empty(schema)
        """G (its lifecycle state) and Γ, driven by the reference's rules."""
        self.memory_ids: dict[str, str] = {}
        """event id of a governed record -> its Mem0 memory id."""
        self.applied: set[str] = set()
        self.ledger_ids: dict[GammaKey, str] = {}
        """Γ row key -> the id of its ledger row."""
        self.ledger_versions: dict[GammaKey, int] = {}
        """Γ row key -> how many times its ledger row was written."""
        self.subject_versions: dict[tuple[str, ...], int] = {}
        """What an event names -> how many event rows name it."""
        self.visibility: dict[str, Visibility] = {}
        """event id of a governed record -> the (owner, visible_to) its metadata holds."""
        self._lexicons: dict[str, Lexicon] = {readback.lexicon.principal: readback.lexicon}
        self.summaries = DerivedSummaries(store, schema, render)
        """The derived summaries written at compaction points (docs/method.md §11)."""
        self.evidence = EvidenceLog(store)
        """V, the evidence log of every delivered turn (docs/method.md §12)."""

    @property
    def governed(self) -> LifecycleState:
        """G: the lifecycle state CSS certifies (docs/method.md §3)."""
        return self.world.lifecycle

    @property
    def principal(self) -> str:
        return self.store.principal

    def governance(self) -> Governance:
        """Γ: CSS's own governance state (what β_L(L) must equal)."""
        return self.world.snapshot()

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
        """A certifier for a clone of this store (world b): same G and Γ, same memory ids
        and ledger row ids (a clone copies the points and the side tables)."""
        twin = Certifier(store, self.schema, self.readback)
        twin.world = self.world.copy()
        twin.memory_ids = dict(self.memory_ids)
        twin.applied = set(self.applied)
        twin.ledger_ids = dict(self.ledger_ids)
        twin.ledger_versions = dict(self.ledger_versions)
        twin.subject_versions = dict(self.subject_versions)
        twin.visibility = dict(self.visibility)
        twin._lexicons = self._lexicons
        twin.summaries = self.summaries.fork(store)
        twin.evidence = self.evidence.fork(store)
        return twin

    # -- restart: the store and L alone ------------------------------------------------

    @classmethod
    def restore(cls, store: CertifiedStore, schema: Schema, readback: Readback) -> Certifier:
        """A certifier rebuilt from what the store holds (docs/method.md §11, `restart`): G from
        the certified records, Γ and the applied event ids from the ledger L, nothing from
        the trajectory. The order of G's records is the order L applied their events."""
        certifier = cls(store, schema, readback)
        scan = store.scan()
        rows = scan.table(LEDGER)
        strays = [r.id for r in rows if not is_ledger_row(r.metadata)]
        if strays:
            raise CertificationError(f"ledger rows without {LEDGER_MARKER!r}: {strays}")
        order = applied_events(rows)
        position = {event_id: i for i, event_id in enumerate(order)}
        if len(position) != len(order):
            raise CertificationError("the ledger records an event twice")
        certifier.applied = set(order)
        principal = store.principal
        records: list[tuple[int, FactRecord]] = []
        for point in scan.points:
            meta = point.metadata
            if is_derived(meta):
                continue  # a derived summary: adopted below, rebuilt from G if it drifts
            if not is_certified(meta):
                raise CertificationError(f"records without lifecycle metadata: {[point.id]}")
            event_id = str(meta["event_id"])
            if event_id not in position:
                raise CertificationError(
                    f"certified record {point.id} (event {event_id}) has no event row in the "
                    "ledger; the store was written by an older place: start the run in a new "
                    "directory"
                )
            records.append((position[event_id], _fact_record(meta)))
            owner = record_owner(meta, principal)
            certifier.world.owners[event_id] = owner
            certifier.visibility[event_id] = (owner, record_visible_to(meta, principal))
        certifier.world.lifecycle.records = [r for _i, r in sorted(records, key=lambda p: p[0])]
        governance = governance_of(rows)
        world = certifier.world
        world.lifecycle.ever_held = {r.slot for r in world.lifecycle.records} | {
            d.slot for d in governance.deletions
        }
        for share in governance.shares:
            world.shares.setdefault(share.slot, set()).add(share.principal)
        world.epochs = {(e.permission, e.principal): (e.n, e.held) for e in governance.epochs}
        world.conflicts = {c.k: c for c in governance.conflicts}
        world.requests = {r.task: r for r in governance.requests}
        world.quarantine = list(governance.quarantine)
        world.deletions = list(governance.deletions)
        for row in rows:
            meta = row.metadata
            if meta.get("kind") == EVENT:
                subject = _row_subject(meta)
                certifier.subject_versions[subject] = certifier.subject_versions.get(subject, 0) + 1
                continue
            gamma = _gamma_of(meta)
            if gamma is not None:
                certifier.ledger_ids[gamma] = row.id
                certifier.ledger_versions[gamma] = int(meta["version"])
        certifier.adopt_store()
        certifier.summaries.adopt(scan.points)
        certifier.evidence.adopt(scan.table(EVIDENCE))
        certifier.verify_ledger()
        return certifier

    # -- events ------------------------------------------------------------------------

    def apply(
        self, event: Event, provenance: Provenance, sequence: RecordSequence | None = None
    ) -> CertificationRecord:
        """Certify one trusted event; re-applying an applied event is a no-op (a redelivery:
        transition `duplicate`, nothing written). Records it adds take their `written_seq`
        from `sequence` (none without one)."""
        if event.id in self.applied:
            return CertificationRecord(event.id, event.op, noop=True, verified=True)
        speaker = provenance.speaker or self.principal
        before = self.world.snapshot()
        transition: Transition | None = None
        if event.op == "rollback":
            self._rollback(event)
        else:
            transition, _acted = self.world.apply(event, speaker, provenance.recorded_at)
        record = (
            CertificationRecord(event.id, event.op)
            if transition is None
            else self._realize(transition, provenance, sequence)
        )
        if event.has_slot:
            record.changed.extend(self._sync_visibility(event.slot))
        if event.op == "forget" and event.has_slot:
            # V keeps what was said: every value the slot held leaves it too, its records'
            # and those of its proposals and quarantined facts (docs/method.md §12.1).
            values = {r.value for r in transition.removed} if transition is not None else set()
            values |= {c.value for c in before.conflicts if c.slot == event.slot}
            values |= {q.fact.value for q in before.quarantine if _slot(q.fact) == event.slot}
            if values and self.redacts_evidence:
                lexicon = self.readback.lexicon
                self.evidence.redact(event, sorted(values), lexicon, lexicon.principal)
        gone, rebuilt = self.summaries.sync(
            self.governed.records, self._summary_line, provenance.recorded_at, sequence
        )
        record.removed.extend(gone)
        record.added.extend(rebuilt)
        self._settle(event, transition, provenance, sequence, record)
        self._add_event_row(event, speaker, provenance)
        self._mirror(before, self._written(provenance, event.id, EVENT_TRUST))
        self.applied.add(event.id)
        self.verify(provenance.recorded_at, transition, event=event.id)
        record.verified = True
        return record

    def compact(
        self, entry: Compaction, day: dt.date, sequence: RecordSequence | None = None
    ) -> list[str]:
        """Write the derived summary of a compaction point, then verify the store."""
        added = self.summaries.compact(
            entry, self.governed.records, self._summary_line, day, sequence
        )
        self.verify(day, event=f"compaction after {entry.after}")
        return added

    def _settle(
        self,
        event: Event,
        transition: Transition | None,
        provenance: Provenance,
        sequence: RecordSequence | None,
        record: CertificationRecord,
    ) -> None:
        """A hook between realizing an event and writing its ledger rows: CSS does nothing
        here; §14's bounded certifier carries a forget into its archive summaries and decides
        the deletion row's status (place.governance.bounded)."""

    def _extra_problems(self, scan: Any) -> list[str]:
        """A hook of `verify` for what a subclass keeps beyond CSS (none for CSS)."""
        return []

    def _summary_line(self, record: FactRecord) -> dict[str, Any]:
        """A source record as one line of a derived summary's metadata."""
        return {
            "entity": record.entity,
            "predicate": record.predicate,
            "value": record.value,
            "scope": record.scope,
            "status": record.status,
            "valid_from": record.valid_from.isoformat() if record.valid_from else None,
            "valid_until": record.valid_until.isoformat() if record.valid_until else None,
            "event_id": record.event_id,
            **visibility_metadata(self._expected_visibility(record), self.principal),
        }

    def _rollback(self, event: Event) -> None:
        """A rollback marks the task's request row `reverted` (the act gate, not CSS, knows
        whether the task ran)."""
        task = event.task
        row = self.world.requests.get(task) if task is not None else None
        if row is None:
            raise GovernanceError(
                f"rollback {event.id} of task {task!r}, which has no request row; a task is "
                "rolled back after it was requested"
            )
        if row.status == "reverted":
            raise GovernanceError(f"task {task!r} is already rolled back")
        self.world.revert(event)

    def quarantine(self, turn: str, text: str, provenance: Provenance) -> list[str]:
        """A tool turn: the facts β reads from its text (about its speaker when it names no
        entity) become quarantine rows of L, never state. Returns the ledger row ids added."""
        speaker = provenance.speaker or self.principal
        before = self.world.snapshot()
        self.world.quarantine_turn(turn, list(self._lexicon(speaker).read(text)))
        added = self._mirror(before, self._written(provenance, None, QUARANTINE_TRUST))
        self.verify_ledger(where=f"tool turn {turn}")
        return added

    def request(self, task: Task, provenance: Provenance) -> str | None:
        """A task turn: its request row (asker, n(p, asker) now, links), written once; a
        redelivered task writes nothing (None)."""
        if task.id in self.world.requests:
            return None
        asker = provenance.speaker or self.principal
        # The row (n and the links) as the reference makes it (GovernedState.request_row).
        row = self.world.request_row(task, asker, provenance.recorded_at)
        before = self.world.snapshot()
        self.world.request(row)
        added = self._mirror(before, self._written(provenance, None, REQUEST_TRUST))
        self.verify_ledger(where=f"request of task {task.id}")
        return added[0] if added else None

    # -- realizing G ---------------------------------------------------------------------

    def _expected_visibility(self, record: FactRecord) -> Visibility:
        owner = self.world.owners.get(record.event_id, self.principal)
        shared = self.world.shares.get(record.slot, set())
        return owner, tuple(sorted({owner} | shared))

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
                visibility = self._expected_visibility(added)
                self.memory_ids[added.event_id] = self.store.add_record(
                    text,
                    metadata_for(
                        added, provenance, seq, visibility_metadata(visibility, self.principal)
                    ),
                )
                self.visibility[added.event_id] = visibility
            out.added.append(self.memory_ids[added.event_id])
        removed_ids = [
            self.memory_ids.pop(r.event_id)
            for r in transition.removed
            if r.event_id in self.memory_ids
        ]
        for r in transition.removed:
            self.visibility.pop(r.event_id, None)
        if removed_ids:
            self.store.remove(removed_ids)
            out.removed.extend(removed_ids)
        return out

    def _sync_visibility(self, slot: Slot) -> list[str]:
        """Rewrite `owner`/`visible_to` on the slot's records whose metadata no longer says
        who owns and sees them (a share or unshare); returns their memory ids."""
        changed = []
        for record in self.world.lifecycle.records:
            if record.slot != slot or record.event_id not in self.memory_ids:
                continue
            want = self._expected_visibility(record)
            have = self.visibility.get(record.event_id, (self.principal, (self.principal,)))
            if want == have:
                continue
            changes: dict[str, Any] = {}
            if want[0] != have[0]:
                changes[OWNER] = want[0]
            if want[1] != have[1]:
                changes[VISIBLE_TO] = list(want[1])
            memory_id = self.memory_ids[record.event_id]
            self.store.update_metadata(memory_id, changes)
            self.visibility[record.event_id] = want
            changed.append(memory_id)
        return changed

    # -- realizing Γ: the ledger ---------------------------------------------------------

    def _written(self, provenance: Provenance, event_id: str | None, trust: str) -> Written:
        return Written(
            event_id, provenance.turn, provenance.conversation, provenance.recorded_at, trust
        )

    def _add_event_row(self, event: Event, speaker: str, provenance: Provenance) -> None:
        subject = event_subject(event)
        version = self.subject_versions.get(subject, 0) + 1
        self.store.add_side_row(
            LEDGER,
            ledger_metadata(
                "event",
                event_fields(event, speaker),
                version,
                self._written(provenance, event.id, EVENT_TRUST),
            ),
        )
        self.subject_versions[subject] = version

    def _mirror(self, before: Governance, written: Written) -> list[str]:
        """Make L's Γ rows say what Γ says now: rows of new Γ rows added (in Γ's order),
        changed ones rewritten in place, rows whose Γ row left Γ deleted (physically: an
        unshare, forget's redaction). Returns the ids of the rows added."""
        old = {gamma_key(row): row for row in gamma_rows(before)}
        new = {gamma_key(row): row for row in gamma_rows(self.world.snapshot())}
        gone = [self.ledger_ids.pop(key) for key in old if key not in new]
        for key in old:
            if key not in new:
                self.ledger_versions.pop(key, None)
        if gone:
            self.store.delete_side_rows(LEDGER, gone)
        added: list[str] = []
        for key, row in new.items():
            if key in old and old[key] == row:
                continue
            kind, fields = gamma_fields(row)
            version = self.ledger_versions.get(key, 0) + 1
            meta = ledger_metadata(kind, fields, version, written)
            if key in self.ledger_ids:
                self.store.update_side_row(LEDGER, self.ledger_ids[key], meta)
            else:
                self.ledger_ids[key] = self.store.add_side_row(LEDGER, meta)
                added.append(self.ledger_ids[key])
            self.ledger_versions[key] = version
        return added

    def _lexicon(self, speaker: str) -> Lexicon:
        """β with `speaker` as the entity of a text that names none (docs/method.md §11)."""
        if speaker not in self._lexicons:
            self._lexicons[speaker] = Lexicon(self.schema, speaker)
        return self._lexicons[speaker]

    # -- verification --------------------------------------------------------------------

    def verify(
        self, day: dt.date, transition: Transition | None = None, *, event: str | None = None
    ) -> None:
        """Read the store back; it must hold exactly G (records, statuses, windows, state,
        owners and visibility) and its ledger exactly Γ."""
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
        uncertified = [
            p.id for p in scan.points if not is_certified(p.metadata) and not is_derived(p.metadata)
        ]
        problems.extend(self.summaries.problems(scan.points))
        problems.extend(self._extra_problems(scan))
        if uncertified:
            problems.append(f"records without lifecycle metadata: {uncertified}")
        stale = [
            p.id
            for p in scan.points
            if is_certified(p.metadata) and p.metadata.get(ELIGIBILITY_KEY) != key_of(p.metadata)
        ]
        if stale:
            problems.append(f"records whose {ELIGIBILITY_KEY} is not their lifecycle's: {stale}")
        problems.extend(self._visibility_problems(scan))
        phys = self.readback.state(scan.points, day)
        if phys != self.governed.state_at(day):
            problems.append(
                f"readback {sorted(phys)} != governed state {sorted(self.governed.state_at(day))}"
            )
        if transition is not None and transition.removed:
            problems.extend(self._residue(scan, transition))
        problems.extend(self._ledger_problems(scan.table(LEDGER)))
        if problems:
            what = event or (transition.event.id if transition is not None else "?")
            raise CertificationError(
                f"certified write of event {what} failed verification: " + "; ".join(problems)
            )

    def verify_ledger(self, where: str = "the ledger") -> None:
        """β_L(L) must equal Γ, and L's event rows must be the applied events."""
        problems = self._ledger_problems(self.store.side_rows(LEDGER))
        if problems:
            raise CertificationError(
                f"certified write of {where} failed verification: " + "; ".join(problems)
            )

    def _ledger_problems(self, rows: tuple[SideRow, ...]) -> list[str]:
        problems: list[str] = []
        strays = [r.id for r in rows if not is_ledger_row(r.metadata)]
        if strays:
            problems.append(f"ledger rows without {LEDGER_MARKER!r}: {strays}")
        phys = governance_of(rows)
        governance = self.world.snapshot()
        if phys != governance:
            problems.append(
                f"ledger differs from the governed state: β_L(L) = {phys} != Γ = {governance}"
            )
        events = applied_events(rows)
        if len(events) != len(set(events)) or set(events) != self.applied:
            problems.append(
                f"ledger event rows {sorted(events)} are not the applied events "
                f"{sorted(self.applied)}"
            )
        return problems

    def _visibility_problems(self, scan: Any) -> list[str]:
        principal = self.principal
        governed = {r.event_id: r for r in self.governed.records}
        wrong = []
        for point in scan.points:
            meta = point.metadata
            if not is_certified(meta):
                continue
            record = governed.get(str(meta.get("event_id")))
            if record is None:
                continue
            have = (record_owner(meta, principal), record_visible_to(meta, principal))
            if have != self._expected_visibility(record):
                wrong.append(point.id)
        return (
            [f"records whose owner or visible_to is not the governed one: {wrong}"] if wrong else []
        )

    def _residue(self, scan: Any, transition: Transition) -> list[str]:
        texts = {render(self.schema, r) for r in transition.removed}
        # A summary holds records' texts as lines: each line is checked, not the whole text.
        left = [t for t in scan.texts() if any(line in texts for line in t.split("\n"))]
        return [f"forgotten records still in storage: {left}"] if left else []


def _date(raw: Any) -> dt.date | None:
    return None if raw in (None, "") else dt.date.fromisoformat(str(raw))


def _fact_record(meta: Any) -> FactRecord:
    """A certified record's metadata as G's record (restore)."""
    return FactRecord(
        entity=str(meta["entity"]),
        predicate=str(meta["predicate"]),
        value=str(meta["value"]),
        scope=str(meta["scope"]),
        status=cast(Status, str(meta["status"])),
        valid_from=_date(meta.get("valid_from")),
        valid_until=_date(meta.get("valid_until")),
        event_id=str(meta["event_id"]),
        version=int(meta["version"]),
        supersedes=tuple(str(e) for e in meta.get("supersedes") or ()),
    )


def _slot(fact: Fact) -> Slot:
    return Slot(fact.entity, fact.predicate, fact.scope)


def _row_subject(meta: Any) -> tuple[str, ...]:
    """An event row's subject, as `event_subject` gives it for the event."""
    if meta.get("entity") is not None:
        return ("slot", str(meta["entity"]), str(meta["predicate"]), str(meta["scope"]))
    if meta.get("permission") is not None:
        return ("permission", str(meta["permission"]), str(meta["principal"]))
    return ("task", str(meta.get("task")))


def _gamma_of(meta: Any) -> GammaKey | None:
    row = gamma_row(meta)
    return None if row is None else gamma_key(row)
