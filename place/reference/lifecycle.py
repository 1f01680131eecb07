"""Lifecycle transitions of docs/method.md §1, as a pure state machine over fact records.

The evaluator replays trusted events through it to get the reference state S*, and the CSS
certifier drives its own, separate instance to derive G_t: the certifier never sees the
evaluator's state, it only shares these rules (the format requires that "the validator and
the certifier implement the same rules").
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from typing import Literal

from place.eligibility import expired
from place.trajectory.model import FACT_OPS, Event, Fact, Schema, Slot

Status = Literal["active", "superseded", "corrected", "retracted"]
STATUSES: tuple[Status, ...] = ("active", "superseded", "corrected", "retracted")


@dataclass(frozen=True)
class FactRecord:
    """One fact with its lifecycle status and validity window, as governed state holds it."""

    entity: str
    predicate: str
    value: str
    scope: str
    status: Status
    valid_from: dt.date | None
    valid_until: dt.date | None
    event_id: str
    """The event that created this record."""
    version: int
    """1 for the first record of its slot, +1 for each later record of the same slot."""
    supersedes: tuple[str, ...] = ()
    """event ids of the records this one ended (superseded or corrected)."""

    @property
    def fact(self) -> Fact:
        return Fact(self.entity, self.predicate, self.value, self.scope)

    @property
    def slot(self) -> Slot:
        return Slot(self.entity, self.predicate, self.scope)


class LifecycleError(ValueError):
    """An event that the rules do not allow at this point (retracting an inactive value...)."""


@dataclass(frozen=True)
class Transition:
    """What one event did: the certifier realizes exactly this in the store."""

    event: Event
    added: tuple[FactRecord, ...] = ()
    changed: tuple[tuple[FactRecord, FactRecord], ...] = ()
    """(before, after) pairs for records whose status or window changed."""
    removed: tuple[FactRecord, ...] = ()
    """Records physically removed (forget)."""

    @property
    def is_noop(self) -> bool:
        return not (self.added or self.changed or self.removed)


def _earliest(a: dt.date | None, b: dt.date | None) -> dt.date | None:
    return None if a is None or b is None else min(a, b)


def _latest(a: dt.date | None, b: dt.date | None) -> dt.date | None:
    return None if a is None or b is None else max(a, b)


@dataclass
class LifecycleState:
    """Governed fact records of one world. `records` keeps history (ended records stay)."""

    schema: Schema
    records: list[FactRecord] = field(default_factory=list)
    ever_held: set[Slot] = field(default_factory=set)

    def copy(self) -> LifecycleState:
        return LifecycleState(self.schema, list(self.records), set(self.ever_held))

    def active(self, slot: Slot) -> list[FactRecord]:
        return [r for r in self.records if r.slot == slot and r.status == "active"]

    def state_at(self, day: dt.date) -> frozenset[Fact]:
        """S at a checkpoint dated `day`: active facts whose window has not ended by then."""
        return frozenset(r.fact for r in self.live_records(day))

    def live_records(self, day: dt.date) -> list[FactRecord]:
        return [r for r in self.records if r.status == "active" and not expired(r.valid_until, day)]

    def apply(self, event: Event, own_date: dt.date) -> Transition:
        """Apply one trusted event dated `own_date` (its conversation's date). The
        governance ops of docs/method.md §11 (share, unshare, grant, revoke, rollback) leave the
        lifecycle state as it is: their effect is on Γ* (`place.reference.governance`)."""
        if event.op not in FACT_OPS:
            return Transition(event)
        if event.op == "forget":
            return self._forget(event)
        if event.op == "retract":
            return self._retract(event, own_date)
        return self._assert(event, own_date)

    def _replace(self, before: FactRecord, after: FactRecord) -> tuple[FactRecord, FactRecord]:
        self.records[self.records.index(before)] = after
        return before, after

    def _next_version(self, slot: Slot) -> int:
        return 1 + sum(1 for r in self.records if r.slot == slot)

    def _assert(self, event: Event, own_date: dt.date) -> Transition:
        assert event.value is not None  # the loader guarantees it for assert/correct
        slot = event.slot
        effective = event.valid_from or own_date
        scheduled = event.op == "assert" and effective > own_date
        one = self.schema.predicates[event.predicate].cardinality == "one"
        changed: list[tuple[FactRecord, FactRecord]] = []
        ended: list[str] = []
        same: FactRecord | None = None
        for record in self.active(slot):
            if record.value == event.value:
                same = record
            elif event.op == "correct":
                changed.append(self._replace(record, replace(record, status="corrected")))
                ended.append(record.event_id)
            elif one and scheduled:
                until = (
                    effective if record.valid_until is None else min(record.valid_until, effective)
                )
                if until != record.valid_until:
                    changed.append(self._replace(record, replace(record, valid_until=until)))
            elif one:
                changed.append(self._replace(record, replace(record, status="superseded")))
                ended.append(record.event_id)
        self.ever_held.add(slot)
        if same is not None:
            widened = replace(
                same,
                valid_from=_earliest(same.valid_from, event.valid_from),
                valid_until=_latest(same.valid_until, event.valid_until),
            )
            if widened != same:
                changed.append(self._replace(same, widened))
            return Transition(event, changed=tuple(changed))
        added = FactRecord(
            entity=event.entity,
            predicate=event.predicate,
            value=event.value,
            scope=event.scope,
            status="active",
            valid_from=event.valid_from,
            valid_until=event.valid_until,
            event_id=event.id,
            version=self._next_version(slot),
            supersedes=tuple(ended),
        )
        self.records.append(added)
        return Transition(event, added=(added,), changed=tuple(changed))

    def _retract(self, event: Event, own_date: dt.date) -> Transition:
        live = [r for r in self.active(event.slot) if not expired(r.valid_until, own_date)]
        if event.value is not None:
            live = [r for r in live if r.value == event.value]
        if not live:
            what = f"value {event.value!r}" if event.value is not None else "any value"
            raise LifecycleError(
                f"retract of {what} in slot {_slot_text(event.slot)}, which is not active on "
                f"{own_date.isoformat()}; retract may only name a value that is active then"
            )
        changed = [self._replace(r, replace(r, status="retracted")) for r in live]
        return Transition(event, changed=tuple(changed))

    def _forget(self, event: Event) -> Transition:
        slot = event.slot
        if slot not in self.ever_held:
            raise LifecycleError(
                f"forget of slot {_slot_text(slot)}, which never held a value; forget may only "
                "name a slot that holds or held a value"
            )
        removed = tuple(r for r in self.records if r.slot == slot)
        self.records = [r for r in self.records if r.slot != slot]
        return Transition(event, removed=removed)


def _slot_text(slot: Slot) -> str:
    return f"({slot.entity}, {slot.predicate}, {slot.scope})"
