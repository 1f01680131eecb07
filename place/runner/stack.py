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
from place.runtime.base import (
    LLMRuntime,
    ModelIdentity,
    RetryPolicy,
    RuntimeUnavailable,
)
from place.runtime.cache import CachedChatModel, LLMCallCache
from place.timing import PhaseTimer

CACHE_MODES = ("read-write", "replay-only")


def build_runtime(model: Any, run_dir: Path) -> LLMRuntime:
    retry = RetryPolicy(attempts=int(model.retries))
    if model.runtime == "llamacpp":
        from place.runtime.llamacpp import LlamaCppRuntime

        return LlamaCppRuntime(
            model.gguf,
            n_ctx=int(model.n_ctx),
            max_tokens=int(model.max_tokens),
            seed=int(model.seed),
            timeout=float(model.timeout_s),
            n_threads=model.n_threads,
            log_dir=run_dir / "logs",
            retry=retry,
        )
    if model.runtime == "ollama":
        from place.runtime.ollama import OllamaRuntime

        if not model.ollama_model:
            raise PlaceError(
                f"model {model.name}: runtime ollama needs ollama_model (e.g. qwen2.5:7b)"
            )
        return OllamaRuntime(
            model.ollama_model,
            model.ollama_embedder,
            model.base_url,
            max_tokens=int(model.max_tokens),
            seed=int(model.seed),
            num_ctx=int(model.n_ctx),
            timeout=float(model.timeout_s),
            retry=retry,
        )
    raise PlaceError(
        f"model {model.name}: unknown runtime {model.runtime!r}; allowed: llamacpp, ollama"
    )


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
    from place.governance.authorizer import ELIGIBILITY_INDEXES
    from place.memory.store import Backend
    from place.runtime.mem0_llm import install_cache

    mode = str(cfg.cache.mode)
    if mode not in CACHE_MODES:
        raise PlaceError(f"cache.mode={mode!r}; allowed: {', '.join(CACHE_MODES)}")
    cache_path = Path(cfg.cache.path) if cfg.cache.path else run_dir / "llm_cache.sqlite"
    runtime = build_runtime(cfg.model, run_dir)
    timer = PhaseTimer()
    with runtime, LLMCallCache(cache_path, mode, timer=timer) as cache:  # type: ignore[arg-type]
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
