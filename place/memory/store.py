"""The physical store X_t: one Mem0 ``Memory`` over one Qdrant collection, for one principal.

``MemoryStore`` offers the operations producers and readers need, implemented with Mem0's
own objects (``Memory.add``/``search``, its Qdrant vector store, its sqlite history
manager) so that the store is what an application using Mem0 would hold. Stores are opened
by :class:`place.memory.backend.Backend`; what a store needs of Mem0 beyond its public API
goes through :mod:`place.memory.mem0_compat`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from place.memory import ids, mem0_compat
from place.memory.config import MEM0_CORE_KEYS, check_store_name
from place.memory.filters import principal_filter, user_condition
from place.memory.item import StoredItem
from place.memory.scan import StoreScan, point_record, scan_history, scan_points
from place.memory.tables import SideRow, SideTables
from place.timing import PhaseTimer


class StoreHost(Protocol):
    """What a store needs of the backend that opened it (`place.memory.backend.Backend`):
    written as a protocol here so that the store does not import the backend, which imports
    the store."""

    timer: PhaseTimer
    id_seed: int

    @property
    def local_path(self) -> Path | None: ...

    def note_mem0_errors(self, n: int) -> None: ...

    def local_collection_sqlite(self, name: str) -> sqlite3.Connection | None: ...

    def side_tables_path(self, name: str) -> Path: ...

    def exists(self, name: str) -> bool: ...

    def open(self, name: str, principal: str) -> MemoryStore: ...

    def drop_collection(self, name: str) -> None: ...

    def forget(self, name: str) -> None: ...

#: History event written by :meth:`MemoryStore.update_metadata` (Mem0 itself writes ADD,
#: UPDATE and DELETE); old/new memory both carry the unchanged record text.
METADATA_EVENT = "METADATA"

#: Counted as an add error when fact extraction answers nothing (Mem0 stays silent then).
EMPTY_EXTRACTION = "place: fact extraction: the model returned an empty response"

_SCROLL_PAGE = 256


class MemoryStore:
    """One governed store: a Mem0 ``Memory``, its Qdrant collection and history DB."""

    def __init__(self, backend: StoreHost, name: str, principal: str, memory: Any) -> None:
        self._backend = backend
        self._name = name
        self._principal = principal
        self._memory = memory
        self._closed = False
        self._last_query: tuple[str, Any] | None = None
        self._ids = ids.IdSequence(
            mem0_compat.history_connection(memory),
            mem0_compat.history_lock(memory),
            backend.id_seed,
            name,
        )
        # The ledger L and other side tables: beside the store, outside Mem0 (tables.py).
        self._tables = SideTables(backend.side_tables_path(name))
        #: mem0 log messages (WARNING and above) of the last :meth:`add_dialogue` call.
        self.last_add_errors: tuple[str, ...] = ()
        #: Raw LLM outputs of the last :meth:`add_dialogue` call (fact extraction first,
        #: then the ADD/UPDATE/DELETE/NONE decision if facts were found).
        self.last_llm_responses: tuple[str, ...] = ()
        #: How each of those LLM calls ended (finish reason, token counts), one entry per
        #: call; None where the runtime recorded nothing.
        self.last_llm_calls: tuple[Any, ...] = ()

    # -- identity ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """Store (= Qdrant collection) name."""
        return self._name

    @property
    def principal(self) -> str:
        """The Mem0 ``user_id`` every record of this store belongs to."""
        return self._principal

    @property
    def memory(self) -> Any:
        """The underlying ``mem0.Memory`` (for producers that need Mem0 directly)."""
        return self._memory

    @property
    def qdrant_client(self) -> Any:
        """The (timed) Qdrant client Mem0's vector store holds: one object for Mem0 and us."""
        return mem0_compat.vector_client(self._memory)

    @property
    def history_path(self) -> Path:
        """Path of this store's sqlite history DB."""
        return Path(self._memory.config.history_db_path)

    def files(self) -> list[Path]:
        """Files holding this store on disk (history DB; local-mode collection storage; the
        side-table file once a side row was written)."""
        paths = [self.history_path]
        local = self._backend.local_path
        if local is not None:
            coll = local / "collection" / self._name
            if coll.exists():
                paths.extend(p for p in coll.rglob("*") if p.is_file())
        return paths + self._tables.files()

    # -- writes --------------------------------------------------------------------------

    def add_dialogue(
        self, messages: list[dict[str, Any]], metadata: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Native write: Mem0's own LLM-driven ``add(messages, user_id, infer=True)``;
        ``metadata`` (e.g. ``written_on``) lands on every record it adds or updates.

        Returns Mem0's result (``{"results": [{"id", "memory", "event", ...}]}`` with events
        ADD/UPDATE/DELETE). Mem0 1.0.11 swallows unparsable LLM output (it logs an error and
        adds nothing); those log messages are kept in :attr:`last_add_errors` and counted
        by the backend. A failed HTTP call for fact extraction is not swallowed: it raises.
        """
        self._check_open()
        # A caching runtime LLM (place.runtime.mem0_llm) logs how each call ended.
        completions = getattr(self._memory.llm, "completions", None)
        first_call = len(completions) if completions is not None else 0
        with (
            mem0_compat.capture_mem0_log() as records,
            mem0_compat.recording_llm(self._memory) as raw,
            ids.drawing(self._ids),
        ):
            result = self._memory.add(
                messages, user_id=self._principal, infer=True, metadata=_user_meta(metadata)
            )
        # One entry per call (None: not recorded); no log at all records one None per call.
        self.last_llm_calls = (
            tuple(completions[first_call:]) if completions is not None else (None,) * len(raw)
        )
        if raw and mem0_compat.extraction_is_empty(raw[0]):
            # Mem0 reads an empty extraction answer as "no facts" without a word; count it.
            records.append(EMPTY_EXTRACTION)
        self.last_add_errors = tuple(records)
        self.last_llm_responses = tuple(raw)
        self._backend.note_mem0_errors(len(records))
        return dict(result)

    def add_messages(
        self, messages: list[dict[str, Any]], metadata: Mapping[str, Any] | None = None
    ) -> list[str]:
        """Raw memory: Mem0 ``add(messages, infer=False)`` stores each message verbatim as
        its own record (no LLM); returns the stored texts in order."""
        self._check_open()
        with ids.drawing(self._ids):
            result = self._memory.add(
                messages, user_id=self._principal, metadata=_user_meta(metadata), infer=False
            )
        return [str(r.get("memory", "")) for r in result.get("results", [])]

    def add_record(self, text: str, metadata: Mapping[str, Any] | None = None) -> str:
        """Store ``text`` verbatim (Mem0 ``add(infer=False)``) with ``metadata``; return its id.

        Metadata keys land at the top level of the Qdrant payload beside Mem0's own keys
        (``data``, ``hash``, ``created_at``, ``updated_at``, ``user_id``, ``role``), so those
        names are refused.
        """
        self._check_open()
        if not text:
            raise ValueError("record text must be non-empty")
        meta = dict(metadata or {})
        _check_user_keys(meta)
        with ids.drawing(self._ids):
            result = self._memory.add(
                [{"role": "user", "content": text}],
                user_id=self._principal,
                metadata=meta,
                infer=False,
            )
        events = result.get("results", [])
        if len(events) != 1 or events[0].get("event") != "ADD":
            raise RuntimeError(f"mem0 add(infer=False) did not add one record: {result!r}")
        return str(events[0]["id"])

    def update_metadata(self, memory_id: str, changes: Mapping[str, Any]) -> None:
        """Change lifecycle metadata of a record; its text and vector stay as they are.

        Goes through mem0's Qdrant vector store (``update(vector=None, payload=...)`` is a
        ``set_payload``: only the given keys change) and appends a ``METADATA`` row to
        Mem0's history so the change is auditable.
        """
        self._check_open()
        changes = dict(changes)
        _check_user_keys(changes)
        if not changes:
            return
        existing = self._get_point(memory_id)
        now = datetime.now(UTC).isoformat()
        self._memory.vector_store.update(
            vector_id=memory_id, vector=None, payload={**changes, "updated_at": now}
        )
        text = existing.payload.get("data")
        with ids.drawing(self._ids):
            mem0_compat.add_history_row(
                self._memory,
                memory_id,
                text,
                text,
                METADATA_EVENT,
                created_at=existing.payload.get("created_at"),
                updated_at=now,
                actor_id=existing.payload.get("actor_id"),
                role=existing.payload.get("role"),
            )

    def update_text(
        self, memory_id: str, text: str, metadata: Mapping[str, Any] | None = None
    ) -> str:
        """Mem0's own UPDATE of one record (``Memory.update``); returns the previous text.

        The record keeps its id and ``created_at``; its text becomes ``text`` (embedded
        again), its caller metadata becomes ``metadata`` (Mem0 keeps ``user_id``, ``role``
        and ``actor_id``), and Mem0 appends an UPDATE row to its history holding the old
        and the new text: the old text stays in the store's history, as it does when Mem0's
        own update decision rewrites a memory. History row ids come from the store's id
        sequence.
        """
        self._check_open()
        if not text:
            raise ValueError("record text must be non-empty")
        meta = dict(metadata or {})
        _check_user_keys(meta)
        previous = str(self._get_point(memory_id).payload.get("data", ""))
        with ids.drawing(self._ids):
            self._memory.update(memory_id, text, meta)
        return previous

    def delete(self, memory_id: str) -> str:
        """Mem0's own DELETE of one record (``Memory.delete``); returns its text.

        The point goes, and Mem0 appends a DELETE row to its history that keeps the old
        text, as Mem0's own update decision does. This is what an application using Mem0
        gets; :meth:`remove` is the physical removal that leaves no trace.
        """
        self._check_open()
        previous = str(self._get_point(memory_id).payload.get("data", ""))
        with ids.drawing(self._ids):
            self._memory.delete(memory_id)
        return previous

    def remove(self, memory_ids: Sequence[str], *, missing_ok: bool = False) -> None:
        """Physically remove records: their Qdrant points and every history row of them.

        Mem0's own ``delete`` would write a DELETE history row carrying the old text, so the
        points are deleted through the vector store and the history rows directly in sqlite.
        Both sqlite files (history, and in local mode the collection's storage) run with
        ``secure_delete`` and are VACUUMed, so the text is not left in free pages either.
        """
        self._check_open()
        # Not `ids`: that name is the id-sequence module.
        point_ids = [str(i) for i in memory_ids]
        if not point_ids:
            return
        if not missing_ok:
            found = {str(p.id) for p in self.qdrant_client.retrieve(self._name, ids=point_ids)}
            missing = [i for i in point_ids if i not in found]
            if missing:
                raise KeyError(f"no such memory ids in {self._name}: {missing}")
        from qdrant_client import models

        self.qdrant_client.delete(
            collection_name=self._name, points_selector=models.PointIdsList(points=[*point_ids])
        )
        with self._backend.timer.phase("store"):
            mem0_compat.delete_history_rows(self._memory, point_ids)
        local = self._backend.local_collection_sqlite(self._name)
        if local is not None:
            with self._backend.timer.phase("store"):
                local.execute("VACUUM")
                # The WAL still holds the old pages; fold it in and empty it.
                local.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- side tables (place.memory.tables) -------------------------------------------------

    def add_side_row(self, table: str, metadata: Mapping[str, Any]) -> str:
        """Add a row to side table `table` (the ledger L: ``"ledger"``); its own id. No
        vector, no Mem0 history row, no draw from the record-id sequence."""
        self._check_open()
        with self._backend.timer.phase("store"):
            return self._tables.append(table, metadata)

    def update_side_row(self, table: str, row_id: str, changes: Mapping[str, Any]) -> None:
        """Rewrite keys of one side row's metadata in place."""
        self._check_open()
        with self._backend.timer.phase("store"):
            self._tables.update(table, row_id, changes)

    def delete_side_rows(self, table: str, row_ids: Sequence[str]) -> None:
        """Physically delete side rows (secure_delete and VACUUM, as `remove` does)."""
        self._check_open()
        with self._backend.timer.phase("store"):
            self._tables.delete(table, row_ids)

    def side_rows(self, table: str) -> tuple[SideRow, ...]:
        """The rows of one side table, in the order written (empty without any)."""
        self._check_open()
        with self._backend.timer.phase("store"):
            return self._tables.rows(table)

    # -- reads ---------------------------------------------------------------------------

    def search(self, query: str, limit: int, payload_filter: Any | None = None) -> list[StoredItem]:
        """Native read: Mem0 ``search(query, user_id=principal, limit=limit)``.

        With ``payload_filter`` (a ``qdrant_client.models.Filter``), the filter is pushed
        down instead (see :meth:`search_filtered`).
        """
        self._check_open()
        if payload_filter is not None:
            return self.search_filtered(query, limit, must=[payload_filter])
        result = self._memory.search(query, user_id=self._principal, limit=limit)
        return [
            StoredItem(
                id=str(r["id"]),
                text=str(r.get("memory", "")),
                metadata=dict(r.get("metadata") or {}),
                score=r.get("score"),
            )
            for r in result.get("results", [])
        ]

    def search_filtered(
        self,
        query: str,
        limit: int | None,
        *,
        must: Sequence[Any] = (),
        should: Sequence[Any] = (),
        must_not: Sequence[Any] = (),
    ) -> list[StoredItem]:
        """Similarity read with a Qdrant payload filter pushed down.

        The filter always includes ``user_id == principal``; ``must``/``should``/
        ``must_not`` are Qdrant conditions (``FieldCondition``, nested ``Filter``, ...).
        Metadata keys are top-level payload keys (e.g. ``key="status"``). The query is
        embedded by the same embedder Mem0 uses for ``search``. ``limit=None`` ranks all.
        """
        self._check_open()
        if limit is None:
            limit = max(1, self.count())
        flt = principal_filter(self._principal, must, should, must_not)
        vector = self._query_vector(query)
        hits = self.qdrant_client.query_points(
            collection_name=self._name,
            query=vector,
            query_filter=flt,
            limit=limit,
            with_payload=True,
        ).points
        return [
            StoredItem(
                id=(rec := point_record(h.id, h.payload)).id,
                text=rec.text,
                metadata=dict(rec.metadata),
                score=h.score,
            )
            for h in hits
        ]

    def _query_vector(self, query: str) -> Any:
        # A read policy searches the same question several times (QASC: certified, then
        # plain records); embed it once.
        if self._last_query is None or self._last_query[0] != query:
            self._last_query = (query, self._memory.embedding_model.embed(query, "search"))
        return self._last_query[1]

    def count(self) -> int:
        """Number of points of the principal."""
        from qdrant_client import models

        flt = models.Filter(must=[user_condition(self._principal)])
        return int(self.qdrant_client.count(self._name, count_filter=flt, exact=True).count)

    def scan(self) -> StoreScan:
        """Everything physically stored for the principal: points, history rows and the rows
        of the store's side tables."""
        self._check_open()
        with self._backend.timer.phase("store"):
            points = scan_points(self.qdrant_client, self._name, self._principal)
            with mem0_compat.locked_history(self._memory) as conn:
                history = scan_history(conn)
            tables = self._tables.rows()
        return StoreScan(points=tuple(points), history=tuple(history), tables=tables)

    # -- lifecycle -----------------------------------------------------------------------

    def clone(self, name: str) -> MemoryStore:
        """An independent copy under ``name``: same points (with vectors), history and side
        tables.

        Nothing is recomputed (no producer, no embedding): points are scrolled with their
        vectors into a new collection of the same client, and the history DB and the
        side-table file are copied with sqlite's backup API.
        """
        self._check_open()
        check_store_name(name)
        if self._backend.exists(name):
            raise ValueError(f"store {name!r} already exists")
        from qdrant_client import models

        twin = self._backend.open(name, self._principal)
        offset: Any = None
        while True:
            batch, offset = self.qdrant_client.scroll(
                collection_name=self._name,
                limit=_SCROLL_PAGE,
                offset=offset,
                with_payload=True,
                with_vectors=True,
            )
            if batch:
                twin.qdrant_client.upsert(
                    collection_name=name,
                    points=[
                        models.PointStruct(id=r.id, vector=r.vector, payload=r.payload)
                        for r in batch
                    ],
                )
            if offset is None:
                break
        with self._backend.timer.phase("store"):
            mem0_compat.copy_history(self._memory, twin.memory)
            self._tables.copy_to(twin._tables)
        return twin

    def drop(self) -> None:
        """Delete this store: its collection, its history DB file and its side-table file.
        Used for clones."""
        path = self.history_path
        self.close()
        self._backend.drop_collection(self._name)
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        self._tables.unlink()

    def close(self) -> None:
        """Release the history DB connection; the collection stays in Qdrant."""
        if self._closed:
            return
        self._closed = True
        self._memory.close()
        self._tables.close()
        self._backend.forget(self._name)

    # -- internals -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"store {self._name!r} is closed")

    def _get_point(self, memory_id: str) -> Any:
        point = self._memory.vector_store.get(vector_id=memory_id)
        if point is None:
            raise KeyError(f"no memory {memory_id!r} in store {self._name!r}")
        if point.payload.get("user_id") != self._principal:
            raise PermissionError(f"memory {memory_id!r} belongs to another principal")
        return point


def _user_meta(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not metadata:
        return None
    meta = dict(metadata)
    _check_user_keys(meta)
    return meta


def _check_user_keys(meta: Mapping[str, Any]) -> None:
    clash = sorted(set(meta) & MEM0_CORE_KEYS)
    if clash:
        raise ValueError(f"metadata keys {clash} are reserved by mem0's payload")


__all__ = ["EMPTY_EXTRACTION", "METADATA_EVENT", "MemoryStore"]
