"""LLM runtimes (embedded llama.cpp, Ollama), the LLM call cache and its Mem0 hook.

Runtimes are registered by name in `place.runtime.registry`. The runtime modules themselves
(`place.runtime.llamacpp`, `place.runtime.ollama`) and `CachingMem0LLM` / `install_cache`
(`place.runtime.mem0_llm`, whose mem0 import takes seconds) are loaded lazily, on first
access to one of their names here, so importing this package loads neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
from place.timing import PhaseTimer

if TYPE_CHECKING:
    from place.runtime.llamacpp import LlamaCppRuntime, default_gguf_path
    from place.runtime.mem0_llm import CachingMem0LLM, install_cache
    from place.runtime.ollama import OllamaRuntime

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

_LAZY = {
    "CachingMem0LLM": "place.runtime.mem0_llm",
    "install_cache": "place.runtime.mem0_llm",
    "LlamaCppRuntime": "place.runtime.llamacpp",
    "default_gguf_path": "place.runtime.llamacpp",
    "OllamaRuntime": "place.runtime.ollama",
}
"""Names loaded on first access, and the module each comes from."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'place.runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
