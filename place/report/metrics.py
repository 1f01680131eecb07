"""metrics.json (`place-metrics/1`): every endpoint and effect, computed from records only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from place.errors import PlaceError
from place.metrics import effects as fx
from place.metrics import endpoints as ep
from place.records import (
    CONDITIONS,
    RECORDS_SCHEMA,
    CheckpointRecord,
    ForgetRecord,
    ProbeRecord,
    QueryRecord,
    StepRecord,
)

METRICS_SCHEMA = "place-metrics/1"
RECORD_FILES = {
    "checkpoint": ("checkpoints.jsonl", CheckpointRecord),
    "query": ("queries.jsonl", QueryRecord),
    "probe": ("probes.jsonl", ProbeRecord),
    "forget": ("forgets.jsonl", ForgetRecord),
    "step": ("steps.jsonl", StepRecord),
}


@dataclass
class RunRecords:
    checkpoints: list[CheckpointRecord] = field(default_factory=list)
    queries: list[QueryRecord] = field(default_factory=list)
    probes: list[ProbeRecord] = field(default_factory=list)
    forgets: list[ForgetRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)

    @classmethod
    def load(cls, records_dir: Path) -> RunRecords:
        out = cls()
        targets = {
            "checkpoint": out.checkpoints,
            "query": out.queries,
            "probe": out.probes,
            "forget": out.forgets,
            "step": out.steps,
        }
        for kind, (name, model) in RECORD_FILES.items():
            path = records_dir / name
            if not path.exists():
                continue
            with path.open(encoding="utf-8") as fh:
                for number, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    try:
                        targets[kind].append(model.model_validate_json(line))
                    except ValidationError as exc:
                        raise PlaceError(
                            f"{path}: line {number}: not a {RECORDS_SCHEMA} {kind} record "
                            f"({exc.error_count()} problems, first: {exc.errors()[0]['msg']} at "
                            f"{'.'.join(map(str, exc.errors()[0]['loc']))})"
                        ) from None
        return out


def _round(x: float | None) -> float | None:
    # Rounded so that metrics.json is byte-stable across platforms' float printing.
    return None if x is None or x != x else round(float(x), 6)


def _interval(iv: tuple[float, float] | None) -> list[float] | None:
    return None if iv is None else [_round(iv[0]), _round(iv[1])]


def condition_metrics(records: RunRecords, condition: str) -> dict[str, Any]:
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
        "deletion_residue": _round(ep.deletion_residue(records.forgets, condition)),
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


def compute_metrics(
    records: RunRecords,
    header: dict[str, Any],
    seed: int,
    conversations: Sequence[str],
    resamples: int = fx.RESAMPLES,
) -> dict[str, Any]:
    """The whole metrics document. `header` carries trajectory, model and counts."""
    longitudinal = fx.longitudinal_effects(
        records.checkpoints, records.queries, conversations, seed, resamples
    )
    drop = fx.leakage_drop(records.queries, seed, resamples)
    effects: dict[str, Any] = {
        name: {
            "estimate": _round(e.estimate),
            "interval": _interval(e.interval),
            "loco_range": _interval(e.loco_range),
        }
        for name, e in longitudinal.items()
    }
    effects["LeakageDrop"] = {
        "estimate": _round(drop.estimate),
        "interval": _interval(drop.interval),
        "n": drop.n,
    }
    fact = ep.factorization(records.checkpoints)
    return {
        "schema": METRICS_SCHEMA,
        "trajectory": header["trajectory"],
        "model": header["model"],
        "counts": header["counts"],
        "conditions": {c: condition_metrics(records, c) for c in CONDITIONS},
        "effects": effects,
        "factorization": {
            "ok": fact.ok,
            "checkpoints": fact.checkpoints,
            "mismatches": len(fact.mismatches),
        },
        "bootstrap": {"seed": seed, "resamples": resamples},
    }


def dump_metrics(metrics: dict[str, Any]) -> str:
    return json.dumps(metrics, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
