"""`decay`: SSGM's freshness gate (docs/method.md §8).

Every record carries the trajectory date it was written on (`written_on`, set by every
producer). A record's similarity is weighted by w(Δ) = exp(−(Δ/η)^κ), Δ = days from
`written_on` to the query's `as_of`; records with w < θ are dropped, the rest ranked by the
weighted score and truncated to k. Decisions (docs/decisions.md): Δ below 0 (a record written
after `as_of`, e.g. for a question about the past) counts as 0; a record without `written_on`
gets w = 1; the exposed item's score is the weighted score the ranking used.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated

from annotated_types import Ge, Gt, Le

from place.eligibility import Interpretation
from place.governance.authorizer import ReadDecision
from place.params import Doc
from place.policies.registry import PolicyContext, register_policy

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore

WRITTEN_ON = "written_on"
"""Metadata key every producer sets: the trajectory date the record was written on."""


def weight(days: float, eta: float, kappa: float) -> float:
    """w(Δ) = exp(−(Δ/η)^κ) for Δ ≥ 0."""
    return math.exp(-((max(days, 0.0) / eta) ** kappa))


@dataclass(frozen=True)
class DecayParams:
    """`design.decay`: the freshness gate's parameters (the one place their defaults live)."""

    eta: Annotated[float, Gt(0), Le(100_000), Doc("decay: η, the freshness scale in days.")] = 30.0
    kappa: Annotated[float, Gt(0), Le(100), Doc("decay: κ, the shape of w(Δ) = exp(−(Δ/η)^κ).")] = (
        1.5
    )
    theta: Annotated[
        float, Ge(0), Le(1), Doc("decay: θ, records whose weight w is below it are dropped.")
    ] = 0.1


class DecayRead:
    name = "decay"

    def __init__(self, k: int, params: DecayParams = DecayParams()) -> None:
        self.k = k
        self.eta, self.kappa, self.theta = params.eta, params.kappa, params.theta

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        scored = []
        for item in store.search_filtered(query, None):
            written = item.metadata.get(WRITTEN_ON)
            w = (
                1.0
                if written in (None, "")
                else weight(
                    (tau.as_of - dt.date.fromisoformat(str(written))).days, self.eta, self.kappa
                )
            )
            if w < self.theta:
                continue
            scored.append(replace(item, score=float(item.score or 0.0) * w))
        scored.sort(key=lambda item: (-item.score, item.id))
        return ReadDecision(tuple(scored[: self.k]), admitted=len(scored))


@register_policy("decay", params=DecayParams, display="Decay")
def decay(context: PolicyContext[DecayParams]) -> DecayRead:
    return DecayRead(context.k, context.params)
