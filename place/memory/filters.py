"""Qdrant payload filters that keep every read inside one principal's records.

Every filtered read and count of a store goes through :func:`principal_filter` or
:func:`user_condition`, so no read path can leave out the ``user_id`` test.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def principal_filter(
    principal: str, must: Sequence[Any], should: Sequence[Any], must_not: Sequence[Any]
) -> Any:
    """``user_id == principal AND must AND (any of should) AND NOT must_not``.

    Qdrant local mode evaluates a filter in Python point by point, left to right, and stops
    at the first failing condition, so where the principal test goes is a cost, not a
    meaning. With ``must`` conditions it goes last in ``must`` (theirs are more selective).
    With only ``must_not`` it is tested after them (as a single ``should``). With ``should``
    branches it is distributed into each branch, last:
    ``p AND (A OR B) == (A AND p) OR (B AND p)``; a point then pays for it only after it
    passes a branch's own conditions (QASC's filter relies on this, docs/decisions.md).
    """
    from qdrant_client import models

    user = user_condition(principal)
    if must:
        return models.Filter(
            must=[*must, user], should=list(should) or None, must_not=list(must_not) or None
        )
    if not should:
        # One `should` condition is a `must` that Qdrant tests after `must_not`: a point a
        # `must_not` condition excludes never pays for the principal test.
        return models.Filter(should=[user], must_not=list(must_not) or None)
    branches: list[models.Condition] = [
        models.Filter(
            must=[*_as_list(branch.must), user],
            should=branch.should,
            must_not=branch.must_not,
            min_should=branch.min_should,
        )
        if isinstance(branch, models.Filter)
        else models.Filter(must=[branch, user])
        for branch in should
    ]
    return models.Filter(should=branches, must_not=list(must_not) or None)


def user_condition(principal: str) -> Any:
    """The condition ``user_id == principal`` (Mem0 writes ``user_id`` on every point)."""
    from qdrant_client import models

    return models.FieldCondition(key="user_id", match=models.MatchValue(value=principal))


def _as_list(conditions: Any) -> list[Any]:
    """A Filter clause is None, one condition or a list of them."""
    if conditions is None:
        return []
    return list(conditions) if isinstance(conditions, list) else [conditions]


__all__ = ["principal_filter", "user_condition"]
