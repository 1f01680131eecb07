"""The physical store X_t: one Mem0 ``Memory`` over one Qdrant collection, for one principal.

``Backend`` opens stores that share one Qdrant client (local folder or server) and one
embedder; ``MemoryStore`` offers the operations producers and readers need, implemented
with Mem0's own objects (``Memory.add``/``search``, its Qdrant vector store, its sqlite
history manager) so that the store is what an application using Mem0 would hold.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from unittest import mock

from place.memory import ids, telemetry
from place.memory.config import (
    MEM0_CORE_KEYS,
    acquire_qdrant_client,
    build_mem0_config,
    check_store_name,
    history_db_path,
    release_qdrant_client,
)
from place.memory.scan import StoreScan, point_record, scan_history, scan_points
from place.memory.unit_vectors import FixedUnitEmbedder
from place.timing import PhaseTimer

_log = logging.getLogger(__name__)

#: History event written by :meth:`MemoryStore.update_metadata` (Mem0 itself writes ADD,
#: UPDATE and DELETE); old/new memory both carry the unchanged record text.
METADATA_EVENT = "METADATA"

_SCROLL_PAGE = 256


# --------------------------------------------------------------------------- timing


class _TimedProxy:
    """Delegates every attribute to ``target``; calls of methods are timed under ``phase``.

    Used for the Qdrant client held by mem0's vector store and for the shared embedder, so
    the real mem0/Qdrant objects do all the work and only the clock is added.
    """

    def __init__(self, target: Any, timer: PhaseTimer, phase: str) -> None:
        self._target = target
        self._timer = timer
        self._phase = phase

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if callable(value) and not attr.startswith("_"):
            return self._timer.wrap(self._phase, value)
        return value


# --------------------------------------------------------------------------- items


@dataclass(frozen=True)
class StoredItem:
    """A record as a read returns it: id, text (payload ``data``), user metadata, score."""

    id: str
    text: str
    metadata: Mapping[str, Any]
    score: float | None = None


@runtime_checkable
class ReadOnlyStore(Protocol):
    """What a read policy may do with a store: read, never write."""

    @property
    def name(self) -> str: ...

    @property
    def principal(self) -> str: ...

    def search(self, query: str, limit: int, payload_filter: Any | None = None) -> list[StoredItem]:
        """Native similarity read (see :meth:`MemoryStore.search`)."""
        ...

    def search_filtered(
        self,
        query: str,
        limit: int | None,
        *,
        must: Sequence[Any] = (),
        should: Sequence[Any] = (),
        must_not: Sequence[Any] = (),
    ) -> list[StoredItem]:
        """Similarity read with a pushed-down payload filter."""
        ...

    def scan(self) -> StoreScan:
        """Everything stored for the principal."""
        ...


# --------------------------------------------------------------------------- store


class MemoryStore:
    """One governed store: a Mem0 ``Memory``, its Qdrant collection and history DB."""

    def __init__(self, backend: Backend, name: str, principal: str, memory: Any) -> None:
        self._backend = backend
        self._name = name
        self._principal = principal
        self._memory = memory
        self._closed = False
        self._last_query: tuple[str, Any] | None = None
        self._ids = ids.IdSequence(memory.db.connection, memory.db._lock, backend.id_seed, name)
        #: mem0 log messages (WARNING and above) of the last :meth:`add_dialogue` call.
        self.last_add_errors: tuple[str, ...] = ()
        #: Raw LLM outputs of the last :meth:`add_dialogue` call (fact extraction first,
        #: then the ADD/UPDATE/DELETE/NONE decision if facts were found).
        self.last_llm_responses: tuple[str, ...] = ()

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
    def history_path(self) -> Path:
        """Path of this store's sqlite history DB."""
        return Path(self._memory.config.history_db_path)

    def files(self) -> list[Path]:
        """Files holding this store on disk (history DB; local-mode collection storage)."""
        paths = [self.history_path]
        local = self._backend.local_path
        if local is not None:
            coll = local / "collection" / self._name
            if coll.exists():
                paths.extend(p for p in coll.rglob("*") if p.is_file())
        return paths

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
            _capture_mem0_log() as records,
            _recording_llm(self._memory) as raw,
            ids.drawing(self._ids),
        ):
            result = self._memory.add(
                messages, user_id=self._principal, infer=True, metadata=_user_meta(metadata)
            )
        # One entry per call (None: not recorded); no log at all records one None per call.
        self.last_llm_calls = (
            tuple(completions[first_call:]) if completions is not None else (None,) * len(raw)
        )
        if raw and not _remove_code_blocks(raw[0]).strip():
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
            self._memory.db.add_history(
                memory_id,
                text,
                text,
                METADATA_EVENT,
                created_at=existing.payload.get("created_at"),
                updated_at=now,
                actor_id=existing.payload.get("actor_id"),
                role=existing.payload.get("role"),
            )

    def remove(self, memory_ids: Sequence[str], *, missing_ok: bool = False) -> None:
        """Physically remove records: their Qdrant points and every history row of them.

        Mem0's own ``delete`` would write a DELETE history row carrying the old text, so the
        points are deleted through the vector store and the history rows directly in sqlite.
        Both sqlite files (history, and in local mode the collection's storage) run with
        ``secure_delete`` and are VACUUMed, so the text is not left in free pages either.
        """
        self._check_open()
        ids = [str(i) for i in memory_ids]
        if not ids:
            return
        if not missing_ok:
            found = {str(p.id) for p in self._client.retrieve(self._name, ids=ids)}
            missing = [i for i in ids if i not in found]
            if missing:
                raise KeyError(f"no such memory ids in {self._name}: {missing}")
        from qdrant_client import models

        self._client.delete(
            collection_name=self._name, points_selector=models.PointIdsList(points=ids)
        )
        db = self._memory.db
        with self._backend.timer.phase("store"), db._lock:
            conn: sqlite3.Connection = db.connection
            conn.execute("BEGIN")
            try:
                conn.executemany("DELETE FROM history WHERE memory_id = ?", [(i,) for i in ids])
                conn.execute("COMMIT")
            except Exception:
                conn.execute("ROLLBACK")
                raise
            conn.execute("VACUUM")
        local = self._backend.local_collection_sqlite(self._name)
        if local is not None:
            with self._backend.timer.phase("store"):
                local.execute("VACUUM")
                # The WAL still holds the old pages; fold it in and empty it.
                local.execute("PRAGMA wal_checkpoint(TRUNCATE)")

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
        hits = self._client.query_points(
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

        flt = models.Filter(must=[_user_condition(self._principal)])
        return int(self._client.count(self._name, count_filter=flt, exact=True).count)

    def scan(self) -> StoreScan:
        """Everything physically stored for the principal: points and history rows."""
        self._check_open()
        with self._backend.timer.phase("store"):
            points = scan_points(self._client, self._name, self._principal)
            history = scan_history(self._memory.db.connection, self._memory.db._lock)
        return StoreScan(points=tuple(points), history=tuple(history))

    # -- lifecycle -----------------------------------------------------------------------

    def clone(self, name: str) -> MemoryStore:
        """An independent copy under ``name``: same points (with vectors) and history.

        Nothing is recomputed (no producer, no embedding): points are scrolled with their
        vectors into a new collection of the same client, and the history DB is copied
        with sqlite's backup API.
        """
        self._check_open()
        check_store_name(name)
        if self._backend.exists(name):
            raise ValueError(f"store {name!r} already exists")
        from qdrant_client import models

        twin = self._backend.open(name, self._principal)
        offset: Any = None
        while True:
            batch, offset = self._client.scroll(
                collection_name=self._name,
                limit=_SCROLL_PAGE,
                offset=offset,
                with_payload=True,
                with_vectors=True,
            )
            if batch:
                twin._client.upsert(
                    collection_name=name,
                    points=[
                        models.PointStruct(id=r.id, vector=r.vector, payload=r.payload)
                        for r in batch
                    ],
                )
            if offset is None:
                break
        src, dst = self._memory.db, twin._memory.db
        with self._backend.timer.phase("store"), src._lock, dst._lock:
            src.connection.backup(dst.connection)
        return twin

    def drop(self) -> None:
        """Delete this store: its collection and its history DB file. Used for clones."""
        path = self.history_path
        self.close()
        self._backend.drop_collection(self._name)
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        """Release the history DB connection; the collection stays in Qdrant."""
        if self._closed:
            return
        self._closed = True
        self._memory.close()
        self._backend.forget(self._name)

    # -- internals -----------------------------------------------------------------------

    @property
    def _client(self) -> Any:
        # The (timed) Qdrant client mem0's vector store holds: one object for mem0 and us.
        return self._memory.vector_store.client

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


def read_only_view(store: MemoryStore) -> ReadOnlyStore:
    """A read-only handle on ``store``: only reads, and no public path to the store.

    The methods are closures, so the writable store is not an attribute of the view.
    """

    def search(query: str, limit: int, payload_filter: Any | None = None) -> list[StoredItem]:
        return store.search(query, limit, payload_filter)

    def search_filtered(
        query: str,
        limit: int | None,
        *,
        must: Sequence[Any] = (),
        should: Sequence[Any] = (),
        must_not: Sequence[Any] = (),
    ) -> list[StoredItem]:
        return store.search_filtered(query, limit, must=must, should=should, must_not=must_not)

    def scan() -> StoreScan:
        return store.scan()

    return _ReadOnlyView(store.name, store.principal, search, search_filtered, scan)


class _ReadOnlyView:
    __slots__ = ("_name", "_principal", "scan", "search", "search_filtered")

    def __init__(
        self,
        name: str,
        principal: str,
        search: Callable[..., list[StoredItem]],
        search_filtered: Callable[..., list[StoredItem]],
        scan: Callable[[], StoreScan],
    ) -> None:
        self._name = name
        self._principal = principal
        self.search = search
        self.search_filtered = search_filtered
        self.scan = scan

    @property
    def name(self) -> str:
        return self._name

    @property
    def principal(self) -> str:
        return self._principal

    def __setattr__(self, attr: str, value: Any) -> None:
        if hasattr(self, attr):
            raise AttributeError("read-only view is immutable")
        object.__setattr__(self, attr, value)

    def __repr__(self) -> str:
        return f"ReadOnlyStore({self._name!r}, principal={self._principal!r})"


# --------------------------------------------------------------------------- backend


class Backend:
    """Opens stores of one run; all share one Qdrant client and one embedder.

    ``run_dir/qdrant`` holds the local-mode Qdrant folder unless ``qdrant_url`` names a
    server; ``run_dir/history/<name>.db`` holds each store's Mem0 history.
    """

    def __init__(
        self,
        run_dir: Path,
        llm_config: dict[str, Any],
        embedder_config: dict[str, Any],
        embedding_dims: int,
        qdrant_url: str | None = None,
        qdrant_api_key: str | None = None,
        on_memory: Callable[[Any], None] | None = None,
        id_seed: int = 0,
        payload_indexes: Mapping[str, str] | None = None,
    ) -> None:
        """``on_memory`` is called with every new ``mem0.Memory`` once it is set up (after
        the timing wrappers), e.g. to install an LLM cache; it runs for clones too.
        ``id_seed`` seeds every store's record-id sequence (place.memory.ids).
        ``payload_indexes`` (payload key -> Qdrant field schema, e.g. QASC's
        ``ELIGIBILITY_INDEXES``) are created on every collection of a Qdrant server; local
        mode has no payload indexes, so there they are not requested."""
        self.run_dir = Path(run_dir)
        self.payload_indexes: dict[str, str] = dict(payload_indexes or {})
        self.id_seed = int(id_seed)
        self._on_memory = on_memory
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.llm_config = llm_config
        self.embedder_config = embedder_config
        self.embedding_dims = embedding_dims
        self.local_path: Path | None = None if qdrant_url else self.run_dir / "qdrant"
        self.timer = PhaseTimer()
        #: Mem0 log records (WARNING+) seen during Native adds, e.g. unparsable LLM JSON.
        self.mem0_error_count = 0
        self._lock = threading.Lock()
        self._stores: dict[str, MemoryStore] = {}
        self._llm: Any = None
        self._client = acquire_qdrant_client(self.local_path, qdrant_url, qdrant_api_key)
        try:
            self._embedder = _TimedProxy(self._build_embedder(), self.timer, "embedding")
        except BaseException:
            release_qdrant_client(self._client)
            raise
        self._closed = False

    @property
    def timings(self) -> dict[str, float]:
        """Seconds spent per phase so far ("embedding", "store", "llm")."""
        return {"embedding": 0.0, "store": 0.0, "llm": 0.0, **self.timer.totals()}

    @property
    def qdrant_client(self) -> Any:
        """The shared Qdrant client (read access for diagnostics)."""
        return self._client

    def open(self, name: str, principal: str) -> MemoryStore:
        """Open (creating if needed) store ``name`` for ``principal``."""
        if self._closed:
            raise RuntimeError("backend is closed")
        check_store_name(name)
        with self._lock:
            if name in self._stores:
                store = self._stores[name]
                if store.principal != principal:
                    raise ValueError(f"store {name!r} is open for {store.principal!r}")
                return store
            memory = self._build_memory(name)
            store = MemoryStore(self, name, principal, memory)
            self._stores[name] = store
            return store

    def exists(self, name: str) -> bool:
        """Whether a collection or a history DB named ``name`` exists."""
        return (
            bool(self._client.collection_exists(name))
            or history_db_path(self.run_dir, name).exists()
        )

    def close(self) -> None:
        """Close every open store and release the Qdrant client."""
        if self._closed:
            return
        for store in list(self._stores.values()):
            store.close()
        self._closed = True
        release_qdrant_client(self._client)

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- used by MemoryStore --------------------------------------------------------------

    def note_mem0_errors(self, n: int) -> None:
        with self._lock:
            self.mem0_error_count += n

    def forget(self, name: str) -> None:
        with self._lock:
            self._stores.pop(name, None)

    def sync(self) -> None:
        """Make every committed write durable (fsync the local-mode collections' WALs).

        Called before a unit is marked complete, so a completed unit survives an OS crash,
        not only a killed process. A Qdrant server keeps its own durability.
        """
        with self.timer.phase("store"):
            for name in self._local_collection_names():
                local = self.local_collection_sqlite(name)
                if local is None:
                    continue
                for _seq, _schema, path in local.execute("PRAGMA database_list").fetchall():
                    wal = Path(f"{path}-wal")
                    if path and wal.exists():
                        fd = os.open(wal, os.O_RDONLY)
                        try:
                            os.fsync(fd)
                        finally:
                            os.close(fd)

    def _local_collection_names(self) -> list[str]:
        collections = getattr(getattr(self._client, "_client", None), "collections", None)
        return list(collections) if isinstance(collections, dict) else []

    def drop_collection(self, name: str) -> None:
        with self.timer.phase("store"):
            self._client.delete_collection(collection_name=name)

    def local_collection_sqlite(self, name: str) -> sqlite3.Connection | None:
        """The sqlite file behind a local-mode collection (None for a server / in-memory).

        qdrant-client's local mode pickles each point into ``collection/<name>/
        storage.sqlite``; there is no public handle on it, hence the guarded lookup.
        """
        inner = getattr(self._client, "_client", None)
        collections = getattr(inner, "collections", None)
        coll = collections.get(name) if isinstance(collections, dict) else None
        conn = getattr(getattr(coll, "storage", None), "storage", None)
        return conn if isinstance(conn, sqlite3.Connection) else None

    # -- construction ---------------------------------------------------------------------

    def _build_embedder(self) -> Any:
        from mem0.utils.factory import EmbedderFactory

        if self.embedder_config.get("provider") == "huggingface":
            import torch

            # MiniLM is tiny: one thread embeds a query in ~15 ms, while torch's default
            # (all cores) contends with the llama.cpp server for them and measured ~30x slower.
            torch.set_num_threads(1)
        config = {**self.embedder_config.get("config", {}), "embedding_dims": self.embedding_dims}
        # Fixed points of Qdrant's normalization: clones copy vectors exactly (unit_vectors.py).
        return FixedUnitEmbedder(
            EmbedderFactory.create(self.embedder_config["provider"], config, None)
        )

    def _mem0_llm(self, mem0_main: Any) -> Any:
        """Mem0's LLM for this backend's config, built once and timed under "llm"."""
        if self._llm is None:
            llm = mem0_main.LlmFactory.create(
                self.llm_config["provider"], self.llm_config.get("config", {})
            )
            llm.generate_response = self.timer.wrap("llm", llm.generate_response)
            self._llm = llm
        return self._llm

    def _create_payload_indexes(self, name: str) -> None:
        """Index the keys the read policies filter on (a server only; idempotent there).

        Mem0 indexes its own keys (user_id, agent_id, run_id, actor_id); without ours a
        server would scan every point of a collection for QASC's filter, as local mode does.
        """
        with self.timer.phase("store"):
            for key, schema in sorted(self.payload_indexes.items()):
                self._client.create_payload_index(
                    collection_name=name, field_name=key, field_schema=schema, wait=True
                )

    def _build_memory(self, name: str) -> Any:
        if not telemetry.telemetry_is_off():
            raise RuntimeError("mem0 telemetry is on; import place.memory before mem0")
        from mem0.memory import main as mem0_main

        ids.install()
        config = build_mem0_config(
            name=name,
            run_dir=self.run_dir,
            client=self._client,
            llm_config=self.llm_config,
            embedder_config=self.embedder_config,
            embedding_dims=self.embedding_dims,
            local_path=self.local_path,
        )
        # mem0 builds an embedder and an LLM client per Memory (MiniLM loaded, an SSL
        # context read, ~30 ms each time, and stores are opened for every clone): hand it
        # the backend's own, built once.
        embedder, llm = self._embedder, self._mem0_llm(mem0_main)
        with (
            self.timer.phase("store"),
            mock.patch.object(
                mem0_main.EmbedderFactory, "create", staticmethod(lambda *_a, **_k: embedder)
            ),
            mock.patch.object(mem0_main.LlmFactory, "create", staticmethod(lambda *_a, **_k: llm)),
            _quiet_local_qdrant(),
        ):
            memory = mem0_main.Memory.from_config(config)
        if self.local_path is None:
            self._create_payload_indexes(name)
        # Time Qdrant and history calls where mem0 makes them; the objects stay mem0's.
        memory.vector_store.client = _TimedProxy(self._client, self.timer, "store")
        memory.db.add_history = self.timer.wrap("store", memory.db.add_history)
        with memory.db._lock:
            # Deleted rows are overwritten with zeros, so removed text is not in free pages.
            memory.db.connection.execute("PRAGMA secure_delete = ON")
        local = self.local_collection_sqlite(name)
        if local is not None:
            local.execute("PRAGMA secure_delete = ON")
            # Local mode commits once per point. With WAL and NORMAL sync a commit survives
            # a killed process without an fsync (6x faster clones); `sync()` makes completed
            # units durable against an OS crash too.
            local.execute("PRAGMA journal_mode = WAL")
            local.execute("PRAGMA synchronous = NORMAL")
        if self._on_memory is not None:
            self._on_memory(memory)
        return memory


# --------------------------------------------------------------------------- helpers


def principal_filter(
    principal: str, must: Sequence[Any], should: Sequence[Any], must_not: Sequence[Any]
) -> Any:
    """``user_id == principal AND must AND (any of should) AND NOT must_not``.

    Qdrant local mode evaluates a filter in Python point by point, left to right, and stops
    at the first failing condition, so where the principal test goes is a cost, not a
    meaning. With ``must`` conditions it goes last in ``must`` (theirs are more selective).
    With only ``must_not`` it is tested after them (as a single ``should``). With ``should``
    branches it is distributed into each branch, last:
    ``p AND (A OR B) == (A AND p) OR (B AND p)``; a point then pays for it only after it
    passes a branch's own conditions (QASC's filter relies on this, docs/decisions.md).
    """
    from qdrant_client import models

    user = _user_condition(principal)
    if must:
        return models.Filter(
            must=[*must, user], should=list(should) or None, must_not=list(must_not) or None
        )
    if not should:
        # One `should` condition is a `must` that Qdrant tests after `must_not`: a point a
        # `must_not` condition excludes never pays for the principal test.
        return models.Filter(should=[user], must_not=list(must_not) or None)
    branches = [
        models.Filter(
            must=[*_as_list(branch.must), user],
            should=branch.should,
            must_not=branch.must_not,
            min_should=branch.min_should,
        )
        if isinstance(branch, models.Filter)
        else models.Filter(must=[branch, user])
        for branch in should
    ]
    return models.Filter(should=branches, must_not=list(must_not) or None)


def _as_list(conditions: Any) -> list[Any]:
    """A Filter clause is None, one condition or a list of them."""
    if conditions is None:
        return []
    return list(conditions) if isinstance(conditions, list) else [conditions]


def _user_condition(principal: str) -> Any:
    from qdrant_client import models

    return models.FieldCondition(key="user_id", match=models.MatchValue(value=principal))


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


EMPTY_EXTRACTION = "place: fact extraction: the model returned an empty response"


def _remove_code_blocks(text: str) -> str:
    from mem0.memory.utils import remove_code_blocks

    return str(remove_code_blocks(text))


@contextmanager
def _recording_llm(memory: Any) -> Iterator[list[str]]:
    """Collect the raw outputs of ``memory.llm.generate_response`` during the body.

    Wraps whatever LLM object the Memory holds at call time (e.g. a caching wrapper the
    runtime installed), so cache hits are recorded too; the wrapper is removed afterwards.
    """
    sink: list[str] = []
    llm = memory.llm
    had_own = "generate_response" in vars(llm)
    previous = llm.generate_response

    def recording(*args: Any, **kwargs: Any) -> Any:
        out = previous(*args, **kwargs)
        sink.append(out if isinstance(out, str) else repr(out))
        return out

    llm.generate_response = recording
    try:
        yield sink
    finally:
        if had_own:
            llm.generate_response = previous
        else:
            del llm.generate_response


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(level=logging.WARNING)
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self._sink.append(f"{record.name}: {record.getMessage()}")


@contextmanager
def _capture_mem0_log() -> Iterator[list[str]]:
    """Collect mem0's WARNING+ log messages emitted during the body (any thread)."""
    sink: list[str] = []
    logger = logging.getLogger("mem0")
    handler = _ListHandler(sink)
    old_level = logger.level
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield sink
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


@contextmanager
def _quiet_local_qdrant() -> Iterator[None]:
    # Given a client, mem0 assumes a server and creates payload indexes; local mode warns
    # that they have no effect. Harmless, so silenced during construction only.
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Pp]ayload index.*")
        yield


__all__ = [
    "METADATA_EVENT",
    "Backend",
    "MemoryStore",
    "PhaseTimer",
    "ReadOnlyStore",
    "StoredItem",
    "read_only_view",
]
