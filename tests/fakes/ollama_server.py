"""FakeOllamaServer: an in-process stand-in for the part of the Ollama HTTP API we use.

It is a FAKE for tests: it runs no model, tokenizes nothing and its answers are canned,
echoed or scripted. What it reproduces faithfully (after ollama/ollama `docs/api.md`,
`api/types.go` and `server/routes.go`) is the wire protocol a client sees:

- routes GET /api/version, /api/tags, /api/ps and POST /api/show, /api/chat, /api/generate,
  /api/embed, /api/embeddings on 127.0.0.1 (ephemeral port);
- streaming: /api/chat and /api/generate stream NDJSON (`application/x-ndjson`, one object
  per line, content pieces with `done: false`, then a final `done: true` object carrying
  `done_reason`, `total_duration`, `prompt_eval_count`, `eval_count`) unless the body says
  `"stream": false`, when they answer one JSON object with the whole message;
- errors: 404 `{"error": "model '<name>' not found"}` on every model endpoint for a model that
  is not in `models` (names match case-insensitively, `name` equals `name:latest`), 400 for a
  missing body or model;
- embeddings: non-zero unit vectors (a deterministic hashed bag of words); `/api/embed`
  answers `{"model", "embeddings": [...]}` (none for an empty input), the legacy
  `/api/embeddings` answers `{"embedding": [...]}`;
- /api/ps lists the models a request has loaded; /api/show reports details, model_info and
  parameters.

Token counts are whitespace-separated words, not tokens; durations are wall-clock time spent
in the fake. It records every request and can drop the connection without answering to
simulate transport errors.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[dict], str | tuple[str, str]]

_JSON = "application/json; charset=utf-8"
_NDJSON = "application/x-ndjson"
# Ollama keeps a model loaded for 5 minutes after its last request unless told otherwise.
_KEEP_ALIVE = timedelta(minutes=5)
_MODEL_ENDPOINTS = ("/api/chat", "/api/generate", "/api/embed", "/api/embeddings", "/api/show")


@dataclass
class RecordedRequest:
    """One request the fake received (including ones it dropped)."""

    method: str
    path: str
    body: Any


@dataclass
class _Reply:
    """What to send back: one JSON document, or NDJSON `lines` when streaming."""

    status: int
    payload: Any = None
    lines: list[dict] | None = None


class FakeOllamaServer:
    """Fake Ollama server; use as a context manager. `url` is its base URL."""

    def __init__(
        self,
        models: dict[str, str] | None = None,
        *,
        version: str = "0.0.0-fake",
        reply: str = "fake answer",
        json_reply: str = '{"facts": []}',
        embedding_dims: int = 768,
        latency: float = 0.0,
        echo: bool = False,
        script: Script | None = None,
        context_length: int = 32768,
        default_num_ctx: int = 2048,
    ) -> None:
        # name -> digest, like `ollama list`.
        self.models: dict[str, str] = (
            dict(models)
            if models is not None
            else {"qwen2.5:7b": "sha256-fake-qwen", "nomic-embed-text:latest": "sha256-fake-nomic"}
        )
        self.version = version
        self.reply = reply
        """Content of every plain chat answer (no `format`), unless `echo` or `script`."""
        self.json_reply = json_reply
        """Content of every chat answer asked for JSON (`format`), unless `script`."""
        self.embedding_dims = embedding_dims
        self.latency = latency
        """Seconds every /api/chat takes before answering (a GPU server decoding); requests
        are served on their own threads, so concurrent requests overlap as on a real server."""
        self.echo = echo
        """Answer plain chat requests with the memory items the prompt lists ("- ..." lines,
        or "unknown"), so a whole run through this fake answers by what each read exposed."""
        self.script = script
        """Called with (a copy of) every answered /api/chat body; returns the reply content or
        (content, done_reason), e.g. a cut-off `("{\\"facts\\": [\\"Sam", "length")`. Takes
        precedence over reply / json_reply / echo."""
        self.context_length = context_length
        """The model's trained context window, reported by /api/show and capping /api/ps."""
        self.default_num_ctx = default_num_ctx
        """The context a model is loaded with when a request sets no `num_ctx`."""
        self.chats_in_flight = 0
        self.max_chats_in_flight = 0
        """The most /api/chat requests that were being answered at once."""
        self.requests: list[RecordedRequest] = []
        # path -> number of upcoming requests to that path to drop without a response.
        self.drop_next: dict[str, int] = {}
        # Key of `models` -> (num_ctx it was loaded with, when it unloads), for /api/ps.
        self._loaded: dict[str, tuple[int, datetime]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits for it, once per test that uses the fake.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:PORT."""
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host  # typeshed allows bytes
        return f"http://{host}:{port}"

    def bodies(self, path: str) -> list[Any]:
        """Bodies of all requests to `path`, in arrival order."""
        with self._lock:
            return [r.body for r in self.requests if r.path == path]

    def chat_options(self) -> list[dict]:
        """The `options` of every /api/chat request ({} when absent), in arrival order."""
        return [
            dict((body.get("options") if isinstance(body, dict) else None) or {})
            for body in self.bodies("/api/chat")
        ]

    def __enter__(self) -> FakeOllamaServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- request handling -----------------------------------------------------------------

    def _lookup(self, name: str) -> str | None:
        """The key of `models` that `name` refers to, or None when it is not pulled."""
        wanted = _canonical(name)
        for model in self.models:
            if _canonical(model) == wanted:
                return model
        return None

    def _load(self, model: str, body: dict) -> None:
        """Mark `model` loaded (for /api/ps) with the context the request asked for."""
        options = body.get("options") or {}
        num_ctx = options.get("num_ctx") if isinstance(options, dict) else None
        # Ollama clamps a requested context to the model's trained context length.
        ctx = min(int(num_ctx or self.default_num_ctx), self.context_length)
        with self._lock:
            self._loaded[model] = (ctx, datetime.now(UTC) + _KEEP_ALIVE)

    def _respond(self, method: str, path: str, body: Any) -> _Reply | None:
        """The reply to a request, or None to drop the connection."""
        started = time.perf_counter_ns()
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body))
            if self.drop_next.get(path, 0) > 0:
                self.drop_next[path] -= 1
                return None
        if method == "GET" and path == "/api/version":
            return _Reply(200, {"version": self.version})
        if method == "GET" and path == "/api/tags":
            return _Reply(200, {"models": [self._entry(n) for n in self.models]})
        if method == "GET" and path == "/api/ps":
            return _Reply(200, {"models": self._ps()})
        if method != "POST" or path not in _MODEL_ENDPOINTS:
            return _Reply(404, {"error": f"fake ollama: no route {method} {path}"})
        if not isinstance(body, dict):
            return _Reply(400, {"error": "missing request body"})
        # /api/show also takes the older `name` field in place of `model`.
        name = body.get("model") or (body.get("name") if path == "/api/show" else None) or ""
        if not name:
            return _Reply(400, {"error": "model is required"})
        model = self._lookup(str(name))
        if model is None:
            return _Reply(404, {"error": f"model '{name}' not found"})
        if path == "/api/show":
            return _Reply(200, self._show())
        self._load(model, body)
        if path == "/api/chat":
            return self._chat(body, started)
        if path == "/api/generate":
            return self._generate(body, started)
        if path == "/api/embed":
            return self._embed_many(body, started)
        prompt = str(body.get("prompt") or "")
        # Legacy endpoint: an empty prompt only loads the model, as in Ollama.
        return _Reply(200, {"embedding": self._embed(prompt) if prompt else []})

    def _entry(self, name: str) -> dict:
        return {
            "name": name,
            "model": name,
            "modified_at": "2024-01-01T00:00:00Z",
            "size": 1,
            "digest": self.models[name],
            "details": _DETAILS,
        }

    def _ps(self) -> list[dict]:
        now = datetime.now(UTC)
        with self._lock:
            loaded = {m: v for m, v in self._loaded.items() if v[1] > now and m in self.models}
        # Ollama lists the model with the longest time left first.
        return [
            {
                "name": m,
                "model": m,
                "size": 1,
                "digest": self.models[m],
                "details": _DETAILS,
                "expires_at": _timestamp(expires),
                "size_vram": 0,
                "context_length": ctx,
            }
            for m, (ctx, expires) in sorted(loaded.items(), key=lambda kv: kv[1][1], reverse=True)
        ]

    def _show(self) -> dict:
        return {
            "modelfile": "# Modelfile of a FAKE model",
            "parameters": f"num_ctx {self.default_num_ctx}",
            "template": "{{ .Prompt }}",
            "details": _DETAILS,
            "model_info": {
                "general.architecture": "qwen2",
                "qwen2.context_length": self.context_length,
            },
        }

    def _chat(self, body: dict, started: int) -> _Reply:
        name = body["model"]
        messages = body.get("messages") or []
        if not messages:
            # Ollama answers a chat without messages by just loading the model.
            return _Reply(200, _final(name, "message", _message(""), "load", started, 0, 0))
        done_reason = "stop"
        if self.script is not None:
            try:
                scripted = self.script(copy.deepcopy(body))
            except Exception as exc:  # a broken script should fail the request, loudly
                return _Reply(500, {"error": f"fake ollama script failed: {exc!r}"})
            content, done_reason = (
                scripted if isinstance(scripted, tuple) else (scripted, done_reason)
            )
            if not isinstance(content, str) or not isinstance(done_reason, str):
                return _Reply(500, {"error": f"fake ollama script returned {scripted!r}"})
        elif body.get("format"):  # "json" or a JSON schema (structured outputs)
            content = self.json_reply
        elif self.echo:
            content = _echo(messages)
        else:
            content = self.reply
        with self._lock:
            self.chats_in_flight += 1
            self.max_chats_in_flight = max(self.max_chats_in_flight, self.chats_in_flight)
        try:
            time.sleep(self.latency)
        finally:
            with self._lock:
                self.chats_in_flight -= 1
        prompt_words = sum(_words(m.get("content") if isinstance(m, dict) else m) for m in messages)
        return _answer(body, "message", _message, content, done_reason, started, prompt_words)

    def _generate(self, body: dict, started: int) -> _Reply:
        name = body["model"]
        prompt = str(body.get("prompt") or "")
        if not prompt:
            # An empty prompt only loads the model, as in Ollama.
            return _Reply(200, _final(name, "response", "", "load", started, 0, 0))
        if body.get("format"):
            content = self.json_reply
        elif self.echo:
            content = _echo([{"content": prompt}])
        else:
            content = self.reply
        prompt_words = _words(body.get("system")) + _words(prompt)
        return _answer(body, "response", str, content, "stop", started, prompt_words)

    def _embed_many(self, body: dict, started: int) -> _Reply:
        raw = body.get("input")
        if isinstance(raw, str):
            # Ollama drops an empty string input: it embeds nothing.
            texts = [raw] if raw else []
        elif isinstance(raw, list) and all(isinstance(t, str) for t in raw):
            texts = list(raw)
        elif raw is None:
            texts = []
        else:
            return _Reply(400, {"error": "invalid input type"})
        if not texts:
            return _Reply(200, {"model": body["model"], "embeddings": []})
        dims = body.get("dimensions")
        vectors = [self._embed(t, dims if isinstance(dims, int) else None) for t in texts]
        return _Reply(
            200,
            {
                "model": body["model"],
                "embeddings": vectors,
                "total_duration": time.perf_counter_ns() - started,
                "prompt_eval_count": sum(_words(t) for t in texts),
            },
        )

    def _embed(self, text: str, dims: int | None = None) -> list[float]:
        """A hashed bag of words, L2-normalised: the same text always gives the same vector,
        texts sharing words are similar, and a text without words gets a fixed unit vector
        (never a zero vector, which a real embedder does not return and cosine cannot use)."""
        vector = [0.0] * self.embedding_dims
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            vector[int.from_bytes(digest[:4], "big") % self.embedding_dims] += 1.0
        if dims is not None and 0 < dims < len(vector):
            vector = vector[:dims]  # Ollama truncates to `dimensions`, then renormalises
        if not any(vector):
            vector[0] = 1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError as exc:
                    fake._record(method, self.path, raw.decode(errors="replace"))
                    self._send(_Reply(400, {"error": f"invalid JSON body: {exc}"}))
                    return
                reply = fake._respond(method, self.path, body)
                if reply is None:
                    # Simulated transport failure: close without a status line.
                    self.close_connection = True
                    self.connection.close()
                    return
                self._send(reply)

            def _send(self, reply: _Reply) -> None:
                self.send_response(reply.status)
                if reply.lines is not None:
                    # HTTP/1.0: the body ends when the connection closes, so no length is
                    # needed; each line is written (and so flushed) as soon as it is ready.
                    self.send_header("Content-Type", _NDJSON)
                    self.end_headers()
                    for line in reply.lines:
                        self.wfile.write(json.dumps(line).encode() + b"\n")
                    return
                data = json.dumps(reply.payload).encode()
                self.send_header("Content-Type", _JSON)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep pytest output clean

        return Handler

    def _record(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body))


_DETAILS = {
    "parent_model": "",
    "format": "gguf",
    "family": "fake",
    "families": ["fake"],
    "parameter_size": "7B",
    "quantization_level": "Q4_K_M",
}


def _canonical(name: str) -> str:
    """Ollama's model-name equivalence: case-insensitive, default tag `latest`, and the
    default registry/namespace prefix `registry.ollama.ai/library/` optional."""
    name = name.strip().lower()
    for prefix in ("registry.ollama.ai/", "library/"):
        name = name.removeprefix(prefix)
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _timestamp(moment: datetime | None = None) -> str:
    """RFC 3339 in UTC with a `Z`, as Go's time.Time marshals."""
    return (moment or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _words(text: Any) -> int:
    """The fake's token count: whitespace-separated words (deterministic, no tokenizer)."""
    return len(str(text).split()) if text else 0


def _pieces(content: str) -> list[str]:
    """Split a reply into stream chunks, one word and the whitespace around it each (as a
    tokenizer would, roughly); the pieces concatenate back to the reply exactly."""
    return re.findall(r"\s*\S+\s*", content) or ([content] if content else [])


def _message(content: str) -> dict:
    return {"role": "assistant", "content": content}


def _final(
    name: str,
    key: str,
    last: Any,
    done_reason: str,
    started: int,
    prompt_words: int,
    reply_words: int,
) -> dict:
    """The closing `done: true` object; `key` is "message" (chat) or "response" (generate)."""
    return {
        "model": name,
        "created_at": _timestamp(),
        key: last,
        "done": True,
        "done_reason": done_reason,
        "total_duration": time.perf_counter_ns() - started,
        "prompt_eval_count": prompt_words,
        "eval_count": reply_words,
    }


def _answer(
    body: dict,
    key: str,
    wrap: Callable[[str], Any],
    content: str,
    done_reason: str,
    started: int,
    prompt_words: int,
) -> _Reply:
    """A chat/generate answer: NDJSON chunks then a final object, or one object with the whole
    content when the request says `"stream": false` (Ollama streams by default)."""
    name, reply_words = body["model"], _words(content)
    if body.get("stream") is False:
        final = _final(name, key, wrap(content), done_reason, started, prompt_words, reply_words)
        return _Reply(200, final)
    chunks = [
        {"model": name, "created_at": _timestamp(), key: wrap(piece), "done": False}
        for piece in _pieces(content)
    ]
    final = _final(name, key, wrap(""), done_reason, started, prompt_words, reply_words)
    return _Reply(200, lines=[*chunks, final])


def _echo(messages: list[dict]) -> str:
    last = messages[-1] if messages else {}
    user = str(last.get("content", "")) if isinstance(last, dict) else ""
    shown = re.findall(r"^- (.*)$", user, flags=re.MULTILINE)
    return " ".join(shown) if shown else "unknown"
