"""Summary directories: what `place compare --replications`, `place compare --dose-response`
(history lengths, or a distractor study) and `place drift` write. They hold a report and
its PNG figures, no records: the viewer shows them as a page of tables and figures, with
no item, scorecard or comparison.

A summary is recognised by its files (`summary_report`): no manifest.json and no records,
one of `REPORTS` and at least one PNG. The Markdown reports are the shape
`place.report.tables.to_markdown` writes after a `_header line_`, so they are read by the
same `parse_markdown` as a run's `tables/tables.md`; a drift directory's table is made from
its drift.json, with the columns `place drift` prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from place.errors import PlaceError
from place.view.tables import ViewTable, parse_markdown

REPORTS: dict[str, str] = {
    "replications.md": "Replications",
    "dose_response.md": "Dose-response",
    "distractors.md": "Distractors",
    "drift.json": "Drift",
}
"""A summary's report, by file name, and the kind of summary it makes (first found wins)."""
DRIFT_SCHEMA = "place-drift/1"


@dataclass(frozen=True)
class LoadedSummary:
    """One summary directory as the viewer needs it, read once."""

    path: Path
    """As given, never resolved (as a run's)."""
    kind: str
    """`Replications`, `Dose-response`, `Distractors` or `Drift`."""
    report: str
    """The file its tables come from (a key of `REPORTS`)."""
    description: str | None
    """The report's header line (the study: trajectories, design, model, bootstrap)."""
    tables: list[ViewTable]
    figures: list[Path]
    """The directory's PNG figures, by name."""

    @property
    def label(self) -> str:
        return f"{self.kind} summary · {self.path.name}"


def summary_report(d: Path) -> str | None:
    """The report that makes `d` a summary directory, or None (not one)."""
    return next((name for name in REPORTS if (d / name).is_file()), None)


def figures(d: Path) -> list[Path]:
    return sorted(d.glob("*.png"))


def _markdown(d: Path, report: str) -> tuple[str | None, list[ViewTable]]:
    """The header line (`_…_` before the first table) and the tables of a Markdown report."""
    path = d / report
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlaceError(f"{path}: not a readable report ({exc})") from None
    lines = text.splitlines()
    description = None
    first = next((n for n, ln in enumerate(lines) if ln.strip()), None)
    if first is not None:
        line = lines[first].strip()
        if len(line) > 1 and line.startswith("_") and line.endswith("_"):
            description = line[1:-1].strip()
            lines = lines[first + 1 :]
    tables = parse_markdown("\n".join(lines))
    if not tables:
        raise PlaceError(
            f"{path}: holds no table; expected the report `place compare` writes (a header "
            "line, then **title** and a pipe table per table)"
        )
    return description, tables


def _stat(stat: dict[str, Any] | None, expected: float | None = None, digits: int = 2) -> str:
    """`estimate [low, high]` as `place drift` prints it, then `(expected)` when there is one."""
    if stat is None:
        return "–"
    est, ci = stat.get("estimate"), stat.get("interval")
    text = "n/a" if est is None else f"{est:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
    return text + ("" if expected is None else f" ({expected:.{digits}f})")


def _drift(d: Path) -> tuple[str | None, list[ViewTable]]:
    """The header and two tables of drift.json: the cells (as `place drift` prints them) and
    the trajectories."""
    path = d / "drift.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlaceError(f"{path}: not a readable JSON drift summary ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != DRIFT_SCHEMA:
        schema = doc.get("schema") if isinstance(doc, dict) else None
        raise PlaceError(
            f"{path}: not a drift summary (schema {schema!r}); expected the drift.json "
            f"({DRIFT_SCHEMA}) `place drift` writes"
        )
    h = doc.get("header") or {}
    trajectories = h.get("trajectories") or []
    git = h.get("git_commit") or "?"
    description = (
        f"Drift experiment (docs/method.md §13): {len(trajectories)} trajectories; ε "
        f"{', '.join(f'{e:g}' for e in h.get('eps') or [])}; reconciliation every N "
        f"{', '.join(str(n) for n in h.get('every') or [])} (0 = never); {h.get('seeds')} seeds "
        f"per cell; core {h.get('core') or 'the schema’s core flags'}; gate "
        f"{'on' if h.get('gate') else 'off'}; bootstrap {h.get('resamples')} resamples, seed "
        f"{h.get('bootstrap_seed')}; git {git}{' (dirty)' if h.get('git_dirty') else ''}; "
        f"{doc.get('violations')} violations"
    )
    rows = []
    for c in doc.get("cells") or []:
        exp = c.get("expected") or {}
        rows.append(
            [
                str(c.get("trajectory")),
                f"{c.get('eps'):g}",
                str(c.get("every")),
                _stat(c.get("D_T")),
                _stat(c.get("max_mean_D"), exp.get("N_eps")),
                _stat(c.get("phase_max_mean_D"), exp.get("window_peak")),
                _stat(c.get("time_mean_D"), exp.get("half_window"), 3),
                _stat(c.get("slope")),
                str(c.get("violations")),
            ]
        )
    cells = ViewTable(
        title="Drift: divergence per trajectory, ε and reconciliation period N, estimate "
        "[95 % interval] (expected)",
        note=None,
        banner=None,
        header=[
            "trajectory",
            "ε",
            "N",
            "D_T",
            "max_t mean D (N·ε)",
            "window peak ((N−1)ε)",
            "time mean ((N−1)ε/2)",
            "slope",
            "violations",
        ],
        rows=rows,
    )
    shown = ViewTable(
        title="Trajectories",
        note=None,
        banner=None,
        header=["id", "checkpoints", "sha256", "path"],
        rows=[
            [str(t.get(k)) for k in ("id", "checkpoints", "sha256", "path")] for t in trajectories
        ],
    )
    return description, [cells, shown]


def load_summary(d: Path) -> LoadedSummary:
    """One summary directory (`summary_report` found its report), read and checked."""
    report = summary_report(d)
    if report is None:
        raise PlaceError(f"{d}: no summary report ({', '.join(REPORTS)})")
    if report == "drift.json":
        description, tables = _drift(d)
    else:
        description, tables = _markdown(d, report)
    return LoadedSummary(d, REPORTS[report], report, description, tables, figures(d))
