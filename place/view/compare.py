"""Paired differences between runs: the same condition in two runs, over the items both hold.

When two runs share item ids (the same trajectory under two models, designs or versions of
place), each per-item judgement of one is paired with the other's and the difference of
their means gets the package's paired bootstrap interval
(`place.metrics.effects.pair_bootstrap`, seeded by the first run's bootstrap seed), as
LeakageDrop's is. Each run is compared with the first (the baseline), at most
`MAX_COMPARED` of them, so that a multirun root of a hundred jobs does not make thousands
of bootstraps. Items pair only between runs of one trajectory (the same sha256): generated
trajectories reuse ids (q01, c1-003#1) for different items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from place.design import Design
from place.metrics import endpoints as ep
from place.metrics.effects import pair_bootstrap
from place.records import RunRecords
from place.view.load import LoadedRun

MAX_COMPARED = 8
"""Runs compared with the baseline (the first RUN_DIR); later ones are listed, not compared."""
MAX_RESAMPLES = 4000


Values = dict[str, float]
"""Item id -> its value (1.0/0.0 for a judgement, a rate for F1)."""


def _queries(records: RunRecords, condition: str, f: Callable[[Any], float | None]) -> Values:
    out: Values = {}
    for q in ep.query_records(records.queries, condition):
        v = f(q)
        if v is not None:
            out[q.query] = v
    return out


def _probes(records: RunRecords, condition: str, f: Callable[[Any], float | None]) -> Values:
    out: Values = {}
    for p in records.probes:
        if p.condition == condition and p.forged is None:
            v = f(p)
            if v is not None:
                out[p.probe] = v
    return out


def _joint(q: Any) -> float | None:
    return None if q.outcome is None else float(ep.joint_success(q))


def _score(q: Any) -> float | None:
    return None if q.outcome is None else ep.answer_score(q)


def _supported(read: Any, authorized: list[Any]) -> float | None:
    """1.0 when Q* is readable from the read, None for an item without Q* (not counted)."""
    if not authorized:
        return None
    return float(ep.supported(ep.exposed_facts(read), frozenset(tuple(f) for f in authorized)))


def _state_f1(records: RunRecords, condition: str) -> Values:
    return {x.turn: ep.checkpoint_f1(x) for x in ep.state_items(records.checkpoints, condition)}


QUERIES = "queries (world a, primary)"
ENDPOINTS: list[tuple[str, str, bool, Callable[[RunRecords, str], Values]]] = [
    ("JointSuccess", QUERIES, True, lambda r, c: _queries(r, c, _joint)),
    ("AnswerScore", QUERIES, True, lambda r, c: _queries(r, c, _score)),
    (
        "StateCorrect at the query",
        QUERIES,
        False,
        lambda r, c: _queries(r, c, lambda q: float(q.state_correct)),
    ),
    (
        "Supported (Q* exposed)",
        "queries with Q* (world a, primary)",
        False,
        lambda r, c: _queries(r, c, lambda q: _supported(q, q.authorized)),
    ),
    (
        "IneligibleExposure",
        QUERIES,
        False,
        lambda r, c: _queries(r, c, lambda q: float(ep.has_ineligible_exposure(q))),
    ),
    (
        "NeededSupport",
        "probes with Q* (clean read)",
        False,
        lambda r, c: _probes(r, c, lambda p: _supported(p.clean, p.authorized)),
    ),
    (
        "ExposureRate",
        "probes (clean read)",
        False,
        lambda r, c: _probes(r, c, lambda p: float(ep.has_ineligible_exposure(p.clean))),
    ),
    ("State F1", "post-update checkpoints (world a)", False, _state_f1),
]
"""(name, over what items, reads an answer, per-item values of one condition)."""


def trajectory_sha(run: LoadedRun) -> str | None:
    """The sha256 of the trajectory the run replayed (its manifest header)."""
    sha = (run.header.get("trajectory") or {}).get("sha256")
    return None if sha is None else str(sha)


def _round(x: float | None) -> float | None:
    return None if x is None or x != x else round(float(x), 4)


def pair_table(
    base: LoadedRun, other: LoadedRun, seed: int, resamples: int
) -> list[dict[str, Any]]:
    """Per condition both designs hold and endpoint both runs measured: other − base over
    the shared item ids, with its paired bootstrap interval and n."""
    base_design = Design.from_json(base.header.get("design"))
    other_design = Design.from_json(other.header.get("design"))
    rows: list[dict[str, Any]] = []
    for condition in [c for c in base_design.names if c in other_design.names]:
        for name, over, answers, values in ENDPOINTS:
            if answers and not (base.answers and other.answers):
                rows.append(
                    {
                        "condition": condition,
                        "endpoint": name,
                        "over": over,
                        "not_measured": True,
                    }
                )
                continue
            left, right = values(other.records, condition), values(base.records, condition)
            ids = sorted(set(left) & set(right))
            if not ids:
                continue
            x = np.array([left[i] for i in ids])
            y = np.array([right[i] for i in ids])
            effect = pair_bootstrap(x, y, seed, resamples)
            rows.append(
                {
                    "condition": condition,
                    "endpoint": name,
                    "over": over,
                    "base": _round(float(y.mean())),
                    "other": _round(float(x.mean())),
                    "difference": _round(effect.estimate),
                    "interval": None
                    if effect.interval is None
                    else [_round(effect.interval[0]), _round(effect.interval[1])],
                    "n": len(ids),
                    "differing": [i for i in ids if left[i] != right[i]],
                }
            )
    return rows


def comparisons(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """The comparison page's data: for each run after the first (up to `MAX_COMPARED`), its
    paired differences from the first; and how they were computed."""
    if len(runs) < 2:
        return {"baseline": 0, "pairs": [], "left_out": [], "seed": None, "resamples": None}
    seeds = runs[0].manifest.get("seeds") or {}
    seed = int(seeds.get("bootstrap", 0))
    resamples = min(int(seeds.get("resamples", MAX_RESAMPLES)), MAX_RESAMPLES)
    pairs = []
    for j in range(1, min(len(runs), MAX_COMPARED + 1)):
        if trajectory_sha(runs[j]) != trajectory_sha(runs[0]):
            # Ids repeat across trajectories (every generated one has its q01): the same id
            # names a different item there, so nothing is paired.
            pairs.append({"other": j, "rows": [], "unpaired": "another trajectory"})
        else:
            pairs.append({"other": j, "rows": pair_table(runs[0], runs[j], seed, resamples)})
    return {
        "baseline": 0,
        "pairs": pairs,
        "left_out": list(range(MAX_COMPARED + 1, len(runs))),
        "seed": seed,
        "resamples": resamples,
    }
