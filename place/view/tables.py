"""A run's tables as rows the viewer renders: from `tables/tables.md` as `place report`
wrote it, else from its CSVs, else recomputed from metrics.json by the same functions.

The Markdown is the reviewed form (titles, notes, the invalid banner), so it is read first;
it is read line by line in the one shape `place.report.tables.to_markdown` writes, not as
general Markdown.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from place.report.metrics import MetricsDocument


class ViewTable(TypedDict):
    title: str
    note: str | None
    banner: str | None
    header: list[str]
    rows: list[list[str]]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_markdown(text: str) -> list[ViewTable]:
    """The tables of a `tables.md`: each `**title**`, its `_Note: …_`, a `> **banner**` above
    it, and its pipe table. A line of another shape is kept as a note of the next table."""
    tables: list[ViewTable] = []
    title: str | None = None
    note: list[str] = []
    banner: str | None = None
    header: list[str] | None = None
    rows: list[list[str]] = []

    def flush() -> None:
        nonlocal title, note, banner, header, rows
        if header is not None:
            tables.append(
                ViewTable(
                    title=title or "",
                    note=" ".join(note) or None,
                    banner=banner,
                    header=header,
                    rows=rows,
                )
            )
            title, note, banner, header, rows = None, [], None, None, []

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("|"):
            cells = _cells(line)
            if header is None:
                header = cells
            elif not all(set(c) <= {"-", ":"} and c for c in cells):
                rows.append(cells)
            continue
        flush()
        if not line:
            continue
        if line.startswith("> "):
            banner = line[2:].strip().strip("*")
        elif line.startswith("**") and line.endswith("**"):
            title = line.strip("*")
        elif line.startswith("_") and line.endswith("_"):
            body = line.strip("_")
            note.append(body.removeprefix("Note: "))
        else:
            note.append(line)
    flush()
    return tables


def read_csvs(directory: Path) -> list[ViewTable]:
    """Every `*.csv` of a tables directory, by name; `# ` lines are its banner and note."""
    out: list[ViewTable] = []
    for path in sorted(directory.glob("*.csv")):
        lines = path.read_text(encoding="utf-8").splitlines()
        comments = [ln[2:] for ln in lines if ln.startswith("# ")]
        body = [ln for ln in lines if not ln.startswith("#")]
        grid = list(csv.reader(io.StringIO("\n".join(body))))
        if not grid:
            continue
        notes = [c.removeprefix("Note: ") for c in comments if c.startswith("Note: ")]
        banners = [c for c in comments if not c.startswith("Note: ")]
        out.append(
            ViewTable(
                title=path.stem,
                note=" ".join(notes) or None,
                banner=" ".join(banners) or None,
                header=grid[0],
                rows=grid[1:],
            )
        )
    return out


def read_tables(directory: Path, metrics: MetricsDocument | None) -> tuple[list[ViewTable], str]:
    """The run's tables and where they came from (`tables/tables.md`, `tables/*.csv`,
    `metrics.json`, or `` when there are none)."""
    md = directory / "tables.md"
    if md.is_file():
        return parse_markdown(md.read_text(encoding="utf-8")), "tables/tables.md"
    if directory.is_dir() and any(directory.glob("*.csv")):
        return read_csvs(directory), "tables/*.csv"
    if metrics is not None:
        from place.report.tables import all_tables

        return [
            ViewTable(title=t.title, note=t.note, banner=t.banner, header=t.header, rows=t.rows)
            for t in all_tables([metrics], paper=False)
        ], "metrics.json"
    return [], ""
