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
from place.memory.tables import SideRow


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

    def side_rows(self, table: str) -> tuple[SideRow, ...]:
        """The rows of one side table (the evidence log V: `evidence`), in the order written."""
        ...


@runtime_checkable
class WritableStore(ReadOnlyStore, Protocol):
    """What a write producer may do with its row's store: everything a reader may, plus the
    ways of writing (the Native agent's LLM-driven add, raw messages, one record, a metadata
    change, Mem0's own UPDATE and DELETE of one record), physical removal, and the rows of its
    side tables (the ledger L). Producers are
    typed against it, as read policies are against `ReadOnlyStore`; the narrow roles
    (`DialogueStore` for the Native agent, `CertifiedStore` for the certifier) are subsets
    of it."""

    @property
    def memory(self) -> Any:
        """The Mem0 `Memory` behind the store (the Native agent reads its prompts' inputs)."""
        ...

    @property
    def last_add_errors(self) -> tuple[str, ...]:
        """What Mem0 logged as failed during the last `add_dialogue`."""
        ...

    @property
    def last_llm_calls(self) -> tuple[Any, ...]:
        """How each model call of the last `add_dialogue` ended (None: not recorded)."""
        ...

    def add_dialogue(
        self, messages: list[dict[str, Any]], metadata: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Mem0's own LLM-driven add over dialogue messages."""
        ...

    def add_messages(
        self, messages: list[dict[str, Any]], metadata: Mapping[str, Any] | None = None
    ) -> list[str]:
        """Each message stored verbatim as its own record (no LLM); the stored texts."""
        ...

    def add_record(self, text: str, metadata: Mapping[str, Any] | None = None) -> str:
        """One record stored verbatim with its metadata; its id."""
        ...

    def update_metadata(self, memory_id: str, changes: Mapping[str, Any]) -> None:
        """Change a record's metadata; its text and vector stay."""
        ...

    def update_text(
        self, memory_id: str, text: str, metadata: Mapping[str, Any] | None = None
    ) -> str:
        """Mem0's own UPDATE: a record's text (and metadata) rewritten, the old text kept in
        Mem0's history; the previous text."""
        ...

    def delete(self, memory_id: str) -> str:
        """Mem0's own DELETE: the record goes, its text stays in Mem0's history; that text."""
        ...

    def remove(self, memory_ids: Sequence[str], *, missing_ok: bool = False) -> None:
        """Physically remove records and every trace of them."""
        ...

    def add_side_row(self, table: str, metadata: Mapping[str, Any]) -> str:
        """A row of a side table beside the store (the ledger L): its own id, JSON metadata,
        no vector, no Mem0 history (`place.memory.tables`)."""
        ...

    def update_side_row(self, table: str, row_id: str, changes: Mapping[str, Any]) -> None:
        """Rewrite keys of one side row's metadata in place."""
        ...

    def delete_side_rows(self, table: str, row_ids: Sequence[str]) -> None:
        """Physically delete side rows."""
        ...

    def side_rows(self, table: str) -> tuple[SideRow, ...]:
        """The rows of one side table, in the order written."""
        ...


__all__ = ["ReadOnlyStore", "StoredItem", "WritableStore"]
