"""The Ollama runtime (the paper's setting: qwen2.5:7b + nomic-embed-text on a local server).

`preflight()` runs before anything is written: it checks the server answers and both models
are pulled, and records their digests. That matters beyond a friendly message: Mem0's
Ollama embedder *pulls* a missing model on construction, which must never happen implicitly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from place.errors import PlaceError
from place.runtime.base import (
    ChatModel,
    GenerationParameters,
    LLMRuntime,
    Message,
    ModelIdentity,
    ModelMissing,
    RetryPolicy,
    RuntimeRequestError,
    RuntimeUnavailable,
    call_with_retries,
    check_response,
)

NOMIC_DIMS = 768


def _normalize(name: str) -> str:
    """Ollama treats `name` and `name:latest` as the same model."""
    return name if ":" in name else f"{name}:latest"


def _wants_json(response_format: dict[str, Any] | None) -> bool:
    return bool(response_format) and response_format.get("type") in {  # type: ignore[union-attr]
        "json_object",
        "json_schema",
        "json",
    }


class OllamaChatModel:
    """ChatModel over Ollama's native POST /api/chat (non-streaming)."""

    def __init__(
        self,
        client: httpx.Client,
        base_url: str,
        model: str,
        *,
        seed: int,
        max_tokens: int,
        num_ctx: int | None,
        retry: RetryPolicy,
    ) -> None:
        self._client = client
        self._url = base_url.rstrip("/") + "/api/chat"
        self._model = model
        self._seed = seed
        self._max_tokens = max_tokens
        self._num_ctx = num_ctx
        self._retry = retry

    @property
    def parameters(self) -> Mapping[str, Any]:
        """Fixed generation parameters of this model."""
        return {
            "temperature": 0.0,
            "seed": self._seed,
            "max_tokens": self._max_tokens,
            "num_ctx": self._num_ctx,
        }

    def complete(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """One chat completion at temperature 0 with the fixed seed."""
        options: dict[str, Any] = {
            "temperature": 0.0,
            "seed": self._seed,
            "num_predict": max_tokens if max_tokens is not None else self._max_tokens,
        }
        if self._num_ctx is not None:
            options["num_ctx"] = self._num_ctx
        body: dict[str, Any] = {
            "model": self._model,
            "messages": messages,
            "stream": False,
            "options": options,
        }
        if _wants_json(response_format):
            body["format"] = "json"
        resp = call_with_retries(
            lambda: self._client.post(self._url, json=body),
            policy=self._retry,
            endpoint=self._url,
            what="Ollama chat",
        )
        data = check_response(resp, self._url)
        try:
            content = data["message"]["content"]
        except (KeyError, TypeError) as exc:
            raise RuntimeRequestError(f"{self._url} returned an unexpected body: {data!r}") from exc
        return content or ""


class OllamaRuntime(LLMRuntime):
    """An already running Ollama server with an LLM and an embedding model pulled."""

    def __init__(
        self,
        model: str = "qwen2.5:7b",
        embedder: str = "nomic-embed-text",
        base_url: str = "http://127.0.0.1:11434",
        *,
        max_tokens: int = 512,
        seed: int = 42,
        num_ctx: int | None = None,
        embedding_dims: int = NOMIC_DIMS,
        timeout: float = 600.0,
        preflight_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self.embedder = embedder
        self.base_url = base_url.rstrip("/")
        self.max_tokens = max_tokens
        self.seed = seed
        self.num_ctx = num_ctx
        self._embedding_dims = embedding_dims
        self.timeout = timeout
        self.preflight_timeout = preflight_timeout
        self.retry = retry or RetryPolicy()
        self._client: httpx.Client | None = None
        self._identity: ModelIdentity | None = None
        self._chat: OllamaChatModel | None = None

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
        return self._client

    def _get(self, path: str) -> Any:
        url = self.base_url + path
        try:
            resp = call_with_retries(
                lambda: self._http().get(url, timeout=self.preflight_timeout),
                policy=self.retry,
                endpoint=url,
                what="Ollama preflight",
            )
        except RuntimeUnavailable as exc:
            raise RuntimeUnavailable(
                url,
                f"the Ollama server at {self.base_url} is unreachable ({exc}). Start it with "
                f"`ollama serve` (or point base_url at a running server).",
            ) from exc
        return check_response(resp, url)

    def preflight(self) -> ModelIdentity:
        """Check server and models; record digests. Raises before anything is written."""
        version = self._get("/api/version").get("version")
        tags = self._get("/api/tags")
        available: dict[str, str] = {}
        for entry in tags.get("models", []):
            digest = entry.get("digest", "")
            for key in ("name", "model"):
                if entry.get(key):
                    available[_normalize(entry[key])] = digest
        missing = [m for m in (self.model, self.embedder) if _normalize(m) not in available]
        if missing:
            commands = "; ".join(f"ollama pull {m}" for m in missing)
            raise ModelMissing(
                f"Ollama server at {self.base_url} lacks model(s) {', '.join(missing)}. "
                f"Pull them first: {commands}"
            )
        self._identity = ModelIdentity(
            runtime="ollama",
            name=self.model,
            identity=available[_normalize(self.model)],
            runtime_version=version,
            embedder_name=self.embedder,
            embedder_identity=available[_normalize(self.embedder)],
            embedding_dims=self._embedding_dims,
            parameters=GenerationParameters(
                temperature=0.0,
                seed=self.seed,
                max_tokens=self.max_tokens,
                context_size=self.num_ctx,
            ),
        )
        return self._identity

    def start(self) -> None:
        """Preflight and prepare the chat model; idempotent."""
        if self._chat is not None:
            return
        self.preflight()
        self._chat = OllamaChatModel(
            self._http(),
            self.base_url,
            self.model,
            seed=self.seed,
            max_tokens=self.max_tokens,
            num_ctx=self.num_ctx,
            retry=self.retry,
        )

    def close(self) -> None:
        """Close the HTTP client (the Ollama server is not ours to stop)."""
        self._chat = None
        if self._client is not None:
            self._client.close()
            self._client = None

    @property
    def identity(self) -> ModelIdentity:
        """Identity with the Ollama digests (after `preflight`/`start`)."""
        if self._identity is None:
            raise PlaceError("OllamaRuntime: call start() (preflight) before reading identity")
        return self._identity

    @property
    def chat(self) -> ChatModel:
        """Direct chat model (after `start`)."""
        if self._chat is None:
            raise PlaceError("OllamaRuntime is not started")
        return self._chat

    def mem0_llm_config(self) -> dict[str, Any]:
        """Mem0 `llm` section: the `ollama` provider.

        mem0 1.0.x's OllamaLLM sends temperature, num_predict and top_p but no seed; with
        temperature 0 Ollama samples greedily, and the call cache pins the answers anyway.
        """
        return {
            "provider": "ollama",
            "config": {
                "model": self.model,
                "ollama_base_url": self.base_url,
                "temperature": 0.0,
                "max_tokens": self.max_tokens,
            },
        }

    def mem0_embedder_config(self) -> dict[str, Any]:
        """Mem0 `embedder` section: the `ollama` provider with nomic-embed-text."""
        return {
            "provider": "ollama",
            "config": {
                "model": self.embedder,
                "ollama_base_url": self.base_url,
                "embedding_dims": self._embedding_dims,
            },
        }

    @property
    def embedding_dims(self) -> int:
        """768 for nomic-embed-text."""
        return self._embedding_dims
