"""Deterministic record ids: every id Mem0 draws for a store comes from a seeded sequence.

Mem0 1.0.x names every new memory, and every history row, with ``uuid.uuid4()``. Random ids
make two runs of the same inputs differ in their records (exposed-item ids, step
operations) even when every metric agrees. While a store writes, the ids Mem0 draws come
from that store's own sequence instead: ``uuid(sha256(seed, store name, n))`` with the
RFC 4122 version-4 bits set, so they look like what Mem0 would draw.

The sequence position ``n`` lives in the store's own history database (table
``place_id_sequence``), so it travels with the store: a clone (world b, a probe copy, the
pre-unit snapshot a resumed run rolls back to) continues from where its source was, and a
resumed run draws the same ids as an uninterrupted one.

Mem0's draws are routed through a shim by :func:`place.memory.mem0_compat.route_mem0_uuid`
(its module-level ``uuid`` imports in ``mem0.memory.main`` and ``mem0.memory.storage``); the
shim falls back to ``uuid.uuid4`` whenever no store is drawing, so Mem0 behaves as usual
outside a write.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

from place.memory import mem0_compat

TABLE = "place_id_sequence"


class IdSequence:
    """The id sequence of one store, persisted in its history database."""

    def __init__(self, connection: sqlite3.Connection, lock: Any, seed: int, name: str) -> None:
        # The history DB's connection and the lock Mem0 holds around every use of it.
        self._conn = connection
        self._history_lock = lock
        self._prefix = f"{seed}:{name}:".encode()
        with self._history_lock:
            self._conn.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (next INTEGER NOT NULL)")
            if self._conn.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0] == 0:
                self._conn.execute(f"INSERT INTO {TABLE} (next) VALUES (0)")
            self._conn.commit()

    def position(self) -> int:
        with self._history_lock:
            return int(self._conn.execute(f"SELECT next FROM {TABLE}").fetchone()[0])

    def draw(self) -> uuid.UUID:
        # Called from inside Mem0 while it may hold the history lock (add_history), so the
        # position is read and advanced on a private cursor without taking that lock again.
        # Inside Mem0's own transaction the advance commits with it (or rolls back with it);
        # otherwise it commits at once.
        own = not self._conn.in_transaction
        n = int(self._conn.execute(f"SELECT next FROM {TABLE}").fetchone()[0])
        self._conn.execute(f"UPDATE {TABLE} SET next = ?", (n + 1,))
        if own:
            self._conn.commit()
        digest = hashlib.sha256(self._prefix + str(n).encode()).digest()
        return uuid.UUID(bytes=digest[:16], version=4)


_global_lock = threading.Lock()
_current: list[IdSequence] = []


def _uuid4() -> uuid.UUID:
    with _global_lock:
        source = _current[-1] if _current else None
    return source.draw() if source is not None else uuid.uuid4()


_SHIM = SimpleNamespace(**{k: getattr(uuid, k) for k in dir(uuid) if not k.startswith("__")})
_SHIM.uuid4 = _uuid4


def install() -> None:
    """Route Mem0's ``uuid.uuid4()`` through the shim (idempotent)."""
    mem0_compat.route_mem0_uuid(_SHIM)


@contextmanager
def drawing(sequence: IdSequence) -> Iterator[None]:
    """While the body runs, ids Mem0 draws come from `sequence`.

    Mem0 runs part of ``add()`` in a worker thread, so the source is process-wide; the
    runner writes one store at a time.
    """
    with _global_lock:
        _current.append(sequence)
    try:
        yield
    finally:
        with _global_lock:
            _current.remove(sequence)
