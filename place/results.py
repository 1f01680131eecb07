"""Load a run directory into pandas DataFrames (for notebooks and other analyses).

    >>> from place.results import load_run
    >>> run = load_run("experiments/primary/smollm2-135m")
    >>> run.queries.groupby(["condition", "family"]).answer_score.mean()

Each frame is one row per record of `records/*.jsonl`, flattened, with derived columns
computed by the same functions that compute the metrics (so a notebook cannot drift from
`metrics.json`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from place.archive import load_run_records
from place.design import Design
from place.metrics import citation as cit
from place.metrics import endpoints as ep
from place.records import RunRecords
from place.report.metrics import MetricsDocument, load_metrics

__all__ = ["Run", "load_replications", "load_run", "run_design"]


@dataclass(frozen=True)
class Run:
    path: Path
    manifest: dict[str, Any]
    metrics: MetricsDocument | None
    """metrics.json, typed (None before the report is written)."""
    records: RunRecords
    checkpoints: pd.DataFrame
    """One row per checkpoint × condition, with `f1` = F1(S^phys, S*)."""
    queries: pd.DataFrame
    """One row per query × condition × world × mode, with `answer_score`, `joint_success`,
    `ineligible_exposure`, `supported`."""
    pairs: pd.DataFrame
    """One row per query × condition: both worlds' answers and whether the pair counted/leaked."""
    probes: pd.DataFrame
    forgets: pd.DataFrame
    steps: pd.DataFrame


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def run_design(manifest: dict[str, Any]) -> Design:
    """The design a run used (its manifest header); runs without one are the paper's."""
    return Design.from_json(manifest.get("header", {}).get("design"))


def load_run(path: str | Path) -> Run:
    run_dir = Path(path)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    metrics_path = run_dir / "metrics.json"
    metrics = load_metrics(metrics_path) if metrics_path.exists() else None
    records = load_run_records(run_dir)
    checkpoints = _frame(
        [
            {
                **c.model_dump(exclude={"schema_"}),
                "f1": ep.checkpoint_f1(c),
                "observed_n": len({tuple(f[:4]) for f in c.observed}),
                "reference_n": len({tuple(f[:4]) for f in c.reference}),
            }
            for c in records.checkpoints
        ]
    )
    queries = _frame(
        [
            {
                **q.model_dump(exclude={"schema_", "exposed"}),
                "exposed_texts": [e.text for e in q.exposed],
                # None where no answer was asked (an answer-free run), not a zero.
                "answer_score": None if q.outcome is None else ep.answer_score(q),
                "joint_success": None if q.outcome is None else ep.joint_success(q),
                "ineligible_exposure": ep.has_ineligible_exposure(q),
                "supported": ep.supported(ep.exposed_facts(q), frozenset(map(tuple, q.authorized))),
            }
            for q in records.queries
        ]
    )
    pair_rows = []
    for condition in run_design(manifest).names:
        leaks = ep.leakage_pairs(records.queries, condition)
        by_key = {
            (q.query, q.world): q
            for q in records.queries
            if q.condition == condition and q.mode == "primary"
        }
        for qid, leaked in leaks.items():
            a, b = by_key[(qid, "a")], by_key[(qid, "b")]
            pair_rows.append(
                {
                    "query": qid,
                    "family": a.family,
                    "conversation": a.conversation,
                    "condition": condition,
                    "counted": leaked is not None,
                    "leaked": bool(leaked),
                    "answer_a": a.raw_answer,
                    "answer_b": b.raw_answer,
                    "outcome_a": a.outcome,
                    "outcome_b": b.outcome,
                    "exposed_a": [e.text for e in a.exposed],
                    "exposed_b": [e.text for e in b.exposed],
                    "evaluated_a": a.evaluated,
                    "evaluated_b": b.evaluated,
                    "authorized": a.authorized,
                    "authorized_b": a.authorized_b,
                }
            )
    probes = _frame(
        [
            {
                **p.model_dump(exclude={"schema_", "clean", "injected"}),
                "exposed_texts": [e.text for e in p.clean.exposed],
                "admitted": p.clean.admitted,
                "injected_texts": None
                if p.injected is None
                else [e.text for e in p.injected.exposed],
                "raw_answer": None if p.injected is None else p.injected.raw_answer,
                "outcome": None if p.injected is None else p.injected.outcome,
                "ineligible_exposure": ep.has_ineligible_exposure(p.clean),
                "supported": ep.supported(
                    ep.exposed_facts(p.clean), frozenset(map(tuple, p.authorized))
                ),
                "harmed": (
                    ep.conflict_harmed(p)
                    if p.conflict_value is not None
                    else cit.forged_harmed(p)
                    if p.forged is not None
                    else None
                ),
                "forged_exposed": cit.forged_exposed(p) if p.forged is not None else None,
            }
            for p in records.probes
        ]
    )
    return Run(
        path=run_dir,
        manifest=manifest,
        metrics=metrics,
        records=records,
        checkpoints=checkpoints,
        queries=queries,
        pairs=_frame(pair_rows),
        probes=probes,
        forgets=_frame([f.model_dump(exclude={"schema_"}) for f in records.forgets]),
        steps=_frame([s.model_dump(exclude={"schema_"}) for s in records.steps]),
    )


def load_replications(dirs: Any, recompute: bool = True) -> Any:
    """A replication study (place.report.replications.Replications: its run paths, metrics
    documents and the summary DataFrame; docs/replications.md). Imported on use: the report
    modules select matplotlib's file backend, which would stop a notebook that only loads a
    run from drawing inline."""
    from place.report.replications import load_replications as load

    return load(dirs, recompute=recompute)
