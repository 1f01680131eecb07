"""The site's data: one JSON document (`site_data`) holding, per run, its header, tables,
scorecard with every item behind each cell, the item table's rows and every item's page;
the paired comparisons between runs; and, per summary directory, its tables and figures
(summaries have no items, so nothing else lists them).

It is plain data, with no HTML in it: the page (place/view/assets/app.js) renders it, so
what the viewer shows can be tested from this document without a browser. It depends
only on its inputs (no time, no absolute path, values in record order), so the same runs
give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from place import __version__
from place.design import Design
from place.errors import PlaceError
from place.metrics.aoep import INVARIANTS, OBLIGATIONS, scorecard, scorecard_items
from place.view.compare import comparisons
from place.view.items import RunItems
from place.view.load import LoadedRun
from place.view.pool import Pools
from place.view.summary import LoadedSummary

SCHEMA = "place-view/1"
"""Version of the data document (data.js)."""


def design_of(run: LoadedRun) -> Design:
    """The run's design from its manifest header; a malformed one is the user's to fix."""
    try:
        return Design.from_json(run.header.get("design"))
    except (KeyError, TypeError, ValueError) as exc:
        raise PlaceError(
            f"{run.path}/manifest.json: header.design is not a design ({exc!r}); expected "
            "{name, producers, policies} as `place run` writes it"
        ) from None


def label(run: LoadedRun) -> str:
    h = run.header
    trajectory = (h.get("trajectory") or {}).get("id", "?")
    model = (h.get("model") or {}).get("name", "?")
    return f"{trajectory} · {model} · {design_of(run).name}"


def header(run: LoadedRun) -> dict[str, Any]:
    """What the run header shows, from manifest.json (and the factorization check of
    metrics.json): who ran what on which trajectory, how it ended, whether it is valid."""
    m, h = run.manifest, run.header
    config = m.get("config") or {}
    return {
        "path": str(run.path),
        "status": m.get("status"),
        "created": m.get("created"),
        "place_version": m.get("place_version"),
        "git": m.get("git"),
        "trajectory": h.get("trajectory"),
        "model": h.get("model"),
        "model_identity": m.get("model_identity"),
        "design": design_of(run).to_json(),
        "counts": h.get("counts"),
        "conversations": h.get("conversation_ids"),
        "answers": run.answers,
        "core": h.get("core"),
        "skipped_producers": h.get("skipped_producers"),
        "experiment": config.get("experiment"),
        "seeds": m.get("seeds"),
        "invalid": m.get("invalid"),
        "first_mismatch": m.get("first_mismatch"),
        "factorization": None
        if run.metrics is None
        else run.metrics.factorization.model_dump(mode="json"),
        "not_measured": None if run.metrics is None else run.metrics.not_measured,
        "mem0_failures": m.get("mem0_failures"),
        "truncated_calls": m.get("truncated_calls"),
        "metrics_schema": None if run.metrics is None else run.metrics.schema_,
    }


def run_data(index: int, run: LoadedRun) -> dict[str, Any]:
    """One run's part of the document."""
    design = design_of(run)
    pools = Pools()
    items = RunItems(run.records, design, run.answers, pools)
    items.build()
    card_items = scorecard_items(run.records, design, run.answers)
    if run.metrics is not None and run.metrics.aoep is not None:
        card, card_source = run.metrics.aoep, "metrics.json"
    else:
        card = scorecard(run.records, design, run.header.get("core"), run.answers)
        card_source = "records (the run has no metrics.json scorecard)"
    return {
        "label": label(run),
        "header": header(run),
        "tables": run.tables,
        "tables_source": run.tables_source,
        "plots": [{"name": p.name, "src": f"runs/{index}/plots/{p.name}"} for p in run.plots],
        "conditions": [[c.name, c.producer, c.policy] for c in design.conditions],
        "kinds": {"obligations": list(OBLIGATIONS), "invariants": list(INVARIANTS)},
        "aoep": card,
        "aoep_source": card_source,
        "aoep_items": items.scorecard_links(card_items),
        "rows": items.rows,
        "details": items.details,
        "pools": pools.to_json(),
    }


def summary_data(index: int, summary: LoadedSummary) -> dict[str, Any]:
    """One summary's part of the document: its report's tables and its figures."""
    return {
        "label": summary.label,
        "path": str(summary.path),
        "kind": summary.kind,
        "report": summary.report,
        "description": summary.description,
        "tables": summary.tables,
        "figures": [
            {"name": p.name, "src": f"summaries/{index}/{p.name}"} for p in summary.figures
        ],
    }


def site_data(runs: Sequence[LoadedRun], summaries: Sequence[LoadedSummary] = ()) -> dict[str, Any]:
    """The whole document data.js assigns."""
    shown = [run_data(i, r) for i, r in enumerate(runs)]
    labels = [r["label"] for r in shown]
    for r in shown:  # two runs of one trajectory, model and design: told apart by directory
        if labels.count(r["label"]) > 1:
            r["label"] += f" [{r['header']['path']}]"
    sums = [summary_data(i, s) for i, s in enumerate(summaries)]
    names = [s["label"] for s in sums]
    for s in sums:
        if names.count(s["label"]) > 1:
            s["label"] += f" [{s['path']}]"
    return {
        "schema": SCHEMA,
        "place_version": __version__,
        "runs": shown,
        "summaries": sums,
        "compare": comparisons(runs),
    }
