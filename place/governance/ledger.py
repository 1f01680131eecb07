"""The certified ledger L and its readback β_L (docs/method.md §11, "Ledger").

L is the side table ``ledger`` of a row store (`place.memory.tables`): rows with ids of
their own and JSON metadata, no vectors, no Mem0 history, never searched, never read as
state. CSS writes it (`place.governance.certifier`); every other producer leaves it empty.
Two sorts of row, told apart by `kind`:

- **event rows** (`kind = "event"`): one per new event CSS applies, every op, in the order
  applied. They hold the event id, the op, who issued it and what it names (the slot, the
  principal shared with, the permission and grantee, the task rolled back), never a value,
  and are never rewritten or redacted: they are how L "keeps the applied event ids", so a
  redelivered event is recognised after a restart.
- **Γ rows** (`kind` in `epoch`, `share`, `conflict`, `request`, `quarantine`,
  `deletion`): a mirror of CSS's governance state Γ, one row per row of `Governance`
  (`place.reference.governance`). A row is written when its Γ row appears, rewritten in
  place when its fields change (an epoch's n and held, a conflict's or a request's status),
  and deleted when its Γ row leaves Γ (an unshare; forget's redaction of the slot's conflict
  and quarantine rows). Deletion rows hold the forget event and the slot, no value.

Every row carries `place_ledger` (the format version), `kind`, its key fields, `version`,
`event_id`, `source_turn`, `conversation`, `recorded_at` and `trust` (`ledger_metadata`).

β_L (`read_governance`) reads the Γ rows' metadata, never any text, into the same row types
as the reference's Γ*, so Γ^phys and Γ* compare directly; a store without ledger rows reads
as the empty `Governance()`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from place.memory.scan import StoreScan
from place.memory.tables import SideRow
from place.reference.governance import (
    ConflictRow,
    DeletionRow,
    EpochRow,
    Governance,
    QuarantineRow,
    RequestRow,
    ShareRow,
)
from place.trajectory.model import Event, Fact, Slot

LEDGER = "ledger"
"""The side table that holds L."""
LEDGER_MARKER = "place_ledger"
"""Metadata key whose presence marks a ledger row; its value is the format version."""
LEDGER_VERSION = "1"

EVENT = "event"
RowKind = Literal["event", "epoch", "share", "conflict", "request", "quarantine", "deletion"]
GAMMA_KINDS: tuple[RowKind, ...] = (
    "epoch",
    "share",
    "conflict",
    "request",
    "quarantine",
    "deletion",
)
"""The kinds of Γ rows, in the order of `Governance`'s fields."""

EVENT_TRUST = "trusted-user-event"
"""Rows an event wrote (the same trust as the certified records)."""
REQUEST_TRUST = "trusted-user-request"
"""A task's request row: a user turn, not an event."""
QUARANTINE_TRUST = "untrusted-tool-output"
"""A quarantine row: a fact read from a tool turn, never state."""

GammaRow = EpochRow | ShareRow | ConflictRow | RequestRow | QuarantineRow | DeletionRow
GammaKey = tuple[Any, ...]
"""(kind, key fields...): what identifies a Γ row across snapshots."""


@dataclass(frozen=True)
class Written:
    """Where a ledger row (or its latest version) comes from."""

    event_id: str | None
    """The event that wrote it (None: a task's request, a tool turn's quarantine)."""
    turn: str
    conversation: str
    recorded_at: dt.date
    trust: str


def ledger_metadata(
    kind: RowKind, fields: Mapping[str, Any], version: int, written: Written
) -> dict[str, Any]:
    """The metadata of one ledger row."""
    return {
        LEDGER_MARKER: LEDGER_VERSION,
        "kind": kind,
        **fields,
        "version": version,
        "event_id": written.event_id,
        "source_turn": written.turn,
        "conversation": written.conversation,
        "recorded_at": written.recorded_at.isoformat(),
        "trust": written.trust,
    }


def is_ledger_row(metadata: Mapping[str, Any]) -> bool:
    return metadata.get(LEDGER_MARKER) == LEDGER_VERSION


# ---------------------------------------------------------------- event rows


def event_subject(event: Event) -> tuple[str, ...]:
    """What an event names, for its event row's `version` (the n-th event row of the same
    subject): the slot, the permission and grantee, or the task."""
    if event.has_slot:
        return ("slot", event.entity, event.predicate, event.scope)
    if event.op in ("grant", "revoke"):
        return ("permission", str(event.permission), str(event.to))
    return ("task", str(event.task))


def event_fields(event: Event, speaker: str) -> dict[str, Any]:
    """An event row's key fields: never a value (docs/method.md §11)."""
    fields: dict[str, Any] = {"op": event.op, "speaker": speaker}
    if event.has_slot:
        fields.update(entity=event.entity, predicate=event.predicate, scope=event.scope)
    if event.with_ is not None:
        fields["principal"] = event.with_
    if event.permission is not None:
        fields["permission"] = event.permission
    if event.to is not None:
        fields["principal"] = event.to
    if event.task is not None:
        fields["task"] = event.task
    return fields


# ---------------------------------------------------------------- Γ rows <-> metadata


def _slot_fields(slot: Slot) -> dict[str, Any]:
    return {"entity": slot.entity, "predicate": slot.predicate, "scope": slot.scope}


def gamma_fields(row: GammaRow) -> tuple[RowKind, dict[str, Any]]:
    """A Γ row as (kind, metadata fields): exactly what β_L reads back."""
    if isinstance(row, EpochRow):
        return "epoch", {
            "permission": row.permission,
            "principal": row.principal,
            "n": row.n,
            "held": row.held,
        }
    if isinstance(row, ShareRow):
        return "share", {**_slot_fields(row.slot), "principal": row.principal}
    if isinstance(row, ConflictRow):
        return "conflict", {
            "k": row.k,
            **_slot_fields(row.slot),
            "proposer": row.proposer,
            "value": row.value,
            "active": list(row.active),
            "status": row.status,
        }
    if isinstance(row, RequestRow):
        return "request", {
            "task": row.task,
            "handle": row.handle,
            "asker": row.asker,
            "permission": row.permission,
            "n": row.n,
            "links": list(row.links),
            "status": row.status,
        }
    if isinstance(row, QuarantineRow):
        fact = row.fact
        return "quarantine", {
            "turn": row.turn,
            "entity": fact.entity,
            "predicate": fact.predicate,
            "value": fact.value,
            "scope": fact.scope,
        }
    return "deletion", {"event": row.event, **_slot_fields(row.slot), "status": row.status}


def gamma_key(row: GammaRow) -> GammaKey:
    """The identity of a Γ row: epochs by (p, A), shares by (slot, A), conflicts by k,
    requests by task, quarantine by (turn, fact), deletions by the forget event."""
    if isinstance(row, EpochRow):
        return ("epoch", row.permission, row.principal)
    if isinstance(row, ShareRow):
        return ("share", row.slot, row.principal)
    if isinstance(row, ConflictRow):
        return ("conflict", row.k)
    if isinstance(row, RequestRow):
        return ("request", row.task)
    if isinstance(row, QuarantineRow):
        return ("quarantine", row.turn, row.fact)
    return ("deletion", row.event)


def gamma_rows(governance: Governance) -> list[GammaRow]:
    """Every row of Γ, kind by kind, each kind in its own order."""
    g = governance
    return [*g.epochs, *g.shares, *g.conflicts, *g.requests, *g.quarantine, *g.deletions]


def _slot(meta: Mapping[str, Any]) -> Slot:
    return Slot(str(meta["entity"]), str(meta["predicate"]), str(meta["scope"]))


def _optional_int(raw: Any) -> int | None:
    return None if raw is None else int(raw)


def gamma_row(meta: Mapping[str, Any]) -> GammaRow | None:
    """β_L of one ledger row: its Γ row, None for an event row (or a row of no Γ kind)."""
    kind = meta.get("kind")
    if kind == "epoch":
        return EpochRow(
            str(meta["permission"]), str(meta["principal"]), int(meta["n"]), bool(meta["held"])
        )
    if kind == "share":
        return ShareRow(_slot(meta), str(meta["principal"]))
    if kind == "conflict":
        return ConflictRow(
            str(meta["k"]),
            _slot(meta),
            str(meta["proposer"]),
            str(meta["value"]),
            tuple(str(v) for v in meta["active"]),
            meta["status"],
        )
    if kind == "request":
        permission = meta.get("permission")
        return RequestRow(
            str(meta["task"]),
            str(meta["handle"]),
            str(meta["asker"]),
            None if permission is None else str(permission),
            _optional_int(meta.get("n")),
            tuple(str(link) for link in meta["links"]),
            meta["status"],
        )
    if kind == "quarantine":
        fact = Fact(
            str(meta["entity"]), str(meta["predicate"]), str(meta["value"]), str(meta["scope"])
        )
        return QuarantineRow(str(meta["turn"]), fact)
    if kind == "deletion":
        return DeletionRow(str(meta["event"]), _slot(meta), meta["status"])
    return None


# ---------------------------------------------------------------- β_L


def governance_of(rows: Iterable[SideRow | Mapping[str, Any]]) -> Governance:
    """β_L over ledger rows in the order written: Γ^phys. Only rows carrying the ledger
    marker count; epochs and shares are sorted, the other kinds keep the ledger's order."""
    found: dict[str, list[Any]] = {kind: [] for kind in GAMMA_KINDS}
    for row in rows:
        meta = row.metadata if isinstance(row, SideRow) else row
        if not is_ledger_row(meta):
            continue
        read = gamma_row(meta)
        if read is not None:
            found[str(meta["kind"])].append(read)
    return Governance(
        epochs=tuple(sorted(found["epoch"])),
        shares=tuple(sorted(found["share"])),
        conflicts=tuple(found["conflict"]),
        requests=tuple(found["request"]),
        quarantine=tuple(found["quarantine"]),
        deletions=tuple(found["deletion"]),
    )


class _Scannable(Protocol):
    def scan(self) -> StoreScan: ...


def read_governance(source: _Scannable | StoreScan) -> Governance:
    """Γ^phys = β_L(L): the governance state a store's ledger holds, read from ledger
    metadata only (docs/method.md §11). `source` is a store (or a read-only view of one) or a
    scan already taken. A store without ledger rows (none, append, native, extract) reads
    as the empty `Governance()`."""
    scan = source if isinstance(source, StoreScan) else source.scan()
    return governance_of(scan.table(LEDGER))


def applied_events(rows: Iterable[SideRow]) -> list[str]:
    """The ids of the events L records as applied, in the order applied."""
    return [
        str(r.metadata["event_id"])
        for r in rows
        if is_ledger_row(r.metadata) and r.metadata.get("kind") == EVENT
    ]


__all__ = [
    "EVENT",
    "EVENT_TRUST",
    "GAMMA_KINDS",
    "LEDGER",
    "LEDGER_MARKER",
    "LEDGER_VERSION",
    "QUARANTINE_TRUST",
    "REQUEST_TRUST",
    "GammaKey",
    "GammaRow",
    "Written",
    "applied_events",
    "event_fields",
    "event_subject",
    "gamma_fields",
    "gamma_key",
    "gamma_row",
    "gamma_rows",
    "governance_of",
    "is_ledger_row",
    "ledger_metadata",
    "read_governance",
]
