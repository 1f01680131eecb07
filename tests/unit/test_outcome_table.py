"""Ω on answer tables written apart from it (issue #43; docs/method.md §4.1, "How well Ω
reads answers"): `tests/data/outcomes/answers.yaml` (a development half and a test half) and
`tests/data/outcomes/heldout.yaml` (written later, by another author, after the rule was
settled). The figures docs/method.md quotes are recomputed here, so the document cannot go
stale."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import schema_from_yaml

from place.lexicon import ABSTAIN, Lexicon, outcome

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data" / "outcomes"
SCHEMA, PRINCIPAL = schema_from_yaml()
LEX = Lexicon(SCHEMA, PRINCIPAL)


@dataclass(frozen=True)
class Score:
    n: int
    exact: float
    """Share of rows whose Ω equals the table's outcome."""
    precision: float
    """Of the rows Ω reads as ABSTAIN, the share the table says abstain."""
    recall: float
    """Of the rows the table says abstain, the share Ω reads as ABSTAIN."""


def rows(name: str, split: str | None = None) -> list[dict[str, Any]]:
    data = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))["answers"]
    return [r for r in data if split is None or r.get("split") == split]


def score(table: list[dict[str, Any]]) -> Score:
    got = [outcome(LEX, str(r["answer"]), str(r["predicate"])) for r in table]
    want = [frozenset(str(v) for v in r["outcome"]) for r in table]
    a = frozenset({ABSTAIN})
    said = sum(1 for g in got if g == a)
    true = sum(1 for w in want if w == a)
    both = sum(1 for g, w in zip(got, want, strict=True) if g == w == a)
    return Score(
        len(table),
        sum(g == w for g, w in zip(got, want, strict=True)) / len(table),
        both / said if said else 1.0,
        both / true if true else 1.0,
    )


TABLES = {
    "development half": ("answers.yaml", "dev"),
    "test half": ("answers.yaml", "test"),
    "held-out table": ("heldout.yaml", None),
}


def test_the_tables_cover_what_the_issue_asks() -> None:
    table = rows("answers.yaml")
    assert len(table) >= 150
    assert {r["split"] for r in table} == {"dev", "test"}
    kinds = {r["category"] for r in table}
    for needed in ("abstain-first", "abstain-second", "abstain-impersonal", "abstain-hedged"):
        assert needed in kinds
    for needed in ("assertion", "bare-negation", "historical", "two-values", "hedged-value"):
        assert needed in kinds
    assert len(rows("heldout.yaml")) >= 100
    for name in ("answers.yaml", "heldout.yaml"):
        for r in rows(name):
            for v in r["outcome"]:
                assert v == ABSTAIN or str(v) in SCHEMA.predicates[str(r["predicate"])].values, r


def test_the_test_half_agrees_exactly_at_least_95_percent() -> None:
    s = score(rows("answers.yaml", "test"))
    assert s.exact >= 0.95, s


def test_docs_quote_the_figures_of_every_table() -> None:
    """docs/method.md §4.1 has one line per table: `| name | n | exact | precision | recall |`."""
    text = (ROOT / "docs" / "method.md").read_text(encoding="utf-8")
    for label, (name, split) in TABLES.items():
        s = score(rows(name, split))
        line = f"| {label} | {s.n} | {s.exact:.3f} | {s.precision:.3f} | {s.recall:.3f} |"
        assert line in text, f"docs/method.md should say: {line}"


@pytest.mark.parametrize("label", list(TABLES))
def test_every_table_is_scored(label: str) -> None:
    name, split = TABLES[label]
    s = score(rows(name, split))
    assert s.n > 0 and 0.0 <= s.exact <= 1.0
    assert re.fullmatch(r"[\w.]+\.yaml", name)
