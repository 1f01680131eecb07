"""The read-only view a read policy gets of a store: reads only, no path back to the store."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from place.memory.item import ReadOnlyStore, StoredItem
from place.memory.scan import StoreScan
from place.memory.tables import SideRow

if TYPE_CHECKING:
    from place.memory.store import MemoryStore


def read_only_view(store: MemoryStore) -> ReadOnlyStore:
    """A read-only handle on ``store``: only reads, and no public path to the store.

    The methods are closures, so the writable store is not an attribute of the view.
    """

    def search(query: str, limit: int, payload_filter: Any | None = None) -> list[StoredItem]:
        return store.search(query, limit, payload_filter)

    def search_filtered(
        query: str,
        limit: int | None,
        *,
        must: Sequence[Any] = (),
        should: Sequence[Any] = (),
        must_not: Sequence[Any] = (),
    ) -> list[StoredItem]:
        return store.search_filtered(query, limit, must=must, should=should, must_not=must_not)

    def scan() -> StoreScan:
        return store.scan()

    def side_rows(table: str) -> tuple[SideRow, ...]:
        # Copies: a reader (the citation lock opening V) cannot change a row it reads.
        return tuple(
            SideRow(r.table, r.id, copy.deepcopy(dict(r.metadata))) for r in store.side_rows(table)
        )

    return _ReadOnlyView(store.name, store.principal, search, search_filtered, scan, side_rows)


class _ReadOnlyView:
    __slots__ = ("_name", "_principal", "scan", "search", "search_filtered", "side_rows")

    def __init__(
        self,
        name: str,
        principal: str,
        search: Callable[..., list[StoredItem]],
        search_filtered: Callable[..., list[StoredItem]],
        scan: Callable[[], StoreScan],
        side_rows: Callable[[str], tuple[SideRow, ...]],
    ) -> None:
        self._name = name
        self._principal = principal
        self.search = search
        self.search_filtered = search_filtered
        self.scan = scan
        self.side_rows = side_rows

    @property
    def name(self) -> str:
        return self._name

    @property
    def principal(self) -> str:
        return self._principal

    def __setattr__(self, attr: str, value: Any) -> None:
        if hasattr(self, attr):
            raise AttributeError("read-only view is immutable")
        object.__setattr__(self, attr, value)

    def __repr__(self) -> str:
        return f"ReadOnlyStore({self._name!r}, principal={self._principal!r})"


__all__ = ["read_only_view"]
