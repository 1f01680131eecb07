"""The FAKE Ollama server speaks the Ollama wire protocol (docs/api.md, api/types.go): streaming
NDJSON, done_reason and counts, 404s for unknown models, embeddings, /api/ps and /api/show."""

from __future__ import annotations

import json
import math

import httpx
import pytest
from fakes.ollama_server import FakeOllamaServer

MODEL = "qwen2.5:7b"
EMBEDDER = "nomic-embed-text"


def _chat(url: str, content: str = "hello there", **extra) -> httpx.Response:
    body = {"model": MODEL, "messages": [{"role": "user", "content": content}], **extra}
    return httpx.post(f"{url}/api/chat", json=body, timeout=10)


def _lines(resp: httpx.Response) -> list[dict]:
    return [json.loads(line) for line in resp.text.splitlines()]


def test_chat_streams_ndjson_by_default() -> None:
    with FakeOllamaServer(reply="Sam lives in Paris now") as fake:
        resp = _chat(fake.url, "where does Sam live")
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/x-ndjson"
    lines = _lines(resp)
    *chunks, last = lines
    assert [c["message"]["content"] for c in chunks] == ["Sam ", "lives ", "in ", "Paris ", "now"]
    assert all(c["done"] is False and c["model"] == MODEL for c in chunks)
    assert all(c["message"]["role"] == "assistant" for c in chunks)
    assert all(c["created_at"].endswith("Z") for c in lines)
    assert "done_reason" not in chunks[0]
    assert last["message"] == {"role": "assistant", "content": ""}
    assert last["done"] is True
    assert last["done_reason"] == "stop"
    assert last["prompt_eval_count"] == 4
    assert last["eval_count"] == 5
    assert isinstance(last["total_duration"], int) and last["total_duration"] > 0


def test_stream_true_streams_and_keeps_all_whitespace() -> None:
    with FakeOllamaServer(reply="  two  spaces\nand a newline ") as fake:
        lines = _lines(_chat(fake.url, stream=True))
    pieces = [x["message"]["content"] for x in lines]
    assert pieces == ["  two  ", "spaces\n", "and ", "a ", "newline ", ""]
    assert lines[-1]["eval_count"] == 5


def test_stream_false_answers_one_object() -> None:
    with FakeOllamaServer(reply="fake answer") as fake:
        resp = _chat(fake.url, "a b c", stream=False)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert body["message"] == {"role": "assistant", "content": "fake answer"}
    assert body["done"] is True
    assert body["done_reason"] == "stop"
    assert body["prompt_eval_count"] == 3
    assert body["eval_count"] == 2
    assert body["model"] == MODEL


def test_prompt_eval_count_spans_all_messages() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "one two three"},
        {"role": "assistant", "content": "ok"},
    ]
    with FakeOllamaServer() as fake:
        resp = httpx.post(
            f"{fake.url}/api/chat",
            json={"model": MODEL, "messages": messages, "stream": False},
            timeout=10,
        )
    assert resp.json()["prompt_eval_count"] == 6


def test_json_format_uses_json_reply() -> None:
    with FakeOllamaServer(json_reply='{"facts": ["x"]}') as fake:
        body = _chat(fake.url, stream=False, format="json").json()
    assert body["message"]["content"] == '{"facts": ["x"]}'


def test_script_sets_content_and_done_reason_for_every_chat() -> None:
    seen: list[dict] = []

    def script(body: dict) -> str | tuple[str, str]:
        seen.append(body)
        if body.get("format") == "json":
            return '{"facts": ["Sam', "length"
        return "scripted " + body["messages"][-1]["content"]

    with FakeOllamaServer(script=script, reply="unused", echo=True) as fake:
        cut = _chat(fake.url, stream=False, format="json").json()
        streamed = _lines(_chat(fake.url, "hi"))
    assert cut["message"]["content"] == '{"facts": ["Sam'
    assert cut["done_reason"] == "length"
    assert cut["eval_count"] == 2
    assert "".join(x["message"]["content"] for x in streamed) == "scripted hi"
    assert streamed[-1]["done_reason"] == "stop"
    assert [b.get("format") for b in seen] == ["json", None]


def test_script_that_raises_answers_500() -> None:
    def script(body: dict) -> str:
        raise KeyError("nope")

    with FakeOllamaServer(script=script) as fake:
        resp = _chat(fake.url, stream=False)
    assert resp.status_code == 500
    assert "KeyError" in resp.json()["error"]


def test_chat_options_are_recorded_in_order() -> None:
    with FakeOllamaServer() as fake:
        _chat(fake.url, stream=False, options={"temperature": 0.0, "seed": 7, "num_predict": 5})
        _chat(fake.url, stream=False)
        _chat(fake.url, options={"num_ctx": 4096})
        httpx.post(f"{fake.url}/api/embed", json={"model": EMBEDDER, "input": "x"}, timeout=10)
        assert fake.chat_options() == [
            {"temperature": 0.0, "seed": 7, "num_predict": 5},
            {},
            {"num_ctx": 4096},
        ]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/chat", {"messages": [{"role": "user", "content": "x"}]}),
        ("/api/chat", {"messages": [{"role": "user", "content": "x"}], "stream": False}),
        ("/api/generate", {"prompt": "x"}),
        ("/api/embed", {"input": "x"}),
        ("/api/embeddings", {"prompt": "x"}),
        ("/api/show", {}),
    ],
)
def test_unknown_model_is_404_on_every_model_endpoint(path: str, body: dict) -> None:
    with FakeOllamaServer() as fake:
        resp = httpx.post(f"{fake.url}{path}", json={"model": "llama3:8b", **body}, timeout=10)
    assert resp.status_code == 404
    assert resp.json() == {"error": "model 'llama3:8b' not found"}


def test_show_accepts_the_legacy_name_field() -> None:
    with FakeOllamaServer() as fake:
        ok = httpx.post(f"{fake.url}/api/show", json={"name": MODEL}, timeout=10)
        missing = httpx.post(f"{fake.url}/api/show", json={"name": "nope"}, timeout=10)
    assert ok.status_code == 200
    assert missing.status_code == 404
    assert missing.json() == {"error": "model 'nope' not found"}


@pytest.mark.parametrize(
    "name", ["Qwen2.5:7B", "QWEN2.5:7b", "Nomic-Embed-Text", "nomic-embed-text:LATEST"]
)
def test_model_names_match_case_insensitively_and_default_to_latest(name: str) -> None:
    with FakeOllamaServer() as fake:
        resp = httpx.post(f"{fake.url}/api/show", json={"model": name}, timeout=10)
    assert resp.status_code == 200


def test_a_missing_tag_is_latest_not_any_tag() -> None:
    with FakeOllamaServer() as fake:
        resp = _chat(fake.url, stream=False)
        assert resp.status_code == 200
        bare = httpx.post(
            f"{fake.url}/api/chat",
            json={"model": "qwen2.5", "messages": [{"role": "user", "content": "x"}]},
            timeout=10,
        )
    assert bare.status_code == 404  # `qwen2.5` means `qwen2.5:latest`, not `qwen2.5:7b`


def test_generate_streams_response_pieces() -> None:
    with FakeOllamaServer(reply="fake answer") as fake:
        resp = httpx.post(
            f"{fake.url}/api/generate", json={"model": MODEL, "prompt": "say it"}, timeout=10
        )
        single = httpx.post(
            f"{fake.url}/api/generate",
            json={"model": MODEL, "prompt": "say it", "stream": False},
            timeout=10,
        ).json()
    assert resp.headers["content-type"] == "application/x-ndjson"
    *chunks, last = _lines(resp)
    assert [c["response"] for c in chunks] == ["fake ", "answer"]
    assert last["response"] == "" and last["done"] is True and last["done_reason"] == "stop"
    assert single["response"] == "fake answer"
    assert (single["prompt_eval_count"], single["eval_count"]) == (2, 2)


def _embed(url: str, inputs) -> httpx.Response:
    return httpx.post(f"{url}/api/embed", json={"model": EMBEDDER, "input": inputs}, timeout=10)


def test_embed_empty_list_gives_no_embeddings() -> None:
    with FakeOllamaServer() as fake:
        resp = _embed(fake.url, [])
    assert resp.status_code == 200
    assert resp.json() == {"model": EMBEDDER, "embeddings": []}


def test_embed_string_gives_one_vector_and_list_one_per_item() -> None:
    with FakeOllamaServer(embedding_dims=16) as fake:
        one = _embed(fake.url, "Sam lives in Paris").json()
        many = _embed(fake.url, ["Sam lives in Paris", "Ana likes tea", "Sam lives in Paris"])
    assert one["model"] == EMBEDDER
    assert len(one["embeddings"]) == 1 and len(one["embeddings"][0]) == 16
    vectors = many.json()["embeddings"]
    assert len(vectors) == 3
    assert vectors[0] == vectors[2] == one["embeddings"][0]
    assert vectors[0] != vectors[1]


@pytest.mark.parametrize("echo", [False, True])
def test_embeddings_are_nonzero_unit_vectors_in_every_mode(echo: bool) -> None:
    with FakeOllamaServer(echo=echo) as fake:
        vectors = _embed(fake.url, ["alpha beta", "gamma", "...", ""]).json()["embeddings"]
        again = _embed(fake.url, "alpha beta").json()["embeddings"][0]
    assert len(vectors) == 4
    for v in vectors:
        assert len(v) == 768
        assert any(x != 0.0 for x in v)
        assert math.isclose(math.fsum(x * x for x in v), 1.0, rel_tol=1e-9)
    assert again == vectors[0]
    assert vectors[0] != vectors[1]
    assert vectors[2] == vectors[3] == [1.0] + [0.0] * 767  # no words: a fixed unit vector


def test_embed_shared_words_are_more_similar() -> None:
    with FakeOllamaServer() as fake:
        a, b, c = _embed(fake.url, ["Sam lives in Paris", "Sam lives in Rome", "tea cups"]).json()[
            "embeddings"
        ]

    def cos(x: list[float], y: list[float]) -> float:
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert cos(a, b) > cos(a, c)
    assert cos(a, b) == pytest.approx(0.75)  # 3 of 4 words shared, no hash collisions


def test_legacy_embeddings_endpoint() -> None:
    with FakeOllamaServer(embedding_dims=8) as fake:
        body = httpx.post(
            f"{fake.url}/api/embeddings", json={"model": EMBEDDER, "prompt": "Sam"}, timeout=10
        ).json()
        modern = _embed(fake.url, "Sam").json()["embeddings"][0]
    assert list(body) == ["embedding"]
    assert body["embedding"] == modern
    assert math.isclose(math.fsum(x * x for x in body["embedding"]), 1.0)


def test_ps_lists_models_loaded_by_requests() -> None:
    with FakeOllamaServer(context_length=8192, default_num_ctx=2048) as fake:
        assert httpx.get(f"{fake.url}/api/ps", timeout=10).json() == {"models": []}
        _chat(fake.url, stream=False, options={"num_ctx": 4096})
        after_chat = httpx.get(f"{fake.url}/api/ps", timeout=10).json()["models"]
        _embed(fake.url, "x")
        after_embed = httpx.get(f"{fake.url}/api/ps", timeout=10).json()["models"]
    assert len(after_chat) == 1
    entry = after_chat[0]
    assert entry["name"] == entry["model"] == MODEL
    assert entry["digest"] == "sha256-fake-qwen"
    assert entry["context_length"] == 4096
    assert entry["size"] == 1 and entry["size_vram"] == 0
    assert entry["expires_at"].endswith("Z")
    by_name = {m["name"]: m for m in after_embed}
    assert set(by_name) == {MODEL, "nomic-embed-text:latest"}
    assert by_name["nomic-embed-text:latest"]["context_length"] == 2048
    assert by_name["nomic-embed-text:latest"]["digest"] == "sha256-fake-nomic"


def test_ps_context_is_clamped_to_the_model_context() -> None:
    with FakeOllamaServer(context_length=8192) as fake:
        _chat(fake.url, stream=False, options={"num_ctx": 100_000})
        (entry,) = httpx.get(f"{fake.url}/api/ps", timeout=10).json()["models"]
    assert entry["context_length"] == 8192


def test_show_reports_details_model_info_and_parameters() -> None:
    with FakeOllamaServer() as fake:
        body = httpx.post(f"{fake.url}/api/show", json={"model": MODEL}, timeout=10).json()
    assert body["details"]["family"] == "fake"
    assert body["details"]["parameter_size"] == "7B"
    assert body["details"]["quantization_level"] == "Q4_K_M"
    assert body["model_info"]["general.architecture"] == "qwen2"
    assert body["model_info"]["qwen2.context_length"] == 32768
    assert body["parameters"] == "num_ctx 2048"


def test_show_context_and_parameters_are_configurable() -> None:
    with FakeOllamaServer(context_length=4096, default_num_ctx=1024) as fake:
        body = httpx.post(f"{fake.url}/api/show", json={"model": MODEL}, timeout=10).json()
    assert body["model_info"]["qwen2.context_length"] == 4096
    assert body["parameters"] == "num_ctx 1024"


@pytest.mark.parametrize("stream", [True, False])
def test_drop_next_and_latency_work_in_both_stream_modes(stream: bool) -> None:
    with FakeOllamaServer(latency=0.05) as fake:
        fake.drop_next["/api/chat"] = 1
        with pytest.raises(httpx.TransportError):
            _chat(fake.url, stream=stream)
        resp = _chat(fake.url, stream=stream)
        assert resp.status_code == 200
        assert len(fake.bodies("/api/chat")) == 2
        assert fake.max_chats_in_flight == 1
        assert fake.chats_in_flight == 0
    final = resp.json() if not stream else _lines(resp)[-1]
    assert final["total_duration"] >= 50_000_000  # the latency is part of the request


def test_the_official_ollama_client_parses_the_fake() -> None:
    ollama = pytest.importorskip("ollama")
    with FakeOllamaServer(reply="one two three") as fake:
        client = ollama.Client(host=fake.url)
        parts = list(
            client.chat(model=MODEL, messages=[{"role": "user", "content": "x"}], stream=True)
        )
        whole = client.chat(model=MODEL, messages=[{"role": "user", "content": "x"}])
        embedded = client.embed(model=EMBEDDER, input=["a", "b"])
        shown = client.show(MODEL)
        running = client.ps()
        with pytest.raises(ollama.ResponseError) as err:
            client.chat(model="missing", messages=[{"role": "user", "content": "x"}])
    assert "".join(p.message.content for p in parts) == "one two three"
    assert parts[-1].done and parts[-1].done_reason == "stop"
    assert whole.message.content == "one two three" and whole.eval_count == 3
    assert len(embedded.embeddings) == 2
    assert shown.details.family == "fake"
    assert {m.model for m in running.models} == {MODEL, "nomic-embed-text:latest"}
    assert err.value.status_code == 404
