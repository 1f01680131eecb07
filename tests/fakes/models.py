"""FAKE models for unit tests: a chat model and an embedder that answer from the input.

Neither is a model. `FakeChatModel` counts calls and answers from the last message;
`FakeEmbedder` and `fakes.mem0_llm.FakeMem0LLM.scripted()` (the one fake Mem0 LLM) are the
smallest components a Mem0 `Memory` can be built with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class FakeChatModel:
    """A fake ChatModel: counts calls and answers deterministically from the input."""

    def __init__(self, seed: int = 1, max_tokens: int = 16) -> None:
        self.calls = 0
        self._params = {"temperature": 0.0, "seed": seed, "max_tokens": max_tokens}

    @property
    def parameters(self) -> Mapping[str, Any]:
        return self._params

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        self.calls += 1
        return f"answer#{self.calls} to {messages[-1]['content']} fmt={response_format}"


class FakeEmbedder:
    """FAKE embedder: a constant unit vector (never called while a Memory is built)."""

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        return [1.0, 0.0, 0.0, 0.0]
