"""The Ollama runtime (the paper's setting: qwen2.5:7b + nomic-embed-text on a local server).

Requests go through the official `ollama` Python client. `preflight()` runs before anything
is written: it checks the server answers and both models are pulled, and records their
digests. That matters beyond a friendly message: Mem0's Ollama embedder *pulls* a missing
model on construction, which must never happen implicitly.

Errors: the client raises httpx's transport errors (a connection refused becomes the builtin
`ConnectionError`), which are retried under the run's `RetryPolicy` and then surface as
`RuntimeUnavailable`; an HTTP error status (`ollama.ResponseError`) is an answer and is not
retried: 404 (the model is not pulled) is `ModelMissing`, anything else
`RuntimeRequestError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

import httpx
import ollama
import pydantic

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

T = TypeVar("T")

NOMIC_DIMS = 768

TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError, ConnectionError)
"""What the `ollama` client raises when no answer came: httpx's transport errors, and the
builtin ConnectionError it turns httpx.ConnectError into. Retried; nothing else is."""

OLLAMA_CHARS_PER_TOKEN = 3.0
"""Ollama exposes no tokenizer offline, so token counts are estimated as characters / 3.
BPE tokenizers of the Qwen2.5 family average about 4 characters per token on English text
(SmolLM2's tokenizer measures 4.1 to 4.6 on Mem0's prompts), so this overestimates English
prompts by about a third; it is not conservative for scripts like Chinese or Japanese."""


def char_token_estimate(text: str) -> int:
    """Tokens of `text` estimated as characters / OLLAMA_CHARS_PER_TOKEN, rounded up."""
    return math.ceil(len(text) / OLLAMA_CHARS_PER_TOKEN)


def _normalize(name: str) -> str:
    """Ollama treats `name` and `name:latest` as the same model, and names case-insensitively."""
    return (name if ":" in name else f"{name}:latest").lower()


def _context_length(show: ollama.ShowResponse) -> int | None:
    """The model's trained context length from /api/show (`<architecture>.context_length`)."""
    for key, value in (show.modelinfo or {}).items():
        if key.endswith(".context_length") and isinstance(value, int):
            return value
    return None


def _default_num_ctx(show: ollama.ShowResponse) -> int | None:
    """`num_ctx` set in the model's Modelfile parameters, if any (else Ollama's default)."""
    for line in str(show.parameters or "").splitlines():
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


def _ask(fn: Callable[[], T], *, retry: RetryPolicy, endpoint: str, what: str, model: str) -> T:
    """One request through the client: transport errors retried, error answers mapped."""
    try:
        return call_with_retries(
            fn, policy=retry, endpoint=endpoint, what=what, retry_on=TRANSPORT_ERRORS
        )
    except ollama.ResponseError as exc:
        if exc.status_code == 404:
            raise ModelMissing(
                f"{endpoint} answered HTTP 404: {exc.error}. Is {model} pulled? "
                f"(ollama pull {model})"
            ) from None
        raise RuntimeRequestError(
            f"{endpoint} answered HTTP {exc.status_code}: {str(exc.error)[:500]}"
        ) from None
    except ollama.RequestError as exc:  # refused by the client before sending
        raise RuntimeRequestError(f"request to {endpoint} not sent: {exc.error}") from None
    except pydantic.ValidationError as exc:  # the client validates what it sends and gets
        raise RuntimeRequestError(f"{endpoint}: malformed request or answer: {exc}") from None


class OllamaChatModel(GeneratingChat):
    """ChatModel over Ollama's native POST /api/chat (non-streaming), with done_reason."""

    def __init__(
        self,
        client: ollama.Client,
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
        fmt: Literal["json"] | None = "json" if _wants_json(response_format) else None
        data = _ask(
            lambda: self._client.chat(
                model=self._model, messages=messages, options=options, format=fmt, stream=False
            ),
            retry=self._retry,
            endpoint=self._url,
            what="Ollama chat",
            model=self._model,
        )
        content = data.message.content
        prompt, produced = data.prompt_eval_count, data.eval_count
        finish = data.done_reason
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

    preflight_label = "Ollama"

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
        # Made on first use (constructing a runtime asks nothing of the server): one client
        # for the model's calls, one with the short preflight timeout for the questions.
        self._client: ollama.Client | None = None
        self._query_client: ollama.Client | None = None
        self._identity: ModelIdentity | None = None
        self._chat: OllamaChatModel | None = None
        self._show: ollama.ShowResponse | None = None

    def _chat_client(self) -> ollama.Client:
        if self._client is None:
            self._client = ollama.Client(host=self.base_url, timeout=self.timeout)
        return self._client

    def _queries(self) -> ollama.Client:
        if self._query_client is None:
            self._query_client = ollama.Client(host=self.base_url, timeout=self.preflight_timeout)
        return self._query_client

    def _query(self, path: str, fn: Callable[[ollama.Client], T]) -> T:
        """Ask the server `fn` (what the client sends to `path`), before or beside a run."""
        url = self.base_url + path
        try:
            return _ask(
                lambda: fn(self._queries()),
                retry=self.retry,
                endpoint=url,
                what="Ollama preflight",
                model=self.model,
            )
        except RuntimeUnavailable as exc:
            raise RuntimeUnavailable(
                url,
                f"the Ollama server at {self.base_url} is unreachable ({exc}). Start it with "
                f"`ollama serve` (or point base_url at a running server).",
            ) from exc

    def _version(self) -> str | None:
        # The client (0.6) has no call for GET /api/version; ask it with httpx, as it would.
        url = self.base_url + "/api/version"
        response = httpx.get(url, timeout=self.preflight_timeout)
        version = check_response(response, url).get("version")
        return None if version is None else str(version)

    # --- before a run (not started) ---------------------------------------------------------

    def config_problems(self) -> list[str]:
        """`model.ollama_model` is required (the builder passes "" when it is null)."""
        if self.model:
            return []
        return [
            "model.ollama_model=null: must be an Ollama model tag (e.g. qwen2.5:7b) "
            "when model.runtime=ollama"
        ]

    def token_counter(self) -> Callable[[str], int]:
        """characters / OLLAMA_CHARS_PER_TOKEN, rounded up: Ollama has no offline tokenizer."""
        return char_token_estimate

    def _check_server(self) -> ModelIdentity:
        """Check server and models; record digests. Raises before anything is written."""
        problems = self.config_problems()
        if problems:
            raise PlaceError("; ".join(problems))
        version = self._query("/api/version", lambda _: self._version())
        tags = self._query("/api/tags", lambda c: c.list())
        available: dict[str, str] = {}
        for entry in tags.models:
            if entry.model:
                available[_normalize(entry.model)] = entry.digest or ""
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

    def preflight(self) -> str:
        """Check server and models and record digests (raises before anything is written:
        unreachable server, model not pulled, n_ctx above the model's context length)."""
        self._check_server()
        return "Ollama ready"

    def _model_show(self) -> ollama.ShowResponse:
        """/api/show of the LLM: asked once, then kept (it describes the pulled weights)."""
        if self._show is None:
            self._show = self._query("/api/show", lambda c: c.show(self.model))
        return self._show

    def doctor(self) -> dict[str, Any]:
        """What a run will get from this server (``place doctor``), and what is wrong.

        Asks /api/show for the model's trained context length and Modelfile ``num_ctx``, and
        /api/ps whether it is loaded and with which context. Every request of a run sends
        ``num_ctx`` = the configured ``n_ctx``; a value above the model's context length is
        refused by preflight (which raises), and no value at all is a problem (the server's
        default, 2048 on Ollama 0.5–0.8, would cut Mem0's prompts without an error).
        """
        identity = self._check_server()
        show = self._model_show()
        loaded = [
            m
            for m in self._query("/api/ps", lambda c: c.ps()).models
            if _normalize(str(m.name or m.model or "")) == _normalize(self.model)
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
            "loaded_context_length": loaded[0].context_length if loaded else None,
            "problems": problems,
        }

    def start(self) -> None:
        """Preflight and prepare the chat model; idempotent."""
        if self._chat is not None:
            return
        self._check_server()
        self._chat = OllamaChatModel(
            self._chat_client(),
            self.base_url,
            self.model,
            seed=self.seed,
            max_tokens=self.max_tokens,
            num_ctx=self.num_ctx,
            retry=self.retry,
        )

    def close(self) -> None:
        """Close the clients (the Ollama server is not ours to stop)."""
        self._chat = None
        for client in (self._client, self._query_client):
            if client is not None:
                client.close()
        self._client = self._query_client = None

    @property
    def identity(self) -> ModelIdentity:
        """Identity with the Ollama digests (after `preflight`/`start`)."""
        if self._identity is None:
            raise PlaceError("OllamaRuntime: call start() or preflight() before reading identity")
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
