"""Find and read the directories `place view` shows: run directories (their manifest,
metrics, tables, plots and records) and summary directories (place/view/summary.py), all
checked before anything is written.

A viewer that half-understood a directory would show figures no one can trust, so every
input is refused here, with what was expected (a `PlaceError`: exit 2), rather than shown
partly: a path that is not a directory, a directory that holds no run and is no summary, a
run without records, records of a layout this version does not read (`place.records` says which).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from place.archive import ARCHIVE, load_run_records
from place.errors import PlaceError
from place.records import RECORD_FILES, RunRecords
from place.report.metrics import MetricsDocument, load_metrics
from place.view.summary import REPORTS, LoadedSummary, figures, load_summary, summary_report
from place.view.tables import ViewTable, read_tables

EXPECTED = (
    "a run directory (manifest.json beside records/*.jsonl or records.tar.xz), a directory "
    "whose subdirectories are run directories (a multirun root), or a summary directory "
    "(replications.md, dose_response.md or distractors.md from `place compare`, or "
    "drift.json from `place drift`, beside its PNG figures)"
)
"""What every RUN_DIR must be: said in each refusal."""


@dataclass(frozen=True)
class LoadedRun:
    """One run as the viewer needs it, read once."""

    path: Path
    """The directory as given (or as found under a multirun root): shown, never resolved,
    so that the site's bytes do not depend on where the checkout lives."""
    manifest: dict[str, Any]
    metrics: MetricsDocument | None
    """metrics.json, typed; None when the run has not been reported."""
    records: RunRecords
    tables: list[ViewTable]
    tables_source: str
    """Where the tables came from: `tables/tables.md`, `tables/*.csv`, `metrics.json` or ``
    (none)."""
    plots: list[Path]
    """The run's own PNG plots, by name."""

    @property
    def header(self) -> dict[str, Any]:
        return dict(self.manifest.get("header") or {})

    @property
    def answers(self) -> bool:
        """False for an answer-free run (docs/method.md §15), which its header says."""
        return bool(self.header.get("answers", True))


def _natural(path: Path) -> list[Any]:
    """Sort key: digits compare as numbers, so job 10_x comes after job 2_x."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


def _has_records(d: Path) -> bool:
    return (d / "records").is_dir() or (d / ARCHIVE).is_file()


def is_summary(d: Path) -> bool:
    """A summary directory: no manifest.json, no records, a report of `REPORTS` and PNGs."""
    return (
        not (d / "manifest.json").is_file()
        and not _has_records(d)
        and summary_report(d) is not None
        and bool(figures(d))
    )


def expand(dirs: Sequence[str | Path]) -> tuple[list[Path], list[Path]]:
    """The run and the summary directories of the arguments, each in argument order: a run
    or a summary directory is itself; a multirun root is its subdirectories that hold a
    manifest.json, in natural order. A directory given twice is shown once."""
    if not dirs:
        raise PlaceError(f"no RUN_DIR given; each must be {EXPECTED}")
    runs: list[Path] = []
    summaries: list[Path] = []
    for raw in dirs:
        d = Path(raw)
        if not d.exists():
            raise PlaceError(f"{d}: no such directory; each RUN_DIR must be {EXPECTED}")
        if not d.is_dir():
            raise PlaceError(f"{d}: not a directory; each RUN_DIR must be {EXPECTED}")
        into = runs
        if (d / "manifest.json").is_file() or _has_records(d):
            found = [d]
        elif is_summary(d):
            found, into = [d], summaries
        else:
            subdirs = sorted(
                (p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")),
                key=_natural,
            )
            found = [p for p in subdirs if (p / "manifest.json").is_file()]
            if not found:
                report = summary_report(d)
                why = (
                    f"it holds {report} but no PNG figure"
                    if report is not None
                    else f"no {', '.join(REPORTS)}"
                )
                raise PlaceError(
                    f"{d}: not a run (no manifest.json, no records/ or {ARCHIVE}), no "
                    f"subdirectory is one, and not a summary ({why}); each RUN_DIR must be "
                    f"{EXPECTED}"
                )
        for p in found:
            if all(p.resolve() != q.resolve() for q in runs + summaries):
                into.append(p)
    return runs, summaries


def _manifest(d: Path) -> dict[str, Any]:
    path = d / "manifest.json"
    if not path.is_file():
        raise PlaceError(f"{d}: no manifest.json; each RUN_DIR must be {EXPECTED}")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlaceError(f"{path}: not a readable JSON manifest ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("header"), dict):
        raise PlaceError(
            f"{path}: not a run manifest (no `header` object); expected the manifest.json a "
            "`place run` writes"
        )
    return doc


def _records(d: Path) -> RunRecords:
    """The run's records through `place.archive` (records/ or records.tar.xz); a layout this
    version does not read is refused by `place.records` itself."""
    known = ", ".join(name for name, _ in RECORD_FILES.values())
    if not _has_records(d):
        raise PlaceError(
            f"{d}: no records (neither records/ nor {ARCHIVE}); expected a recorded run: "
            f"records/ with {known}, or {ARCHIVE}"
        )
    records_dir = d / "records"
    if records_dir.is_dir():
        present = {p.name for p in records_dir.glob("*.jsonl")}
        if not present & {name for name, _ in RECORD_FILES.values()}:
            raise PlaceError(
                f"{records_dir}: an unknown records layout (files: "
                f"{', '.join(sorted(present)) or 'none'}); expected {known}"
            )
    records = load_run_records(d)
    if not any(getattr(records, f) for f in ("checkpoints", "queries", "probes", "steps")):
        raise PlaceError(
            f"{d}: its records hold no checkpoint, query, probe or step; expected the "
            f"records of a run ({known})"
        )
    return records


def load_run(d: Path) -> LoadedRun:
    """One run directory, every part read and checked."""
    manifest = _manifest(d)
    metrics_path = d / "metrics.json"
    metrics = load_metrics(metrics_path) if metrics_path.is_file() else None
    records = _records(d)
    tables, source = read_tables(d / "tables", metrics)
    plots_dir = d / "plots"
    plots = sorted(plots_dir.glob("*.png")) if plots_dir.is_dir() else []
    return LoadedRun(d, manifest, metrics, records, tables, source, plots)


def load_inputs(dirs: Sequence[str | Path]) -> tuple[list[LoadedRun], list[LoadedSummary]]:
    """Every run (`load_run`) and every summary (`load_summary`) of the arguments (`expand`)."""
    runs, summaries = expand(dirs)
    return [load_run(d) for d in runs], [load_summary(d) for d in summaries]
