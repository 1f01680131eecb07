"""The one place that reaches into Mem0's and qdrant-client's internals, and the version gate.

PLACE uses Mem0 through ``Memory``'s public methods, ``MemoryConfig`` and the component
interfaces Mem0 documents for custom providers (``VectorStoreBase.get/update``,
``EmbeddingBase.embed``, ``LLMBase.generate_response``). Everything else it needs from the
two libraries is not a public interface, and lives here so that a library upgrade has
exactly one file to re-check:

* Mem0's component factories, which ``Memory.__init__`` calls to build its own embedder and
  LLM (the backend hands it shared ones instead: :func:`build_memory`);
* the history manager (``memory.db``: its sqlite connection, its private ``_lock``, the
  ``history`` table) and the Qdrant client held by Mem0's vector store;
* module-level ``uuid`` imports (record ids, place/memory/ids.py) and the telemetry flags
  and PostHog client (place/memory/telemetry.py);
* the ``mem0`` logger and the fact-extraction output format (what ``add(infer=True)``
  swallows);
* qdrant-client local mode's collections and their sqlite files, and its payload-index
  warning.

:func:`check_versions` runs when a backend is built (not at import): outside the versions
these reaches were checked against it raises :class:`UnsupportedVersion`, a
:class:`~place.errors.PlaceError`, so the CLI reports it and exits 2.

Importing this module must not import mem0 (telemetry must be off first, and mem0 takes
seconds to import): every mem0/qdrant import below is inside a function.
"""

from __future__ import annotations

import importlib.metadata
import logging
import re
import sqlite3
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from place.errors import PlaceError

# --------------------------------------------------------------------------- versions

#: Supported releases, [low, high) per distribution.
#:
#: mem0ai >=1.0.11,<1.1: ``Memory.close()`` (used by ``MemoryStore.close``) first appears in
#: 1.0.11, the last 1.0 release; 2.0 reorganised the package. Everything reached here was
#: read in the 1.0.11 source.
#: qdrant-client >=1.10,<1.21: ``query_points`` (``MemoryStore.search_filtered``) first
#: appears in 1.10.0; the local-mode layout read below (``QdrantClient._client``,
#: ``QdrantLocal.collections``, ``LocalCollection.storage.storage`` as a sqlite3
#: connection) and ``Filter.min_should`` were checked unchanged from 1.10.0 to 1.18.0 in the
#: repository and in the installed 1.20.0. A newer minor release may move them, and then
#: removed text would silently stay in local-mode files, so the range stops at what was read.
SUPPORTED: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "mem0ai": ((1, 0, 11), (1, 1, 0)),
    "qdrant-client": ((1, 10, 0), (1, 21, 0)),
}


class UnsupportedVersion(PlaceError):
    """An installed mem0ai or qdrant-client release is outside the range PLACE supports."""


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (None if it is not installed)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _release(version: str) -> tuple[int, ...] | None:
    """The numeric release of a version string ("1.0.11rc1" -> (1, 0, 11)), padded to three."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    if match is None:
        return None
    parts = tuple(int(p) for p in match.group(0).split("."))
    return parts + (0,) * (3 - len(parts))


def _spec(low: tuple[int, ...], high: tuple[int, ...]) -> str:
    return f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"


def check_versions() -> None:
    """Raise :class:`UnsupportedVersion` unless every distribution in :data:`SUPPORTED` is
    installed in its range; the message names the installed version and the range."""
    problems: list[str] = []
    for dist, (low, high) in SUPPORTED.items():
        version = installed_version(dist)
        if version is None:
            problems.append(f"{dist} is not installed; PLACE supports {dist}{_spec(low, high)}")
            continue
        release = _release(version)
        if release is None or not low <= release < high:
            problems.append(
                f"{dist} {version} is installed; PLACE supports {dist}{_spec(low, high)}"
            )
    if problems:
        raise UnsupportedVersion(
            "; ".join(problems)
            + " (install a release in range; why these ranges: place/memory/mem0_compat.py)"
        )


# --------------------------------------------------------------------------- telemetry


def mem0_telemetry_was_on() -> bool:
    """Whether mem0 is already imported with its telemetry flag on."""
    tele = sys.modules.get("mem0.memory.telemetry")
    return tele is not None and getattr(tele, "MEM0_TELEMETRY", False) is not False


def switch_mem0_telemetry_off() -> None:
    """Force an already imported mem0's telemetry off where it is read, and shut down its
    PostHog client.

    mem0 1.0.11 reads ``MEM0_TELEMETRY`` once at import of ``mem0.memory.telemetry`` and
    ``mem0.memory.main`` copies it into its own namespace, so both flags are set.
    """
    tele = sys.modules.get("mem0.memory.telemetry")
    if tele is None:
        return
    tele.MEM0_TELEMETRY = False  # type: ignore[attr-defined]  # reason: a module global, untyped
    main = sys.modules.get("mem0.memory.main")
    if main is not None:
        main.MEM0_TELEMETRY = False  # type: ignore[attr-defined]  # reason: a module global, untyped
    client = getattr(tele, "client_telemetry", None)
    if client is not None:
        client.close()


def mem0_telemetry_is_off() -> bool:
    """True when mem0 is not imported, or is imported with telemetry off and no PostHog
    client (neither the module-level one nor 1.0.11's lazily built OSS instance)."""
    tele = sys.modules.get("mem0.memory.telemetry")
    if tele is None:
        return True
    main = sys.modules.get("mem0.memory.main")
    return bool(
        tele.MEM0_TELEMETRY is False
        and (main is None or main.MEM0_TELEMETRY is False)
        and getattr(tele.client_telemetry, "posthog", None) is None
        and getattr(tele, "_oss_telemetry_instance", None) is None
    )


# --------------------------------------------------------------------------- record ids


def route_mem0_uuid(shim: Any) -> None:
    """Make Mem0 draw ids through ``shim`` (idempotent).

    Mem0 names memories (``mem0.memory.main``) and history rows (``mem0.memory.storage``)
    with ``uuid.uuid4()`` through a module-level ``import uuid``; replacing that name in
    those two modules routes exactly Mem0's draws, not the rest of the process.
    """
    from mem0.memory import main as mem0_main
    from mem0.memory import storage as mem0_storage

    for module in (mem0_main, mem0_storage):
        if module.uuid is not shim:
            module.uuid = shim


# --------------------------------------------------------------------------- construction


def create_embedder(provider: str, config: dict[str, Any]) -> Any:
    """A Mem0 embedder for ``provider`` built by Mem0's own factory (no vector config)."""
    from mem0.utils.factory import EmbedderFactory

    return EmbedderFactory.create(provider, config, None)


def sentence_transformer(embedder: Any) -> Any:
    """The ``SentenceTransformer`` a Mem0 ``huggingface`` embedder holds (``.model``)."""
    return embedder.model


def create_llm(provider: str, config: dict[str, Any]) -> Any:
    """A Mem0 LLM client for ``provider`` built by Mem0's own factory."""
    from mem0.utils.factory import LlmFactory

    return LlmFactory.create(provider, config)


class _Given:
    """Stands in for a Mem0 factory class: ``create(...)`` returns the object given."""

    def __init__(self, component: Any) -> None:
        self._component = component

    def create(self, *_args: Any, **_kwargs: Any) -> Any:
        return self._component


# Serialises the factory swap: two threads swapping at once could restore each other's
# stand-in, leaving it in place for good.
_build_guard = threading.Lock()


@contextmanager
def _given_components(embedder: Any, llm: Any) -> Iterator[None]:
    """While the body runs, ``Memory.__init__`` gets ``embedder`` and ``llm``.

    ``Memory.__init__`` builds them with ``EmbedderFactory.create``/``LlmFactory.create``,
    looked up as globals of ``mem0.memory.main``; only those two names are swapped (not the
    factory classes, which other code, e.g. :func:`create_embedder`, still uses), and
    they are restored however the body ends.
    """
    from mem0.memory import main as mem0_main

    saved = (mem0_main.EmbedderFactory, mem0_main.LlmFactory)
    mem0_main.EmbedderFactory = _Given(embedder)
    mem0_main.LlmFactory = _Given(llm)
    try:
        yield
    finally:
        mem0_main.EmbedderFactory, mem0_main.LlmFactory = saved


@contextmanager
def _quiet_local_qdrant() -> Iterator[None]:
    # Given a client, mem0 assumes a server and creates payload indexes; local mode warns
    # that they have no effect. Harmless, so silenced during construction only.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Pp]ayload index.*")
        yield


def build_memory(config: dict[str, Any], *, embedder: Any, llm: Any) -> Any:
    """``mem0.Memory.from_config(config)`` holding ``embedder`` and ``llm`` as its own.

    Mem0 builds an embedder and an LLM client per ``Memory`` (MiniLM loaded, an SSL context
    read, ~30 ms each time, and a store is opened for every clone); the backend builds them
    once and hands them to every Memory here.
    """
    from mem0.memory import main as mem0_main

    with _build_guard, _given_components(embedder, llm), _quiet_local_qdrant():
        return mem0_main.Memory.from_config(config)


def instrument_memory(
    memory: Any,
    *,
    client: Any,
    wrap_history: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> None:
    """Route Mem0's Qdrant calls through ``client`` and its history writes through
    ``wrap_history(add_history)`` (the backend times both; the objects stay Mem0's)."""
    memory.vector_store.client = client
    memory.db.add_history = wrap_history(memory.db.add_history)


def vector_client(memory: Any) -> Any:
    """The Qdrant client Mem0's Qdrant vector store holds."""
    return memory.vector_store.client


# --------------------------------------------------------------------------- history DB


def history_connection(memory: Any) -> sqlite3.Connection:
    """The sqlite connection of Mem0's history manager."""
    conn: sqlite3.Connection = memory.db.connection
    return conn


def history_lock(memory: Any) -> Any:
    """The lock Mem0's history manager holds around every use of its connection."""
    return memory.db._lock


@contextmanager
def locked_history(memory: Any) -> Iterator[sqlite3.Connection]:
    """The history connection, with Mem0's history lock held for the body."""
    with history_lock(memory):
        yield history_connection(memory)


def add_history_row(
    memory: Any, memory_id: str, old_memory: Any, new_memory: Any, event: str, **columns: Any
) -> None:
    """Append one row to Mem0's history table through Mem0's own ``add_history``."""
    memory.db.add_history(memory_id, old_memory, new_memory, event, **columns)


def secure_delete_history(memory: Any) -> None:
    """Deleted rows are overwritten with zeros, so removed text is not in free pages."""
    with locked_history(memory) as conn:
        conn.execute("PRAGMA secure_delete = ON")


def delete_history_rows(memory: Any, memory_ids: Sequence[str]) -> None:
    """Delete every history row of ``memory_ids`` in one transaction, then VACUUM."""
    with locked_history(memory) as conn:
        conn.execute("BEGIN")
        try:
            conn.executemany("DELETE FROM history WHERE memory_id = ?", [(i,) for i in memory_ids])
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
        conn.execute("VACUUM")


def copy_history(source: Any, target: Any) -> None:
    """Copy ``source``'s history DB over ``target``'s (sqlite backup API), both locked."""
    with history_lock(source), history_lock(target):
        history_connection(source).backup(history_connection(target))


# --------------------------------------------------------------------------- prompts

# Mem0's prompts and message rendering, as Mem0 sends them: Native dates the extraction
# prompt per conversation (place/agent/native.py) and the prompt-fit check measures them
# (place/runner/checks.py). Module-level names of 1.0.x, not a documented interface.


def user_memory_extraction_prompt() -> str:
    """`USER_MEMORY_EXTRACTION_PROMPT`: the fact extraction prompt of `Memory.add`."""
    from mem0.configs.prompts import USER_MEMORY_EXTRACTION_PROMPT

    return str(USER_MEMORY_EXTRACTION_PROMPT)


def fact_retrieval_prompt() -> str:
    """`FACT_RETRIEVAL_PROMPT`: Mem0's other extraction prompt (agent memories)."""
    from mem0.configs.prompts import FACT_RETRIEVAL_PROMPT

    return str(FACT_RETRIEVAL_PROMPT)


def update_memory_messages(
    retrieved: list[dict[str, Any]], new_facts: list[str], custom_prompt: str | None = None
) -> str:
    """The ADD/UPDATE/DELETE/NONE decision prompt `Memory.add` sends."""
    from mem0.configs.prompts import get_update_memory_messages

    return str(get_update_memory_messages(retrieved, new_facts, custom_prompt))


def render_messages(messages: list[dict[str, Any]]) -> str:
    """The dialogue as Mem0 renders it into the extraction prompt (`parse_messages`)."""
    from mem0.memory.utils import parse_messages

    return str(parse_messages(messages))


# --------------------------------------------------------------------------- add() hooks

#: Mem0's logger hierarchy; ``add(infer=True)`` logs (and swallows) unparsable LLM output.
MEM0_LOGGER = "mem0"


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(level=logging.WARNING)
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self._sink.append(f"{record.name}: {record.getMessage()}")


@contextmanager
def capture_mem0_log() -> Iterator[list[str]]:
    """Collect mem0's WARNING+ log messages emitted during the body (any thread)."""
    sink: list[str] = []
    logger = logging.getLogger(MEM0_LOGGER)
    handler = _ListHandler(sink)
    old_level = logger.level
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield sink
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


@contextmanager
def recording_llm(memory: Any) -> Iterator[list[str]]:
    """Collect the raw outputs of ``memory.llm.generate_response`` during the body.

    Wraps whatever LLM object the Memory holds at call time (e.g. a caching wrapper the
    runtime installed), so cache hits are recorded too; the wrapper is removed afterwards.
    """
    sink: list[str] = []
    llm = memory.llm
    had_own = "generate_response" in vars(llm)
    previous = llm.generate_response

    def recording(*args: Any, **kwargs: Any) -> Any:
        out = previous(*args, **kwargs)
        sink.append(out if isinstance(out, str) else repr(out))
        return out

    llm.generate_response = recording
    try:
        yield sink
    finally:
        if had_own:
            llm.generate_response = previous
        else:
            del llm.generate_response


def extraction_is_empty(raw: str) -> bool:
    """Whether a fact-extraction answer is empty once Mem0 strips its code fences (Mem0
    then reads it as "no facts" without logging anything)."""
    from mem0.memory.utils import remove_code_blocks

    return not str(remove_code_blocks(raw)).strip()


# --------------------------------------------------------------------------- local Qdrant


def _local_collections(client: Any) -> dict[str, Any] | None:
    # QdrantClient delegates to ``_client``: a QdrantLocal (with ``collections``, name ->
    # LocalCollection) in local mode, a QdrantRemote for a server.
    collections = getattr(getattr(client, "_client", None), "collections", None)
    return collections if isinstance(collections, dict) else None


def local_collection_names(client: Any) -> list[str]:
    """Names of the collections a local-mode client holds (empty for a server)."""
    collections = _local_collections(client)
    return list(collections) if collections is not None else []


def local_collection_sqlite(client: Any, name: str) -> sqlite3.Connection | None:
    """The sqlite file behind a local-mode collection (None for a server / in-memory).

    qdrant-client's local mode pickles each point into ``collection/<name>/
    storage.sqlite``; there is no public handle on it, hence the guarded lookup.
    """
    collections = _local_collections(client)
    coll = collections.get(name) if collections is not None else None
    conn = getattr(getattr(coll, "storage", None), "storage", None)
    return conn if isinstance(conn, sqlite3.Connection) else None


__all__ = [
    "MEM0_LOGGER",
    "SUPPORTED",
    "UnsupportedVersion",
    "add_history_row",
    "build_memory",
    "capture_mem0_log",
    "check_versions",
    "copy_history",
    "create_embedder",
    "create_llm",
    "delete_history_rows",
    "extraction_is_empty",
    "history_connection",
    "history_lock",
    "installed_version",
    "instrument_memory",
    "local_collection_names",
    "local_collection_sqlite",
    "locked_history",
    "mem0_telemetry_is_off",
    "mem0_telemetry_was_on",
    "recording_llm",
    "route_mem0_uuid",
    "secure_delete_history",
    "switch_mem0_telemetry_off",
    "vector_client",
]
