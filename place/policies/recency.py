"""`recency`: the k newest records (docs/method.md §8.8).

No retrieval: the query text is not read and no similarity is computed. Every record of the
principal's store is ordered by when it was written, (`written_on`, `written_seq`, id), and
the k newest are exposed, newest first. It separates the AOEP-v0 pilot's "naive append"
(Append/Recency) from its vector RAG (Append/Native).

Decisions (docs/decisions.md): a record without `written_on` (the probe's injected conflict
record) counts as the newest, as decay counts it fresh; one without `written_seq` counts as
the newest of its date. Exposed items carry score 0 (nothing was scored) and `admitted` is
None (nothing was authorized).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from place.eligibility import Interpretation
from place.governance.authorizer import ReadDecision
from place.policies.registry import PolicyContext, register_policy
from place.producers.registry import written_order

__all__ = ["written_order"]  # the order is every producer's (docs/method.md §8.10)

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore, StoredItem


def newest_first(store: ReadOnlyStore) -> list[StoredItem]:
    """Every record of the principal, newest first, read without a query (score 0)."""
    from place.memory.item import StoredItem  # here: importing policies loads no store code

    points = sorted(
        store.scan().points, key=lambda p: written_order(p.id, p.metadata), reverse=True
    )
    return [StoredItem(p.id, p.text, dict(p.metadata), 0.0) for p in points]


class RecencyRead:
    name = "recency"

    def __init__(self, k: int) -> None:
        self.k = k

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        return ReadDecision(tuple(newest_first(store)[: self.k]))


@register_policy("recency", display="Recency")
def recency(context: PolicyContext[None]) -> RecencyRead:
    return RecencyRead(context.k)
