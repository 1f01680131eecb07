"""Γ*, the reference governance state of docs/method.md §11, and the rules that change it.

Evaluator-side, like the rest of `place.reference`: the replay (`place.reference.replay`)
drives one `GovernedState` per world through a trajectory's events, and takes a snapshot of
Γ* (`Governance`) at every world-a checkpoint.

- Every fact record has an **owner**: the speaker of the event that created it. A slot's
  owner is the owner of its live records (there is never more than one: see `proposal`);
  a slot without live records is owned by the owner of its latest record, if any.
- **Visibility**: vis(r, A) holds when A owns r or the slot of r is shared with A. With one
  principal every record is visible to everyone who can ask, so E, Q* and gold are those of
  docs/method.md §1.
- A **proposal** is an assert or correct by someone other than the owner of a slot that
  has live values, of a value that is not live: it opens a pending conflict (its event id
  k), leaves S* as it is, and is resolved by the owner's next event on the slot.
- **Epochs**: n(p, A) counts the grants and revokes of permission p to A so far; A holds p
  when the last of them was a grant. A permission's owner always holds it.
- Γ*'s rows: `epochs`, `shares`, `conflicts`, `requests`, `quarantine`, `deletions`
  (`Governance`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from typing import Literal

from place.eligibility import Interpretation, is_eligible
from place.reference.lifecycle import FactRecord, LifecycleState, Transition
from place.trajectory.model import FACT_OPS, Event, Fact, Schema, Slot, Task

ConflictStatus = Literal["pending", "resolved"]
RequestStatus = Literal["requested", "reverted"]
DeletionStatus = Literal["done", "retained", "pending"]
"""The reference carries out every forget: its rows are always `done`. `retained` (a copy
kept under a declared retention) and `pending` (residue left) are statuses a producer may
report in its ledger (docs/method.md §14: the bounded producer does)."""
GovernanceKind = Literal[
    "share", "unshare", "grant", "revoke", "propose", "request", "rollback", "duplicate"
]


class GovernanceError(ValueError):
    """An event the governance rules do not allow (a share by someone who does not own the
    slot, a rollback of a task that did not run, ...): a validation error of the trajectory."""


# ---------------------------------------------------------------- Γ*'s rows


@dataclass(frozen=True, order=True)
class EpochRow:
    """(p, A, n, held): n grants and revokes of permission p to principal A so far; A holds
    p when the last of them was a grant."""

    permission: str
    principal: str
    n: int
    held: bool


@dataclass(frozen=True, order=True)
class ShareRow:
    """(slot, A): the slot's records are visible to A."""

    slot: Slot
    principal: str


@dataclass(frozen=True)
class ConflictRow:
    """A proposal k (its event id): the proposer's value for an owned slot, beside the values
    live when it was made."""

    k: str
    slot: Slot
    proposer: str
    value: str
    active: tuple[str, ...]
    """The slot's live values when the proposal was made (sorted)."""
    status: ConflictStatus


@dataclass(frozen=True)
class RequestRow:
    """A task as requested, at its own turn (deferred or not)."""

    task: str
    handle: str
    asker: str
    permission: str | None
    n: int | None
    """n(p, asker) at the request; None for a task that names no permission."""
    links: tuple[str, ...]
    """The event ids of the records the needs read that were eligible and visible to the
    asker at the request (sorted)."""
    status: RequestStatus


@dataclass(frozen=True)
class QuarantineRow:
    """A fact β reads from a tool turn's text (read as about the turn's speaker when it names
    no entity): untrusted content kept apart, never state."""

    turn: str
    fact: Fact


@dataclass(frozen=True)
class DeletionRow:
    event: str
    """The forget event."""
    slot: Slot
    status: DeletionStatus = "done"


@dataclass(frozen=True)
class Governance:
    """Γ* at one checkpoint. Epochs and shares are sorted; conflicts, requests, quarantine
    and deletions are in the order they were made."""

    epochs: tuple[EpochRow, ...] = ()
    shares: tuple[ShareRow, ...] = ()
    conflicts: tuple[ConflictRow, ...] = ()
    requests: tuple[RequestRow, ...] = ()
    quarantine: tuple[QuarantineRow, ...] = ()
    deletions: tuple[DeletionRow, ...] = ()


@dataclass(frozen=True)
class GovernanceTransition:
    """What one event (or a task's request or redelivery) did to Γ* (docs/method.md §11's
    transition kinds beyond §10's)."""

    event: str
    """The event id; the task id for `request`, and for the `duplicate` of a task or run
    delivered again."""
    kind: GovernanceKind
    slot: Slot | None = None
    """share, unshare, propose, and the duplicate of a slot event."""
    principal: str | None = None
    """share/unshare: the principal shared with; grant/revoke: the grantee; propose: the
    proposer; request: the asker."""
    permission: str | None = None
    task: str | None = None
    """request, rollback, and the duplicate of a task or run."""
    value: str | None = None
    """propose: the proposed value."""


# ---------------------------------------------------------------- one world's state


@dataclass
class GovernedState:
    """S* (the lifecycle state) and Γ* of one world, with the owner of every record."""

    lifecycle: LifecycleState
    owners: dict[str, str] = field(default_factory=dict)
    """Event id of a record -> the speaker of that event."""
    shares: dict[Slot, set[str]] = field(default_factory=dict)
    epochs: dict[tuple[str, str], tuple[int, bool]] = field(default_factory=dict)
    conflicts: dict[str, ConflictRow] = field(default_factory=dict)
    requests: dict[str, RequestRow] = field(default_factory=dict)
    quarantine: list[QuarantineRow] = field(default_factory=list)
    deletions: list[DeletionRow] = field(default_factory=list)

    @classmethod
    def empty(cls, schema: Schema) -> GovernedState:
        return cls(LifecycleState(schema))

    @property
    def schema(self) -> Schema:
        return self.lifecycle.schema

    def copy(self) -> GovernedState:
        return GovernedState(
            self.lifecycle.copy(),
            dict(self.owners),
            {k: set(v) for k, v in self.shares.items()},
            dict(self.epochs),
            dict(self.conflicts),
            dict(self.requests),
            list(self.quarantine),
            list(self.deletions),
        )

    # -- reading ------------------------------------------------------------------------

    def owner(self, record: FactRecord) -> str:
        return self.owners[record.event_id]

    def visible(self, record: FactRecord, asker: str) -> bool:
        """vis(r, A): A owns r, or r's slot is shared with A."""
        return self.owner(record) == asker or asker in self.shares.get(record.slot, ())

    def foreign(self, asker: str) -> bool:
        """Whether S*'s history holds a record (not forgotten) that `asker` cannot see."""
        return any(not self.visible(r, asker) for r in self.lifecycle.records)

    def visibility(self, day: dt.date) -> dict[Slot, frozenset[str]]:
        """Who may see each slot that has an owner (its owner and those it is shared with):
        the reading of `visible` for an exposed fact, by the fact's slot (docs/decisions.md,
        "The governance half in a run")."""
        out: dict[Slot, frozenset[str]] = {}
        for slot in {r.slot for r in self.lifecycle.records}:
            owner = self.slot_owner(slot, day)
            if owner is not None:
                out[slot] = frozenset({owner, *self.shares.get(slot, ())})
        return out

    def slot_owner(self, slot: Slot, day: dt.date) -> str | None:
        """The owner of the slot's live records on `day`, else of its latest record."""
        records = [r for r in self.lifecycle.records if r.slot == slot]
        live = [r for r in self.lifecycle.live_records(day) if r.slot == slot]
        chosen = live or records[-1:]
        return self.owner(chosen[0]) if chosen else None

    def epoch(self, permission: str, principal: str) -> int:
        return self.epochs.get((permission, principal), (0, False))[0]

    def holds(self, permission: str, principal: str) -> bool:
        """held(p, A); the owner of p always holds it."""
        if self.schema.permissions[permission].owner == principal:
            return True
        return self.epochs.get((permission, principal), (0, False))[1]

    def snapshot(self) -> Governance:
        return Governance(
            epochs=tuple(
                sorted(EpochRow(p, a, n, held) for (p, a), (n, held) in self.epochs.items())
            ),
            shares=tuple(
                sorted(ShareRow(slot, a) for slot, names in self.shares.items() for a in names)
            ),
            conflicts=tuple(self.conflicts.values()),
            requests=tuple(self.requests.values()),
            quarantine=tuple(self.quarantine),
            deletions=tuple(self.deletions),
        )

    # -- events -------------------------------------------------------------------------

    def apply(
        self, event: Event, speaker: str, day: dt.date
    ) -> tuple[Transition | None, GovernanceTransition | None]:
        """Apply one trusted event of `speaker`, dated `day` (its conversation's date): a
        lifecycle event goes through S*'s rules unless it is a proposal; a governance event
        changes Γ* only. Raises LifecycleError or GovernanceError for an event the rules
        refuse."""
        if event.op in FACT_OPS:
            return self._fact_event(event, speaker, day)
        if event.op in ("share", "unshare"):
            return None, self._share(event, speaker, day)
        if event.op in ("grant", "revoke"):
            assert event.permission is not None and event.to is not None  # the loader's rule
            n = self.epoch(event.permission, event.to) + 1
            self.epochs[(event.permission, event.to)] = (n, event.op == "grant")
            kind: GovernanceKind = "grant" if event.op == "grant" else "revoke"
            return None, GovernanceTransition(
                event.id, kind, principal=event.to, permission=event.permission
            )
        raise AssertionError(f"rollback {event.id} is applied by the replay, which decides tasks")

    def _fact_event(
        self, event: Event, speaker: str, day: dt.date
    ) -> tuple[Transition | None, GovernanceTransition | None]:
        slot = event.slot
        owner = self.slot_owner(slot, day)
        live = sorted({r.value for r in self.lifecycle.live_records(day) if r.slot == slot})
        if owner is not None and owner != speaker:
            if event.op in ("assert", "correct") and live and event.value not in live:
                assert event.value is not None  # assert and correct carry a value
                self.conflicts[event.id] = ConflictRow(
                    event.id, slot, speaker, event.value, tuple(live), "pending"
                )
                return None, GovernanceTransition(
                    event.id, "propose", slot, principal=speaker, value=event.value
                )
            if (event.op == "retract" and live) or event.op == "forget":
                raise GovernanceError(
                    f"{event.op} of slot {_slot_text(slot)} by {speaker!r}, who does not own it "
                    f"(its owner is {owner!r}); only the slot's owner retracts or forgets its "
                    "values"
                )
        transition = self.lifecycle.apply(event, day)
        for record in transition.added:
            self.owners[record.event_id] = speaker
        if self.slot_owner(slot, day) in (speaker, None):
            self._resolve(slot)
        if event.op == "forget":
            self.deletions.append(DeletionRow(event.id, slot))
            # The slot's conflicts and quarantined facts are redacted with its values.
            self.conflicts = {k: c for k, c in self.conflicts.items() if c.slot != slot}
            self.quarantine = [
                q
                for q in self.quarantine
                if Slot(q.fact.entity, q.fact.predicate, q.fact.scope) != slot
            ]
        return transition, None

    def _share(self, event: Event, speaker: str, day: dt.date) -> GovernanceTransition:
        slot, name = event.slot, event.with_
        assert name is not None  # the loader's rule
        owner = self.slot_owner(slot, day)
        if owner is None:
            raise GovernanceError(
                f"{event.op} of slot {_slot_text(slot)}, which holds no value; a slot is "
                "shared by its owner, the speaker of its values"
            )
        if owner != speaker:
            raise GovernanceError(
                f"{event.op} of slot {_slot_text(slot)} by {speaker!r}, who does not own it "
                f"(its owner is {owner!r}); only the slot's owner shares or unshares it"
            )
        names = self.shares.setdefault(slot, set())
        if event.op == "unshare":
            if name not in names:
                raise GovernanceError(
                    f"unshare of slot {_slot_text(slot)} with {name!r}, who is not among its "
                    f"shares ({', '.join(sorted(names)) or 'none'}); unshare names a principal "
                    "the slot is shared with"
                )
            names.discard(name)
            if not names:
                del self.shares[slot]
        else:
            names.add(name)
        self._resolve(slot)
        kind: GovernanceKind = "share" if event.op == "share" else "unshare"
        return GovernanceTransition(event.id, kind, slot, principal=name)

    def _resolve(self, slot: Slot) -> None:
        """The owner's event on a slot resolves its pending conflicts."""
        for k, row in self.conflicts.items():
            if row.slot == slot and row.status == "pending":
                self.conflicts[k] = replace(row, status="resolved")

    # -- tasks and tool turns -----------------------------------------------------------

    def request_row(self, task: Task, asker: str, day: dt.date) -> RequestRow:
        """The request row of `task` asked by `asker` on `day`: n(p, asker) now, and the links,
        the event ids of the live records the needs admit that the asker sees. The reference
        and the certifier both make it here, so they cannot disagree."""
        links = sorted(
            {
                r.event_id
                for need in task.needs
                for r in self.lifecycle.live_records(day)
                if is_eligible(r, Interpretation(need.entity, need.predicate, need.scope, day))
                and self.visible(r, asker)
            }
        )
        n = self.epoch(task.permission, asker) if task.permission is not None else None
        return RequestRow(
            task.id, task.handle, asker, task.permission, n, tuple(links), "requested"
        )

    def request(self, row: RequestRow) -> GovernanceTransition:
        self.requests[row.task] = row
        return GovernanceTransition(row.task, "request", principal=row.asker, task=row.task)

    def revert(self, event: Event) -> GovernanceTransition:
        assert event.task is not None  # the loader's rule
        self.requests[event.task] = replace(self.requests[event.task], status="reverted")
        return GovernanceTransition(event.id, "rollback", task=event.task)

    def quarantine_turn(self, turn: str, facts: list[Fact]) -> None:
        self.quarantine.extend(QuarantineRow(turn, f) for f in sorted(facts))


def _slot_text(slot: Slot) -> str:
    return f"({slot.entity}, {slot.predicate}, {slot.scope})"
