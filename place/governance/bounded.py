"""§14's bounded memory: CSS with a budget on its state class (docs/method.md §14).

`BoundedCertifier` is the CSS certifier plus:

- **Size overflow.** After an update step, while the store holds more certified records than
  B_state, the oldest *ended* record (status no longer active; oldest by `written_seq`; an
  active record whose window has ended is not folded, docs/decisions.md) is *folded*:
  removed from the state partition (point and history) and kept as one line of its
  (entity, scope) *archive* summary, a derived record apart from §11's compaction summary
  (docs/method.md §14). β reads a derived record's active, unexpired facts only, and a
  folded fact is neither, so folding leaves S^phys unchanged.
  Active records are never folded; nor is the latest record of a slot, which fixes the
  slot's owner once nothing in it is live (§11's `slot_owner`), so folding never changes
  who may propose, share or forget.
- **Versions in L.** Every version of every summary (archive and compaction) is logged in
  the ledger as a `summary` row: its class, (entity, scope), version, sources and, per line,
  the event id, status, window and visibility, never a value (docs/method.md §11).
- **Rebuild path.** After every step each summary is recomputed from L (its latest
  `summary` row and the event rows, which name each source's slot) and V (each source
  event's value) and checked against the stored version; a mismatch is a
  `CertificationError`.
- **Forget reaches summaries.** The forgotten slot's folded lines leave their archive (a new
  version; the old one removed, point and history), V is redacted unless the design retains
  evidence, and the producer's own residue scan decides the `deletions` row: `done` (no
  residue), `retained` (residue only in retained classes) or `pending`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from place.eligibility import expired
from place.governance.certifier import (
    CertificationError,
    CertificationRecord,
    CertifiedStore,
    Certifier,
    Provenance,
    RecordSequence,
    render,
)
from place.governance.evidence import EVIDENCE
from place.governance.ledger import (
    EVENT,
    LEDGER,
    LEDGER_MARKER,
    LEDGER_VERSION,
    gamma_key,
    gamma_row,
    gamma_rows,
)
from place.governance.summaries import (
    ARCHIVE,
    REBUILD,
    SOURCES,
    SUMMARY_CLASS,
    VERSION,
    Held,
    is_archive,
)
from place.memory.scan import strings
from place.readback import DERIVED_FACTS, DERIVED_MARKER, Readback, is_certified, is_derived
from place.reference.governance import DeletionRow, DeletionStatus
from place.reference.lifecycle import FactRecord, LifecycleState, Transition
from place.trajectory.model import Event, Schema, Slot

COMPACTION = "compaction"
"""The class a compaction summary's `summary` rows name (it carries no `summary_class`)."""
SUMMARY_ROW = "summary"
"""The ledger kind of a summary version row (not a Γ kind: β_L skips it)."""
ARCHIVE_RECIPE = "ended facts of (summary_entity, summary_scope) folded out of the state"
RETAINABLE = ("evidence",)
"""Classes a design may declare retained under `design.bounded.retain`."""
LINE_KEYS = ("event_id", "status", "valid_from", "valid_until", "owner", "visible_to")
"""What a summary row keeps of each line: everything but the value (docs/method.md §11,
the ledger)."""


@dataclass
class BoundedLifecycle(LifecycleState):
    """G under folding: the same rules, with a slot's folded records still counted in the
    `version` of its next record (so a record's version is the one CSS would write)."""

    folded_counts: dict[Slot, int] = field(default_factory=dict)

    def copy(self) -> BoundedLifecycle:
        return BoundedLifecycle(
            self.schema, list(self.records), set(self.ever_held), dict(self.folded_counts)
        )

    def _next_version(self, slot: Slot) -> int:
        return super()._next_version(slot) + self.folded_counts.get(slot, 0)

    def _forget(self, event: Event) -> Transition:
        self.folded_counts.pop(event.slot, None)
        return super()._forget(event)


def bounded_lifecycle(state: LifecycleState, folded: Iterable[FactRecord]) -> BoundedLifecycle:
    counts: dict[Slot, int] = {}
    for r in folded:
        counts[r.slot] = counts.get(r.slot, 0) + 1
    return BoundedLifecycle(state.schema, list(state.records), set(state.ever_held), counts)


@dataclass
class BoundedStep:
    """What the budget did after one update step (recorded in the step's operations)."""

    state: int = 0
    active: int = 0
    over_budget: bool = False
    folds: list[str] = field(default_factory=list)
    """Event ids of the records folded, in order."""
    versions: list[dict[str, Any]] = field(default_factory=list)
    """Summary versions logged in L: class, entity, scope, version."""
    rebuild_checks: int = 0
    deletions: list[dict[str, Any]] = field(default_factory=list)
    """Forgets of the step: event, status, and where the producer's own scan found residue."""

    def operation(self, budget: int | None, retain: Sequence[str]) -> dict[str, Any]:
        """The step's `op: bounded` entry (place/metrics/bounded.py reads it)."""
        return {
            "event_id": None,
            "op": "bounded",
            "budget_state": budget,
            "retain": list(retain),
            "state": self.state,
            "active": self.active,
            "over_budget": self.over_budget,
            "folds": list(self.folds),
            "versions": list(self.versions),
            "rebuild_checks": self.rebuild_checks,
            "deletions": list(self.deletions),
        }


class BoundedCertifier(Certifier):
    """CSS's certifier under a state budget, with archive summaries and summary versions in L
    (docs/method.md §14)."""

    def __init__(
        self,
        store: CertifiedStore,
        schema: Schema,
        readback: Readback,
        budget_state: int | None = None,
        retain: Sequence[str] = (),
    ) -> None:
        super().__init__(store, schema, readback)
        self.budget_state = budget_state
        self.retain = tuple(retain)
        self.redacts_evidence = "evidence" not in self.retain
        self.archives: dict[tuple[str, str], Held] = {}
        """(entity, scope) -> its archive summary as stored."""
        self.archive_versions: dict[tuple[str, str], int] = {}
        """(entity, scope) -> the last version written (versions go on after a removal)."""
        self.folded: dict[str, FactRecord] = {}
        """event id -> the folded record, in fold order."""
        self.logged: dict[tuple[str, str, str], int] = {}
        """(class, entity, scope) -> the last version logged in L."""
        self.pending = BoundedStep()
        """What the current step did so far (drained by `end_step`)."""
        self.world.lifecycle = bounded_lifecycle(self.world.lifecycle, ())
        self._forget_before = self.world.snapshot()
        self._forget_status: DeletionStatus | None = None

    def configure(self, budget_state: int | None, retain: Sequence[str]) -> None:
        self.budget_state = budget_state
        self.retain = tuple(retain)
        self.redacts_evidence = "evidence" not in self.retain

    def fork(self, store: CertifiedStore) -> BoundedCertifier:
        base = super().fork(store)
        twin = BoundedCertifier(store, self.schema, self.readback, self.budget_state, self.retain)
        twin.__dict__.update({k: v for k, v in base.__dict__.items() if k not in _BOUNDED_FIELDS})
        twin.archives = dict(self.archives)
        twin.archive_versions = dict(self.archive_versions)
        twin.folded = dict(self.folded)
        twin.logged = dict(self.logged)
        return twin

    @classmethod
    def restore_bounded(
        cls,
        store: CertifiedStore,
        schema: Schema,
        readback: Readback,
        budget_state: int | None,
        retain: Sequence[str],
    ) -> BoundedCertifier:
        """`Certifier.restore` (G from the records, Γ from L), then the archives from the
        store and the logged versions from L."""
        certifier = cls.restore(store, schema, readback)
        assert isinstance(certifier, BoundedCertifier)
        certifier.configure(budget_state, retain)
        scan = store.scan()
        for point in scan.points:
            if is_archive(point.metadata):
                held = Held(point.id, dict(point.metadata))
                certifier.archives[held.key] = held
                certifier.archive_versions[held.key] = int(held.metadata[VERSION])
                for line in held.metadata.get(DERIVED_FACTS) or ():
                    certifier.folded[str(line["event_id"])] = _line_record(line)
        certifier.world.lifecycle = bounded_lifecycle(
            certifier.world.lifecycle, certifier.folded.values()
        )
        for row in scan.table(LEDGER):
            meta = row.metadata
            if meta.get("kind") == SUMMARY_ROW:
                key = (
                    str(meta[SUMMARY_CLASS]),
                    str(meta["summary_entity"]),
                    str(meta["summary_scope"]),
                )
                certifier.logged[key] = int(meta["version"])
                if key[0] == ARCHIVE:
                    k2 = (key[1], key[2])
                    certifier.archive_versions[k2] = max(
                        certifier.archive_versions.get(k2, 0), int(meta["version"])
                    )
        return certifier

    # -- the budget ------------------------------------------------------------------------

    def end_step(
        self, day: dt.date, after: str, provenance: Provenance, sequence: RecordSequence | None
    ) -> BoundedStep:
        """After an update step: fold while over budget, write the archives that changed, log
        every new summary version in L, run the rebuild checks, verify. Returns (and resets)
        what the step did."""
        step = self.pending
        if self.budget_state is not None and len(self.governed.records) > self.budget_state:
            # A fold removes a record and changes no other record's `written_seq`: the store
            # is read once per step, not once per fold.
            seqs = {
                str(p.metadata.get("event_id")): p.metadata.get("written_seq")
                for p in self.store.scan().points
                if is_certified(p.metadata)
            }
            while len(self.governed.records) > self.budget_state:
                record = self._oldest_ended(seqs)
                if record is None:
                    break
                self._fold(record)
                step.folds.append(record.event_id)
        self._sync_archives(day, after, sequence)
        step.versions.extend(self._log_versions(provenance))
        step.state = len(self.governed.records)
        step.active = sum(
            1
            for r in self.governed.records
            if r.status == "active" and not expired(r.valid_until, day)
        )
        step.over_budget = self.budget_state is not None and step.state > self.budget_state
        step.rebuild_checks = self._rebuild_check()
        self.verify(day, event=f"budget after {after}")
        self.pending = BoundedStep()
        return step

    def _oldest_ended(self, seqs: Mapping[str, Any]) -> FactRecord | None:
        """The ended record with the smallest `written_seq` (`seqs`: event id -> its stored
        `written_seq`; ties by event id), the latest record of each slot excepted (it fixes
        the slot's owner)."""
        latest: dict[Slot, str] = {}
        for r in self.governed.records:
            latest[r.slot] = r.event_id
        # Ended = no longer active. A record still `active` whose window has ended is not
        # folded: §1's assert widens it back into the state when its value is asserted again
        # and `correct` re-marks it, so folding it could change G (docs/decisions.md).
        ended = [
            r
            for r in self.governed.records
            if r.status != "active" and latest[r.slot] != r.event_id
        ]
        if not ended:
            return None

        def order(r: FactRecord) -> tuple[int, int, str]:
            seq = seqs.get(r.event_id)
            return (0, seq, r.event_id) if isinstance(seq, int) else (1, 0, r.event_id)

        return min(ended, key=order)

    def _fold(self, record: FactRecord) -> None:
        memory_id = self.memory_ids.pop(record.event_id)
        self.visibility.pop(record.event_id, None)
        self.store.remove([memory_id])
        lifecycle = self.world.lifecycle
        assert isinstance(lifecycle, BoundedLifecycle)
        lifecycle.records = [r for r in lifecycle.records if r.event_id != record.event_id]
        lifecycle.folded_counts[record.slot] = lifecycle.folded_counts.get(record.slot, 0) + 1
        self.folded[record.event_id] = record

    def _sync_archives(self, day: dt.date, after: str, sequence: RecordSequence | None) -> None:
        """Make every archive hold exactly its folded records' lines (with the visibility Γ
        gives them now): a changed archive gets a new version, the old one is removed."""
        groups: dict[tuple[str, str], list[FactRecord]] = {}
        for r in self.folded.values():
            groups.setdefault((r.entity, r.scope), []).append(r)
        for key in sorted(set(groups) | set(self.archives)):
            group = groups.get(key, [])
            lines = [self._summary_line(r) for r in group]
            held = self.archives.get(key)
            if held is not None and list(held.metadata.get(DERIVED_FACTS) or ()) == lines:
                continue
            if held is not None:
                self.store.remove([held.id])
                del self.archives[key]
            if group:
                version = self.archive_versions.get(key, 0) + 1
                self.archive_versions[key] = version
                self.archives[key] = self._write_archive(
                    key, after, group, lines, day, sequence, version
                )

    def _write_archive(
        self,
        key: tuple[str, str],
        after: str,
        group: Sequence[FactRecord],
        lines: list[dict[str, Any]],
        day: dt.date,
        sequence: RecordSequence | None,
        version: int,
    ) -> Held:
        entity, scope = key
        order = {} if sequence is None else {"written_seq": sequence.take()}
        meta: dict[str, Any] = {
            DERIVED_MARKER: "1",
            SUMMARY_CLASS: ARCHIVE,
            "summary_entity": entity,
            "summary_scope": scope,
            "summary_after": after,
            DERIVED_FACTS: lines,
            SOURCES: [r.event_id for r in group],
            VERSION: version,
            REBUILD: ARCHIVE_RECIPE,
            "written_on": day.isoformat(),
            **order,
            "speaker": entity,
        }
        text = "\n".join(render(self.schema, r) for r in group)
        return Held(self.store.add_record(text, meta), meta)

    # -- summary versions in L, and the rebuild path ----------------------------------------

    def _summaries(self) -> list[tuple[str, Held]]:
        return [(COMPACTION, h) for _k, h in sorted(self.summaries.held.items())] + [
            (ARCHIVE, h) for _k, h in sorted(self.archives.items())
        ]

    def _log_versions(self, provenance: Provenance) -> list[dict[str, Any]]:
        """A `summary` row in L for every summary version not logged yet."""
        out = []
        for cls, held in self._summaries():
            entity, scope = held.key
            version = int(held.metadata[VERSION])
            if self.logged.get((cls, entity, scope)) == version:
                continue
            lines = [
                {k: line[k] for k in LINE_KEYS if k in line}
                for line in held.metadata.get(DERIVED_FACTS) or ()
            ]
            self.store.add_side_row(
                LEDGER,
                {
                    LEDGER_MARKER: LEDGER_VERSION,
                    "kind": SUMMARY_ROW,
                    SUMMARY_CLASS: cls,
                    "summary_entity": entity,
                    "summary_scope": scope,
                    "version": version,
                    SOURCES: list(held.metadata.get(SOURCES) or ()),
                    "lines": lines,
                    "event_id": None,
                    "source_turn": provenance.turn,
                    "conversation": provenance.conversation,
                    "recorded_at": provenance.recorded_at.isoformat(),
                    "trust": "derived",
                },
            )
            self.logged[(cls, entity, scope)] = version
            out.append({"class": cls, "entity": entity, "scope": scope, "version": version})
        return out

    def _rebuild_check(self) -> int:
        """Recompute every stored summary from L and V and compare it with the stored version;
        returns how many were checked."""
        scan = self.store.scan()
        stored = {p.id: p for p in scan.points if is_derived(p.metadata)}
        rows = scan.table(LEDGER)
        latest: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        slots: dict[str, tuple[str, str, str]] = {}
        for row in rows:
            meta = row.metadata
            if meta.get("kind") == SUMMARY_ROW:
                latest[
                    (
                        str(meta[SUMMARY_CLASS]),
                        str(meta["summary_entity"]),
                        str(meta["summary_scope"]),
                    )
                ] = meta
            elif meta.get("kind") == EVENT and meta.get("entity") is not None:
                slots[str(meta["event_id"])] = (
                    str(meta["entity"]),
                    str(meta["predicate"]),
                    str(meta["scope"]),
                )
        values: dict[str, str] = {}
        for row in scan.table(EVIDENCE):
            for ev in row.metadata.get("events") or ():
                if "value" in ev:
                    values[str(ev["id"])] = str(ev["value"])
        checked = 0
        problems: list[str] = []
        for cls, held in self._summaries():
            point = stored.get(held.id)
            row = latest.get((cls, *held.key))
            if point is None or row is None or int(row["version"]) != int(held.metadata[VERSION]):
                problems.append(f"{cls} summary {held.key}: no stored version logged in L")
                continue
            records = []
            for line in row.get("lines") or ():
                event_id = str(line["event_id"])
                if event_id not in slots or event_id not in values:
                    problems.append(f"{cls} summary {held.key}: source {event_id} not in L and V")
                    break
                entity, predicate, scope = slots[event_id]
                records.append(
                    (
                        FactRecord(
                            entity,
                            predicate,
                            values[event_id],
                            scope,
                            status=line["status"],
                            valid_from=_date(line.get("valid_from")),
                            valid_until=_date(line.get("valid_until")),
                            event_id=event_id,
                            version=1,
                        ),
                        line,
                    )
                )
            else:
                facts = [
                    {
                        "entity": r.entity,
                        "predicate": r.predicate,
                        "value": r.value,
                        "scope": r.scope,
                        "status": r.status,
                        "valid_from": line.get("valid_from"),
                        "valid_until": line.get("valid_until"),
                        "event_id": r.event_id,
                        **{k: line[k] for k in ("owner", "visible_to") if k in line},
                    }
                    for r, line in records
                ]
                text = "\n".join(render(self.schema, r) for r, _line in records)
                if (
                    text != point.text
                    or facts != list(point.metadata.get(DERIVED_FACTS) or ())
                    or list(row.get(SOURCES) or ()) != list(point.metadata.get(SOURCES) or ())
                ):
                    problems.append(
                        f"{cls} summary {held.key} v{held.metadata[VERSION]} does not "
                        "rebuild from L and V"
                    )
            checked += 1
        if problems:
            raise CertificationError("summary rebuild check failed: " + "; ".join(problems))
        return checked

    # -- forget ------------------------------------------------------------------------------

    def _settle(
        self,
        event: Event,
        transition: Transition | None,
        provenance: Provenance,
        sequence: RecordSequence | None,
        record: CertificationRecord,
    ) -> None:
        """A forget: its folded lines leave the archives (V redacted for their values too,
        unless retained), then the producer's own residue scan decides the deletion row."""
        if event.op != "forget" or not event.has_slot:
            return
        slot = event.slot
        gone = [r for r in self.folded.values() if r.slot == slot]
        for r in gone:
            del self.folded[r.event_id]
        values = {r.value for r in gone}
        if transition is not None:
            values |= {r.value for r in transition.removed}
        values |= {c.value for c in self._forget_before.conflicts if c.slot == slot}
        values |= {
            q.fact.value
            for q in self._forget_before.quarantine
            if Slot(q.fact.entity, q.fact.predicate, q.fact.scope) == slot
        }
        lexicon = self.readback.lexicon
        folded_values = sorted({r.value for r in gone})
        if folded_values and self.redacts_evidence:
            self.evidence.redact(event, folded_values, lexicon, lexicon.principal)
        self._sync_archives(provenance.recorded_at, provenance.turn, sequence)
        # Read L as the event will leave it: its Γ rows that left Γ with the forget (the
        # slot's conflict and quarantine rows) are deleted right after this hook.
        scan = self.store.scan()
        kept = {gamma_key(row) for row in gamma_rows(self.world.snapshot())}
        tables = tuple(
            r
            for r in scan.tables
            if r.table != LEDGER
            or (read := gamma_row(r.metadata)) is None
            or gamma_key(read) in kept
        )
        scan = replace(scan, tables=tables)
        where = sorted(own_residue(scan, event, sorted(values), self.readback))
        status: DeletionStatus
        if not where:
            status = "done"
        elif self.retain and set(where) <= set(self.retain):
            status = "retained"
        else:
            status = "pending"
        self.world.deletions = [
            DeletionRow(d.event, d.slot, status) if d.event == event.id else d
            for d in self.world.deletions
        ]
        self.pending.deletions.append({"event": event.id, "status": status, "where": where})
        self._forget_status = status

    def apply(
        self, event: Event, provenance: Provenance, sequence: RecordSequence | None = None
    ) -> CertificationRecord:
        # Γ before the event: the slot's conflicts and quarantine rows, whose values a forget
        # must also find gone (the world drops them while applying).
        self._forget_before = self.world.snapshot()
        self._forget_status = None
        return super().apply(event, provenance, sequence)

    def _residue(self, scan: Any, transition: Transition) -> list[str]:
        """CSS's rendered-text residue check, without the retained classes (a retained V
        may repeat a forgotten record's text: the deletion row says `retained`), and none at
        all when the deletion row says `pending`: L then reports the residue instead of the
        write failing (docs/method.md §14)."""
        if self._forget_status == "pending":
            return []
        if not self.retain:
            return super()._residue(scan, transition)
        kept = replace(scan, tables=tuple(r for r in scan.tables if r.table not in self.retain))
        return super()._residue(kept, transition)

    def _extra_problems(self, scan: Any) -> list[str]:
        """The store's archive summaries must be exactly the ones held, as written."""
        stored = {p.id: dict(p.metadata) for p in scan.points if is_archive(p.metadata)}
        expected = {h.id: h.metadata for h in self.archives.values()}
        if set(stored) != set(expected):
            return [f"archive summaries {sorted(stored)} != expected {sorted(expected)}"]
        wrong = [i for i in stored if stored[i].get(DERIVED_FACTS) != expected[i][DERIVED_FACTS]]
        return [f"archive summaries whose facts differ: {wrong}"] if wrong else []


_BOUNDED_FIELDS = frozenset(
    {
        "budget_state",
        "retain",
        "redacts_evidence",
        "archives",
        "archive_versions",
        "folded",
        "logged",
        "pending",
    }
)


def own_residue(scan: Any, event: Event, values: Sequence[str], readback: Readback) -> set[str]:
    """The bounded producer's own residue scan after a forget: the classes (`state`,
    `summary`, `history`, or a side table: `ledger`, `evidence`) that still hold a checked
    value of the slot. Read as the harness reads residue (place.runner.residue): certified
    records and derived lines by key, texts with the lexicon."""
    lexicon = readback.lexicon
    principal = lexicon.principal
    slot = tuple(event.slot)
    checked = set(values)
    found: set[str] = set()

    def names(text: str) -> bool:
        if not checked & lexicon.values_in(text, event.predicate):
            return False
        return event.entity in (lexicon.entities_in(text) or [principal])

    for point in scan.points:
        meta = point.metadata
        if is_certified(meta):
            if (meta["entity"], meta["predicate"], meta["scope"]) == slot and meta[
                "value"
            ] in checked:
                found.add("state")
        elif is_derived(meta):
            lines = meta.get(DERIVED_FACTS) or ()
            if any(
                (f.get("entity"), f.get("predicate"), f.get("scope")) == slot
                and f.get("value") in checked
                for f in lines
            ) or any(names(t) for t in point.text.split("\n")):
                found.add("summary")
        elif names(point.text):
            found.add("state")
    for row in scan.history:
        if any(t and names(t) for t in (row.old_memory, row.new_memory)):
            found.add("history")
    for side in scan.tables:
        meta = side.metadata
        held = False
        if tuple(meta.get(k) for k in ("entity", "predicate", "scope")) == slot:
            held = bool(checked & set(strings([v for k, v in meta.items() if k != "text"])))
        for fields in meta.get("events") or ():
            if (
                isinstance(fields, Mapping)
                and tuple(fields.get(k) for k in ("entity", "predicate", "scope")) == slot
                and fields.get("value") in checked
            ):
                held = True
        if any(names(t) for t in strings(meta.get("text"))):
            held = True
        if held:
            found.add(side.table)
    return found


def _date(raw: Any) -> dt.date | None:
    return None if raw in (None, "") else dt.date.fromisoformat(str(raw))


def _line_record(line: Mapping[str, Any]) -> FactRecord:
    """An archive line as the folded record it came from (restart)."""
    return FactRecord(
        entity=str(line["entity"]),
        predicate=str(line["predicate"]),
        value=str(line["value"]),
        scope=str(line["scope"]),
        status=line["status"],
        valid_from=_date(line.get("valid_from")),
        valid_until=_date(line.get("valid_until")),
        event_id=str(line["event_id"]),
        version=1,
    )
