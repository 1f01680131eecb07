"""The two read policies: Native top-k, and QASC (authorize, then truncate to the same k).

QASC gets a read-only view of the store, so it cannot write by construction. Qdrant drops
the certified records E cannot admit (their eligibility key says so); β decides E on the
rest: certified records from their lifecycle metadata, plain-text records, which carry no
lifecycle, from their text (QASC counts them as active).

Cost model (docs/decisions.md, "QASC's filter"): Qdrant local mode evaluates a filter in
Python, point by point, condition by condition, stopping at the first that decides. Native
pays one condition per point (Mem0's principal). QASC's filter is one exclusion: a certified
record whose eligibility key (entity/predicate/scope/status) is not one E can admit is
dropped after that single test; plain records (no key) and the query's candidates pass on
to the principal test. β then decides E exactly on the candidates (windows, expiry). A
Qdrant server uses a payload index on the key instead (ELIGIBILITY_INDEXES, created by the
memory backend). E itself, at every level, is place/eligibility.py.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from place.eligibility import (
    ELIGIBILITY_INDEXES,
    Interpretation,
    admits,
    candidate_exclusions,
)
from place.readback import Readback

__all__ = ["ELIGIBILITY_INDEXES", "NativeRead", "QASCRead", "ReadDecision"]

if TYPE_CHECKING:
    # The one read-only store protocol (a read policy gets place.memory's read-only view).
    from place.memory.item import ReadOnlyStore


@dataclass(frozen=True)
class ReadDecision:
    """One read: what was exposed, and (QASC) how many candidates authorization admitted."""

    items: tuple[Any, ...]
    admitted: int | None = None
    """QASC: records admitted before truncation; None for Native."""
    hearsay: tuple[str, ...] = ()
    """Cited: the ids of admitted records the citation lock excluded (docs/method.md §12.3)."""


class NativeRead:
    """Mem0 `search(query, user_id, limit=k)`: top-k by similarity."""

    name = "native"

    def __init__(self, k: int) -> None:
        self.k = k

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        return ReadDecision(tuple(store.search(query, self.k)))


ADMIT_BOUND = 1_000_000
"""Rank limit of QASC's one filtered pass: above any store this harness builds."""


class QASCRead:
    """Q_t = {m in R_t | E(m, q_t, τ_t) = 1}, then truncation to k by similarity."""

    name = "qasc"

    def __init__(self, k: int, readback: Readback) -> None:
        self.k = k
        self.readback = readback

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        admitted = self.admitted(store, query, tau, day)
        return ReadDecision(tuple(admitted[: self.k]), admitted=len(admitted))

    def admitted(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> list[Any]:
        """Q_t, ranked by similarity (ties by id): every record E admits, before truncation."""
        # One filtered pass with one embedding: every record E could admit (plain records,
        # which carry no lifecycle, and the slot's active certified records in scope) comes
        # back, and β decides E on each: windows and expiry for certified records, the text
        # for plain ones. Candidate sets are small for certified stores (one slot), so
        # ranking all of them costs little; ADMIT_BOUND avoids a counting pass.
        candidates = store.search_filtered(query, ADMIT_BOUND, must_not=candidate_exclusions(tau))
        admitted = [item for item in candidates if admits(self.readback, item, tau, day)]
        admitted.sort(key=lambda item: (-item.score, item.id))
        return admitted
