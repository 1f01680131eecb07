"""The library compatibility layer (place/memory/mem0_compat.py).

The version gate is tested with a FAKE version lookup (no package is installed or removed);
the reaches into Mem0 and qdrant-client are tested against the installed libraries, without
MiniLM or an LLM, so a library upgrade that moves them fails here first.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fakes.mem0_llm import FakeMem0LLM
from fakes.models import FakeEmbedder
from fakes.versions import FakeVersionLookup

from place.errors import PlaceError
from place.memory import mem0_compat
from place.memory.mem0_compat import UnsupportedVersion, check_versions


def _fake_versions(monkeypatch: pytest.MonkeyPatch, **versions: str | None) -> None:
    monkeypatch.setattr(mem0_compat, "installed_version", FakeVersionLookup(**versions))


# --------------------------------------------------------------------------- versions


def test_installed_versions_are_supported() -> None:
    check_versions()  # the environment the project pins must pass its own gate


@pytest.mark.parametrize(
    ("mem0ai", "qdrant_client"),
    [("1.0.11", "1.10.0"), ("1.0.11", "1.20.0"), ("1.0.12", "1.20.9")],
)
def test_versions_in_range_pass(
    monkeypatch: pytest.MonkeyPatch, mem0ai: str, qdrant_client: str
) -> None:
    _fake_versions(monkeypatch, mem0ai=mem0ai, qdrant_client=qdrant_client)
    check_versions()


@pytest.mark.parametrize(
    ("dist", "version", "supported"),
    [
        ("mem0ai", "1.0.10", "mem0ai>=1.0.11,<1.1.0"),  # no Memory.close()
        ("mem0ai", "1.1.0", "mem0ai>=1.0.11,<1.1.0"),
        ("mem0ai", "2.0.18", "mem0ai>=1.0.11,<1.1.0"),
        ("qdrant-client", "1.9.2", "qdrant-client>=1.10.0,<1.21.0"),  # no query_points
        ("qdrant-client", "1.21.0", "qdrant-client>=1.10.0,<1.21.0"),
        ("qdrant-client", "2.0", "qdrant-client>=1.10.0,<1.21.0"),
    ],
)
def test_versions_out_of_range_are_refused_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, dist: str, version: str, supported: str
) -> None:
    _fake_versions(monkeypatch, **{dist.replace("-", "_"): version})
    with pytest.raises(UnsupportedVersion) as err:
        check_versions()
    message = str(err.value)
    assert f"{dist} {version} is installed" in message
    assert f"PLACE supports {supported}" in message
    # A PlaceError: the CLI prints it and exits 2, no traceback.
    assert isinstance(err.value, PlaceError)


def test_every_problem_is_reported_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_versions(monkeypatch, mem0ai="2.0.0", qdrant_client="1.9.0")
    with pytest.raises(UnsupportedVersion, match=r"mem0ai 2\.0\.0 .*qdrant-client 1\.9\.0"):
        check_versions()


@pytest.mark.parametrize(
    ("version", "expected"),
    [(None, "mem0ai is not installed"), ("unknown", "mem0ai unknown is installed")],
)
def test_missing_or_unreadable_versions_are_refused(
    monkeypatch: pytest.MonkeyPatch, version: str | None, expected: str
) -> None:
    _fake_versions(monkeypatch, mem0ai=version)
    with pytest.raises(UnsupportedVersion, match=expected):
        check_versions()


def test_release_parsing() -> None:
    assert mem0_compat._release("1.0.11") == (1, 0, 11)
    assert mem0_compat._release("1.21") == (1, 21, 0)
    assert mem0_compat._release("1.0.11rc1") == (1, 0, 11)
    assert mem0_compat._release("1.20.0.post1") == (1, 20, 0)
    assert mem0_compat._release("dev") is None


def test_backend_checks_versions_before_touching_anything(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from place.memory import Backend

    _fake_versions(monkeypatch, mem0ai="1.1.0")
    run_dir = tmp_path / "run"
    with pytest.raises(UnsupportedVersion, match=r"mem0ai 1\.1\.0 is installed"):
        Backend(run_dir, {"provider": "openai"}, {"provider": "huggingface"}, 384)
    assert not run_dir.exists()  # no folder, no Qdrant client, no model


# --------------------------------------------------------------------------- Mem0 reaches


def _config(tmp_path: Path, client: Any) -> dict[str, Any]:
    return {
        "version": "v1.1",
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "compat",
                "embedding_model_dims": 4,
                "client": client,
                "path": str(tmp_path / "qdrant"),  # only read without a client
                "on_disk": False,
            },
        },
        # Providers Mem0 would build (and fail to reach); the injected ones are used instead.
        "llm": {"provider": "openai", "config": {"api_key": "sk-unused"}},
        "embedder": {"provider": "huggingface", "config": {"embedding_dims": 4}},
        "history_db_path": str(tmp_path / "history.db"),
    }


def test_build_memory_injects_components_and_restores_the_factories(tmp_path: Path) -> None:
    from mem0.memory import main as mem0_main
    from mem0.utils import factory
    from qdrant_client import QdrantClient

    client = QdrantClient(location=":memory:")
    embedder, llm = FakeEmbedder(), FakeMem0LLM.scripted()
    memory = mem0_compat.build_memory(_config(tmp_path, client), embedder=embedder, llm=llm)
    try:
        assert memory.embedding_model is embedder
        assert memory.llm is llm
        assert mem0_compat.vector_client(memory) is client
        assert mem0_main.EmbedderFactory is factory.EmbedderFactory
        assert mem0_main.LlmFactory is factory.LlmFactory
        # The history manager's connection and lock, as the store uses them.
        with mem0_compat.locked_history(memory) as conn:
            assert isinstance(conn, sqlite3.Connection)
            assert mem0_compat.history_lock(memory).locked()
        assert not mem0_compat.history_lock(memory).locked()
    finally:
        memory.close()
        client.close()


def test_build_memory_restores_the_factories_when_mem0_fails(tmp_path: Path) -> None:
    from mem0.memory import main as mem0_main
    from mem0.utils import factory

    config = _config(tmp_path, None)
    config["vector_store"]["provider"] = "no-such-store"
    with pytest.raises(ValueError, match="no-such-store"):
        mem0_compat.build_memory(config, embedder=FakeEmbedder(), llm=FakeMem0LLM.scripted())
    assert mem0_main.EmbedderFactory is factory.EmbedderFactory
    assert mem0_main.LlmFactory is factory.LlmFactory


def test_recording_llm_and_log_capture(tmp_path: Path) -> None:
    import logging

    class Holder:
        llm = FakeMem0LLM.scripted()

    holder = Holder()
    with mem0_compat.recording_llm(holder) as raw, mem0_compat.capture_mem0_log() as log:
        holder.llm.generate_response([])
        logging.getLogger("mem0.memory.main").error("Error in new_retrieved_facts: x")
    assert raw == ['{"facts": []}']
    assert log == ["mem0.memory.main: Error in new_retrieved_facts: x"]
    assert "generate_response" not in vars(holder.llm)
    assert mem0_compat.extraction_is_empty("```json\n\n```")
    assert mem0_compat.extraction_is_empty("<think>no facts</think>")
    assert not mem0_compat.extraction_is_empty('{"facts": []}')


# --------------------------------------------------------------------------- local Qdrant


def test_local_collection_sqlite_finds_the_local_mode_file(tmp_path: Path) -> None:
    from qdrant_client import QdrantClient, models

    params = models.VectorParams(size=4, distance=models.Distance.COSINE)
    local = QdrantClient(path=str(tmp_path / "qdrant"))
    memory = QdrantClient(location=":memory:")
    try:
        for client in (local, memory):
            client.create_collection("c", vectors_config=params)
        conn = mem0_compat.local_collection_sqlite(local, "c")
        assert isinstance(conn, sqlite3.Connection)
        files = [row[2] for row in conn.execute("PRAGMA database_list").fetchall()]
        assert files == [str(tmp_path / "qdrant" / "collection" / "c" / "storage.sqlite")]
        assert mem0_compat.local_collection_names(local) == ["c"]
        assert mem0_compat.local_collection_sqlite(local, "missing") is None
        # In memory (and on a server) there is no file.
        assert mem0_compat.local_collection_sqlite(memory, "c") is None
    finally:
        local.close()
        memory.close()


def test_the_declared_dependency_ranges_are_the_supported_ranges() -> None:
    """pyproject.toml must not let pip install a release the version gate then refuses (or
    refuse one it supports): the declared specifier admits exactly [low, high)."""
    import tomllib
    from pathlib import Path

    from packaging.requirements import Requirement

    from place.memory.mem0_compat import SUPPORTED

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    declared = {
        (r := Requirement(dep)).name: r.specifier for dep in project["project"]["dependencies"]
    }

    def version(parts: tuple[int, ...]) -> str:
        return ".".join(map(str, parts))

    for dist, (low, high) in SUPPORTED.items():
        spec = declared[dist]
        below_low = (*low[:-1], low[-1] - 1) if low[-1] else (*low[:-2], low[-2] - 1, 99)
        below_high = (*high[:-1], high[-1] - 1) if high[-1] else (*high[:-2], high[-2] - 1, 99)
        assert version(low) in spec and version(below_high) in spec, (dist, str(spec))
        assert version(high) not in spec and version(below_low) not in spec, (dist, str(spec))
