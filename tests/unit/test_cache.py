"""LLMCallCache, CachedChatModel and CachingMem0LLM with fake inner models."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from fakes.mem0_llm import FakeMem0LLM
from fakes.models import FakeChatModel

from place.runtime import CachedChatModel, CacheMiss, LLMCallCache, RetryPolicy, RuntimeUnavailable
from place.runtime.base import ChatModel
from place.runtime.mem0_llm import CachingMem0LLM, install_cache
from place.timing import PhaseTimer

MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]


def test_fake_is_a_chat_model() -> None:
    assert isinstance(FakeChatModel(), ChatModel)


def test_second_identical_call_is_a_hit(tmp_path: Path) -> None:
    inner = FakeChatModel()
    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        model = CachedChatModel(inner, cache, "model-A")
        first = model.complete(MSGS)
        second = model.complete(MSGS)
        assert first == second == "answer#1 to hello fmt=None"
        assert inner.calls == 1
        assert (cache.hits, cache.misses) == (1, 1)
        assert cache.stats()["entries"] == 1
        assert cache.timer.count("llm") == 1
        assert cache.timer.count("cache") == 1
        # A different response_format is a different call.
        model.complete(MSGS, response_format={"type": "json_object"})
        assert inner.calls == 2
        # An explicit max_tokens equal to the default is the same call as none.
        model.complete(MSGS, max_tokens=16)
        assert inner.calls == 2


def test_replay_only_miss_raises(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with LLMCallCache(path) as cache:
        CachedChatModel(FakeChatModel(), cache, "model-A").complete(MSGS)
    inner = FakeChatModel()
    with LLMCallCache(path, mode="replay-only") as cache:
        model = CachedChatModel(inner, cache, "model-A")
        assert model.complete(MSGS) == "answer#1 to hello fmt=None"  # recorded: replayed
        other = [{"role": "user", "content": "never recorded"}]
        key = LLMCallCache.key("model-A", other, {**inner.parameters, "response_format": None})
        with pytest.raises(CacheMiss) as err:
            model.complete(other)
        assert key in str(err.value)
        assert "replay-only" in str(err.value)
        assert inner.calls == 0
        assert cache.misses == 1


def test_replay_only_requires_existing_file(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="does not exist"):
        LLMCallCache(tmp_path / "absent.sqlite", mode="replay-only")


def test_keys_change_with_every_parameter() -> None:
    base_params = {"temperature": 0.0, "seed": 1, "max_tokens": 16, "response_format": None}
    base = LLMCallCache.key("model-A", MSGS, base_params)
    assert base == LLMCallCache.key("model-A", MSGS, dict(reversed(base_params.items())))
    variants = [
        LLMCallCache.key("model-A", MSGS, {**base_params, "temperature": 0.1}),
        LLMCallCache.key("model-A", MSGS, {**base_params, "seed": 2}),
        LLMCallCache.key("model-A", MSGS, {**base_params, "max_tokens": 17}),
        LLMCallCache.key("model-A", MSGS, {**base_params, "response_format": {"type": "json"}}),
        LLMCallCache.key("model-B", MSGS, base_params),
        LLMCallCache.key("model-A", [*MSGS, {"role": "user", "content": "x"}], base_params),
        LLMCallCache.key("model-A", [{"role": "user", "content": "hello!"}], base_params),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_cached_chat_model_keys_on_inner_parameters(tmp_path: Path) -> None:
    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        a, b = FakeChatModel(seed=1), FakeChatModel(seed=2)
        CachedChatModel(a, cache, "m").complete(MSGS)
        CachedChatModel(b, cache, "m").complete(MSGS)
        assert (a.calls, b.calls) == (1, 1)


def test_persistence_across_reopen_and_no_prompts_stored(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with LLMCallCache(path) as cache:
        CachedChatModel(FakeChatModel(), cache, "model-A").complete(MSGS)
    inner = FakeChatModel()
    with LLMCallCache(path) as cache:
        assert CachedChatModel(inner, cache, "model-A").complete(MSGS).startswith("answer#1")
        assert inner.calls == 0
        assert cache.hits == 1
    cols = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(llm_calls)")]
    assert cols == ["key", "response", "created", "meta"]
    assert b"sys" not in path.read_bytes()  # the system prompt is nowhere in the file


def test_store_is_committed_immediately(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = LLMCallCache(path)
    cache.get_or_call("k1", lambda: "v1")
    # A second connection sees the row before the first one is closed (as after a kill -9).
    assert sqlite3.connect(path).execute("SELECT response FROM llm_calls").fetchall() == [("v1",)]
    cache.close()


def test_failed_call_is_not_stored(tmp_path: Path) -> None:
    with LLMCallCache(tmp_path / "c.sqlite") as cache:

        def boom() -> str:
            raise RuntimeError("model crashed")

        with pytest.raises(RuntimeError, match="model crashed"):
            cache.get_or_call("k", boom)
        assert len(cache) == 0
        assert cache.get_or_call("k", lambda: "ok") == "ok"


# --- CachingMem0LLM -------------------------------------------------------------------------


def test_caching_mem0_llm_hit_and_miss(tmp_path: Path) -> None:
    inner = FakeMem0LLM.scripted(facts=["x"], mutate_messages=True)

    class FakeMemory:
        llm = inner

    memory = FakeMemory()
    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        wrapper = install_cache(memory, cache, "ident")
        assert isinstance(memory.llm, CachingMem0LLM)
        assert install_cache(memory, cache, "ident").inner is inner  # idempotent
        msgs = [{"role": "user", "content": "facts please"}]
        fmt = {"type": "json_object"}
        assert memory.llm.generate_response(messages=msgs, response_format=fmt) == (
            '{"facts": ["x"]}'
        )
        assert msgs[0]["content"] == "facts please"  # caller's messages left untouched
        assert memory.llm.generate_response(messages=msgs, response_format=fmt) == (
            '{"facts": ["x"]}'
        )
        assert len(inner.calls) == 1
        assert (cache.hits, cache.misses) == (1, 1)
        # Without response_format it is another call; tool-call dicts round-trip.
        memory.llm.generate_response(messages=msgs)
        tools = [{"type": "function", "function": {"name": "f"}}]
        out = memory.llm.generate_response(messages=msgs, tools=tools)
        assert out == {"content": None, "tool_calls": [{"name": "f", "arguments": {}}]}
        assert memory.llm.generate_response(messages=msgs, tools=tools) == out
        assert len(inner.calls) == 3
        assert wrapper.config is inner.config
    # A changed generation parameter in the Mem0 config is a new key.
    inner.config.max_tokens = 7
    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        install_cache(memory, cache, "ident")
        memory.llm.generate_response(messages=msgs, response_format=fmt)
        assert len(inner.calls) == 4
    with LLMCallCache(tmp_path / "c.sqlite", mode="replay-only") as cache:
        install_cache(memory, cache, "other-identity")
        with pytest.raises(CacheMiss):
            memory.llm.generate_response(messages=msgs, response_format=fmt)


def test_phase_timer() -> None:
    t = PhaseTimer()
    with pytest.raises(ValueError), t.measure("llm"):
        raise ValueError
    t.add("llm", 1.0)
    snap = t.snapshot()
    assert snap["llm"]["count"] == 2
    assert snap["llm"]["seconds"] >= 1.0


def test_caching_mem0_llm_retries_transport_errors(tmp_path: Path) -> None:
    sleeps: list[float] = []
    inner = FakeMem0LLM.flaky(failures=2, facts=["x"])
    policy = RetryPolicy(attempts=3, initial_backoff=0.001, sleep=sleeps.append)
    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        llm = CachingMem0LLM(inner, cache, "ident", retry=policy, endpoint="http://x/v1")
        assert llm.generate_response(messages=[{"role": "user", "content": "q"}]) == (
            '{"facts": ["x"]}'
        )
        llm.raise_pending()  # nothing pending
    assert len(inner.calls) == 3
    assert sleeps == [0.001, 0.002]


def test_caching_mem0_llm_records_failures_mem0_would_swallow(tmp_path: Path) -> None:
    inner = FakeMem0LLM.flaky(failures=10, facts=["x"])
    policy = RetryPolicy(attempts=2, initial_backoff=0.0, sleep=lambda _s: None)
    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        llm = CachingMem0LLM(inner, cache, "ident", retry=policy, endpoint="http://x/v1")
        # What mem0's Memory._add_to_vector_store does around the update-decision call.
        with contextlib.suppress(Exception):
            llm.generate_response(messages=[{"role": "user", "content": "q"}])
        with pytest.raises(RuntimeUnavailable, match="http://x/v1"):
            llm.raise_pending()
        llm.raise_pending()  # cleared after raising
        assert len(cache) == 0


def test_cache_identity_covers_weights_and_parameters_not_versions() -> None:
    from place.runtime import GenerationParameters, ModelIdentity

    base = ModelIdentity(
        runtime="llamacpp",
        name="m",
        identity="sha256:aa",
        runtime_version="0.3.36",
        embedder_name="e",
        embedder_identity="sha256:bb",
        embedding_dims=384,
        parameters=GenerationParameters(seed=1, max_tokens=8, context_size=2048),
    )
    same = base.model_copy(update={"runtime_version": "9.9", "embedder_identity": "sha256:cc"})
    assert same.cache_identity() == base.cache_identity()
    for update in (
        {"identity": "sha256:ab"},
        {"name": "m2"},
        {"parameters": GenerationParameters(seed=2, max_tokens=8, context_size=2048)},
        {"parameters": GenerationParameters(seed=1, max_tokens=9, context_size=2048)},
        {"parameters": GenerationParameters(seed=1, max_tokens=8, context_size=4096)},
    ):
        assert base.model_copy(update=update).cache_identity() != base.cache_identity()


def test_concurrent_callers_of_one_key_make_one_call(tmp_path: Path) -> None:
    """Single flight: what a sequential run does (one miss, then hits), at any concurrency."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    calls = []
    release = threading.Event()

    def slow() -> str:
        calls.append(1)
        release.wait(5)
        return "answer"

    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(cache.get_or_call, "k", slow) for _ in range(4)]
            while not calls:
                pass
            release.set()
            results = [f.result(timeout=10) for f in futures]
        assert results == ["answer"] * 4
        assert len(calls) == 1
        assert (cache.misses, cache.hits, len(cache)) == (1, 3, 1)


def test_a_failed_first_caller_lets_a_waiting_caller_call_again(tmp_path: Path) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    first_started, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def failing() -> str:
        calls.append("fail")
        first_started.set()
        release.wait(5)
        raise RuntimeError("model died")

    def working() -> str:
        calls.append("ok")
        return "answer"

    with LLMCallCache(tmp_path / "c.sqlite") as cache:
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(cache.get_or_call, "k", failing)
            first_started.wait(5)
            second = pool.submit(cache.get_or_call, "k", working)
            release.set()
            with pytest.raises(RuntimeError, match="model died"):
                first.result(timeout=10)
            assert second.result(timeout=10) == "answer"
        assert calls == ["fail", "ok"]
        assert cache.get("k") == "answer"


def test_meta_is_stored_beside_the_response_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    meta = {"finish": "length", "prompt_tokens": 12, "completion_tokens": 4}
    with LLMCallCache(path) as cache:
        assert cache.get_or_call_meta("k", lambda: ("cut", meta)) == ("cut", meta)
    with LLMCallCache(path, "replay-only") as cache:
        assert cache.get_or_call_meta("k", lambda: ("never", None)) == ("cut", meta)
        assert cache.get_or_call("k", lambda: "never") == "cut"


def test_a_cache_recorded_without_meta_replays_and_grows_the_column(tmp_path: Path) -> None:
    """Caches committed before finish reasons were kept: replay-only leaves the file as it
    is and reports meta as unknown; read-write adds the column and keeps old entries."""
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE llm_calls "
            "(key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL)"
        )
        db.execute("INSERT INTO llm_calls VALUES ('k', 'old answer', 0)")
    with LLMCallCache(path, "replay-only") as cache:
        assert cache.get_or_call_meta("k", lambda: ("never", None)) == ("old answer", None)
    cols = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(llm_calls)")]
    assert cols == ["key", "response", "created"]
    with LLMCallCache(path) as cache:
        assert cache.get_or_call_meta("k", lambda: ("never", None)) == ("old answer", None)
        assert cache.get_or_call_meta("k2", lambda: ("new", {"finish": "stop"})) == (
            "new",
            {"finish": "stop"},
        )
