"""LLM runtimes (embedded llama.cpp, Ollama), the LLM call cache and its Mem0 hook.

`CachingMem0LLM` / `install_cache` live in `place.runtime.mem0_llm` and are loaded lazily
here, because importing mem0 takes seconds and most users of this package do not need it.
"""

from __future__ import annotations

from typing import Any

from place.runtime.base import (
    ChatModel,
    GenerationParameters,
    LLMRuntime,
    ModelIdentity,
    ModelMissing,
    RetryPolicy,
    RuntimeRequestError,
    RuntimeUnavailable,
)
from place.runtime.cache import CachedChatModel, CacheMiss, LLMCallCache
from place.runtime.llamacpp import LlamaCppRuntime, default_gguf_path
from place.runtime.ollama import OllamaRuntime
from place.timing import PhaseTimer

__all__ = [
    "CacheMiss",
    "CachedChatModel",
    "CachingMem0LLM",
    "ChatModel",
    "GenerationParameters",
    "LLMCallCache",
    "LLMRuntime",
    "LlamaCppRuntime",
    "ModelIdentity",
    "ModelMissing",
    "OllamaRuntime",
    "PhaseTimer",
    "RetryPolicy",
    "RuntimeRequestError",
    "RuntimeUnavailable",
    "default_gguf_path",
    "install_cache",
]


def __getattr__(name: str) -> Any:
    if name in ("CachingMem0LLM", "install_cache"):
        from place.runtime import mem0_llm

        return getattr(mem0_llm, name)
    raise AttributeError(f"module 'place.runtime' has no attribute {name!r}")
