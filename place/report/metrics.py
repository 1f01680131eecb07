"""metrics.json (`place-metrics/3`): every endpoint and effect, computed from records only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from place.design import PAPER, Design
from place.metrics import effects as fx
from place.metrics import endpoints as ep
from place.metrics.aoep import scorecard
from place.records import RECORD_FILES, RunRecords

__all__ = ["METRICS_SCHEMA", "RECORD_FILES", "RunRecords", "compute_metrics", "dump_metrics"]

METRICS_SCHEMA = "place-metrics/3"
"""/2: strict Ω, clean probe reads, leakage over both worlds' Q*, factorization over worlds a
and b with the first mismatch. /3: the AOEP scorecard (`aoep`, method.md §10)."""


def _round(x: float | None) -> float | None:
    # Rounded so that metrics.json is byte-stable across platforms' float printing.
    return None if x is None or x != x else round(float(x), 6)


def _interval(iv: tuple[float, float] | None) -> list[float] | None:
    return None if iv is None else [_round(iv[0]), _round(iv[1])]


def condition_metrics(
    records: RunRecords, condition: str, design: Design = PAPER
) -> dict[str, Any]:
    leakage, n = ep.leakage_rate(records.queries, condition)
    state = ep.state_correctness(records.checkpoints, condition)
    return {
        "state_correctness": _round(state),
        "leakage_rate": _round(leakage),
        "leakage_n": n,
        "answer_correctness": _round(ep.answer_correctness(records.queries, condition)),
        "joint_success": _round(ep.joint_success_rate(records.queries, condition)),
        "needed_support": _round(ep.needed_support(records.probes, condition)),
        "exposure_rate": _round(ep.exposure_rate_probes(records.probes, condition)),
        "conflict_harm": _round(ep.conflict_harm(records.probes, condition)),
        "deletion_residue": _round(ep.deletion_residue(records.forgets, condition, design)),
        "closed_loop": {
            # Memory writes are unchanged in Closed Loop, so its state is the primary state.
            "state_correctness": _round(state),
            "exposure_rate": _round(
                ep.exposure_rate_queries(records.queries, condition, "closed_loop")
            ),
            "joint_success": _round(
                ep.joint_success_rate(records.queries, condition, "closed_loop")
            ),
        },
    }


def _effect(e: fx.Effect, kind: str) -> dict[str, Any]:
    if kind == "block":
        return {
            "estimate": _round(e.estimate),
            "interval": _interval(e.interval),
            "loco_range": _interval(e.loco_range),
        }
    return {"estimate": _round(e.estimate), "interval": _interval(e.interval), "n": e.n}


def compute_metrics(
    records: RunRecords,
    header: dict[str, Any],
    seed: int,
    conversations: Sequence[str],
    resamples: int = fx.RESAMPLES,
) -> dict[str, Any]:
    """The whole metrics document. `header` carries trajectory, model, counts and (for any
    design but the paper's) the design."""
    design = Design.from_json(header.get("design"))
    longitudinal = fx.longitudinal_effects(
        records.checkpoints, records.queries, conversations, seed, resamples, design
    )
    effects: dict[str, Any] = {name: _effect(e, "block") for name, e in longitudinal.items()}
    if design.has("CSS", "PLACE"):
        effects["LeakageDrop"] = _effect(fx.leakage_drop(records.queries, seed, resamples), "pair")
    for name, e in fx.extended_effects(
        records.queries, records.probes, seed, resamples, design
    ).items():
        effects[name] = _effect(e, "pair")
    fact = ep.factorization(records.checkpoints, design)
    doc: dict[str, Any] = {
        "schema": METRICS_SCHEMA,
        "trajectory": header["trajectory"],
        "model": header["model"],
        "counts": header["counts"],
    }
    if not design.is_paper:  # the paper's layout stays what it is
        doc["design"] = design.to_json()
    doc.update(
        {
            "conditions": {c: condition_metrics(records, c, design) for c in design.names},
            "effects": effects,
            "factorization": {
                "ok": fact.ok,
                "checkpoints": fact.checkpoints,
                "mismatches": len(fact.mismatches),
                "first_mismatch": fact.mismatches[0] if fact.mismatches else None,
            },
            "aoep": scorecard(records, design),
            "bootstrap": {"seed": seed, "resamples": resamples},
        }
    )
    return doc


def dump_metrics(metrics: dict[str, Any]) -> str:
    return json.dumps(metrics, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
