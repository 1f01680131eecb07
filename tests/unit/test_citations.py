"""The code cites the project's own method (docs/method.md), never the shared specification
it was written from: a citation a user cannot open is no citation (issue 25)."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "place"
BARE = re.compile(r"(?<!docs/)method\.md|\bamendment \d+")


def test_every_method_citation_names_docs_method_md() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if BARE.search(line)
    ]
    assert not found, "\n".join(found)


def test_every_cited_section_exists() -> None:
    headings = (PACKAGE.parent / "docs" / "method.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", headings, re.MULTILINE))
    cited = {
        match.rstrip(".")
        for path in PACKAGE.rglob("*.py")
        for match in re.findall(r"docs/method\.md §(\d+(?:\.\d+)?)", path.read_text("utf-8"))
    }
    assert cited - sections == set(), sorted(cited - sections)
