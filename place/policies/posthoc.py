"""`posthoc`: top-k by similarity first, then drop what E rejects (docs/method.md §8).

The same eligibility test as QASC, applied after truncation instead of before: it never
exposes an ineligible item, but eligible support that ranked below k is lost. Comparing it
with QASC measures what "authorization precedes truncation" buys.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from place.eligibility import Interpretation, admits
from place.governance.authorizer import ReadDecision
from place.policies.registry import PolicyContext, register_policy
from place.readback import Readback

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore


class PosthocRead:
    name = "posthoc"

    def __init__(self, k: int, readback: Readback) -> None:
        self.k = k
        self.readback = readback

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        top = store.search(query, self.k)
        kept = tuple(item for item in top if admits(self.readback, item, tau, day))
        # `admitted`: what survived the filter (at most k), for comparison with QASC's count.
        return ReadDecision(kept, admitted=len(kept))


@register_policy("posthoc", governance=True, display="Posthoc")
def posthoc(context: PolicyContext[None]) -> PosthocRead:
    return PosthocRead(context.k, context.readback)
