"""Protocols, records and small shared helpers for the LLM runtimes.

A runtime owns one local LLM (llama.cpp child process or an Ollama server) plus the embedder
Mem0 uses next to it. Everything the experiment needs to know about "which model produced
these answers" is captured in `ModelIdentity`; everything about "how long did we wait" in
`PhaseTimer`. Transport errors are retried a bounded number of times and then surface as
`RuntimeUnavailable`, never silently.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Protocol, Self, TypeVar, runtime_checkable

import httpx
import tenacity
from pydantic import BaseModel, ConfigDict, Field

from place.errors import PlaceError
from place.records import TRUNCATED_FINISHES

log = logging.getLogger(__name__)

T = TypeVar("T")

Message = dict[str, Any]


class RuntimeUnavailable(PlaceError):
    """The LLM/embedding endpoint could not be reached after every allowed attempt."""

    def __init__(self, endpoint: str, message: str) -> None:
        super().__init__(message)
        self.endpoint = endpoint


class RuntimeRequestError(PlaceError):
    """The endpoint answered, but with an error status or a malformed body (not retried)."""


class ModelMissing(PlaceError):
    """A model the configuration names is not available on the runtime."""


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion model at temperature 0 with a fixed seed.

    Temperature and seed are construction parameters (recorded in `parameters` and in the
    runtime's `ModelIdentity`), so a call cannot accidentally sample.
    """

    @property
    def parameters(self) -> Mapping[str, Any]:
        """Construction-time generation parameters (temperature, seed, max_tokens, ...)."""
        ...

    def complete(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Return the assistant text for `messages`."""
        ...


@dataclass(frozen=True)
class Completion:
    """One chat completion with what the server said about how it ended.

    ``finish`` is the server's own word: ``"stop"`` (the model ended), ``"length"`` (cut at
    the token budget: Ollama ``done_reason``, OpenAI/llama.cpp ``finish_reason``), or
    ``"context"`` (this project's label: the prompt plus the reply filled the context window,
    so Ollama, which cuts over-long prompts without an error, probably cut the prompt).
    ``None`` when no server said (a fake, or a cached answer recorded before finish reasons
    were kept).
    """

    text: str
    finish: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def truncated(self) -> bool | None:
        """Cut off (token budget or context window); None when unknown."""
        return None if self.finish is None else self.finish in TRUNCATED_FINISHES

    def meta(self) -> dict[str, Any]:
        """Everything but the text (what the call cache keeps beside the response)."""
        return {
            "finish": self.finish,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


class GeneratingChat(ABC):
    """Base of the runtimes' chat models: `generate` also reports how a completion ended;
    `complete` is its text."""

    @abstractmethod
    def generate(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """The completion for `messages`, with its finish reason and token counts."""

    def complete(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """One chat completion at temperature 0 with the fixed seed."""
        return self.generate(messages, response_format=response_format, max_tokens=max_tokens).text


class GenerationParameters(BaseModel):
    """Generation parameters fixed for a whole run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(
        0.0, description="Sampling temperature; always 0 (greedy) in this project."
    )
    seed: int = Field(description="Fixed sampling seed sent with every request that allows it.")
    max_tokens: int = Field(description="Default cap on generated tokens per call.")
    context_size: int | None = Field(
        None, description="Context window in tokens (n_ctx / num_ctx); None = runtime default."
    )


class ModelIdentity(BaseModel):
    """What produced the LLM answers and embeddings of a run; written into run manifests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    runtime: str = Field(
        description="The registered name of the runtime that served the model "
        "(`model.runtime`, place.runtime.registry): llamacpp, the embedded llama.cpp server; "
        "ollama, an Ollama server; or a runtime another package registers. Part of the cache "
        "identity, so it must stay the name the runtime was registered under."
    )
    name: str = Field(description="Model name as requests address it (GGUF stem or Ollama tag).")
    identity: str = Field(
        description="Content identity of the weights: 'sha256:<hex>' of the GGUF file, or the "
        "Ollama manifest digest reported by /api/tags."
    )
    runtime_version: str | None = Field(
        None,
        description="llama-cpp-python package version or Ollama server version. Recorded, but "
        "not part of the cache identity, so committed caches replay across upgrades.",
    )
    embedder_name: str = Field(description="Embedding model name (MiniLM path name or Ollama tag).")
    embedder_identity: str = Field(
        description="'sha256:<hex>' of the embedder's model.safetensors, or its Ollama digest."
    )
    embedding_dims: int = Field(description="Embedding vector size (384 MiniLM, 768 nomic).")
    parameters: GenerationParameters = Field(description="Fixed generation parameters.")

    def cache_identity(self) -> str:
        """The string the LLM call cache keys on: weights plus everything fixed per run.

        The embedder is excluded because it never influences an LLM response.
        """
        payload = {
            "runtime": self.runtime,
            "name": self.name,
            "identity": self.identity,
            "parameters": self.parameters.model_dump(),
        }
        return json.dumps(payload, sort_keys=True, separators=(",", ":"))


@dataclass
class RetryPolicy:
    """Bounded retries with exponential back-off for transport errors only.

    HTTP error statuses are answers, not transport failures, and are never retried here.
    """

    attempts: int = 4
    initial_backoff: float = 0.5
    multiplier: float = 2.0
    max_backoff: float = 8.0
    # Injected so tests can observe the back-off without sleeping.
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be >= 1")

    def delays(self) -> list[float]:
        """The sleeps between attempts (one fewer than attempts)."""
        out: list[float] = []
        delay = self.initial_backoff
        for _ in range(self.attempts - 1):
            out.append(min(delay, self.max_backoff))
            delay *= self.multiplier
        return out


TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError,)


def call_with_retries(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    endpoint: str,
    what: str = "request",
    retry_on: tuple[type[BaseException], ...] = TRANSPORT_ERRORS,
) -> T:
    """Run `fn`, retrying `retry_on` errors per `policy`; then raise `RuntimeUnavailable`.

    The default `retry_on` is httpx's TransportError: connect/read/write errors, resets,
    protocol errors and timeouts. Anything else propagates immediately.
    """

    def log_retry(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "%s to %s failed (%s: %s); retry %d/%d in %.2fs",
            what,
            endpoint,
            type(exc).__name__,
            exc,
            state.attempt_number,
            policy.attempts - 1,
            state.next_action.sleep if state.next_action else 0.0,
        )

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.attempts),
        # initial * multiplier**(n-1), capped: the same schedule as `RetryPolicy.delays`.
        wait=tenacity.wait_exponential(
            multiplier=policy.initial_backoff, exp_base=policy.multiplier, max=policy.max_backoff
        ),
        retry=tenacity.retry_if_exception_type(retry_on),
        sleep=policy.sleep,
        before_sleep=log_retry,
    )
    try:
        return retrying(fn)
    except tenacity.RetryError as exc:
        last = exc.last_attempt.exception()
        raise RuntimeUnavailable(
            endpoint,
            f"{what} to {endpoint} failed after {policy.attempts} attempt(s): "
            f"{type(last).__name__}: {last}",
        ) from last


def check_response(response: httpx.Response, endpoint: str) -> Any:
    """Return the JSON body of a successful response or raise `RuntimeRequestError`."""
    if response.status_code >= 400:
        raise RuntimeRequestError(
            f"{endpoint} answered HTTP {response.status_code}: {response.text[:500]}"
        )
    try:
        return response.json()
    except ValueError as exc:
        raise RuntimeRequestError(
            f"{endpoint} answered with a non-JSON body: {response.text[:500]}"
        ) from exc


class LLMRuntime(ABC):
    """One local LLM plus its embedder, usable as a context manager (start/close)."""

    @abstractmethod
    def start(self) -> None:
        """Make the runtime ready (start the server / preflight); idempotent."""

    @abstractmethod
    def close(self) -> None:
        """Release everything `start` acquired; idempotent and safe after a failed start."""

    @property
    @abstractmethod
    def identity(self) -> ModelIdentity:
        """Identity of model + embedder + parameters (available after `start`)."""

    @property
    @abstractmethod
    def chat(self) -> ChatModel:
        """A direct chat model on this runtime (after `start`)."""

    @abstractmethod
    def mem0_llm_config(self) -> dict[str, Any]:
        """The `llm` section of a Mem0 config pointing at this runtime."""

    @abstractmethod
    def mem0_embedder_config(self) -> dict[str, Any]:
        """The `embedder` section of a Mem0 config."""

    @property
    @abstractmethod
    def embedding_dims(self) -> int:
        """Embedding vector size (the Qdrant collection needs it)."""

    # -- before a run: built from the `model` config section only, never started ----------
    # `place run` (its checks and `--check`) and `place doctor` call these on a runtime the
    # registry built (place.runtime.registry.configured_runtime): they must be cheap, start
    # no server, and ask the network only for what a server the runtime does not own can say.

    preflight_label: ClassVar[str | None] = None
    """What `preflight` checks, in words ("Ollama"), for `place run --check`'s note that a
    multirun skipped it; None when `preflight` has nothing to check (returns None)."""

    def config_problems(self) -> list[str]:
        """Problems of the configuration this runtime was built from that only the runtime
        can tell (`model.ollama_model` missing, a GGUF llama.cpp cannot read), one line each,
        phrased like every other configuration problem: `key=value: must be ...`. Checked
        by `place run` before anything is written. None by default (an empty list)."""
        return []

    def preflight(self) -> str | None:
        """Check, before a run directory exists, that this runtime can serve the run.

        Raises a `PlaceError` naming what is missing; returns a one-line note for
        `place run --check` ("Ollama ready"), or None. The default has nothing to check: a
        runtime that starts its own server (llama.cpp) finds out in `start`."""
        return None

    @abstractmethod
    def doctor(self) -> dict[str, Any]:
        """What a run would get from this runtime (`place doctor` prints it key by key), with
        a `problems` list (empty when all is well)."""

    @abstractmethod
    def token_counter(self) -> Callable[[str], int]:
        """Tokens of a text for this model (the prompt check: prompts must fit in n_ctx).

        The model's own tokenizer where it can be had without starting the model, else an
        estimate that says how far it can be trusted. Raises a `PlaceError` phrased as a
        configuration problem when the model cannot be read."""

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            # A half-started runtime (e.g. child spawned, never ready) must still be cleaned up.
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# --- file hashing ---------------------------------------------------------------------------


def default_hash_memo() -> Path:
    """Where file hashes are memoized: $XDG_CACHE_HOME/place/sha256.json (~/.cache default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "place" / "sha256.json"


_memo_lock = threading.Lock()


def file_sha256(path: str | os.PathLike[str], memo: Path | None = None) -> str:
    """sha256 hex of a file, streamed; memoized by (resolved path, size, mtime_ns) in `memo`.

    The memo is only an optimization (hashing ~100 MB takes a second or so): an unreadable or
    unwritable memo falls back to hashing, with a warning.
    """
    p = Path(path).resolve()
    st = p.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    entries: dict[str, Any] = {}
    with _memo_lock:
        if memo is not None and memo.exists():
            try:
                entries = json.loads(memo.read_text())
            except (OSError, ValueError) as exc:
                log.warning("ignoring unreadable hash memo %s: %s", memo, exc)
                entries = {}
            hit = entries.get(str(p))
            if isinstance(hit, dict) and all(hit.get(k) == v for k, v in stamp.items()):
                return str(hit["sha256"])
        h = hashlib.sha256()
        with p.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        digest = h.hexdigest()
        if memo is not None:
            entries[str(p)] = {**stamp, "sha256": digest}
            try:
                memo.parent.mkdir(parents=True, exist_ok=True)
                tmp = memo.with_suffix(f".tmp{os.getpid()}")
                tmp.write_text(json.dumps(entries, indent=1, sort_keys=True))
                os.replace(tmp, memo)  # atomic: concurrent readers never see half a file
            except OSError as exc:
                log.warning("could not update hash memo %s: %s", memo, exc)
        return digest
