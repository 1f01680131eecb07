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
    Completion,
    GeneratingChat,
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
    """Ollama treats `name` and `name:latest` as the same model, and names case-insensitively."""
    return (name if ":" in name else f"{name}:latest").lower()


def _context_length(show: Mapping[str, Any]) -> int | None:
    """The model's trained context length from /api/show (`<architecture>.context_length`)."""
    info = show.get("model_info") or {}
    for key, value in info.items():
        if key.endswith(".context_length") and isinstance(value, int):
            return value
    return None


def _default_num_ctx(show: Mapping[str, Any]) -> int | None:
    """`num_ctx` set in the model's Modelfile parameters, if any (else Ollama's default)."""
    for line in str(show.get("parameters") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
            return int(parts[1])
    return None


def _wants_json(response_format: dict[str, Any] | None) -> bool:
    return response_format is not None and response_format.get("type") in {
        "json_object",
        "json_schema",
        "json",
    }


class OllamaChatModel(GeneratingChat):
    """ChatModel over Ollama's native POST /api/chat (non-streaming), with done_reason."""

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
        self._http = client
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

    def generate(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One chat completion with Ollama's done_reason and token counts."""
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
            lambda: self._http.post(self._url, json=body),
            policy=self._retry,
            endpoint=self._url,
            what="Ollama chat",
        )
        data = check_response(resp, self._url)
        try:
            content = data["message"]["content"]
        except (KeyError, TypeError) as exc:
            raise RuntimeRequestError(f"{self._url} returned an unexpected body: {data!r}") from exc
        prompt, produced = data.get("prompt_eval_count"), data.get("eval_count")
        finish = data.get("done_reason")
        if (
            self._num_ctx is not None
            and prompt is not None
            and prompt + (produced or 0) >= self._num_ctx
        ):
            # Ollama cuts a prompt longer than num_ctx with only a log line and answers 200.
            finish = "context"
        return Completion(content or "", finish, prompt, produced)


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
        self._session: httpx.Client | None = None
        self._identity: ModelIdentity | None = None
        self._chat: OllamaChatModel | None = None
        self._show: Any = None

    def _http(self) -> httpx.Client:
        if self._session is None:
            self._session = httpx.Client(timeout=self.timeout)
        return self._session

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
        if self.num_ctx is not None:
            trained = _context_length(self._model_show())
            if trained is not None and self.num_ctx > trained:
                # Past the trained length Ollama would still answer; the run would not be
                # the one its manifest describes.
                raise PlaceError(
                    f"model.n_ctx={self.num_ctx} exceeds the context length of {self.model} "
                    f"on {self.base_url} ({trained} tokens); set model.n_ctx <= {trained}"
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

    def _model_show(self) -> Any:
        """/api/show of the LLM: asked once, then kept (it describes the pulled weights)."""
        if self._show is None:
            self._show = self._post("/api/show", {"model": self.model})
        return self._show

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        url = self.base_url + path
        resp = call_with_retries(
            lambda: self._http().post(url, json=body, timeout=self.preflight_timeout),
            policy=self.retry,
            endpoint=url,
            what="Ollama preflight",
        )
        return check_response(resp, url)

    def doctor(self) -> dict[str, Any]:
        """What a run will get from this server (``place doctor``), and what is wrong.

        Asks /api/show for the model's trained context length and Modelfile ``num_ctx``, and
        /api/ps whether it is loaded and with which context. Every request of a run sends
        ``num_ctx`` = the configured ``n_ctx``; a value above the model's context length is
        refused by preflight (which raises), and no value at all is a problem (the server's
        default, 2048 on Ollama 0.5–0.8, would cut Mem0's prompts without an error).
        """
        identity = self.preflight()
        show = self._model_show()
        loaded = [
            m
            for m in self._get("/api/ps").get("models", [])
            if _normalize(str(m.get("name") or m.get("model") or "")) == _normalize(self.model)
        ]
        trained = _context_length(show)
        problems = []
        if self.num_ctx is None:
            problems.append(
                "n_ctx is not set: requests would run at the server's default context window"
            )
        return {
            "server": self.base_url,
            "server_version": identity.runtime_version,
            "model": self.model,
            "digest": identity.identity,
            "embedder": self.embedder,
            "model_context_length": trained,
            "modelfile_num_ctx": _default_num_ctx(show),
            "run_num_ctx": self.num_ctx,
            "run_seed": self.seed,
            "run_max_tokens": self.max_tokens,
            "loaded": bool(loaded),
            "loaded_context_length": loaded[0].get("context_length") if loaded else None,
            "problems": problems,
        }

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
        if self._session is not None:
            self._session.close()
            self._session = None

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
        """Mem0 `llm` section: the `ollama` provider's config (model, temperature, budget).

        Mem0 builds its provider from this section, but a run replaces it with
        `RuntimeMem0LLM` over this runtime's chat model (place.runtime.mem0_llm): mem0
        1.0.x's OllamaLLM sends no seed and no num_ctx, so its calls would run at the
        server's default context window. The section still supplies the config object the
        call cache keys on.
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
