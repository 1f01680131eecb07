"""OllamaRuntime against FakeOllamaServer (no real Ollama, no model)."""

from __future__ import annotations

import socket

import pytest
from fakes.ollama_server import FakeOllamaServer

from place.errors import PlaceError
from place.runtime import (
    ModelMissing,
    OllamaRuntime,
    RetryPolicy,
    RuntimeRequestError,
    RuntimeUnavailable,
)


def _tiny_retry(sleeps: list[float] | None = None, attempts: int = 3) -> RetryPolicy:
    record = sleeps if sleeps is not None else []
    return RetryPolicy(attempts=attempts, initial_backoff=0.001, sleep=record.append)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_chat_request_shape_and_identity() -> None:
    with FakeOllamaServer() as fake:
        rt = OllamaRuntime(base_url=fake.url, seed=7, max_tokens=33, retry=_tiny_retry())
        with rt:
            msgs = [{"role": "user", "content": "hi"}]
            assert rt.chat.complete(msgs) == "fake answer"
            assert rt.chat.complete(msgs, response_format={"type": "json_object"}) == (
                '{"facts": []}'
            )
            assert rt.chat.complete(msgs, max_tokens=5) == "fake answer"
            ident = rt.identity
        plain, as_json, short = fake.bodies("/api/chat")
        assert plain["model"] == "qwen2.5:7b"
        assert plain["messages"] == msgs
        assert plain["stream"] is False
        assert plain["options"] == {"temperature": 0.0, "seed": 7, "num_predict": 33}
        assert "format" not in plain
        assert as_json["format"] == "json"
        assert short["options"]["num_predict"] == 5
        # Digests come from /api/tags; `nomic-embed-text` matches `nomic-embed-text:latest`.
        assert ident.runtime == "ollama"
        assert ident.identity == "sha256-fake-qwen"
        assert ident.embedder_identity == "sha256-fake-nomic"
        assert ident.runtime_version == "0.0.0-fake"
        assert ident.parameters.seed == 7
        assert ident.parameters.temperature == 0.0


def test_mem0_configs() -> None:
    rt = OllamaRuntime(base_url="http://127.0.0.1:11434/", max_tokens=100)
    assert rt.mem0_llm_config() == {
        "provider": "ollama",
        "config": {
            "model": "qwen2.5:7b",
            "ollama_base_url": "http://127.0.0.1:11434",
            "temperature": 0.0,
            "max_tokens": 100,
        },
    }
    assert rt.mem0_embedder_config() == {
        "provider": "ollama",
        "config": {
            "model": "nomic-embed-text",
            "ollama_base_url": "http://127.0.0.1:11434",
            "embedding_dims": 768,
        },
    }
    assert rt.embedding_dims == 768


def test_mem0_configs_are_accepted_by_mem0_config_classes() -> None:
    from mem0.configs.embeddings.base import BaseEmbedderConfig
    from mem0.configs.llms.ollama import OllamaConfig

    rt = OllamaRuntime()
    OllamaConfig(**rt.mem0_llm_config()["config"])
    BaseEmbedderConfig(**rt.mem0_embedder_config()["config"])


def test_server_down_names_url_and_how_to_start() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    sleeps: list[float] = []
    rt = OllamaRuntime(base_url=url, retry=_tiny_retry(sleeps))
    with pytest.raises(RuntimeUnavailable) as err:
        rt.start()
    msg = str(err.value)
    assert url in msg
    assert "ollama serve" in msg
    assert len(sleeps) == 2  # 3 attempts, 2 back-offs, then a clear error
    rt.close()


def test_model_missing_names_pull_command() -> None:
    with FakeOllamaServer(models={"nomic-embed-text:latest": "d1"}) as fake:
        rt = OllamaRuntime(base_url=fake.url, retry=_tiny_retry())
        with pytest.raises(ModelMissing) as err:
            rt.start()
        assert "ollama pull qwen2.5:7b" in str(err.value)
        assert isinstance(err.value, PlaceError)
        rt.close()


def test_embedder_missing_names_pull_command() -> None:
    with FakeOllamaServer(models={"qwen2.5:7b": "d1"}) as fake:
        rt = OllamaRuntime(base_url=fake.url, retry=_tiny_retry())
        with pytest.raises(ModelMissing) as err:
            rt.start()
        assert "ollama pull nomic-embed-text" in str(err.value)
        assert "ollama pull qwen2.5:7b" not in str(err.value)
        rt.close()


def test_both_missing_lists_both_commands() -> None:
    with FakeOllamaServer(models={}) as fake:
        rt = OllamaRuntime(base_url=fake.url, retry=_tiny_retry())
        with pytest.raises(ModelMissing) as err:
            rt.start()
        assert "ollama pull qwen2.5:7b" in str(err.value)
        assert "ollama pull nomic-embed-text" in str(err.value)
        rt.close()


def test_retries_with_backoff_then_succeeds() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=4, initial_backoff=0.001, multiplier=2.0, sleep=sleeps.append)
    with FakeOllamaServer() as fake:
        with OllamaRuntime(base_url=fake.url, retry=policy) as rt:
            fake.drop_next["/api/chat"] = 2
            assert rt.chat.complete([{"role": "user", "content": "x"}]) == "fake answer"
        assert len(fake.bodies("/api/chat")) == 3
    assert sleeps == [0.001, 0.002]


def test_retries_exhausted_raise_runtime_unavailable() -> None:
    with FakeOllamaServer() as fake:
        with OllamaRuntime(base_url=fake.url, retry=_tiny_retry(attempts=2)) as rt:
            fake.drop_next["/api/chat"] = 5
            with pytest.raises(RuntimeUnavailable) as err:
                rt.chat.complete([{"role": "user", "content": "x"}])
        assert fake.url + "/api/chat" in str(err.value)
        assert err.value.endpoint == fake.url + "/api/chat"
        assert len(fake.bodies("/api/chat")) == 2


def test_http_error_is_not_swallowed() -> None:
    with FakeOllamaServer() as fake:
        with OllamaRuntime(base_url=fake.url, retry=_tiny_retry()) as rt:
            fake.models.clear()  # model vanished after preflight: the server answers 404
            with pytest.raises(PlaceError, match="404"):
                rt.chat.complete([{"role": "user", "content": "x"}])
        assert len(fake.bodies("/api/chat")) == 1  # HTTP errors are answers: no retry


def test_a_vanished_model_is_model_missing_and_other_errors_are_request_errors() -> None:
    def broken(body: dict) -> str:
        raise RuntimeError("script broke")

    with FakeOllamaServer() as fake, OllamaRuntime(base_url=fake.url, retry=_tiny_retry()) as rt:
        fake.models.clear()
        with pytest.raises(ModelMissing, match=r"HTTP 404: model 'qwen2\.5:7b' not found"):
            rt.chat.complete([{"role": "user", "content": "x"}])
    with (
        FakeOllamaServer(script=broken) as fake,
        OllamaRuntime(base_url=fake.url, retry=_tiny_retry()) as rt,
        pytest.raises(RuntimeRequestError, match="HTTP 500: fake ollama script failed"),
    ):
        rt.chat.complete([{"role": "user", "content": "x"}])
    assert len(fake.bodies("/api/chat")) == 1  # a 500 is an answer too: no retry


def test_requests_go_through_the_official_client(monkeypatch) -> None:
    import ollama

    sent: list[str] = []
    for method in ("chat", "list", "show", "ps"):
        original = getattr(ollama.Client, method)

        def spy(self, *args, _original=original, _method=method, **kwargs):
            sent.append(_method)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(ollama.Client, method, spy)
    with FakeOllamaServer() as fake:
        rt = OllamaRuntime(base_url=fake.url, num_ctx=4096, retry=_tiny_retry())
        rt.doctor()
        with rt:
            rt.chat.complete([{"role": "user", "content": "x"}])
    assert {"chat", "list", "show", "ps"} <= set(sent)


def test_preflight_returns_its_note_and_records_the_identity() -> None:
    with FakeOllamaServer() as fake:
        rt = OllamaRuntime(base_url=fake.url, retry=_tiny_retry())
        assert rt.preflight() == "Ollama ready"
        assert rt.identity.runtime == "ollama"
        assert [r.path for r in fake.requests] == ["/api/version", "/api/tags"]
        rt.close()


def test_mem0_ollama_provider_against_fake_sends_no_seed() -> None:
    # Documents mem0 1.0.x: its OllamaLLM sends temperature/num_predict/top_p, never a seed,
    # and appends a JSON instruction to the prompt; the call cache is what pins answers.
    from mem0.utils.factory import LlmFactory

    with FakeOllamaServer() as fake:
        rt = OllamaRuntime(base_url=fake.url, max_tokens=50, retry=_tiny_retry())
        cfg = rt.mem0_llm_config()
        llm = LlmFactory.create(cfg["provider"], dict(cfg["config"]))
        out = llm.generate_response(
            messages=[{"role": "user", "content": "facts?"}],
            response_format={"type": "json_object"},
        )
        assert out == '{"facts": []}'
        (body,) = fake.bodies("/api/chat")
        assert body["format"] == "json"
        assert body["options"]["temperature"] == 0.0
        assert body["options"]["num_predict"] == 50
        assert "seed" not in body["options"]


def test_generate_reports_done_reason_counts_and_a_full_context() -> None:
    def script(body: dict) -> str | tuple[str, str]:
        return ("cut reply", "length") if "cut" in body["messages"][-1]["content"] else "ok"

    with (
        FakeOllamaServer(script=script) as fake,
        OllamaRuntime(base_url=fake.url, num_ctx=64, retry=_tiny_retry()) as rt,
    ):
        done = rt.chat.generate([{"role": "user", "content": "say something"}])
        cut = rt.chat.generate([{"role": "user", "content": "cut it"}])
        # The fake counts prompt tokens as words: 70 words fill a 64-token window.
        full = rt.chat.generate([{"role": "user", "content": " ".join(["w"] * 70)}])
    assert (done.text, done.finish, done.truncated) == ("ok", "stop", False)
    assert (done.prompt_tokens, done.completion_tokens) == (2, 1)
    assert (cut.finish, cut.truncated) == ("length", True)
    assert (full.finish, full.truncated) == ("context", True)
    assert all(o["num_ctx"] == 64 for o in fake.chat_options())


def test_model_names_match_without_case() -> None:
    with (
        FakeOllamaServer() as fake,
        OllamaRuntime("Qwen2.5:7B", "Nomic-Embed-Text", base_url=fake.url) as rt,
    ):
        assert rt.identity.identity == "sha256-fake-qwen"


def test_preflight_refuses_a_context_beyond_the_model() -> None:
    with FakeOllamaServer(context_length=4096) as fake:
        with pytest.raises(PlaceError, match=r"n_ctx=8192 exceeds .* \(4096 tokens\)"):
            OllamaRuntime(base_url=fake.url, num_ctx=8192, retry=_tiny_retry()).preflight()
        OllamaRuntime(base_url=fake.url, num_ctx=4096, retry=_tiny_retry()).preflight()


def test_doctor_reports_what_a_run_gets() -> None:
    with FakeOllamaServer(context_length=32768, default_num_ctx=2048) as fake:
        rt = OllamaRuntime(base_url=fake.url, num_ctx=8192, seed=3, retry=_tiny_retry())
        before = rt.doctor()
        with rt:
            rt.chat.complete([{"role": "user", "content": "load the model"}])
            after = rt.doctor()
        unset = OllamaRuntime(base_url=fake.url, retry=_tiny_retry()).doctor()
    assert before["model_context_length"] == 32768
    assert before["modelfile_num_ctx"] == 2048
    assert (before["run_num_ctx"], before["run_seed"]) == (8192, 3)
    assert (before["loaded"], before["loaded_context_length"]) == (False, None)
    assert (after["loaded"], after["loaded_context_length"]) == (True, 8192)
    assert before["problems"] == []
    assert unset["problems"] == [
        "n_ctx is not set: requests would run at the server's default context window"
    ]
