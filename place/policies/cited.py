"""`cited`: QASC with the citation lock (docs/method.md §12.3).

Q^cite = {m ∈ Q_t | ¬cons(m) ∨ cited(m)}: of what QASC admits, a consequential record is kept
only when its evidence pointer opens to a V entry that supports it; the rest is *hearsay*
(its ids are recorded). The lock precedes truncation, so hearsay never takes a place among
the k. `design.cited.scope=all` locks every record, consequential or not. V is opened only
by key and only read (the policy gets a read-only view of the store).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from place.eligibility import Interpretation
from place.governance.authorizer import QASCRead, ReadDecision
from place.governance.citation import Evidence, cited, is_consequential
from place.params import Doc, OneOf
from place.policies.registry import PolicyContext, register_policy
from place.readback import Readback

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore


@dataclass(frozen=True)
class CitedParams:
    """`design.cited`: which records the lock applies to."""

    scope: Annotated[
        str,
        OneOf("consequential", "all"),
        Doc(
            "cited: the records the lock applies to: those holding a fact of a consequential "
            "predicate (money, marked consequential, or needed by a task), or all."
        ),
    ] = "consequential"


class CitedRead:
    name = "cited"

    def __init__(
        self,
        k: int,
        readback: Readback,
        consequential: frozenset[str],
        params: CitedParams = CitedParams(),
    ) -> None:
        self.k = k
        self.readback = readback
        self.consequential = consequential
        self.scope = params.scope
        self.qasc = QASCRead(k, readback)

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        admitted = self.qasc.admitted(store, query, tau, day)
        evidence = Evidence.of(store)
        lexicon = self.readback.lexicon
        kept, hearsay = [], []
        for item in admitted:
            if self._locked(item, day) and not cited(item.metadata, evidence, lexicon):
                hearsay.append(str(item.id))
            else:
                kept.append(item)
        # `admitted`: Q^cite's size (what passed E and the lock), before truncation to k.
        return ReadDecision(tuple(kept[: self.k]), admitted=len(kept), hearsay=tuple(hearsay))

    def _locked(self, item: object, day: dt.date) -> bool:
        if self.scope == "all":
            return True
        held = self.readback.held_facts(item, day)  # type: ignore[arg-type]  # reason: a stored item is a StoredRecord
        return is_consequential((f.predicate for f, _readable in held), self.consequential)


@register_policy("cited", params=CitedParams, governance=True, display="Cited")
def cited_policy(context: PolicyContext[CitedParams]) -> CitedRead:
    return CitedRead(context.k, context.readback, context.consequential, context.params)
