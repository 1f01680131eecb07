"""The runtime of an answer-free run that keeps no LLM producer (docs/method.md §15).

Such a run reads and writes through the embedder alone: no answer is asked and no producer
writes through the model. Wrapping the configured runtime keeps its embedder (MiniLM in
process for llama.cpp) and starts nothing, so no model server process exists; its chat model
refuses every call, so a call that should not happen fails loudly instead of starting one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from place.errors import PlaceError
from place.runtime.base import ChatModel, LLMRuntime, Message, ModelIdentity

NO_MODEL = "none"
"""The model name, runtime and identity an answer-free run records: no model was used."""


class ModelCallRefused(PlaceError):
    """Something asked the model in a run that uses none."""


class RefusingChat:
    """A chat model that refuses every call (the run promised none)."""

    @property
    def parameters(self) -> Mapping[str, Any]:
        return {}

    def complete(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        raise ModelCallRefused(
            "a model call in an answer-free run without LLM producers (experiment.answers="
            "false, experiment.llm_producers=skip): nothing in such a run may call the model"
        )

    generate = complete


class ModelFreeRuntime(LLMRuntime):
    """`inner`'s embedder, no model: starts nothing, records no model identity."""

    def __init__(self, inner: LLMRuntime) -> None:
        self.inner = inner
        self._chat = RefusingChat()

    def start(self) -> None:
        """Nothing to start: the embedder is built by the backend from its config."""

    def close(self) -> None:
        """Nothing was started."""

    @property
    def identity(self) -> ModelIdentity:
        """The embedder's identity; `none` for the model (no weights were used)."""
        inner = self.inner.identity
        return inner.model_copy(
            update={
                "runtime": NO_MODEL,
                "name": NO_MODEL,
                "identity": NO_MODEL,
                "runtime_version": None,
            }
        )

    @property
    def chat(self) -> ChatModel:
        return self._chat

    def mem0_llm_config(self) -> dict[str, Any]:
        # Mem0 builds an LLM client per memory (the run replaces it with the refusing chat
        # model); this address is never contacted.
        return {
            "provider": "openai",
            "config": {
                "model": NO_MODEL,
                "openai_base_url": "http://127.0.0.1:9/v1",
                "api_key": NO_MODEL,
                "temperature": 0.0,
            },
        }

    def mem0_embedder_config(self) -> dict[str, Any]:
        return self.inner.mem0_embedder_config()

    @property
    def embedding_dims(self) -> int:
        return self.inner.embedding_dims

    def doctor(self) -> dict[str, Any]:
        return self.inner.doctor()

    def token_counter(self) -> Callable[[str], int]:
        return self.inner.token_counter()
