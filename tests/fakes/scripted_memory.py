"""FAKE model behind the fake Ollama server: a rule-based memory manager for Mem0's calls.

It runs no model. Fed the body of every /api/chat request (FakeOllamaServer's `script`), it
answers Mem0's two calls the way a careful model would, by fixed rules, so that Mem0's whole
Native pipeline runs through the Ollama runtime: extraction -> embedding -> similarity
lookup -> update decision -> inserts, updates and deletes.

- Fact extraction (`Input:` with `user: ...` lines): every user line is a fact.
- Update decision ("new retrieved facts"): a fact asking to forget deletes every memory that
  shares a topic word with it; a fact sharing a topic word with a memory updates that memory;
  any other fact is added. A topic word has five or more letters and is not a stopword.
- Anything else (the answer model's prompt): the memory items it lists ("- ..."), joined, or
  "unknown".
`truncate` names facts whose extraction reply is reported as cut (done_reason "length").
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from typing import Any

_BLOCK = re.compile(r"```\s*(.*?)\s*```", re.DOTALL)
_WORD = re.compile(r"[A-Za-z]{5,}")
_STOP = {"please", "forget", "about", "there", "their", "would", "change", "still", "which"}


def topic_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


class ScriptedMemoryManager:
    """FAKE Mem0 LLM rules (see module doc); call it with a /api/chat request body."""

    def __init__(self, truncate: Iterable[str] = ()) -> None:
        self.truncate = tuple(truncate)
        self.extractions = 0
        self.decisions = 0

    def __call__(self, body: dict[str, Any]) -> str | tuple[str, str]:
        messages = body.get("messages") or []
        text = "\n".join(str(m.get("content", "")) for m in messages)
        if "new retrieved facts" in text:
            self.decisions += 1
            return json.dumps({"memory": self.decide(text)})
        last = str(messages[-1].get("content", "")) if messages else ""
        if last.startswith("Input:"):
            self.extractions += 1
            facts = [
                line[len("user: ") :].strip()
                for line in last.splitlines()
                if line.startswith("user: ")
            ]
            reply = json.dumps({"facts": facts})
            if any(marker in fact for fact in facts for marker in self.truncate):
                return reply, "length"
            return reply
        shown = re.findall(r"^- (.*)$", last, flags=re.MULTILINE)
        return " ".join(shown) if shown else "unknown"

    @staticmethod
    def decide(prompt: str) -> list[dict[str, str]]:
        # Mem0 renders the current memory (unless it is empty) and then the new facts, each
        # as a Python literal between triple backticks after its own sentence.
        memory_at = prompt.find("current content of my memory")
        facts_at = prompt.find("new retrieved facts are mentioned")
        old_block = _BLOCK.search(prompt, memory_at) if memory_at >= 0 else None
        old: list[dict[str, str]] = ast.literal_eval(old_block.group(1)) if old_block else []
        facts: list[str] = ast.literal_eval(_BLOCK.search(prompt, facts_at).group(1))
        events: list[dict[str, str]] = []
        touched: set[str] = set()
        for number, fact in enumerate(facts):
            related = [m for m in old if topic_words(m["text"]) & topic_words(fact)]
            if "forget" in fact.lower():
                for m in related:
                    if m["id"] not in touched:
                        touched.add(m["id"])
                        events.append({"id": m["id"], "text": m["text"], "event": "DELETE"})
            elif related and related[0]["id"] not in touched:
                m = related[0]
                touched.add(m["id"])
                events.append(
                    {"id": m["id"], "text": fact, "event": "UPDATE", "old_memory": m["text"]}
                )
            else:
                events.append({"id": f"new-{number}", "text": fact, "event": "ADD"})
        return events
