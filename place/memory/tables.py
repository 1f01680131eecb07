"""Side tables of a row store: named tables of rows that live beside the store, outside Mem0.

A row store (`place.memory.store.MemoryStore`) is its Qdrant points and Mem0's history (the
*state partition*, X_t of docs/method.md §2). Its side tables hold what a producer keeps
beside that state: the certified ledger L (`ledger`, docs/method.md §11) and, later, the
evidence log V (`evidence`, issue #28). A side-table row has

- an id of its own (`<table>-<n>`, n from a per-file counter that never reuses a number), not
  drawn from the store's record-id sequence, so the state partition's ids do not move;
- JSON metadata (an object), and nothing else: no text to embed, no vector;
- no Mem0 history row: Mem0 never sees it, and no read policy searches it.

All tables of one store share one SQLite file, `<run dir>/side_tables/<store>.db`, in local
and server mode alike (a Qdrant server holds no side table), created at the first write: a
store that never writes a side row has no file. Rows come back in the order they were
written; a rewrite keeps a row's place. Deletions are physical: the file runs with
`secure_delete` and is VACUUMed after a delete, so removed metadata is not left in free
pages (forget's redaction, docs/method.md §11).

Clones (world b, probe copies, the pre-unit snapshots of place/runner/snapshots.py) copy
the file with SQLite's backup API (`copy_to`), so a copy holds the same rows, ids and
counter; the store's `scan()` returns the rows beside its points and history, so residue
checks read them.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SIDE_TABLES_DIR = "side_tables"
"""The run-directory folder of every store's side-table file (not `tables/`: a run's
rendered tables live there)."""

_TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS side_rows ("
    "n INTEGER PRIMARY KEY AUTOINCREMENT, "
    "tbl TEXT NOT NULL, "
    "metadata TEXT NOT NULL)"
)


def side_tables_path(run_dir: Path, name: str) -> Path:
    """Where store `name` keeps its side tables inside the run directory."""
    return Path(run_dir) / SIDE_TABLES_DIR / f"{name}.db"


def check_table_name(table: str) -> str:
    if not _TABLE_NAME.match(table):
        raise ValueError(f"side table name {table!r} must match {_TABLE_NAME.pattern}")
    return table


@dataclass(frozen=True)
class SideRow:
    """One row of a side table: its table, its own id, and its JSON metadata."""

    table: str
    id: str
    metadata: Mapping[str, Any]


def _row_id(table: str, n: int) -> str:
    return f"{table}-{n}"


def _number(table: str, row_id: str) -> int:
    prefix = f"{table}-"
    if not row_id.startswith(prefix) or not row_id[len(prefix) :].isdigit():
        raise KeyError(f"{row_id!r} is not a row id of side table {table!r}")
    return int(row_id[len(prefix) :])


def _dump(metadata: Mapping[str, Any]) -> str:
    if not isinstance(metadata, Mapping):
        raise TypeError("side-table metadata must be a mapping")
    # Sorted keys: the bytes of a row depend on its content only.
    return json.dumps(dict(metadata), sort_keys=True, ensure_ascii=False, allow_nan=False)


class SideTables:
    """The side tables of one store, in one SQLite file (created at the first write)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False

    # -- connection ---------------------------------------------------------------------

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        """The open connection; None when the file does not exist and `create` is false.
        Called with the lock held."""
        if self._closed:
            raise RuntimeError(f"side tables {self.path} are closed")
        if self._conn is None:
            if not create and not self.path.exists():
                return None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute(_SCHEMA)
            self._conn = conn
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._closed = True

    def files(self) -> list[Path]:
        """The file holding the tables (none before the first write)."""
        return [self.path] if self.path.exists() else []

    def unlink(self) -> None:
        """Delete the file (the store is dropped); the tables are closed first."""
        self.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    # -- writes -------------------------------------------------------------------------

    def append(self, table: str, metadata: Mapping[str, Any]) -> str:
        """Add one row to `table`; its id."""
        check_table_name(table)
        body = _dump(metadata)
        with self._lock:
            conn = self._connect(create=True)
            assert conn is not None
            cursor = conn.execute(
                "INSERT INTO side_rows (tbl, metadata) VALUES (?, ?)", (table, body)
            )
            n = cursor.lastrowid
        assert n is not None
        return _row_id(table, n)

    def update(self, table: str, row_id: str, changes: Mapping[str, Any]) -> None:
        """Rewrite keys of one row's metadata in place (the row keeps its id and place)."""
        n = _number(check_table_name(table), row_id)
        with self._lock:
            conn = self._connect(create=False)
            found = (
                None
                if conn is None
                else conn.execute(
                    "SELECT metadata FROM side_rows WHERE n = ? AND tbl = ?", (n, table)
                ).fetchone()
            )
            if conn is None or found is None:
                raise KeyError(f"no row {row_id!r} in side table {table!r} of {self.path}")
            body = {**json.loads(found[0]), **dict(changes)}
            conn.execute("UPDATE side_rows SET metadata = ? WHERE n = ?", (_dump(body), n))

    def delete(self, table: str, row_ids: Iterable[str]) -> None:
        """Physically delete rows (secure_delete, then VACUUM: nothing left in free pages)."""
        wanted = list(row_ids)
        numbers = [_number(check_table_name(table), i) for i in wanted]
        if not numbers:
            return
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                raise KeyError(f"no rows {wanted} in side table {table!r}")
            conn.execute("BEGIN")
            try:
                for n in numbers:
                    gone = conn.execute(
                        "DELETE FROM side_rows WHERE n = ? AND tbl = ?", (n, table)
                    ).rowcount
                    if gone != 1:
                        raise KeyError(f"no row {_row_id(table, n)!r} in side table {table!r}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("VACUUM")

    # -- reads --------------------------------------------------------------------------

    def rows(self, table: str | None = None) -> tuple[SideRow, ...]:
        """Rows of `table` (of every table when None), in the order they were written."""
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return ()
            if table is None:
                found = conn.execute("SELECT n, tbl, metadata FROM side_rows ORDER BY n").fetchall()
            else:
                found = conn.execute(
                    "SELECT n, tbl, metadata FROM side_rows WHERE tbl = ? ORDER BY n",
                    (check_table_name(table),),
                ).fetchall()
        return tuple(SideRow(tbl, _row_id(tbl, n), json.loads(meta)) for n, tbl, meta in found)

    # -- copies -------------------------------------------------------------------------

    def copy_to(self, target: SideTables) -> None:
        """Make `target` an exact copy (rows, ids, counter) with SQLite's backup API; a
        source without a file leaves the target without one."""
        if target is self:
            raise ValueError("cannot copy side tables onto themselves")
        with self._lock:
            source = self._connect(create=False)
            with target._lock:
                if source is None:
                    existing = target._connect(create=False)
                    if existing is not None:
                        existing.execute("DELETE FROM side_rows")
                        existing.execute("DELETE FROM sqlite_sequence")
                        existing.execute("VACUUM")
                    return
                dest = target._connect(create=True)
                assert dest is not None
                source.backup(dest)


__all__ = ["SIDE_TABLES_DIR", "SideRow", "SideTables", "check_table_name", "side_tables_path"]
