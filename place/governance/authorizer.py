"""The two read policies: Native top-k, and QASC (authorize, then truncate to the same k).

QASC gets a read-only view of the store, so it cannot write by construction. For certified
records the whole eligibility test E runs inside Qdrant as a payload filter; plain-text
records carry no lifecycle, so β reads them in Python (QASC counts them as active).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Protocol

from qdrant_client import models

from place.eligibility import Interpretation
from place.governance.certifier import OPEN_FROM, OPEN_UNTIL
from place.readback import LIFECYCLE_MARKER, LIFECYCLE_VERSION, Readback, is_certified
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

    The most selective conditions come first: Qdrant stops at the first one that fails.
    """
    as_of = tau.as_of.toordinal()
    return [
        models.FieldCondition(key="entity", match=models.MatchValue(value=tau.entity)),
        models.FieldCondition(key="predicate", match=models.MatchValue(value=tau.predicate)),
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
        # ranking all candidates costs little; ADMIT_BOUND avoids a counting pass.
        candidates = store.search_filtered(
            query,
            ADMIT_BOUND,
            should=[
                models.Filter(must=certified_conditions(tau, day)),
                models.Filter(must=plain_conditions()),
            ],
        )
        admitted = [
            item
            for item in candidates
            if is_certified(item.metadata) or self.readback.admits(item, tau, day)
        ]
        admitted.sort(key=lambda item: (-item.score, item.id))
        return ReadDecision(tuple(admitted[: self.k]), admitted=len(admitted))
