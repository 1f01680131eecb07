"""`trajectories/FORMAT.md` documents exactly the format the loader accepts.

Each part of the format has a key table in FORMAT.md whose first column is headed
`<part> key`. Its rows must name the model's keys, in the model's order (the order the
validator lists allowed keys in), say `yes` in the `required` column exactly for the
required ones, and name every allowed value of an enumerated key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, get_args, get_origin

import pytest
from pydantic import BaseModel

from place.trajectory.document import (
    CompactionDoc,
    ConflictDoc,
    ConversationDoc,
    EntityDoc,
    EventDoc,
    InsertTurnDoc,
    NeedDoc,
    PairDoc,
    PermissionDoc,
    PredicateDoc,
    ProbeDoc,
    QueryDoc,
    SchemaDoc,
    ScopeDoc,
    TaskDoc,
    TrajectoryDoc,
    TurnDoc,
    format_keys,
)

FORMAT_MD = Path(__file__).parents[2] / "trajectories" / "FORMAT.md"

TABLES: dict[str, type[BaseModel]] = {
    "top-level key": TrajectoryDoc,
    "schema key": SchemaDoc,
    "entity key": EntityDoc,
    "scope key": ScopeDoc,
    "predicate key": PredicateDoc,
    "conversation key": ConversationDoc,
    "turn key": TurnDoc,
    "event key": EventDoc,
    "query key": QueryDoc,
    "pair key": PairDoc,
    "inserted turn key": InsertTurnDoc,
    "probe key": ProbeDoc,
    "conflict key": ConflictDoc,
    "permission key": PermissionDoc,
    "task key": TaskDoc,
    "need key": NeedDoc,
    "compaction key": CompactionDoc,
}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _key_tables() -> dict[str, list[dict[str, str]]]:
    """Every table whose first column is headed `... key`: header -> rows (column -> cell)."""
    tables: dict[str, list[dict[str, str]]] = {}
    lines = FORMAT_MD.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines[:-1]):
        if not (line.startswith("|") and re.fullmatch(r"\|(\s*-+\s*\|)+", lines[i + 1].strip())):
            continue
        header = _cells(line)
        if not header[0].endswith(" key"):
            continue
        assert header[0] not in tables, f"two tables headed {header[0]!r}"
        rows = []
        for row in lines[i + 2 :]:
            if not row.startswith("|"):
                break
            rows.append(dict(zip(header, _cells(row), strict=True)))
        tables[header[0]] = rows
    return tables


def _documented(rows: list[dict[str, str]], first: str) -> list[tuple[str, dict[str, str]]]:
    """(key, its row) for every backticked key in the first column, in order."""
    return [(key, row) for row in rows for key in re.findall(r"`([^`]+)`", row[first])]


def test_every_part_of_the_format_has_exactly_one_key_table() -> None:
    assert set(_key_tables()) == set(TABLES)


@pytest.mark.parametrize("header", sorted(TABLES))
def test_documented_keys_are_the_model_keys_in_order(header: str) -> None:
    documented = [key for key, _ in _documented(_key_tables()[header], header)]
    assert documented == list(format_keys(TABLES[header]))


@pytest.mark.parametrize("header", sorted(TABLES))
def test_required_column_matches_the_model(header: str) -> None:
    model = TABLES[header]
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    for key, row in _documented(_key_tables()[header], header):
        if "required" in row:  # the event table has no such column: all rules are by op
            assert (row["required"] == "yes") == fields[key].is_required(), (header, key)


@pytest.mark.parametrize("header", sorted(TABLES))
def test_enumerated_values_are_all_documented(header: str) -> None:
    model = TABLES[header]
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    for key, row in _documented(_key_tables()[header], header):
        annotation = fields[key].annotation
        if get_origin(annotation) is Literal:
            shown = set(re.findall(r"`([^`]+)`", " ".join(list(row.values())[1:])))
            assert set(get_args(annotation)) <= shown, (header, key)
