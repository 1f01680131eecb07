"""Interning of repeated values in the site's data: the same texts, facts and fact lists
recur across conditions, worlds and checkpoints (a run's S* is the same for every
condition), so each is written once and referred to by its index.

This is what keeps the site of a run with thousands of checkpoints small (the records of
`experiments/primary-extended` are 16 MB, mostly repeated fact lists) while every item
stays in it. Indices follow first use, so the same input gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any


class Pool:
    """Values by first use; `add` returns a value's index (the same for an equal value)."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[str, int] = {}

    def add(self, value: Any) -> int:
        key = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.values)
            self.values.append(value)
        return found

    def __len__(self) -> int:
        return len(self.values)


class Pools:
    """The pools of one run's data: `texts` (strings), `facts` (fact tuples) and `blobs`
    (any other repeated value: fact lists as lists of fact indices, Γ rows, transitions)."""

    def __init__(self) -> None:
        self.texts = Pool()
        self.facts = Pool()
        self.blobs = Pool()

    def text(self, s: str) -> int:
        return self.texts.add(s)

    def fact(self, f: Any) -> int:
        return self.facts.add(list(f))

    def fact_list(self, facts: Any) -> list[int]:
        return [self.fact(f) for f in facts]

    def blob(self, value: Any) -> int:
        return self.blobs.add(value)

    def to_json(self) -> dict[str, list[Any]]:
        return {"texts": self.texts.values, "facts": self.facts.values, "blobs": self.blobs.values}
