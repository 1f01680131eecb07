"""Query-time eligibility E (method.md §1), shared by the evaluator and the read authorizer."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple, Protocol

from place.trajectory.model import GLOBAL_SCOPE


class Interpretation(NamedTuple):
    """τ = (entity, predicate, scope, as_of): what a query asks about."""

    entity: str
    predicate: str
    scope: str
    as_of: dt.date


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
