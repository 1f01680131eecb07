"""Mem0 configuration and the process-wide shared resources behind every store.

Two things must exist once per process, not once per store:

* the Qdrant client: local mode (``QdrantClient(path=...)``) locks its folder, so a second
  client on the same path fails. mem0 1.0.11's ``QdrantConfig`` accepts an existing
  ``client`` instance and its ``Qdrant`` vector store then uses it as is, so every store's
  config carries the one shared client;
* the embedder: mem0 builds one embedder per ``Memory`` (loading MiniLM each time). The
  backend builds one mem0 embedder and hands it to every ``Memory`` (see ``backend.py``).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from place.memory import telemetry  # noqa: F401  (must run before mem0 is imported)

#: Payload keys mem0 writes itself (``_create_memory``/``_update_memory``/``add(infer=False)``
#: set them after merging the caller's metadata, so a caller value would be overwritten or
#: would overwrite mem0's). mem0 keeps user metadata at the TOP level of the payload.
MEM0_CORE_KEYS: frozenset[str] = frozenset(
    {
        "data",
        "hash",
        "created_at",
        "updated_at",
        "id",
        "user_id",
        "agent_id",
        "run_id",
        "actor_id",
        "role",
    }
)

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

_clients_lock = threading.Lock()
# resolved local path (or url) -> [client, reference count]
_clients: dict[str, list[Any]] = {}


def check_store_name(name: str) -> str:
    """Return ``name`` if usable as a Qdrant collection and a file name, else raise."""
    if not _NAME_RE.match(name) or ".." in name:
        raise ValueError(f"store name {name!r} must match {_NAME_RE.pattern}")
    return name


def acquire_qdrant_client(
    local_path: Path | None, url: str | None = None, api_key: str | None = None
) -> Any:
    """Return the process-wide ``QdrantClient`` for a local folder or a server URL.

    Reference counted: each call must be paired with :func:`release_qdrant_client`.
    """
    from qdrant_client import QdrantClient

    if url is not None:
        key = url
    elif local_path is not None:
        key = str(Path(local_path).resolve())
    else:
        raise ValueError("either a local Qdrant path or a server url is needed")
    with _clients_lock:
        entry = _clients.get(key)
        if entry is None:
            if url is not None:
                client = QdrantClient(url=url, api_key=api_key)
            else:
                Path(key).mkdir(parents=True, exist_ok=True)
                client = QdrantClient(path=key)
            entry = _clients[key] = [client, 0]
        entry[1] += 1
        return entry[0]


def release_qdrant_client(client: Any) -> None:
    """Drop one reference; the last one closes the client (and its folder lock)."""
    with _clients_lock:
        for key, entry in list(_clients.items()):
            if entry[0] is client:
                entry[1] -= 1
                if entry[1] <= 0:
                    del _clients[key]
                    client.close()
                return


def history_db_path(run_dir: Path, name: str) -> Path:
    """Where store ``name`` keeps its Mem0 history database inside the run directory."""
    return Path(run_dir) / "history" / f"{check_store_name(name)}.db"


def build_mem0_config(
    *,
    name: str,
    run_dir: Path,
    client: Any,
    llm_config: dict[str, Any],
    embedder_config: dict[str, Any],
    embedding_dims: int,
    local_path: Path | None = None,
) -> dict[str, Any]:
    """Mem0 ``Memory.from_config`` dict for one store: its own collection and history DB.

    ``llm_config``/``embedder_config`` are Mem0 sections (``{"provider": ..., "config":
    {...}}``) as produced by the runtime; they are copied, never mutated.
    """
    check_store_name(name)
    db_path = history_db_path(run_dir, name)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    embedder = {
        "provider": embedder_config["provider"],
        "config": {**embedder_config.get("config", {}), "embedding_dims": embedding_dims},
    }
    vector_config: dict[str, Any] = {
        "collection_name": name,
        "embedding_model_dims": embedding_dims,
        "client": client,
        # Only used by mem0 when no client is given; set so mem0 never defaults to /tmp/qdrant.
        "path": str(local_path if local_path is not None else Path(run_dir) / "qdrant"),
        "on_disk": False,
    }
    return {
        "version": "v1.1",
        "vector_store": {"provider": "qdrant", "config": vector_config},
        "llm": {"provider": llm_config["provider"], "config": dict(llm_config.get("config", {}))},
        "embedder": embedder,
        "history_db_path": str(db_path),
    }
