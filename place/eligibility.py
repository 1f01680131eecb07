"""Query-time eligibility E, in one place (docs/method.md §1, §2.5, §3).

E is used at three levels, all defined here and shared by the evaluator and the read
authorizer:

- a fact: `is_eligible(f, τ)`: same entity and predicate, scope τ's or global, active, and
  τ's date inside its validity window (the reference support Q* is the eligible facts of S*);
- a record: `admits(β, m, τ, day)`: β reads an eligible fact of the queried predicate from m
  and no ineligible one (QASC's E(m, q, τ); records without lifecycle metadata count as
  active, since QASC cannot know better); `is_ineligible_exposure(β, m, τ, day)`: m holds a
  fact of the queried predicate that fails E (exposure I(m));
- a query on the store: `candidate_exclusions(τ)`, the one payload condition that drops the
  certified records whose eligibility key no eligible record can carry, before β decides E
  on the rest; `ELIGIBILITY_KEY` / `eligibility_key` / `key_of` define that key, and
  `ELIGIBILITY_INDEXES` the payload index a Qdrant server keeps on it.

β itself (how a record is read) is place/readback.py; E never reads the reference state.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from place.trajectory.model import GLOBAL_SCOPE

if TYPE_CHECKING:
    from qdrant_client import models


class Interpretation(NamedTuple):
    """τ = (entity, predicate, scope, as_of, asker): what a query asks about, and who asks.
    Without an asker (None) visibility is not tested: the paper's single-principal E."""

    entity: str
    predicate: str
    scope: str
    as_of: dt.date
    asker: str | None = None


class Windowed(Protocol):
    """Anything with a fact's identity, lifecycle status and validity window."""

    @property
    def entity(self) -> str: ...
    @property
    def predicate(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def valid_from(self) -> dt.date | None: ...
    @property
    def valid_until(self) -> dt.date | None: ...


def within_window(valid_from: dt.date | None, valid_until: dt.date | None, day: dt.date) -> bool:
    """valid_from <= day < valid_until, open ends allowed."""
    return (valid_from is None or valid_from <= day) and (valid_until is None or day < valid_until)


def expired(valid_until: dt.date | None, day: dt.date) -> bool:
    """A fact whose window has ended by `day` has left the state."""
    return valid_until is not None and valid_until <= day


def scope_admits(fact_scope: str, query_scope: str) -> bool:
    """Facts scoped `global` are eligible in every scope."""
    return fact_scope in (query_scope, GLOBAL_SCOPE)


def is_eligible(item: Windowed, tau: Interpretation) -> bool:
    return (
        item.entity == tau.entity
        and item.predicate == tau.predicate
        and scope_admits(item.scope, tau.scope)
        and item.status == "active"
        and within_window(item.valid_from, item.valid_until, tau.as_of)
    )


# --- records: E(m, q, τ) and exposure ----------------------------------------------------


class PredicateReader(Protocol):
    """What E needs of β (`place.readback.Readback`): the facts of one predicate a record
    holds, whatever their lifecycle, each with its lifecycle and whether β yields it."""

    def held_predicate_facts(
        self, record: Any, predicate: str, day: dt.date
    ) -> Iterable[tuple[Windowed, bool]]:
        """Every fact of `predicate` the record holds, with whether β yields it on `day`."""
        ...

    def visible_to(self, record: Any) -> tuple[str, ...]:
        """Who may see the record (its `visible_to`, or a plain record's speaker)."""
        ...


def admits(readback: PredicateReader, record: Any, tau: Interpretation, day: dt.date) -> bool:
    """QASC's E(m, q, τ): β reads an eligible fact of the queried predicate from the record,
    and the record holds no ineligible one (an exposed item shows all it holds: a derived
    summary that lists an expired or ended fact beside an eligible one would show the
    answer model the ineligible value; docs/decisions.md, "Summaries under QASC")."""
    if tau.asker is not None and tau.asker not in readback.visible_to(record):
        return False  # visibility (docs/method.md §11): a record the asker may not see
    held = list(readback.held_predicate_facts(record, tau.predicate, day))
    read = any(is_eligible(f, tau) for f, readable in held if readable)
    return read and all(is_eligible(f, tau) for f, _readable in held)


def is_ineligible_exposure(
    readback: PredicateReader, record: Any, tau: Interpretation, day: dt.date
) -> bool:
    """I(m): an exposed record holds a fact of the queried predicate that fails E (whatever
    its lifecycle: a superseded certified record still holds its fact)."""
    return any(
        not is_eligible(f, tau)
        for f, _readable in readback.held_predicate_facts(record, tau.predicate, day)
    )


# --- the store: the eligibility key and the query's pre-selection ---------------------------

ELIGIBILITY_KEY = "eligibility_key"
"""Metadata key of a certified record: ``entity/predicate/scope/status`` (:func:`eligibility_key`).

Redundant with the lifecycle keys on purpose: QASC pre-selects candidates with one test of
this key (Qdrant local mode pays per condition per point); the certifier keeps it equal to
the record's lifecycle and its readback verification checks that it does."""

ELIGIBILITY_INDEXES: dict[str, str] = {ELIGIBILITY_KEY: "keyword"}
"""Payload indexes (key -> Qdrant field schema) for every key QASC's filter tests (user_id
is Mem0's, indexed by Mem0). The memory backend creates them on a Qdrant server; local mode
has no indexes (it scans)."""


def eligibility_key(entity: str, predicate: str, scope: str, status: str) -> str:
    """``entity/predicate/scope/status``: ids never contain ``/`` (trajectory ids match
    ITEM_ID, statuses and the global scope are fixed words), so a key names one tuple."""
    return f"{entity}/{predicate}/{scope}/{status}"


def key_of(metadata: Mapping[str, Any]) -> str:
    """The eligibility key a certified record's lifecycle metadata calls for."""
    return eligibility_key(
        str(metadata.get("entity")),
        str(metadata.get("predicate")),
        str(metadata.get("scope")),
        str(metadata.get("status")),
    )


def candidate_exclusions(tau: Interpretation) -> list[models.Condition]:
    """The one `must_not` condition of QASC's query: a record with an eligibility key that is
    not an active record of the queried entity and predicate in the query's scope or the
    global scope cannot satisfy E. Records without the key (plain text) are not excluded
    (a missing key matches no condition), nor are the query's own candidates."""
    from qdrant_client import models

    admissible = sorted(
        eligibility_key(tau.entity, tau.predicate, scope, "active")
        for scope in {tau.scope, GLOBAL_SCOPE}
    )
    return [
        models.FieldCondition(
            key=ELIGIBILITY_KEY, match=models.MatchExcept(**{"except": admissible})
        )
    ]
