"""`place outcomes agree FILE.csv [FILE2.csv]`: how well Ω agrees with human labels.

A labelled file is an export of `place outcomes export` whose `label` column a person filled
with `ABSTAIN`, `NONE` or canonical values of the row's `values` joined by " | ". For each
file the report gives the exact agreement of Ω with the labels (the share of rows whose
outcome sets are equal), Cohen's kappa over the outcome as a category (the sorted values
joined, `ABSTAIN` or `NONE`), a confusion table by class (ABSTAIN / NONE / VALUE) and every
row where they disagree. With a second labeller's file of the same export, the same figures
between the two labellers say how far people agree with each other, the ceiling any rule can
be held to.

A file that cannot be read as labels is refused with every problem at once, each as
`FILE:LINE: what is wrong; allowed: ...`, so a labeller can fix them in one pass.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from place.errors import PlaceError
from place.validation.export import ABSTAIN, NONE, SEPARATOR, format_outcome

REQUIRED = ("id", "answer", "values", "omega", "label")
"""The columns `agree` reads; the export's others may be kept, dropped or reordered."""

CLASSES = (ABSTAIN, NONE, "VALUE")
"""The confusion table's classes: VALUE is any non-empty set of canonical values."""


@dataclass(frozen=True)
class Row:
    """One labelled row: the answer, Ω as exported, and the label, both as outcome sets."""

    id: str
    line: int
    """The line the row starts on (a quoted answer may span several)."""
    answer: str
    omega: frozenset[str]
    label: frozenset[str]


@dataclass(frozen=True)
class Labels:
    """One labelled file, its rows in file order."""

    path: str
    """As given on the command line: the labeller's name in the report."""
    rows: tuple[Row, ...]

    def by_id(self) -> dict[str, Row]:
        return {row.id: row for row in self.rows}


def parse_outcome(text: str, values: Sequence[str]) -> frozenset[str]:
    """A cell as an outcome set: `ABSTAIN`, `NONE`, or canonical values of `values` joined by
    "|"; ValueError saying what is wrong otherwise."""
    cell = text.strip()
    if not cell:
        raise ValueError("blank")
    if cell == ABSTAIN:
        return frozenset({ABSTAIN})
    if cell == NONE:
        return frozenset()
    parts = [part.strip() for part in cell.split("|")]
    if "" in parts:
        raise ValueError(f"{text!r} has an empty value between separators")
    for part in parts:
        if part in (ABSTAIN, NONE):
            raise ValueError(f"{text!r} joins {part} with other values ({part} stands alone)")
        if part not in values:
            raise ValueError(f"{part!r} is not one of this row's values")
    return frozenset(parts)


def _allowed(values: Sequence[str]) -> str:
    shown = ", ".join(values) if values else "(this row lists none)"
    return f"{ABSTAIN}, {NONE}, or values of this row joined by '{SEPARATOR}': {shown}"


def _records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(starting line, fields) of every CSV record, blank lines skipped. A spreadsheet's
    byte-order mark is dropped with the encoding."""
    start = 1
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            for fields in reader:
                if any(cell.strip() for cell in fields):
                    yield start, fields
                start = reader.line_num + 1
    except csv.Error as exc:
        raise PlaceError(f"{path}:{start}: not CSV ({exc}); allowed: a CSV file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlaceError(f"{path}: cannot be read ({exc}); allowed: a UTF-8 CSV file") from None


def _header(name: str, records: Iterator[tuple[int, list[str]]]) -> tuple[int, dict[str, int]]:
    """The header's line and the index of each column, refusing a missing or doubled one."""
    first = next(records, None)
    if first is None:
        raise PlaceError(f"{name}:1: empty file; allowed: a CSV written by `place outcomes export`")
    line, fields = first
    names = [cell.strip() for cell in fields]
    index = {column: names.index(column) for column in REQUIRED if column in names}
    missing = [column for column in REQUIRED if column not in index]
    doubled = sorted({column for column in REQUIRED if names.count(column) > 1})
    if missing or doubled:
        what = "missing column" if missing else "doubled column"
        raise PlaceError(
            f"{name}:{line}: {what} {', '.join(missing or doubled)}; allowed: a header with "
            f"{', '.join(REQUIRED)} once each (as `place outcomes export` writes it)"
        )
    return line, index


def _row(
    name: str, line: int, cells: dict[str, str], problems: list[str], seen: dict[str, int]
) -> Row | None:
    """One record as a Row, or None with what is wrong appended to `problems`."""
    before = len(problems)
    row_id = cells["id"].strip()
    if not row_id:
        problems.append(f"{name}:{line}: blank id; allowed: the export's id (e1, e2, ...)")
    elif row_id in seen:
        problems.append(
            f"{name}:{line}: duplicate id {row_id} (first on line {seen[row_id]}); allowed: "
            "each id once"
        )
    else:
        seen[row_id] = line
    values = [v.strip() for v in cells["values"].split("|") if v.strip()]
    parsed: dict[str, frozenset[str]] = {}
    for column in ("omega", "label"):
        try:
            parsed[column] = parse_outcome(cells[column], values)
        except ValueError as exc:
            what = f"blank {column}" if str(exc) == "blank" else f"{column}: {exc}"
            problems.append(f"{name}:{line}: {what}; allowed: {_allowed(values)}")
    if len(problems) > before:
        return None
    return Row(row_id, line, cells["answer"], parsed["omega"], parsed["label"])


def read_labels(path: str) -> Labels:
    """A labelled file, or PlaceError listing every problem as `FILE:LINE: ...; allowed:`."""
    records = _records(Path(path))
    header_line, index = _header(path, records)
    problems: list[str] = []
    seen: dict[str, int] = {}
    rows: list[Row] = []
    width = max(index.values()) + 1
    for line, fields in records:
        if len(fields) < width:
            problems.append(
                f"{path}:{line}: {len(fields)} fields, too few for the header of line "
                f"{header_line}; allowed: one field per column"
            )
            continue
        row = _row(path, line, {c: fields[i] for c, i in index.items()}, problems, seen)
        if row is not None:
            rows.append(row)
    if not problems and not rows:
        problems.append(f"{path}:{header_line + 1}: no rows; allowed: at least one labelled row")
    if problems:
        raise PlaceError("\n".join(problems))
    return Labels(path, tuple(rows))


def outcome_class(outcome: frozenset[str]) -> str:
    """ABSTAIN, NONE or VALUE: the confusion table's class of an outcome."""
    if outcome == {ABSTAIN}:
        return ABSTAIN
    return NONE if not outcome else "VALUE"


def kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' categories; None where it is undefined (both raters put
    every row in the one same category, so chance agreement is already perfect)."""
    if len(set(first) | set(second)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(list(first), list(second)))


@dataclass(frozen=True)
class Agreement:
    """Two raters over the same rows: Ω and a labeller, or two labellers."""

    first: str
    second: str
    n: int
    agreed: int
    kappa: float | None
    confusion: dict[tuple[str, str], int]
    """(first's class, second's class) -> rows."""
    other_values: int
    """Rows both put in VALUE with different sets of values."""
    disagreements: tuple[tuple[str, str, str, str], ...]
    """(id, answer, first's outcome, second's outcome), in file order."""


def compare(
    first: str, second: str, pairs: Sequence[tuple[str, str, frozenset[str], frozenset[str]]]
) -> Agreement:
    """The agreement of two raters over (id, answer, first's outcome, second's outcome)."""
    confusion = {(a, b): 0 for a in CLASSES for b in CLASSES}
    for _, _, a, b in pairs:
        confusion[(outcome_class(a), outcome_class(b))] += 1
    disagreements = tuple(
        (row_id, answer, format_outcome(a), format_outcome(b))
        for row_id, answer, a, b in pairs
        if a != b
    )
    return Agreement(
        first=first,
        second=second,
        n=len(pairs),
        agreed=len(pairs) - len(disagreements),
        kappa=kappa([format_outcome(p[2]) for p in pairs], [format_outcome(p[3]) for p in pairs]),
        confusion=confusion,
        other_values=sum(
            1 for *_, a, b in pairs if a != b and outcome_class(a) == outcome_class(b) == "VALUE"
        ),
        disagreements=disagreements,
    )


def with_omega(labels: Labels) -> Agreement:
    """Ω (as exported) against one labeller."""
    return compare("Ω", labels.path, [(r.id, r.answer, r.omega, r.label) for r in labels.rows])


def between(first: Labels, second: Labels) -> Agreement:
    """Two labellers of the same export, rows matched by id; refused unless both files hold
    the same ids with the same answers (else they are not labellings of one sample)."""
    mine, theirs = first.by_id(), second.by_id()
    if set(mine) != set(theirs):
        only_first = sorted(set(mine) - set(theirs), key=_id_order)
        only_second = sorted(set(theirs) - set(mine), key=_id_order)
        raise PlaceError(
            f"{second.path}: its ids differ from {first.path}'s (only in {first.path}: "
            f"{', '.join(only_first) or 'none'}; only in {second.path}: "
            f"{', '.join(only_second) or 'none'}); allowed: two labellings of the same export"
        )
    for row in first.rows:
        other = theirs[row.id]
        if other.answer != row.answer:
            raise PlaceError(
                f"{second.path}:{other.line}: id {row.id} has another answer than on "
                f"{first.path}:{row.line}; allowed: two labellings of the same export"
            )
    return compare(
        first.path,
        second.path,
        [(r.id, r.answer, r.label, theirs[r.id].label) for r in first.rows],
    )


def _id_order(row_id: str) -> tuple[int, str]:
    """e2 before e10: the export's ids in their numeric order."""
    digits = row_id[1:]
    return (int(digits), row_id) if row_id[:1] == "e" and digits.isdigit() else (10**12, row_id)


def _cell(text: str) -> str:
    """A markdown table cell: a '|' or a line break of an answer would break the table."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def _kappa_text(value: float | None) -> str:
    if value is None:
        return "undefined (both put every row in one same category)"
    return f"{value:.3f}"


def section(agreement: Agreement) -> list[str]:
    """The report's section on one pair of raters."""
    a, b = _cell(agreement.first), _cell(agreement.second)
    share = agreement.agreed / agreement.n
    lines = [
        f"## {a} and {b}",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| rows | {agreement.n} |",
        f"| exact agreement | {share:.3f} ({agreement.agreed}/{agreement.n}) |",
        f"| Cohen's kappa | {_kappa_text(agreement.kappa)} |",
        "",
        f"Confusion by class (rows: {a}, columns: {b}; VALUE is any set of values, and "
        f"{agreement.other_values} of the VALUE–VALUE rows differ in their values):",
        "",
        f"| {a} \\ {b} | {' | '.join(CLASSES)} | total |",
        "| --- | " + " | ".join("---:" for _ in CLASSES) + " | ---: |",
    ]
    for first in CLASSES:
        counts = [agreement.confusion[(first, second)] for second in CLASSES]
        lines.append(f"| {first} | {' | '.join(map(str, counts))} | {sum(counts)} |")
    totals = [sum(agreement.confusion[(f, s)] for f in CLASSES) for s in CLASSES]
    lines += [f"| total | {' | '.join(map(str, totals))} | {agreement.n} |", ""]
    if not agreement.disagreements:
        return [*lines, "Disagreements: none.", ""]
    lines += [
        f"Disagreements ({len(agreement.disagreements)}):",
        "",
        f"| id | answer | {a} | {b} |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {' | '.join(map(_cell, row))} |" for row in agreement.disagreements]
    return [*lines, ""]


def report(files: Sequence[Labels]) -> str:
    """The markdown report: Ω against each labeller, then the labellers against each other."""
    sections = [with_omega(labels) for labels in files]
    lines = ["# Ω against human labels", ""]
    lines += [f"- `{labels.path}`: {len(labels.rows)} rows" for labels in files]
    lines.append("")
    if len(files) == 2:
        sections.append(between(files[0], files[1]))
        other = files[1].by_id()
        differ = sum(1 for r in files[0].rows if r.omega != other[r.id].omega)
        if differ:
            lines += [
                f"The two files' Ω differ on {differ} rows (exported by different versions of "
                "Ω?): each labeller is compared with the Ω of its own file.",
                "",
            ]
    for agreement in sections:
        lines += section(agreement)
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`place outcomes agree` (registered by `place.cli` under the `outcomes` group)."""
    p = sub.add_parser(
        "agree",
        help="agreement of Ω with human labels (and of two labellers): exact agreement, "
        "Cohen's kappa, confusion by class, disagreements",
    )
    p.add_argument("file", metavar="FILE.csv", help="a labelled export")
    p.add_argument("file2", nargs="?", metavar="FILE2.csv", help="a second labeller's file")
    p.add_argument("--out", metavar="REPORT.md", help="also write the report here")
    p.set_defaults(func=cmd_agree)


def cmd_agree(args: argparse.Namespace) -> int:
    files = [read_labels(args.file)]
    if args.file2 is not None:
        files.append(read_labels(args.file2))
    text = report(files)
    print(text, end="")
    if args.out is not None:
        from place.atomic import write_text

        write_text(Path(args.out), text)
    return 0
