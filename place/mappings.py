"""Small helpers on nested mappings, shared by the runner and the reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def flatten(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"a": {"b": 1}, "c": [2]}` -> `{"a.b": 1, "c": [2]}`: nested keys dotted, lists kept
    as values."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
