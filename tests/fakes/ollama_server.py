"""FakeOllamaServer: a tiny in-process stand-in for the subset of the Ollama HTTP API we use.

It is a FAKE for tests: it runs no model. It serves /api/version, /api/tags, /api/show,
/api/chat, /api/embed and /api/embeddings on 127.0.0.1 (ephemeral port), records every
request, and can drop the connection without answering to simulate transport errors.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class RecordedRequest:
    """One request the fake received (including ones it dropped)."""

    method: str
    path: str
    body: Any


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
    ) -> None:
        # name -> digest, like `ollama list`.
        self.models: dict[str, str] = (
            dict(models)
            if models is not None
            else {"qwen2.5:7b": "sha256-fake-qwen", "nomic-embed-text:latest": "sha256-fake-nomic"}
        )
        self.version = version
        self.reply = reply
        self.json_reply = json_reply
        self.embedding_dims = embedding_dims
        self.latency = latency
        self.echo = echo
        self.chats_in_flight = 0
        self.max_chats_in_flight = 0
        """The most /api/chat requests that were being answered at once."""
        """Answer plain chat requests with the memory items the prompt lists ("- ..." lines,
        or "unknown"), and embed text as a hashed bag of words instead of zero vectors, so a
        whole run through this fake retrieves and answers deterministically by content."""
        """Seconds every /api/chat takes before answering (a GPU server decoding); requests
        are served on their own threads, so concurrent requests overlap as on a real server."""
        self.requests: list[RecordedRequest] = []
        # path -> number of upcoming requests to that path to drop without a response.
        self.drop_next: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:PORT."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def bodies(self, path: str) -> list[Any]:
        """Bodies of all requests to `path`, in arrival order."""
        with self._lock:
            return [r.body for r in self.requests if r.path == path]

    def __enter__(self) -> FakeOllamaServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- request handling -----------------------------------------------------------------

    def _has(self, name: str) -> str | None:
        norm = name if ":" in name else f"{name}:latest"
        for model, digest in self.models.items():
            if (model if ":" in model else f"{model}:latest") == norm:
                return digest
        return None

    def _respond(self, method: str, path: str, body: Any) -> tuple[int, Any] | None:
        """(status, json) for a request, or None to drop the connection."""
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body))
            if self.drop_next.get(path, 0) > 0:
                self.drop_next[path] -= 1
                return None
        if method == "GET" and path == "/api/version":
            return 200, {"version": self.version}
        if method == "GET" and path == "/api/tags":
            return 200, {
                "models": [
                    {"name": n, "model": n, "digest": d, "size": 1} for n, d in self.models.items()
                ]
            }
        if method == "POST" and path == "/api/show":
            name = (body or {}).get("model") or (body or {}).get("name", "")
            if self._has(name) is None:
                return 404, {"error": f"model '{name}' not found"}
            return 200, {"details": {"family": "fake"}, "model_info": {}}
        if method == "POST" and path == "/api/chat":
            name = body.get("model", "")
            if self._has(name) is None:
                return 404, {"error": f"model '{name}' not found, try pulling it first"}
            content = self.json_reply if body.get("format") == "json" else self.reply
            if self.echo and body.get("format") != "json":
                content = _echo(body.get("messages") or [])
            with self._lock:
                self.chats_in_flight += 1
                self.max_chats_in_flight = max(self.max_chats_in_flight, self.chats_in_flight)
            try:
                time.sleep(self.latency)
            finally:
                with self._lock:
                    self.chats_in_flight -= 1
            return 200, {
                "model": name,
                "message": {"role": "assistant", "content": content},
                "done": True,
            }
        if method == "POST" and path == "/api/embed":
            inputs = body.get("input", "")
            n = len(inputs) if isinstance(inputs, list) else 1
            texts = inputs if isinstance(inputs, list) else [inputs]
            vectors = [self._embed(str(t)) for t in texts[:n]]
            return 200, {"model": body.get("model"), "embeddings": vectors}
        if method == "POST" and path == "/api/embeddings":
            return 200, {"embedding": self._embed(str(body.get("prompt", "")))}
        return 404, {"error": f"fake ollama: no route {method} {path}"}

    def _embed(self, text: str) -> list[float]:
        if not self.echo:
            return [0.0] * self.embedding_dims
        vector = [0.0] * self.embedding_dims
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            vector[int.from_bytes(digest[:4], "big") % self.embedding_dims] += 1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return (
            [x / norm for x in vector] if any(vector) else [1.0] + [0.0] * (self.embedding_dims - 1)
        )

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                result = fake._respond(method, self.path, body)
                if result is None:
                    # Simulated transport failure: close without a status line.
                    self.close_connection = True
                    self.connection.close()
                    return
                status, payload = result
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
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


def _echo(messages: list[dict]) -> str:
    user = str(messages[-1].get("content", "")) if messages else ""
    shown = re.findall(r"^- (.*)$", user, flags=re.MULTILINE)
    return " ".join(shown) if shown else "unknown"
