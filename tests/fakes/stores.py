"""FAKE stores for unit tests of read policies."""

from __future__ import annotations

from typing import Any

from place.memory.item import StoredItem


class FakeStore:
    """FAKE read-only store: `search` is top-k by score, `search_filtered` ranks everything
    (its records are all plain text, so QASC's payload filter would let all of them through)."""

    def __init__(self, items: list[StoredItem]) -> None:
        self.items = sorted(items, key=lambda i: (-(i.score or 0.0), i.id))

    def search(self, query: str, limit: int) -> list[StoredItem]:
        return self.items[:limit]

    def search_filtered(self, query: str, limit: int | None, **_: Any) -> list[StoredItem]:
        return self.items if limit is None else self.items[:limit]
