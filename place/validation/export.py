"""`place outcomes export RUN_DIR... --sample N --seed S --out FILE.csv`: answers to label.

Every answered item of the given runs (a query record with an answer, a probe's injected read
with one) is a candidate. The same answer to the same question recurs across conditions and
worlds, and a labeller should judge it once, so candidates are de-duplicated by (question,
answer, predicate), the first one kept in a stable order (runs as given, records in file
order). N of them are drawn with `random.Random(S)`, so the same inputs give the same file,
byte for byte, and a sample can be re-made from its command alone.

Each row carries Ω as `place.lexicon.outcome.outcome` computes it *now* on the answer, not the
outcome stored when the run was recorded: what is validated is the rule as it stands. It
also carries the predicate's canonical values, read from the run's own trajectory, so that a
labeller picks from the same vocabulary Ω uses.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import random
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from place.errors import PlaceError

if TYPE_CHECKING:
    from place.trajectory.model import Trajectory

ROOT = Path(__file__).resolve().parents[2]
"""The repository: a run's manifest records its trajectory path relative to it (or to the
run directory, for a generated trajectory written there as `trajectory.yaml`)."""

COLUMNS = (
    "id",
    "run",
    "item",
    "condition",
    "predicate",
    "question",
    "gold",
    "answer",
    "values",
    "omega",
    "label",
)
"""The export's columns, in order; `label` is left blank for the labeller."""

ABSTAIN = "ABSTAIN"
"""The outcome {ABSTAIN}: the answer says the information is missing."""
NONE = "NONE"
"""The empty outcome: the answer names no value and does not abstain."""
SEPARATOR = " | "
"""Joins the values of a set-valued cell (gold, values, omega, label)."""


def format_outcome(values: Iterable[str]) -> str:
    """An outcome as a cell: `ABSTAIN`, `NONE` for the empty set, else its values sorted and
    joined, so equal sets are equal strings (the category Cohen's kappa counts)."""
    found = sorted(set(values))
    if not found:
        return NONE
    return SEPARATOR.join(found)


@dataclass(frozen=True)
class Answered:
    """One answered item of a run: what the labeller sees, before Ω is recomputed."""

    run: str
    """The run directory as given on the command line."""
    item: str
    """The query or probe id."""
    condition: str
    predicate: str
    question: str
    gold: tuple[str, ...]
    """As the trajectory writes it: () means the right answer is to abstain."""
    answer: str

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two items the same judgement for a labeller."""
        return (self.question, self.answer, self.predicate)


def answered_items(run: str) -> list[Answered]:
    """The answered items of one run, queries then probes, each in file order. An answer-free
    run (docs/method.md §15) has none."""
    from place.archive import load_run_records

    records = load_run_records(Path(run))
    items = [
        Answered(run, q.query, q.condition, q.tau[1], q.question, tuple(q.gold), q.raw_answer)
        for q in records.queries
        if q.raw_answer is not None
    ]
    items += [
        Answered(
            run, p.probe, p.condition, p.tau[1], p.question, tuple(p.gold), p.injected.raw_answer
        )
        for p in records.probes
        if p.injected is not None and p.injected.raw_answer is not None
    ]
    return items


def distinct(items: Iterable[Answered]) -> list[Answered]:
    """The first item of every (question, answer, predicate), in the order given."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Answered] = []
    for item in items:
        if item.key not in seen:
            seen.add(item.key)
            out.append(item)
    return out


def draw(pool: Sequence[Answered], n: int, seed: int) -> list[Answered]:
    """N items of the pool in the order `random.Random(seed)` draws them (all of them, in a
    drawn order, when the pool is smaller): the order a labeller sees is not the order of the
    conditions, which would put one condition's answers side by side."""
    return random.Random(seed).sample(list(pool), min(n, len(pool)))


def _manifest(run: str) -> dict[str, Any]:
    path = Path(run) / "manifest.json"
    if not path.is_file():
        raise PlaceError(
            f"{run}: not a run directory (no manifest.json); allowed: the directory of a "
            "`place run`"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise PlaceError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PlaceError(f"{path}: not a JSON object")
    return data


def trajectory_candidates(run: str, recorded: str | None) -> list[Path]:
    """Where a run's trajectory may be, in order: its recorded path relative to the run
    directory (a generated one is written there) and to the repository, as given, and the run
    directory's `trajectory.yaml`."""
    run_dir = Path(run)
    paths: list[Path] = []
    if recorded:
        given = Path(recorded)
        paths += [given] if given.is_absolute() else [run_dir / given, ROOT / given, given]
    paths.append(run_dir / "trajectory.yaml")
    out: list[Path] = []
    for path in paths:
        if path.resolve() not in {p.resolve() for p in out}:
            out.append(path)
    return out


def find_trajectory(run: str) -> Path:
    """The run's trajectory file: the first candidate whose bytes have the sha256 the manifest
    header records (any existing one when it records none). A file of the same name with other
    bytes is another trajectory: its canonical values may differ from the run's."""
    header = _manifest(run).get("header") or {}
    recorded = header.get("trajectory") or {}
    path, sha = recorded.get("path"), recorded.get("sha256")
    looked: list[str] = []
    for candidate in trajectory_candidates(run, path):
        if not candidate.is_file():
            looked.append(f"{candidate} (missing)")
            continue
        found = hashlib.sha256(candidate.read_bytes()).hexdigest()
        if sha is None or found == sha:
            return candidate
        looked.append(f"{candidate} (sha256 {found[:12]}…, other bytes)")
    raise PlaceError(
        f"{run}: the run's trajectory ({path or 'no path recorded'}, sha256 "
        f"{str(sha)[:12]}…) is not found; looked at: {'; '.join(looked)}; allowed: a run whose "
        "trajectory is at its recorded path (relative to the run directory or the repository) "
        "or in the run directory as trajectory.yaml"
    )


def _values_of(trajectory: Trajectory, predicate: str, run: str) -> tuple[str, ...]:
    """The predicate's canonical values, in the trajectory's order; refused when a cell could
    not hold them unambiguously (a value with the separator, or one spelled like a keyword)."""
    declared = trajectory.schema.predicates.get(predicate)
    if declared is None:
        raise PlaceError(
            f"{run}: predicate {predicate!r} of its records is not in its trajectory "
            f"{trajectory.source_path}; allowed: {', '.join(sorted(trajectory.schema.predicates))}"
        )
    values = tuple(declared.values)
    clash = [v for v in values if "|" in v or v.strip() != v or v in (ABSTAIN, NONE) or not v]
    if clash:
        raise PlaceError(
            f"{trajectory.source_path}: predicate {predicate!r} has the value {clash[0]!r}, "
            f"which a label cell cannot hold; allowed: values without '|', surrounding spaces, "
            f"and other than {ABSTAIN} and {NONE}"
        )
    return values


def rows(drawn: Sequence[Answered], trajectories: dict[str, Trajectory]) -> list[list[str]]:
    """The CSV rows of the drawn items (header first), Ω recomputed with each run's lexicon."""
    from place.lexicon import Lexicon
    from place.lexicon.outcome import outcome

    lexicons = {run: Lexicon(t.schema, t.principal) for run, t in trajectories.items()}
    out = [list(COLUMNS)]
    for number, item in enumerate(drawn, start=1):
        values = _values_of(trajectories[item.run], item.predicate, item.run)
        omega = outcome(lexicons[item.run], item.answer, item.predicate)
        out.append(
            [
                f"e{number}",
                item.run,
                item.item,
                item.condition,
                item.predicate,
                item.question,
                SEPARATOR.join(item.gold) if item.gold else ABSTAIN,
                item.answer,
                SEPARATOR.join(values),
                format_outcome(omega),
                "",
            ]
        )
    return out


def to_csv(table: Sequence[Sequence[str]]) -> str:
    """RFC 4180 quoting with `\\n` line ends: the same rows give the same bytes everywhere."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(table)
    return buffer.getvalue()


@dataclass(frozen=True)
class Export:
    """What `export` wrote: the rows drawn, and the pool they were drawn from."""

    rows: int
    answered: int
    distinct: int


def export(runs: Sequence[str], n: int, seed: int, out: Path, force: bool = False) -> Export:
    """Draw N distinct answered items of `runs` into the CSV `out` (docs/validation.md)."""
    from place.atomic import write_text
    from place.reference.validate import load_trajectory

    if n < 1:
        raise PlaceError(f"--sample {n}: allowed: a positive number of rows")
    if out.exists() and not force:
        raise PlaceError(
            f"--out {out}: exists (it may hold labels); allowed: a new file, or --force to "
            "overwrite it"
        )
    if not out.parent.is_dir():
        raise PlaceError(
            f"--out {out}: the directory {out.parent} does not exist; allowed: a file in an "
            "existing directory"
        )
    answered: list[Answered] = []
    trajectories: dict[str, Trajectory] = {}
    for run in runs:
        _manifest(run)  # a directory that is no run is refused, even without answers
        items = answered_items(run)
        if items and run not in trajectories:
            trajectories[run] = load_trajectory(find_trajectory(run))
        answered += items
    if not answered:
        raise PlaceError(
            f"{', '.join(runs)}: no answered item (answer-free runs ask no answers); allowed: "
            "runs whose query records or injected probe reads carry a raw_answer"
        )
    pool = distinct(answered)
    drawn = draw(pool, n, seed)
    write_text(out, to_csv(rows(drawn, trajectories)))
    return Export(rows=len(drawn), answered=len(answered), distinct=len(pool))


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`place outcomes export` (registered by `place.cli` under the `outcomes` group)."""
    p = sub.add_parser(
        "export",
        help="draw answered items of recorded runs into a CSV for human labels of Ω",
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="recorded run directories")
    p.add_argument("--sample", type=int, required=True, metavar="N", help="rows to draw")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the draw (0)")
    p.add_argument("--out", required=True, metavar="FILE.csv", help="the CSV to write")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    done = export(args.run_dirs, args.sample, args.seed, out, force=args.force)
    if done.rows < args.sample:
        print(
            f"place outcomes export: only {done.distinct} distinct answered items (of "
            f"{done.answered} answered), fewer than --sample {args.sample}: all written",
            file=sys.stderr,
        )
    print(
        f"{out}: {done.rows} rows drawn with seed {args.seed} from {done.distinct} distinct "
        f"answered items ({done.answered} answered) of {len(args.run_dirs)} "
        + ("run" if len(args.run_dirs) == 1 else "runs")
    )
    return 0
