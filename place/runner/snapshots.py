"""Resume: row stores are snapshotted before every writing unit and rolled back if a run was
killed inside one (docs/decisions.md, "Resume").

A snapshot and a rollback are clones (`MemoryStore.clone`), so they copy a store's side
tables (the ledger L) with its points and history, and dropping a store deletes its
side-table file too: the ledger is rolled back with the state it describes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SNAPSHOT_SUFFIX = "__pre"
CLONE_SUFFIXES = ("__b", "__probe")
"""World-b and conflict-probe copies; a killed unit may leave one behind."""


def open_rows(
    backend: Any, rows: Iterable[str], principal: str, snapshot: int | None, units_done: int
) -> dict[str, Any]:
    """Open every row store, dropping leftover copies and rolling back an interrupted unit."""
    stores: dict[str, Any] = {}
    for row in rows:
        for suffix in CLONE_SUFFIXES:
            if backend.exists(row + suffix):
                backend.open(row + suffix, principal).drop()
        pre = row + SNAPSHOT_SUFFIX
        if snapshot == units_done and backend.exists(pre):
            # The writing unit after the last completed one was interrupted: roll back.
            if backend.exists(row):
                backend.open(row, principal).drop()
            saved = backend.open(pre, principal)
            stores[row] = saved.clone(row)
            saved.close()
        else:
            stores[row] = backend.open(row, principal)
    return stores


def take(backend: Any, stores: dict[str, Any], principal: str) -> None:
    """Clone every row store to `<row>__pre` (replacing the previous snapshot)."""
    for row, store in stores.items():
        pre = row + SNAPSHOT_SUFFIX
        if backend.exists(pre):
            backend.open(pre, principal).drop()
        store.clone(pre).close()
    backend.sync()
