"""`place report RUN_DIR`: recompute metrics, tables and plots from a run's records alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from place import atomic, faults
from place.archive import load_run_records
from place.errors import PlaceError
from place.records import RunRecords
from place.report.integrity import check_one_run
from place.report.metrics import MetricsDocument, compute_metrics, dump_metrics
from place.report.plots import write_plots
from place.report.provenance import compute_note
from place.report.tables import all_tables, on_paper_trajectory, to_csv, to_latex, to_markdown


def load_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "manifest.json"
    if not path.exists():
        raise PlaceError(f"{run_dir}: no manifest.json; is this a place run directory?")
    return json.loads(path.read_text(encoding="utf-8"))


def recompute(run_dir: Path, records: RunRecords | None = None) -> MetricsDocument:
    """The metrics document, from manifest header and records/*.jsonl only (`records`: those
    records, already loaded)."""
    manifest = load_manifest(run_dir)
    records = load_run_records(run_dir) if records is None else records
    check_one_run(run_dir, records, manifest["header"])
    return compute_metrics(
        records,
        header=manifest["header"],
        seed=int(manifest["seeds"]["bootstrap"]),
        conversations=manifest["header"]["conversation_ids"],
        resamples=int(manifest["seeds"].get("resamples", 4000)),
    )


def write_tables(
    metrics_docs: list[MetricsDocument], out_dir: Path, paper: bool, note: str | None = None
) -> None:
    markdown = [f"_{note}_\n"] if note else []
    for table in all_tables(metrics_docs, paper=paper):
        atomic.write_text(out_dir / f"{table.name}.tex", to_latex(table))
        atomic.write_text(out_dir / f"{table.name}.csv", to_csv(table))
        markdown.append(to_markdown(table))
    atomic.write_text(out_dir / "tables.md", "\n".join(markdown))


def show_paper(requested: bool | None, runs: list[MetricsDocument], manifest: Any = None) -> bool:
    """Whether tables show the paper's published rows, the one rule of `place run`,
    `place report` and `place compare`: asked for (True) or refused (False) explicitly, else
    only when every run is on the paper's trajectory and (for a run directory) its
    configuration did not turn them off (`paper_values=false`)."""
    if requested is not None:
        return requested
    if manifest is not None and not (manifest.get("config") or {}).get("paper_values", True):
        return False
    return on_paper_trajectory(runs)


def write_report(
    run_dir: Path, paper: bool | None = None, plots: bool = True
) -> MetricsDocument:
    """metrics.json, tables and plots of a run directory, from its records. `paper`: None
    shows the paper's rows by `show_paper`'s rule, True/False forces them on or off."""
    # The records are read once, for the metrics and the plots.
    records = load_run_records(run_dir)
    metrics = recompute(run_dir, records)
    atomic.write_text(run_dir / "metrics.json", dump_metrics(metrics))
    faults.kill_point("report")
    manifest = load_manifest(run_dir)
    note = compute_note(manifest)
    if note:
        print(note, file=sys.stderr)
    shown = show_paper(paper, [metrics], manifest)
    write_tables([metrics], run_dir / "tables", shown, note=note)
    if plots:
        write_plots(records, metrics, run_dir / "plots")
    return metrics
