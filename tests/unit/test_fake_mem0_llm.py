"""The FAKE Mem0 LLM itself (tests/fakes/mem0_llm.py): the one stand-in for Mem0's LLM."""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

import pytest
from fakes.mem0_llm import FakeMem0LLM, RepliesExhausted, fail_when, is_update_prompt
from mem0.configs.llms.base import BaseLlmConfig
from mem0.llms.base import LLMBase

EXTRACT = [
    {"role": "system", "content": "Extract the facts. Reply in json."},
    {"role": "user", "content": "Input:\nuser: I live in Lisbon."},
]
UPDATE = [{"role": "user", "content": "Old Memory: [] and the new retrieved facts ..."}]
JSON = {"type": "json_object"}


def test_queue_answers_in_order_then_raises_when_exhausted() -> None:
    llm = FakeMem0LLM(['{"facts": ["a"]}', '{"memory": []}'])
    assert llm.generate_response(messages=EXTRACT, response_format=JSON) == '{"facts": ["a"]}'
    assert llm.generate_response(messages=UPDATE) == '{"memory": []}'
    with pytest.raises(RepliesExhausted, match="call #2 came after the last of 2"):
        llm.generate_response(messages=EXTRACT)
    assert [c.reply for c in llm.calls] == ['{"facts": ["a"]}', '{"memory": []}', None]
    assert isinstance(llm.calls[2].error, RepliesExhausted)
    # An exhausted queue stays exhausted; an empty one is exhausted from the start.
    with pytest.raises(RepliesExhausted):
        llm.generate_response(messages=EXTRACT)
    with pytest.raises(RepliesExhausted):
        FakeMem0LLM([]).generate_response(messages=EXTRACT)


def test_queue_takes_any_iterable_and_returns_replies_as_given() -> None:
    tool_call = {"content": None, "tool_calls": [{"name": "f", "arguments": {}}]}
    llm = FakeMem0LLM(iter(["text", tool_call]))
    assert llm.generate_response(EXTRACT) == "text"
    assert llm.generate_response(EXTRACT) is tool_call
    endless = FakeMem0LLM(itertools.repeat('{"facts": []}'))
    assert {endless.generate_response(EXTRACT) for _ in range(5)} == {'{"facts": []}'}


def test_a_single_reply_is_refused_as_a_queue() -> None:
    with pytest.raises(TypeError, match="not one reply"):
        FakeMem0LLM('{"facts": []}')
    with pytest.raises(TypeError, match="not one reply"):
        FakeMem0LLM({"facts": []})


def test_callable_answers_from_messages_and_kwargs() -> None:
    seen: list[dict[str, Any]] = []

    def respond(messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
        seen.append(kwargs)
        return f"{len(messages)} messages, format {kwargs['response_format']}"

    llm = FakeMem0LLM(respond)
    assert llm.generate_response(EXTRACT, response_format=JSON, extra=1) == (
        "2 messages, format {'type': 'json_object'}"
    )
    assert seen == [{"response_format": JSON, "tools": None, "tool_choice": "auto", "extra": 1}]
    assert llm.generate_response(UPDATE) == "1 messages, format None"  # never exhausted


def test_scripted_answers_extraction_decision_and_tools() -> None:
    decision = {"memory": [{"id": "0", "text": "Lives in Lisbon", "event": "ADD"}]}
    llm = FakeMem0LLM.scripted(["Lives in Lisbon"], decision)
    assert json.loads(llm.generate_response(EXTRACT, response_format=JSON)) == {
        "facts": ["Lives in Lisbon"]
    }
    assert json.loads(llm.generate_response(UPDATE, response_format=JSON)) == decision
    tools = [{"type": "function", "function": {"name": "f"}}, {"function": {"name": "g"}}]
    assert llm.generate_response(EXTRACT, tools=tools) == {
        "content": None,
        "tool_calls": [{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}],
    }
    # By default: no facts, no memory change.
    empty = FakeMem0LLM.scripted()
    assert empty.generate_response([]) == '{"facts": []}'
    assert empty.generate_response(UPDATE) == '{"memory": []}'
    assert is_update_prompt(UPDATE)
    assert is_update_prompt([{"content": "... new_memory ..."}])
    assert not is_update_prompt(EXTRACT)


def test_flaky_fails_its_first_calls_then_answers() -> None:
    llm = FakeMem0LLM.flaky(2, facts=["x"])
    for _ in range(2):
        with pytest.raises(ConnectionError, match="connection refused"):
            llm.generate_response(EXTRACT)
    assert llm.generate_response(EXTRACT) == '{"facts": ["x"]}'
    assert [c.failed for c in llm.calls] == [True, True, False]
    assert llm.calls[0].error is not llm.calls[1].error  # a fresh error each time
    custom = FakeMem0LLM.flaky(1, error=TimeoutError("slow"))
    with pytest.raises(TimeoutError, match="slow"):
        custom.generate_response(EXTRACT)
    assert custom.generate_response(EXTRACT) == '{"facts": []}'


def test_failure_on_demand_by_call_number_or_predicate() -> None:
    # The n-th call (0-based index) fails; a failed call consumes no queued reply.
    llm = FakeMem0LLM(["a", "b"], fail=fail_when(lambda call: call.index == 1, TimeoutError))
    assert llm.generate_response(EXTRACT) == "a"
    with pytest.raises(TimeoutError):
        llm.generate_response(EXTRACT)
    assert llm.generate_response(EXTRACT) == "b"
    # Only the update decision fails, every time.
    boom = RuntimeError("decision server down")
    scripted = FakeMem0LLM.scripted(
        ["f"], fail=fail_when(lambda call: is_update_prompt(call.messages), boom)
    )
    assert scripted.generate_response(EXTRACT) == '{"facts": ["f"]}'
    for _ in range(2):
        with pytest.raises(RuntimeError, match="decision server down"):
            scripted.generate_response(UPDATE)
    assert [c.error for c in scripted.calls] == [None, boom, boom]


def test_calls_are_recorded_as_received() -> None:
    def respond(messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
        if kwargs.get("tools"):
            raise ValueError("no tools here")
        return "ok"

    llm = FakeMem0LLM(respond)
    messages = [dict(m) for m in EXTRACT]
    llm.generate_response(messages=messages, response_format=JSON)
    with pytest.raises(ValueError):
        llm.generate_response(messages=UPDATE, tools=[{"function": {"name": "f"}}], seed=3)
    first, second = llm.calls
    assert (first.index, first.messages, first.reply, first.error) == (0, EXTRACT, "ok", None)
    assert first.messages is not messages  # a copy: later changes by the caller don't leak
    assert first.kwargs == {"response_format": JSON, "tools": None, "tool_choice": "auto"}
    assert first.text == "Extract the facts. Reply in json. Input:\nuser: I live in Lisbon."
    assert second.index == 1 and second.kwargs["seed"] == 3
    assert second.failed and isinstance(second.error, ValueError)


def test_mutates_the_callers_messages_only_when_asked() -> None:
    plain = FakeMem0LLM.scripted()
    messages = [{"role": "user", "content": "hello"}]
    plain.generate_response(messages)
    assert messages[0]["content"] == "hello"
    mutating = FakeMem0LLM.scripted(mutate_messages=True)
    mutating.generate_response(messages)
    assert messages[0]["content"] == "hello (mutated)"  # as Mem0's Ollama provider does
    assert mutating.calls[0].messages[0]["content"] == "hello"  # recorded before


def test_is_a_mem0_llm_with_a_config() -> None:
    llm = FakeMem0LLM.scripted()
    assert isinstance(llm, LLMBase)
    assert isinstance(llm.config, BaseLlmConfig)  # Mem0's default config
    config = BaseLlmConfig(model="fake-model", temperature=0.0)
    assert FakeMem0LLM([], config=config).config is config
    assert FakeMem0LLM.flaky(1, config={"model": "m"}).config.model == "m"
    # The store reads `completions` from a caching runtime LLM only: the fake has none.
    assert not hasattr(llm, "completions")


def test_concurrent_calls_each_take_one_reply_and_one_record() -> None:
    llm = FakeMem0LLM(str(n) for n in range(200))
    out: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            reply = llm.generate_response(EXTRACT)
            with lock:
                out.append(reply)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out, key=int) == [str(n) for n in range(200)]
    assert sorted(c.index for c in llm.calls) == list(range(200))
    assert {c.index: c.reply for c in llm.calls} == {n: str(n) for n in range(200)}
