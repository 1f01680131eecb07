"""Everything physically stored for one principal: Qdrant points, Mem0 history rows and the
store's side-table rows.

The points and history are X_t of the method (§2); the side tables (the ledger L, docs/method.md
§11) lie beside them (`place.memory.tables`). The scan is read straight from Qdrant (scroll),
from the sqlite ``history`` table and from the side-table file, not through Mem0's read API,
so nothing is hidden by Mem0's formatting (e.g. ``get_all``'s default limit of 100).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from place.memory.config import MEM0_CORE_KEYS
from place.memory.tables import SideRow

_HISTORY_COLUMNS: tuple[str, ...] = (
    "id",
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
)


@dataclass(frozen=True)
class PointRecord:
    """One Qdrant point: mem0's ``data`` text, the user metadata, and the raw payload."""

    id: str
    text: str
    metadata: Mapping[str, Any]
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class HistoryRow:
    """One row of Mem0's sqlite ``history`` table (schema of mem0 1.0.11)."""

    id: str
    memory_id: str | None
    old_memory: str | None
    new_memory: str | None
    event: str | None
    created_at: str | None
    updated_at: str | None
    is_deleted: bool
    actor_id: str | None
    role: str | None


@dataclass(frozen=True)
class StoreScan:
    """Snapshot of a store: all points of the principal, all history rows, and every row of
    its side tables (in the order written)."""

    points: tuple[PointRecord, ...] = ()
    history: tuple[HistoryRow, ...] = ()
    tables: tuple[SideRow, ...] = ()
    _by_id: dict[str, PointRecord] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id.update({p.id: p for p in self.points})

    def point(self, memory_id: str) -> PointRecord | None:
        """The point with this id, if stored."""
        return self._by_id.get(memory_id)

    def ids(self) -> set[str]:
        """Ids of all stored points."""
        return set(self._by_id)

    def history_for(self, memory_id: str) -> list[HistoryRow]:
        """History rows of one memory id, in table order."""
        return [row for row in self.history if row.memory_id == memory_id]

    def table(self, name: str) -> tuple[SideRow, ...]:
        """The rows of one side table, in the order written."""
        return tuple(row for row in self.tables if row.table == name)

    def texts(self) -> list[str]:
        """Every string found in payloads (recursively), in history rows and in side-table
        metadata (recursively).

        Used for deletion-residue checks: a forgotten value must not occur in any of them.
        """
        out: list[str] = []
        for point in self.points:
            out.extend(_strings(point.payload))
        for row in self.history:
            out.extend(
                s
                for s in (row.old_memory, row.new_memory, row.actor_id, row.role)
                if isinstance(s, str)
            )
        for side in self.tables:
            out.extend(_strings(side.metadata))
        return out

    def contains(self, needle: str) -> bool:
        """Whether ``needle`` occurs (case-insensitively) in any stored string."""
        low = needle.casefold()
        return any(low in s.casefold() for s in self.texts())


def strings(value: Any) -> Iterator[str]:
    """Every string in `value`, recursively: mapping keys and values, list items, and the
    text of any other scalar."""
    return _strings(value)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple | set):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def user_metadata(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata fields of a payload (mem0 stores them at top level)."""
    return {k: v for k, v in payload.items() if k not in MEM0_CORE_KEYS}


def point_record(point_id: Any, payload: Mapping[str, Any] | None) -> PointRecord:
    """Build a :class:`PointRecord` from a Qdrant record/scored point."""
    body = dict(payload or {})
    return PointRecord(
        id=str(point_id),
        text=str(body.get("data", "")),
        metadata=user_metadata(body),
        payload=body,
    )


def scan_points(client: Any, collection: str, principal: str, page: int = 256) -> list[PointRecord]:
    """All points of ``principal`` in ``collection`` (scroll with a ``user_id`` filter)."""
    from qdrant_client import models

    flt = models.Filter(
        must=[models.FieldCondition(key="user_id", match=models.MatchValue(value=principal))]
    )
    records: list[PointRecord] = []
    offset: Any = None
    while True:
        batch, offset = client.scroll(
            collection_name=collection,
            scroll_filter=flt,
            limit=page,
            offset=offset,
            with_payload=True,
            with_vectors=False,
        )
        records.extend(point_record(r.id, r.payload) for r in batch)
        if offset is None:
            return records


def scan_history(conn: sqlite3.Connection, lock: threading.Lock | None = None) -> list[HistoryRow]:
    """All rows of Mem0's history table (the DB belongs to one store, so all are its own)."""
    query = f"SELECT {', '.join(_HISTORY_COLUMNS)} FROM history ORDER BY rowid"
    if lock is None:
        rows = conn.execute(query).fetchall()
    else:
        with lock:
            rows = conn.execute(query).fetchall()
    return [
        HistoryRow(
            id=r[0],
            memory_id=r[1],
            old_memory=r[2],
            new_memory=r[3],
            event=r[4],
            created_at=r[5],
            updated_at=r[6],
            is_deleted=bool(r[7]),
            actor_id=r[8],
            role=r[9],
        )
        for r in rows
    ]
