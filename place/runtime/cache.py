"""A persistent LLM call cache: same model identity + messages + parameters -> same answer.

Small-model runs take seconds per call, and Mem0's providers do not send a seed, so the
cache is what makes a run both resumable and exactly replayable. Only the key hash and the
response are stored (never prompts), so a cache file stays small enough to commit. Every
store is committed immediately, so killing the process loses at most the call in flight.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, cast, get_args

from place.errors import PlaceError
from place.runtime.base import ChatModel, Message
from place.timing import PhaseTimer

CacheMode = Literal["read-write", "replay-only"]
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
_SELECT = "SELECT response FROM llm_calls WHERE key = ?"
_SELECT_META = "SELECT response, meta FROM llm_calls WHERE key = ?"
KEY_VERSION = 1  # bump when the key payload changes shape, so old entries stop matching


class CacheMiss(PlaceError):
    """A replay-only cache was asked for a call it never recorded."""

    def __init__(self, key: str, path: Path) -> None:
        super().__init__(
            f"LLM call cache miss for key {key} in {path}: the cache is in replay-only mode, "
            "so no model is called. The recorded run differs from this one (model identity, "
            "prompt or parameters changed), or the cache is incomplete; re-run in read-write "
            "mode to record the missing calls."
        )
        self.key = key


def canonical_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, no whitespace, UTF-8 kept)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_mode(value: str) -> CacheMode:
    """`value` as a cache mode (a config's `cache.mode` is a string-valued enum)."""
    if value not in CACHE_MODES:
        raise ValueError(f"unknown cache mode {value!r}; allowed: {', '.join(CACHE_MODES)}")
    return cast(CacheMode, value)


class LLMCallCache:
    """sqlite-backed map from call key to response text, with hit/miss counters.

    `timer` accumulates seconds under "llm" (real calls on a miss) and "cache" (hits).
    """

    def __init__(
        self, path: str | Path, mode: CacheMode = "read-write", timer: PhaseTimer | None = None
    ) -> None:
        self.path = Path(path)
        self.mode: CacheMode = cache_mode(mode)
        self.timer = timer or PhaseTimer()
        self.hits = 0
        self.misses = 0
        self._mutex = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}
        """Keys being called right now: a concurrent caller of the same key waits for the first
        one's answer instead of calling the model again (single flight), so concurrent answer
        calls make exactly the calls, hits and misses a sequential run makes."""
        if mode == "replay-only" and not self.path.is_file():
            raise PlaceError(f"replay-only LLM cache {self.path} does not exist")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # check_same_thread=False: Mem0 may call the LLM from worker threads; _lock serializes.
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: a committed answer survives even an OS crash; the cost is tiny next to an LLM call.
        self._db.execute("PRAGMA synchronous=FULL")
        # meta: how the call ended (finish reason, token counts; JSON), never the prompt.
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS llm_calls ("
            "key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL, meta TEXT)"
        )
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(llm_calls)")}
        if "meta" not in columns and mode == "read-write":
            # A cache recorded before finish reasons were kept: its old entries stay
            # without meta (reported as unknown), new ones get it.
            self._db.execute("ALTER TABLE llm_calls ADD COLUMN meta TEXT")
            columns.add("meta")
        self._has_meta = "meta" in columns

    @staticmethod
    def key(identity: str, messages: list[Message], params: Mapping[str, Any]) -> str:
        """sha256 hex of canonical JSON of {identity, messages, params} (+ key version)."""
        payload = {
            "v": KEY_VERSION,
            "identity": identity,
            "messages": messages,
            "params": dict(params),
        }
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()

    def get(self, key: str) -> str | None:
        """Stored response for `key`, or None (does not touch the counters)."""
        with self._mutex:
            row = self._db.execute(_SELECT, (key,)).fetchone()
        return None if row is None else str(row[0])

    def get_or_call(self, key: str, call: Callable[[], str]) -> str:
        """Return the stored response, or (read-write only) call, store, commit and return.

        Thread-safe: of several concurrent callers of one key, the first calls and the others
        wait for its stored answer (each counted as a hit, as in a sequential run)."""
        return self.get_or_call_meta(key, lambda: (call(), None))[0]

    def get_or_call_meta(
        self, key: str, call: Callable[[], tuple[str, dict[str, Any] | None]]
    ) -> tuple[str, dict[str, Any] | None]:
        """`get_or_call` for calls that also report how they ended: ``call`` returns
        ``(response, meta)`` and the meta is stored beside the response. Returns the stored
        pair; meta is None for entries recorded without it."""
        start = time.perf_counter()
        select = _SELECT_META if self._has_meta else _SELECT
        while True:
            leader: threading.Event | None = None
            with self._mutex:
                row = self._db.execute(select, (key,)).fetchone()
                if row is not None:
                    self.hits += 1
                else:
                    waiting = self._inflight.get(key)
                    if waiting is None:
                        leader = self._inflight[key] = threading.Event()
                        self.misses += 1
            if row is not None:
                self.timer.add("cache", time.perf_counter() - start)
                return _stored(row)
            if leader is not None:
                break
            assert waiting is not None  # no leader made here: another caller's call is in flight
            waiting.wait()  # then look again: stored, or the first caller failed (call anew)
        try:
            if self.mode == "replay-only":
                raise CacheMiss(key, self.path)
            with self.timer.measure("llm"):
                response, meta = call()
            if not isinstance(response, str):
                raise TypeError(f"cached calls must return str, got {type(response).__name__}")
            with self._mutex:
                # Autocommit mode: the INSERT is durable when execute returns.
                self._db.execute(
                    "INSERT OR IGNORE INTO llm_calls (key, response, created, meta) "
                    "VALUES (?, ?, ?, ?)",
                    (key, response, time.time(), None if meta is None else canonical_json(meta)),
                )
                row = self._db.execute(_SELECT_META, (key,)).fetchone()
            return _stored(row)
        finally:
            with self._mutex:
                self._inflight.pop(key).set()

    def __len__(self) -> int:
        with self._mutex:
            return int(self._db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0])

    def stats(self) -> dict[str, Any]:
        """Counters and size, for run reports."""
        return {
            "path": str(self.path),
            "mode": self.mode,
            "hits": self.hits,
            "misses": self.misses,
            "entries": len(self),
        }

    def close(self) -> None:
        """Checkpoint the WAL into the main file and close (leaves a single committable file)."""
        with self._mutex:
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _stored(row: tuple[Any, ...]) -> tuple[str, dict[str, Any] | None]:
    meta = row[1] if len(row) > 1 else None
    return str(row[0]), None if meta is None else json.loads(meta)


class CachedChatModel:
    """A ChatModel answering through an `LLMCallCache`.

    The key covers `identity` (use `ModelIdentity.cache_identity()`), the messages, the
    inner model's fixed parameters and the per-call response_format / max_tokens.
    """

    def __init__(self, inner: ChatModel, cache: LLMCallCache, identity: str) -> None:
        self.inner = inner
        self.cache = cache
        self.identity = identity

    @property
    def parameters(self) -> Mapping[str, Any]:
        """The inner model's fixed parameters."""
        return self.inner.parameters

    def complete(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Cached completion."""
        params: dict[str, Any] = {**dict(self.inner.parameters), "response_format": response_format}
        if max_tokens is not None:
            # The effective cap is what matters: an explicit default equals no override.
            params["max_tokens"] = max_tokens
        key = LLMCallCache.key(self.identity, messages, params)
        return self.cache.get_or_call(
            key,
            lambda: self.inner.complete(
                messages, response_format=response_format, max_tokens=max_tokens
            ),
        )
