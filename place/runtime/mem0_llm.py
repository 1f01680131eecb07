"""Route every Mem0 LLM call through the `LLMCallCache`.

mem0 1.0.x calls `self.llm.generate_response(messages=..., response_format=...)` for fact
extraction and for the ADD/UPDATE/DELETE/NONE decision (and optionally tools / procedural
memory). Replacing `memory.llm` with `CachingMem0LLM` pins those answers: a resumed or
replayed run sees exactly the recorded responses, even though Mem0's providers send no seed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from mem0.llms.base import LLMBase

from place.runtime.cache import LLMCallCache

# Provider config fields that change what the model generates; all go into the key.
_GENERATION_FIELDS = ("model", "temperature", "max_tokens", "top_p", "top_k", "reasoning_effort")


class CachingMem0LLM(LLMBase):
    """A Mem0 LLM that answers from the cache and delegates misses to the wrapped Mem0 LLM."""

    def __init__(self, inner: LLMBase, cache: LLMCallCache, identity: str) -> None:
        # Share the inner config object: Mem0 code may read `memory.llm.config`.
        super().__init__(inner.config)
        self.inner = inner
        self.cache = cache
        self.identity = identity

    def _config_params(self) -> dict[str, Any]:
        return {f: getattr(self.config, f, None) for f in _GENERATION_FIELDS}

    def generate_response(  # type: ignore[override]
        self,
        messages: list[dict[str, Any]],
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> Any:
        """Cached `generate_response`; returns what the inner LLM returned (str or dict)."""
        params = {
            "llm": self._config_params(),
            "response_format": response_format,
            "tools": tools,
            "tool_choice": tool_choice if tools else None,
            "kwargs": kwargs,
        }
        # default=str: kwargs may hold objects JSON cannot encode; their repr still keys them.
        params = json.loads(json.dumps(params, sort_keys=True, default=str))
        key = LLMCallCache.key(self.identity, messages, params)

        def call() -> str:
            # Deep copy: Mem0's Ollama provider appends a JSON instruction to the caller's
            # messages in place, which would otherwise leak into the caller's data.
            result = self.inner.generate_response(
                messages=copy.deepcopy(messages),
                response_format=response_format,
                tools=tools,
                tool_choice=tool_choice,
                **kwargs,
            )
            # JSON envelope so str, None and tool-call dicts all round-trip exactly.
            return json.dumps(result, ensure_ascii=False)

        return json.loads(self.cache.get_or_call(key, call))


def install_cache(memory: Any, cache: LLMCallCache, identity: str) -> CachingMem0LLM:
    """Replace `memory.llm` (a mem0 `Memory`) with a caching wrapper; returns the wrapper.

    Idempotent: installing twice wraps the original LLM, not the wrapper.
    """
    inner = memory.llm
    if isinstance(inner, CachingMem0LLM):
        inner = inner.inner
    wrapper = CachingMem0LLM(inner, cache, identity)
    memory.llm = wrapper
    return wrapper
