"""The real stack of one run: LLM runtime, call cache, and Mem0-on-Qdrant backend."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from place.errors import PlaceError
from place.runtime.base import LLMRuntime, ModelIdentity, RuntimeUnavailable
from place.runtime.cache import CachedChatModel, LLMCallCache, cache_mode
from place.runtime.registry import build_runtime
from place.timing import PhaseTimer

# Re-exported: the runner, doctor and tests build runtimes through the registry.
__all__ = ["Stack", "build_runtime", "is_disk_full", "open_stack"]


@dataclass
class Stack:
    runtime: LLMRuntime
    cache: LLMCallCache
    chat: CachedChatModel
    backend: Any
    phase: str = "start-up"

    @property
    def identity(self) -> ModelIdentity:
        return self.runtime.identity

    def set_phase(self, phase: str) -> None:
        self.phase = phase

    timer: PhaseTimer | None = None

    def timings(self) -> dict[str, float]:
        """Seconds per phase: LLM inference (cache misses), cache hits, embedding, store."""
        backend = self.backend.timings
        calls = self.timer.snapshot() if self.timer else {}
        return {
            "llm": round(calls.get("llm", {}).get("seconds", 0.0), 3),
            "cache": round(calls.get("cache", {}).get("seconds", 0.0), 3),
            "embedding": round(backend.get("embedding", 0.0), 3),
            "store": round(backend.get("store", 0.0), 3),
        }


DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def is_disk_full(exc: BaseException) -> bool:
    """A write refused by the file system (OSError), or by SQLite for the same reason."""
    if isinstance(exc, sqlite3.OperationalError):
        return "disk is full" in str(exc) or "readonly database" in str(exc)
    return isinstance(exc, OSError) and exc.errno in DISK_ERRNOS


@contextmanager
def open_stack(cfg: Any, run_dir: Path) -> Iterator[Stack]:
    from place.eligibility import ELIGIBILITY_INDEXES
    from place.memory.backend import Backend
    from place.runtime.mem0_llm import install_cache

    mode = cache_mode(str(cfg.cache.mode))  # Hydra refused anything else while composing
    cache_path = Path(cfg.cache.path) if cfg.cache.path else run_dir / "llm_cache.sqlite"
    from place.runner.wiring import uses_model

    runtime = build_runtime(cfg.model, run_dir)
    if not uses_model(cfg):
        # An answer-free run without LLM producers (docs/method.md §15): no server starts.
        from place.runtime.model_free import ModelFreeRuntime

        runtime = ModelFreeRuntime(runtime)
    timer = PhaseTimer()
    with runtime, LLMCallCache(cache_path, mode, timer=timer) as cache:
        identity = runtime.identity.cache_identity()

        def on_memory(memory: Any) -> None:
            install_cache(memory, cache, identity, chat=runtime.chat)

        url = cfg.backend.url if cfg.backend.kind == "qdrant-server" else None
        stack = Stack(
            runtime, cache, CachedChatModel(runtime.chat, cache, identity), None, timer=timer
        )
        backend = Backend(
            run_dir,
            runtime.mem0_llm_config(),
            runtime.mem0_embedder_config(),
            runtime.embedding_dims,
            qdrant_url=url,
            on_memory=on_memory,
            id_seed=int(cfg.model.seed),
            payload_indexes=ELIGIBILITY_INDEXES,
        )
        stack.backend = backend
        try:
            yield stack
        except RuntimeUnavailable as exc:
            raise PlaceError(
                f"the model runtime failed during {stack.phase}: {exc}. Completed units are "
                "saved; run the same command again to resume."
            ) from None
        except (OSError, sqlite3.OperationalError) as exc:
            if not is_disk_full(exc):
                raise
            where = getattr(exc, "filename", None) or "the run directory"
            raise PlaceError(
                f"cannot write {where} during {stack.phase}: {exc}. The unit in progress was "
                "discarded and completed units are saved; free space and run the same "
                "command again to resume."
            ) from None
        finally:
            backend.close()
