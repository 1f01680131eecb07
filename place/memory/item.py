"""What a read returns and what a reader may hold: ``StoredItem`` and ``ReadOnlyStore``.

``ReadOnlyStore`` is the one protocol for "a store a read policy may use": the read policies
(place/governance/authorizer.py, place/policies/) are typed against it, and
:func:`place.memory.view.read_only_view` is what they are given at run time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from place.memory.scan import StoreScan


@dataclass(frozen=True)
class StoredItem:
    """A record as a read returns it: id, text (payload ``data``), user metadata, score.

    Every read returns a similarity score (Mem0's ``search`` results and Qdrant's scored
    points always carry one), so ``score`` is a float, as the read policies rank by it.
    """

    id: str
    text: str
    metadata: Mapping[str, Any]
    score: float


@runtime_checkable
class ReadOnlyStore(Protocol):
    """What a read policy may do with a store: read, never write."""

    @property
    def name(self) -> str: ...

    @property
    def principal(self) -> str: ...

    def search(self, query: str, limit: int, payload_filter: Any | None = None) -> list[StoredItem]:
        """Native similarity read (see :meth:`place.memory.store.MemoryStore.search`)."""
        ...

    def search_filtered(
        self,
        query: str,
        limit: int | None,
        *,
        must: Sequence[Any] = (),
        should: Sequence[Any] = (),
        must_not: Sequence[Any] = (),
    ) -> list[StoredItem]:
        """Similarity read with a pushed-down payload filter."""
        ...

    def scan(self) -> StoreScan:
        """Everything stored for the principal."""
        ...


__all__ = ["ReadOnlyStore", "StoredItem"]
