"""The two read policies: Native top-k, and QASC (authorize, then truncate to the same k).

QASC gets a read-only view of the store, so it cannot write by construction. For certified
records the whole eligibility test E runs inside Qdrant as a payload filter; plain-text
records carry no lifecycle, so β reads them in Python (QASC counts them as active).

Cost model (docs/decisions.md, "QASC's filter"): Qdrant local mode evaluates a filter in
Python, point by point, condition by condition, stopping at the first that fails. Native
pays one condition per point (Mem0's principal). QASC's filter is shaped so that a point
outside the query's slot fails after two: "has no lifecycle marker" (plain branch) and
"slot == entity/predicate" (certified branch); every other condition of E is evaluated only
for the slot's own records. A Qdrant server uses payload indexes instead
(ELIGIBILITY_INDEXES, created by the memory backend).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Protocol

from qdrant_client import models

from place.eligibility import Interpretation
from place.governance.certifier import OPEN_FROM, OPEN_UNTIL
from place.readback import (
    LIFECYCLE_MARKER,
    LIFECYCLE_VERSION,
    SLOT_KEY,
    Readback,
    is_certified,
    slot_key,
)
from place.trajectory.model import GLOBAL_SCOPE


class ExposedItem(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    @property
    def score(self) -> float: ...


class ReadableStore(Protocol):
    """The only handle a read policy gets: searches, no writes."""

    def search(self, query: str, limit: int) -> list[Any]: ...
    def search_filtered(
        self, query: str, limit: int | None, *, must: list[Any] = ..., must_not: list[Any] = ...
    ) -> list[Any]: ...


@dataclass(frozen=True)
class ReadDecision:
    """One read: what was exposed, and (QASC) how many candidates authorization admitted."""

    items: tuple[Any, ...]
    admitted: int | None = None
    """QASC: records admitted before truncation; None for Native."""


class NativeRead:
    """Mem0 `search(query, user_id, limit=k)`: top-k by similarity."""

    name = "native"

    def __init__(self, k: int) -> None:
        self.k = k

    def read(
        self, store: ReadableStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        return ReadDecision(tuple(store.search(query, self.k)))


def certified_conditions(tau: Interpretation, day: dt.date) -> list[models.Condition]:
    """E for certified records, as Qdrant payload conditions (windows as day ordinals).

    The most selective condition comes first (one key for entity and predicate): Qdrant
    stops at the first one that fails, so the rest run only for the slot's records.
    """
    as_of = tau.as_of.toordinal()
    return [
        models.FieldCondition(
            key=SLOT_KEY, match=models.MatchValue(value=slot_key(tau.entity, tau.predicate))
        ),
        models.FieldCondition(key="status", match=models.MatchValue(value="active")),
        models.FieldCondition(
            key="scope", match=models.MatchAny(any=sorted({tau.scope, GLOBAL_SCOPE}))
        ),
        models.FieldCondition(key="valid_from_ord", range=models.Range(gte=OPEN_FROM, lte=as_of)),
        # β drops records expired by the readback date; E needs as_of < valid_until.
        models.FieldCondition(
            key="valid_until_ord",
            range=models.Range(gt=max(as_of, day.toordinal()), lte=OPEN_UNTIL),
        ),
        models.FieldCondition(
            key=LIFECYCLE_MARKER, match=models.MatchValue(value=LIFECYCLE_VERSION)
        ),
    ]


def plain_conditions() -> list[models.Condition]:
    """Records without lifecycle metadata (β reads them from text)."""
    return [models.IsEmptyCondition(is_empty=models.PayloadField(key=LIFECYCLE_MARKER))]


ELIGIBILITY_INDEXES: dict[str, str] = {
    SLOT_KEY: "keyword",
    "status": "keyword",
    "scope": "keyword",
    "valid_from_ord": "integer",
    "valid_until_ord": "integer",
    LIFECYCLE_MARKER: "keyword",
}
"""Payload indexes (key -> Qdrant field schema) for every key QASC's filter tests. The
memory backend creates them on a Qdrant server; local mode has no indexes (it scans)."""

ADMIT_BOUND = 1_000_000
"""Rank limit of QASC's one filtered pass: above any store this harness builds."""


class QASCRead:
    """Q_t = {m in R_t | E(m, q_t, τ_t) = 1}, then truncation to k by similarity."""

    name = "qasc"

    def __init__(self, k: int, readback: Readback) -> None:
        self.k = k
        self.readback = readback

    def read(
        self, store: ReadableStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        # One filtered pass: certified records must satisfy E, plain records have no
        # lifecycle and come back for β. Eligible sets are small by design (one slot), so
        # ranking all candidates costs little; ADMIT_BOUND avoids a counting pass. The plain
        # branch comes first: a plain record then passes after its own test, and a
        # certified one fails it at once (the store adds the principal to each branch).
        candidates = store.search_filtered(
            query,
            ADMIT_BOUND,
            should=[
                models.Filter(must=plain_conditions()),
                models.Filter(must=certified_conditions(tau, day)),
            ],
        )
        admitted = [
            item
            for item in candidates
            if is_certified(item.metadata) or self.readback.admits(item, tau, day)
        ]
        admitted.sort(key=lambda item: (-item.score, item.id))
        return ReadDecision(tuple(admitted[: self.k]), admitted=len(admitted))
