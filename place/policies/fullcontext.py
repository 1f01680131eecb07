"""`fullcontext`: the newest records that fit in a character budget (docs/method.md §8.9).

No retrieval: the query text is not read, no similarity is computed and k does not apply.
Records are taken newest first by (`written_on`, `written_seq`, id), as `recency` orders
them, while the characters of their texts together stay within
`design.fullcontext.budget_chars`; the first record that does not fit ends the read (no
older, shorter record is taken after it). They are exposed oldest first, as a transcript
reads. It is the AOEP-v0 pilot's "full context" system (Append/Fullcontext).

The budget counts the record texts only (not the prompt's "- " and line breaks). The
configuration check counts it in the longest answer prompt (`max_exposed_chars`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from annotated_types import Ge, Le

from place.eligibility import Interpretation
from place.governance.authorizer import ReadDecision
from place.params import Doc
from place.policies.recency import newest_first
from place.policies.registry import PolicyContext, register_policy

if TYPE_CHECKING:
    from place.memory.item import ReadOnlyStore


@dataclass(frozen=True)
class FullcontextParams:
    """`design.fullcontext`: the character budget (the one place its default lives)."""

    budget_chars: Annotated[
        int,
        Ge(1),
        Le(1_000_000),
        Doc(
            "fullcontext: characters of record text one read exposes at most (the newest "
            "records that fit, oldest first); the prompt check counts it in the answer prompt."
        ),
    ] = 6000


class FullcontextRead:
    name = "fullcontext"

    def __init__(self, params: FullcontextParams = FullcontextParams()) -> None:
        self.budget = params.budget_chars

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        taken, used = [], 0
        for item in newest_first(store):
            if used + len(item.text) > self.budget:
                break
            taken.append(item)
            used += len(item.text)
        return ReadDecision(tuple(reversed(taken)))


def max_exposed_chars(params: FullcontextParams) -> int:
    return params.budget_chars


@register_policy(
    "fullcontext",
    params=FullcontextParams,
    display="Fullcontext",
    max_exposed_chars=max_exposed_chars,
)
def fullcontext(context: PolicyContext[FullcontextParams]) -> FullcontextRead:
    return FullcontextRead(context.params)
