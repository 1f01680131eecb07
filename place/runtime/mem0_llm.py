"""Route every Mem0 LLM call through the project's runtime and the `LLMCallCache`.

`RuntimeMem0LLM` is the Mem0 LLM the project owns: Mem0's calls go to the runtime's own chat
model, so they carry the run's context window (Ollama ``num_ctx``), seed, temperature and
token budget, exactly what the answer model's calls carry and what the manifest records.
Mem0's own providers send no seed and no ``num_ctx`` (Ollama then runs its default context
and reloads the model whenever answer and Mem0 calls alternate), and drop the finish reason.

mem0 1.0.x calls `self.llm.generate_response(messages=..., response_format=...)` for fact
extraction and for the ADD/UPDATE/DELETE/NONE decision (and optionally tools / procedural
memory). Replacing `memory.llm` with `CachingMem0LLM` pins those answers: a resumed or
replayed run sees exactly the recorded responses, even though Mem0's providers send no seed.

Two Mem0 behaviours this module compensates for:
- Mem0 wraps its second LLM call (the update decision) in `except Exception: response = ""`,
  so an unreachable model would silently become "no memory change". Every failure of a
  wrapped call is therefore also recorded, and the caller must call `raise_pending()` after
  each `Memory.add()`; it re-raises the first failure.
- Transport errors (connection refused/reset, timeouts) are retried here with bounded
  back-off before they count as failures, on top of the provider client's own retries.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import openai
from mem0.llms.base import LLMBase

from place import faults
from place.runtime.base import (
    ChatModel,
    Completion,
    GeneratingChat,
    RetryPolicy,
    call_with_retries,
)
from place.runtime.cache import LLMCallCache

# What Mem0's providers raise when the server is unreachable: openai's APIConnectionError
# (includes timeouts), the ollama client's ConnectionError, or raw httpx transport errors.
MEM0_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    httpx.TransportError,
    openai.APIConnectionError,
    ConnectionError,
)

# Provider config fields that change what the model generates; all go into the key.
_GENERATION_FIELDS = ("model", "temperature", "max_tokens", "top_p", "top_k", "reasoning_effort")


class RuntimeMem0LLM(LLMBase):
    """Mem0's LLM as the runtime's chat model (see module doc); keeps Mem0's config object.

    Mem0's classic pipeline makes two kinds of calls, both plain chat completions with a
    JSON response format: fact extraction and the ADD/UPDATE/DELETE/NONE decision. Tool
    calls (Mem0's graph memory) are not part of the evaluated pipeline and are refused.
    """

    def __init__(self, config: Any, chat: ChatModel) -> None:
        super().__init__(config)
        self.chat = chat

    def generate_completion(
        self, messages: list[dict[str, Any]], response_format: Any = None
    ) -> Completion:
        """The completion with its finish reason and token counts (when the model says)."""
        max_tokens = getattr(self.config, "max_tokens", None)
        if isinstance(self.chat, GeneratingChat):
            return self.chat.generate(
                messages, response_format=response_format, max_tokens=max_tokens
            )
        # A chat model that reports no finish (e.g. a test fake): finish unknown.
        return Completion(
            self.chat.complete(messages, response_format=response_format, max_tokens=max_tokens)
        )

    def generate_response(
        self,
        messages: list[dict[str, Any]],
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> str:
        if tools:
            raise NotImplementedError("RuntimeMem0LLM: tool calls are not part of this pipeline")
        return self.generate_completion(messages, response_format).text


class CachingMem0LLM(LLMBase):
    """A Mem0 LLM that answers from the cache and delegates misses to the wrapped Mem0 LLM."""

    def __init__(
        self,
        inner: LLMBase,
        cache: LLMCallCache,
        identity: str,
        *,
        retry: RetryPolicy | None = None,
        endpoint: str = "mem0 LLM",
    ) -> None:
        # Share the inner config object: Mem0 code may read `memory.llm.config`.
        super().__init__(inner.config)
        self.inner = inner
        self.cache = cache
        self.identity = identity
        self.retry = retry or RetryPolicy()
        self.endpoint = endpoint
        # Failures Mem0 may have swallowed; see the module docstring and raise_pending().
        self.failures: list[BaseException] = []
        self.completions: list[dict[str, Any] | None] = []
        """How every call ended, in call order (Completion.meta(), or None when the answer
        came from a cache entry recorded without it); the store reads it per Native step."""

    def raise_pending(self) -> None:
        """Re-raise the first LLM failure since the last check (Mem0 may have swallowed it)."""
        if self.failures:
            first = self.failures[0]
            self.failures.clear()
            raise first

    def _config_params(self) -> dict[str, Any]:
        return {f: getattr(self.config, f, None) for f in _GENERATION_FIELDS}

    def generate_response(
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

        def once() -> tuple[Any, dict[str, Any] | None]:
            # Deep copy: Mem0's Ollama provider appends a JSON instruction to the caller's
            # messages in place, which would otherwise leak into the key's source data.
            if isinstance(self.inner, RuntimeMem0LLM) and not tools and not kwargs:
                done = self.inner.generate_completion(copy.deepcopy(messages), response_format)
                return done.text, done.meta()
            result = self.inner.generate_response(
                messages=copy.deepcopy(messages),
                response_format=response_format,
                tools=tools,
                tool_choice=tool_choice,
                **kwargs,
            )
            return result, None

        def call() -> tuple[str, dict[str, Any] | None]:
            result, meta = call_with_retries(
                once,
                policy=self.retry,
                endpoint=self.endpoint,
                what="Mem0 LLM call",
                retry_on=MEM0_TRANSPORT_ERRORS,
            )
            # JSON envelope so str, None and tool-call dicts all round-trip exactly.
            return json.dumps(result, ensure_ascii=False), meta

        try:
            stored, meta = self.cache.get_or_call_meta(key, call)
            answer = json.loads(stored)
        except Exception as exc:
            self.failures.append(exc)
            raise
        self.completions.append(meta)
        faults.kill_point("native-add")
        return answer


def install_cache(
    memory: Any,
    cache: LLMCallCache,
    identity: str,
    *,
    chat: ChatModel | None = None,
    retry: RetryPolicy | None = None,
    endpoint: str | None = None,
) -> CachingMem0LLM:
    """Replace `memory.llm` (a mem0 `Memory`) with a caching wrapper; returns the wrapper.

    With ``chat`` (the runtime's own chat model, not a cached one), Mem0's calls go to it
    through `RuntimeMem0LLM` instead of Mem0's provider; the provider's config object stays,
    so the cache keys are those of runs recorded through the provider.
    Idempotent: installing twice wraps the original LLM, not the wrapper. `endpoint` only
    labels error messages; by default it is the provider's base URL when the config has one.
    """
    inner = memory.llm
    if isinstance(inner, CachingMem0LLM):
        inner = inner.inner
    if chat is not None:
        inner = RuntimeMem0LLM(inner.config, chat)
    if endpoint is None:
        cfg = inner.config
        endpoint = (
            getattr(cfg, "openai_base_url", None)
            or getattr(cfg, "ollama_base_url", None)
            or f"mem0 {type(inner).__name__}"
        )
    wrapper = CachingMem0LLM(inner, cache, identity, retry=retry, endpoint=endpoint)
    memory.llm = wrapper
    return wrapper
