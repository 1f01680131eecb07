"""The Native write producer: Mem0's own LLM-driven `add()`, fed as an application would."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from place.trajectory.model import Turn

_TODAY = re.compile(r"Today's date is \d{4}-\d{2}-\d{2}\.")


class DialogueStore(Protocol):
    @property
    def memory(self) -> Any: ...
    @property
    def last_add_errors(self) -> tuple[str, ...]: ...
    def add_dialogue(
        self, messages: list[dict[str, Any]], metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]: ...


def as_message(turn: Turn) -> dict[str, str]:
    """User and assistant turns as themselves; untrusted tool output as a user message that
    says where it came from (an application forwards it; it is not the user's own word)."""
    if turn.role == "tool":
        return {"role": "user", "content": f"(forwarded from {turn.source}) {turn.text}"}
    return {"role": turn.role, "content": turn.text}


def extraction_prompt(day: dt.date) -> str:
    """Mem0's own user-memory extraction prompt, dated by the conversation, not the wall clock.

    Mem0 renders "Today's date" once at import; pinning it to the conversation's date keeps
    prompts (and hence cache keys) identical across days, and is what the agent would know.
    """
    from place.memory.mem0_compat import user_memory_extraction_prompt

    return _TODAY.sub(f"Today's date is {day.isoformat()}.", user_memory_extraction_prompt())


@dataclass
class NativeWrite:
    """What one Native update step did."""

    operations: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    llm_calls: list[dict[str, Any] | None] = field(default_factory=list)
    """How each Mem0 LLM call ended (Completion.meta(); None when not recorded)."""


def written_turns(turns: Sequence[Turn]) -> list[Turn]:
    """The turns of a step that a dialogue memory writes: not query turns, nor the task and
    run turns of docs/method.md §11 (requests to act are reads of memory, not statements)."""
    return [t for t in turns if t.query is None and t.task is None and t.run is None]


def dialogue_messages(turns: Sequence[Turn]) -> list[dict[str, str]] | None:
    """The messages an application passes to Mem0 for one update step (`written_turns`);
    None when the step has no user message, so nothing is added."""
    messages = [as_message(t) for t in written_turns(turns)]
    return messages if any(m["role"] == "user" for m in messages) else None


class NativeWriter:
    def write(
        self,
        store: DialogueStore,
        turns: Sequence[Turn],
        day: dt.date,
        metadata: dict[str, Any] | None = None,
    ) -> NativeWrite:
        messages = dialogue_messages(turns)
        if messages is None:
            return NativeWrite()
        store.memory.config.custom_fact_extraction_prompt = extraction_prompt(day)
        result = store.add_dialogue(messages, metadata)
        # Mem0 swallows a failed update-decision call as "no change"; surface it instead.
        pending = getattr(store.memory.llm, "raise_pending", None)
        if pending is not None:
            pending()
        operations = [
            {
                "event": r.get("event"),
                "memory": r.get("memory"),
                "previous": r.get("previous_memory"),
            }
            for r in result.get("results", [])
        ]
        return NativeWrite(
            operations, list(store.last_add_errors), list(getattr(store, "last_llm_calls", ()))
        )
