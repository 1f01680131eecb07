"""FAKE models for unit tests: chat models and Mem0 LLMs that answer from the input or a queue.

None of them is a model. `FakeChatModel` counts calls and answers from the last message;
`FakeMem0LLM` records Mem0-style calls (and mutates the caller's messages as Mem0's Ollama
provider does); `FlakyMem0LLM` fails its first calls with a transport error;
`QueuedMem0LLM` returns queued outputs in order (it stands in for `memory.llm` the way a
runtime's caching wrapper does); `FakeLLM` and `FakeEmbedder` are the smallest components a
Mem0 `Memory` can be built with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mem0.configs.llms.base import BaseLlmConfig
from mem0.llms.base import LLMBase


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


class FakeMem0LLM(LLMBase):
    """A fake mem0 LLM (LLMBase subclass): records calls, answers canned JSON / tool calls."""

    def __init__(self) -> None:
        super().__init__(BaseLlmConfig(model="fake-model", temperature=0.0))
        self.calls: list[dict[str, Any]] = []

    def generate_response(  # type: ignore[override]  # reason: a fake takes only what Mem0 passes
        self,
        messages: list[dict[str, Any]],
        response_format: Any = None,
        tools: Any = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> Any:
        self.calls.append({"messages": messages, "response_format": response_format})
        # Mimic mem0's Ollama provider, which mutates the caller's messages in place.
        messages[-1]["content"] += " (mutated)"
        if tools:
            return {"content": None, "tool_calls": [{"name": "f", "arguments": {}}]}
        return '{"facts": ["x"]}'


class FlakyMem0LLM(FakeMem0LLM):
    """Fake mem0 LLM whose first `failures` calls raise a transport-style ConnectionError."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.remaining_failures = failures

    def generate_response(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:  # type: ignore[override]  # reason: a fake
        if self.remaining_failures > 0:
            self.remaining_failures -= 1
            self.calls.append({"failed": True})
            raise ConnectionError("connection refused")
        return super().generate_response(messages, **kwargs)


class QueuedMem0LLM:
    """FAKE Mem0 LLM: stands in for ``memory.llm`` (as a runtime caching wrapper would) and
    returns the queued outputs in order."""

    def __init__(self, outputs: list[str], config: Any) -> None:
        self.outputs = list(outputs)
        self.config = config

    def generate_response(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        return self.outputs.pop(0)


class FakeEmbedder:
    """FAKE embedder: a constant unit vector (never called while a Memory is built)."""

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        return [1.0, 0.0, 0.0, 0.0]


class FakeLLM:
    """FAKE LLM: a canned fact-extraction answer."""

    def __init__(self) -> None:
        self.config = None

    def generate_response(self, messages: Any, **kwargs: Any) -> str:
        return '{"facts": []}'
