"""FAKE stores for unit tests: a read-only store for read policies, side tables for the
evidence log and the ledger."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from place.memory.item import StoredItem
from place.memory.tables import SideRow


class FakeStore:
    """FAKE read-only store: `search` is top-k by score, `search_filtered` ranks everything
    (its records are all plain text, so QASC's payload filter would let all of them through)."""

    def __init__(self, items: list[StoredItem]) -> None:
        self.items = sorted(items, key=lambda i: (-(i.score or 0.0), i.id))

    def search(self, query: str, limit: int) -> list[StoredItem]:
        return self.items[:limit]

    def search_filtered(self, query: str, limit: int | None, **_: Any) -> list[StoredItem]:
        return self.items if limit is None else self.items[:limit]


@dataclass
class FakeSideTables:
    """FAKE store: side rows in a list, ids counted (as place.memory.tables numbers them)."""

    rows: list[SideRow] = field(default_factory=list)

    def add_side_row(self, table: str, metadata: dict[str, Any]) -> str:
        row_id = f"{table}-{len(self.rows) + 1}"
        self.rows.append(SideRow(table, row_id, dict(metadata)))
        return row_id

    def update_side_row(self, table: str, row_id: str, changes: dict[str, Any]) -> None:
        self.rows = [
            SideRow(r.table, r.id, {**r.metadata, **changes}) if r.id == row_id else r
            for r in self.rows
        ]

    def delete_side_rows(self, table: str, row_ids: list[str]) -> None:
        self.rows = [r for r in self.rows if r.id not in row_ids]

    def side_rows(self, table: str) -> tuple[SideRow, ...]:
        return tuple(r for r in self.rows if r.table == table)
