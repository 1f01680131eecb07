"""FAKE answer model for tests: a chat model that answers from a table.

`ScriptedChat` stands in for the answer model: a question found in its table gets the
scripted reply; any other question is answered by echoing the memory items it was shown (or
"unknown" when it was shown none), so answers follow what the read policy exposed. It is no
model; with `fakes.mem0_llm.FakeMem0LLM.scripted()` as Mem0's LLM it lets a whole factorial
run in-process, through the real runner, records and report.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from typing import Any

_ITEMS = re.compile(r"^- (.*)$", re.MULTILINE)


class ScriptedChat:
    """FAKE answer model (see module doc)."""

    def __init__(self, table: Mapping[str, str] | None = None, latency: float = 0.0) -> None:
        self.table = dict(table or {})
        self.latency = latency
        """Seconds each call takes (a server's decoding time), to make concurrency visible."""
        self.calls: list[list[dict]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        """The most calls that were being answered at once."""
        self._lock = threading.Lock()

    @property
    def parameters(self) -> Mapping[str, Any]:
        return {"fake": "scripted"}

    def complete(
        self,
        messages: list[dict],
        *,
        response_format: dict | None = None,
        max_tokens: int | None = None,
    ) -> str:
        with self._lock:
            self.calls.append(messages)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.latency)
            return self._reply(messages)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _reply(self, messages: list[dict]) -> str:
        user = messages[-1]["content"]
        for question, reply in self.table.items():
            if question in user:
                return reply
        shown = _ITEMS.findall(user)
        return " ".join(shown) if shown else "unknown"
