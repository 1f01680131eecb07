"""Opens the stores of one run over one shared Qdrant client and one shared embedder.

``Backend`` owns the process-wide resources behind every :class:`MemoryStore` of a run (the
Qdrant client, Mem0's embedder and LLM, the phase timer) and builds each store's Mem0
``Memory`` (through :mod:`place.memory.mem0_compat`, which also checks the installed
library versions first).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from place.determinism import MINILM_DTYPE
from place.memory import ids, mem0_compat, telemetry
from place.memory.config import (
    acquire_qdrant_client,
    build_mem0_config,
    check_store_name,
    history_db_path,
    release_qdrant_client,
)
from place.memory.store import MemoryStore
from place.memory.tables import side_tables_path
from place.memory.unit_vectors import FixedUnitEmbedder
from place.timing import PhaseTimer


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


class EmbeddingMemo:
    """The shared embedder, each distinct text embedded once per run.

    Every producer's store, every clone (world b, probe copies) and every read policy embed
    the same turn, record and question texts over and over; the embedding of a text is a
    function of the text alone (the embedders a run can use ignore mem0's `memory_action`,
    and MiniLM encodes one text at a time, deterministically), so the first vector is
    reused. A copy is returned, so no caller can change another's vector. Everything else
    is the embedder's own.
    """

    def __init__(self, target: Any) -> None:
        self._target = target
        self._vectors: dict[str, list[float]] = {}
        self.hits = 0

    def embed(self, text: Any, memory_action: Any = None) -> Any:
        if not isinstance(text, str):  # not a single text: not memoized
            return self._target.embed(text, memory_action)
        vector = self._vectors.get(text)
        if vector is None:
            vector = list(self._target.embed(text, memory_action))
            self._vectors[text] = vector
        else:
            self.hits += 1
        return list(vector)

    @property
    def texts(self) -> int:
        """Distinct texts embedded so far."""
        return len(self._vectors)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._target, attr)


class Backend:
    """Opens stores of one run; all share one Qdrant client and one embedder.

    ``run_dir/qdrant`` holds the local-mode Qdrant folder unless ``qdrant_url`` names a
    server; ``run_dir/history/<name>.db`` holds each store's Mem0 history and
    ``run_dir/side_tables/<name>.db`` its side tables (the ledger L), in both modes.
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
        mode has no payload indexes, so there they are not requested.

        Raises :class:`~place.memory.mem0_compat.UnsupportedVersion` first if the installed
        mem0ai or qdrant-client is outside the supported range."""
        mem0_compat.check_versions()
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
        # Guards the open-store table and the error count (stores may be used from threads).
        self._guard = threading.Lock()
        self._stores: dict[str, MemoryStore] = {}
        self._llm: Any = None
        self._qdrant = acquire_qdrant_client(self.local_path, qdrant_url, qdrant_api_key)
        try:
            self._embedder = EmbeddingMemo(
                _TimedProxy(self._build_embedder(), self.timer, "embedding")
            )
        except BaseException:
            release_qdrant_client(self._qdrant)
            raise
        self._closed = False

    @property
    def timings(self) -> dict[str, float]:
        """Seconds spent per phase so far ("embedding", "store", "llm")."""
        return {"embedding": 0.0, "store": 0.0, "llm": 0.0, **self.timer.totals()}

    @property
    def qdrant_client(self) -> Any:
        """The shared Qdrant client (read access for diagnostics)."""
        return self._qdrant

    def open(self, name: str, principal: str) -> MemoryStore:
        """Open (creating if needed) store ``name`` for ``principal``."""
        if self._closed:
            raise RuntimeError("backend is closed")
        check_store_name(name)
        with self._guard:
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
        """Whether a collection, a history DB or a side-table file named ``name`` exists."""
        return (
            bool(self._qdrant.collection_exists(name))
            or history_db_path(self.run_dir, name).exists()
            or self.side_tables_path(name).exists()
        )

    def side_tables_path(self, name: str) -> Path:
        """Where store ``name`` keeps its side tables (a local file in both modes: a Qdrant
        server holds no side table)."""
        return side_tables_path(self.run_dir, check_store_name(name))

    def close(self) -> None:
        """Close every open store and release the Qdrant client."""
        if self._closed:
            return
        for store in list(self._stores.values()):
            store.close()
        self._closed = True
        release_qdrant_client(self._qdrant)

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- used by MemoryStore --------------------------------------------------------------

    def note_mem0_errors(self, n: int) -> None:
        with self._guard:
            self.mem0_error_count += n

    def forget(self, name: str) -> None:
        with self._guard:
            self._stores.pop(name, None)

    def sync(self) -> None:
        """Make every committed write durable (fsync the local-mode collections' WALs).

        Called before a unit is marked complete, so a completed unit survives an OS crash,
        not only a killed process. A Qdrant server keeps its own durability.
        """
        with self.timer.phase("store"):
            for name in mem0_compat.local_collection_names(self._qdrant):
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

    def drop_collection(self, name: str) -> None:
        with self.timer.phase("store"):
            self._qdrant.delete_collection(collection_name=name)

    def local_collection_sqlite(self, name: str) -> sqlite3.Connection | None:
        """The sqlite file behind a local-mode collection (None for a server / in-memory)."""
        return mem0_compat.local_collection_sqlite(self._qdrant, name)

    # -- construction ---------------------------------------------------------------------

    def _build_embedder(self) -> Any:
        return build_embedder(self.embedder_config, self.embedding_dims)

    def _mem0_llm(self) -> Any:
        """Mem0's LLM for this backend's config, built once and timed under "llm"."""
        if self._llm is None:
            llm = mem0_compat.create_llm(
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
                self._qdrant.create_payload_index(
                    collection_name=name, field_name=key, field_schema=schema, wait=True
                )

    def _build_memory(self, name: str) -> Any:
        if not telemetry.telemetry_is_off():
            raise RuntimeError("mem0 telemetry is on; import place.memory before mem0")
        ids.install()
        config = build_mem0_config(
            name=name,
            run_dir=self.run_dir,
            client=self._qdrant,
            llm_config=self.llm_config,
            embedder_config=self.embedder_config,
            embedding_dims=self.embedding_dims,
            local_path=self.local_path,
        )
        # mem0 builds an embedder and an LLM client per Memory (MiniLM loaded, an SSL
        # context read, ~30 ms each time, and stores are opened for every clone): hand it
        # the backend's own, built once.
        embedder, llm = self._embedder, self._mem0_llm()
        with self.timer.phase("store"):
            memory = mem0_compat.build_memory(config, embedder=embedder, llm=llm)
        if self.local_path is None:
            self._create_payload_indexes(name)
        # Time Qdrant and history calls where mem0 makes them; the objects stay mem0's.
        mem0_compat.instrument_memory(
            memory,
            client=_TimedProxy(self._qdrant, self.timer, "store"),
            wrap_history=lambda add_history: self.timer.wrap("store", add_history),
        )
        # Deleted rows are overwritten with zeros, so removed text is not in free pages.
        mem0_compat.secure_delete_history(memory)
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


_LOADED: dict[str, Any] = {}
"""Embedders already built in this process, by their configuration: a process that runs
several jobs (a joblib worker of a study) loads MiniLM once. The model is only read."""


def build_embedder(embedder_config: dict[str, Any], dims: int) -> Any:
    """The embedder every store of a backend shares, from a Mem0 `embedder` section (built
    once per process and configuration)."""
    key = json.dumps([embedder_config, dims], sort_keys=True, default=str)
    if key not in _LOADED:
        _LOADED[key] = _build_embedder(embedder_config, dims)
    return _LOADED[key]


def _build_embedder(embedder_config: dict[str, Any], dims: int) -> Any:
    config = {**embedder_config.get("config", {}), "embedding_dims": dims}
    inner = mem0_compat.create_embedder(embedder_config["provider"], config)
    if embedder_config.get("provider") == "huggingface":
        import torch

        # MiniLM is tiny: one thread embeds a query in ~15 ms, while torch's default
        # (all cores) contends with the llama.cpp server for them and measured ~30x slower.
        torch.set_num_threads(1)
        # Computed in float64 so that the float32 vector is the same on any x86-64
        # processor, Intel or AMD (place/determinism.py, MINILM_DTYPE).
        mem0_compat.sentence_transformer(inner).to(getattr(torch, MINILM_DTYPE))
    # Fixed points of Qdrant's normalization: clones copy vectors exactly (unit_vectors.py).
    return FixedUnitEmbedder(inner)


__all__ = ["Backend", "build_embedder"]
