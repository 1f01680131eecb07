"""FAKE Mem0 LLM for tests: one scriptable stand-in for Mem0's LLM. It runs no model.

Mem0 calls ``memory.llm.generate_response(messages=..., response_format=..., [tools=...])``
for fact extraction and for the ADD/UPDATE/DELETE/NONE decision. `FakeMem0LLM` answers
those calls from a script:

- an iterable: a queue of replies, one per call, consumed in order
  (``FakeMem0LLM(['{"facts": ["Lives in Lisbon"]}', '{"memory": []}'])``); a call after the
  last reply raises `RepliesExhausted`;
- a callable ``(messages, kwargs) -> reply``, where kwargs holds ``response_format``,
  ``tools``, ``tool_choice`` and whatever else the caller passed;
- `FakeMem0LLM.scripted(facts, decision)`: every fact extraction returns ``facts``, every
  update decision returns ``decision``, every tool request calls each offered tool with no
  arguments;
- `FakeMem0LLM.flaky(failures, ...)`: `scripted`, but the first ``failures`` calls raise a
  transport-style ``ConnectionError`` (what `CachingMem0LLM` retries).

A reply is returned as it is: JSON text, or a tool-call dict as Mem0's providers return.
``fail`` (see `fail_when`) makes chosen calls raise instead; a failed call consumes no queued
reply. ``mutate_messages`` appends " (mutated)" to the caller's last message, as Mem0's
Ollama provider mutates the caller's messages in place. Every call is recorded in `calls`
(a `Mem0Call`, with what was received and how it ended), failed ones included; calls from
several threads are safe (the in-process runs share one fake between workers).

Mem0 swallows any exception from its update-decision call (it logs it and changes nothing),
so an exhausted queue or a planned failure there shows in `calls`, not as a test error.

It subclasses Mem0's `LLMBase`, so it holds a Mem0 config (``config``: a config object, a
dict, or None for Mem0's default) the way `CachingMem0LLM` and `install_cache` expect.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mem0.llms.base import LLMBase

Responder = Callable[[list[dict[str, Any]], dict[str, Any]], Any]
"""Computes a reply from the call: ``(messages, kwargs) -> reply``."""

FailRule = Callable[["Mem0Call"], BaseException | None]
"""Given a call, the exception it must raise, or None to answer it."""

_UPDATE_MARKERS = ("new_memory", "Old Memory", "old_memory")


def is_update_prompt(messages: Iterable[Mapping[str, Any]]) -> bool:
    """Whether ``messages`` are Mem0's update-decision prompt (else: fact extraction)."""
    text = " ".join(str(m.get("content", "")) for m in messages)
    return any(marker in text for marker in _UPDATE_MARKERS)


def fail_when(
    predicate: Callable[[Mem0Call], bool],
    error: BaseException | Callable[[], BaseException],
) -> FailRule:
    """A ``fail`` rule: calls matching ``predicate`` raise ``error`` (an exception, or an
    exception class / factory called for a fresh one each time), e.g.
    ``fail_when(lambda call: call.index == 2, TimeoutError)``."""

    def rule(call: Mem0Call) -> BaseException | None:
        if not predicate(call):
            return None
        return error if isinstance(error, BaseException) else error()

    return rule


def _connection_refused() -> BaseException:
    return ConnectionError("connection refused")


class RepliesExhausted(AssertionError):
    """A queued FakeMem0LLM was called after its last reply."""


@dataclass
class Mem0Call:
    """One call the fake received, and how it ended."""

    index: int
    """0 for the first call."""
    messages: list[dict[str, Any]]
    """A deep copy of the messages as received (before any mutation)."""
    kwargs: dict[str, Any]
    """``response_format``, ``tools``, ``tool_choice`` and any other keyword passed."""
    reply: Any = None
    error: BaseException | None = None
    """What the call raised (a planned failure, an exhausted queue, a responder error)."""

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def text(self) -> str:
        """The messages' contents, joined by spaces (for predicates)."""
        return " ".join(str(m.get("content", "")) for m in self.messages)


_EXHAUSTED = object()


class FakeMem0LLM(LLMBase):
    """FAKE Mem0 LLM (see module doc): replies from a queue or a callable, fails on demand,
    records every call in `calls`."""

    def __init__(
        self,
        replies: Iterable[Any] | Responder,
        *,
        fail: FailRule | None = None,
        config: Any = None,
        mutate_messages: bool = False,
    ) -> None:
        super().__init__(config)
        if isinstance(replies, str | bytes | Mapping):
            raise TypeError("FakeMem0LLM: give a list of replies (or a callable), not one reply")
        self._respond: Responder | None = replies if callable(replies) else None
        self._queue: Iterator[Any] | None = None if callable(replies) else iter(replies)
        self._taken = 0
        """How many queued replies were given out."""
        self._fail = fail
        self.mutate_messages = mutate_messages
        self.calls: list[Mem0Call] = []
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- named constructors

    @classmethod
    def scripted(
        cls,
        facts: Iterable[str] = (),
        decision: Mapping[str, Any] | None = None,
        *,
        fail: FailRule | None = None,
        config: Any = None,
        mutate_messages: bool = False,
    ) -> FakeMem0LLM:
        """Fact extraction returns ``{"facts": facts}`` (none by default), the update decision
        returns ``decision`` (``{"memory": []}`` by default), a tool request calls each tool
        offered with no arguments."""
        facts_reply = json.dumps({"facts": list(facts)})
        decision_reply = json.dumps(dict(decision or {"memory": []}))

        def respond(messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> Any:
            if kwargs.get("tools"):
                names = [tool["function"]["name"] for tool in kwargs["tools"]]
                return {
                    "content": None,
                    "tool_calls": [{"name": name, "arguments": {}} for name in names],
                }
            return decision_reply if is_update_prompt(messages) else facts_reply

        return cls(respond, fail=fail, config=config, mutate_messages=mutate_messages)

    @classmethod
    def flaky(
        cls,
        failures: int,
        *,
        error: BaseException | Callable[[], BaseException] = _connection_refused,
        facts: Iterable[str] = (),
        decision: Mapping[str, Any] | None = None,
        config: Any = None,
        mutate_messages: bool = False,
    ) -> FakeMem0LLM:
        """`scripted`, except that the first ``failures`` calls raise ``error`` (by default
        a fresh ``ConnectionError("connection refused")``, a transport error)."""
        return cls.scripted(
            facts,
            decision,
            fail=fail_when(lambda call: call.index < failures, error),
            config=config,
            mutate_messages=mutate_messages,
        )

    # ----------------------------------------------------------------- Mem0's LLM interface

    def generate_response(
        self,
        messages: list[dict[str, Any]],
        response_format: Any = None,
        tools: Any = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> Any:
        options = {
            "response_format": response_format,
            "tools": tools,
            "tool_choice": tool_choice,
            **kwargs,
        }
        with self._lock:
            call = Mem0Call(len(self.calls), copy.deepcopy(messages), options)
            self.calls.append(call)
            call.error = self._fail(call) if self._fail is not None else None
            queued = self._next_queued() if call.error is None else None
        try:
            if call.error is not None:
                raise call.error
            if self._respond is not None:
                reply = self._respond(messages, dict(options))
            elif queued is _EXHAUSTED:
                raise RepliesExhausted(
                    f"FakeMem0LLM: call #{call.index} came after the last of "
                    f"{self._taken} queued replies"
                )
            else:
                reply = queued
        except BaseException as exc:
            call.error = exc
            raise
        call.reply = reply
        if self.mutate_messages and messages:
            messages[-1]["content"] += " (mutated)"
        return reply

    def _next_queued(self) -> Any:
        if self._queue is None:
            return None
        reply = next(self._queue, _EXHAUSTED)
        if reply is not _EXHAUSTED:
            self._taken += 1
        return reply
