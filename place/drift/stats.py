"""drift.json from drift.jsonl (docs/method.md §13; docs/records.md).

Per (trajectory, ε, N): the mean over seeds of D^c_t at every t, and from it D^c_T, the
maximum and the time mean of that curve and its least-squares slope on t (over every t
without reconciliation, over t ≥ N with it), each with a 95 % seed-bootstrap interval (the
seeds are resampled with replacement, the statistic recomputed on the resampled mean curve);
δ_T − δ^twin_T likewise; and the count of violations of the two exact tests (D^c_t ≤ C_t at
every step, D^c_t = 0 at every reconciling step), which must be 0. The slopes and the N·ε
bound are reported beside the values Theorem 1 leads one to expect, never tested.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from place.drift.run import DRIFT_SCHEMA, DriftHeader, DriftRow
from place.errors import PlaceError
from place.metrics.effects import percentile_interval


def _interval(draws: np.ndarray) -> list[float] | None:
    draws = draws[np.isfinite(draws)]
    return list(percentile_interval(draws)) if draws.size else None


def _row_sums(m: np.ndarray) -> np.ndarray:
    """Correctly rounded sum of each row. A BLAS product (`@`) sums in an order that depends
    on the CPU's kernels, so its last bits differ between machines (CI found the recorded
    slope differing in the 16th digit); math.fsum's rounding does not depend on the order."""
    return np.array([math.fsum(row) for row in m], dtype=float)


def _slope(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Least-squares slope of each row of `y` on `x` (NaN with fewer than two points)."""
    if x.size < 2:
        return np.full(y.shape[0], np.nan)
    xc = x - math.fsum(x) / x.size
    yc = y - (_row_sums(y) / x.size)[:, None]
    return _row_sums(yc * xc) / math.fsum(xc * xc)


def _estimate(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _stat(point: float, draws: np.ndarray) -> dict[str, Any]:
    return {"estimate": _estimate(point), "interval": _interval(draws)}


def _matrix(rows: Sequence[DriftRow], seeds: int, horizon: int, field: str) -> np.ndarray:
    out = np.full((seeds, horizon), np.nan)
    for r in rows:
        out[r.seed, r.t - 1] = getattr(r, field)
    return out


def violations(rows: Sequence[DriftRow]) -> int:
    """Rows failing an exact test: D^c_t > C_t, or D^c_t ≠ 0 at a reconciling step."""
    return sum(1 for r in rows if r.D > r.C or (r.reconciled and r.D != 0))


def cell(
    rows: Sequence[DriftRow],
    twin_rows: Sequence[DriftRow],
    eps: float,
    every: int,
    seeds: int,
    horizon: int,
    bootstrap_seed: int,
    resamples: int,
) -> dict[str, Any]:
    """The drift.json entry of one (trajectory, ε, N) from its rows and its twin's."""
    d = _matrix(rows, seeds, horizon, "D")
    delta = _matrix(rows, seeds, horizon, "delta")
    delta_twin = _matrix(twin_rows, seeds, horizon, "delta")
    rng = np.random.default_rng(bootstrap_seed)
    # Each resample as seed multiplicities: its mean curve is a weighted mean of the rows.
    # The multiplicities stay integers, so `counts @ d` (D is a count) is exact whatever
    # order the CPU sums in, and the one division by `seeds` rounds the same everywhere.
    counts = np.stack(
        [np.bincount(row, minlength=seeds) for row in rng.integers(0, seeds, (resamples, seeds))]
    ).astype(float)
    mean = d.mean(axis=0)
    boot = (counts @ d) / seeds
    t = np.arange(1, horizon + 1, dtype=float)
    start = max(every, 1)
    window = t >= start
    gap = delta[:, -1] - delta_twin[:, -1]
    corruptions = sum(1 for r in rows if r.corrupted is not None)
    out: dict[str, Any] = {
        "eps": eps,
        "every": every,
        "seeds": seeds,
        "T": horizon,
        "violations": violations(rows),
        "mean_corruptions": corruptions / seeds,
        "realized_eps": corruptions / (seeds * horizon),
        "D_T": _stat(mean[-1], boot[:, -1]),
        "max_mean_D": {
            **_stat(mean.max(), boot.max(axis=1)),
            "t": int(np.argmax(mean)) + 1,
        },
        "time_mean_D": _stat(mean.mean(), boot.mean(axis=1)),
        "phase_max_mean_D": _phase_max(mean, boot, every),
        "slope": {
            **_stat(
                _slope(mean[window][None, :], t[window])[0], _slope(boot[:, window], t[window])
            ),
            "from_t": start,
        },
        "delta_T": float(delta[:, -1].mean()),
        "delta_time_mean": float(delta.mean()),
        "delta_twin_T": float(delta_twin[:, -1].mean()),
        "delta_T_minus_twin": _stat(gap.mean(), _row_sums(counts * gap) / seeds),
        "expected": {
            "eps_T": eps * horizon,
            "N_eps": every * eps if every else None,
            "half_window": (every - 1) * eps / 2 if every else None,
            "window_peak": (every - 1) * eps if every else None,
            "slope": eps if not every else 0.0,
        },
        "mean_D": [float(v) for v in mean],
        "rejected": sum(r.rejected + r.replay_rejected for r in rows),
        "skipped": sum(r.skipped + r.replay_skipped for r in rows),
    }
    out["behaves"] = _behaves(out, eps, every)
    return out


def _phase_max(mean: np.ndarray, boot: np.ndarray, every: int) -> dict[str, Any] | None:
    """With R every N: the mean curve averaged over windows at each phase t mod N, and its
    maximum. max_t of the mean curve is a maximum over ~T/N noisy window peaks, so it sits
    above the expected peak (N − 1)·ε; averaging the windows first removes that bias
    (docs/decisions.md, "Drift (§13)"). None without R."""
    if every == 0:
        return None
    phase = np.arange(1, mean.size + 1) % every
    kept = [k for k in range(every) if (phase == k).any()]
    point = max(float(mean[phase == k].mean()) for k in kept)
    draws = np.stack([boot[:, phase == k].mean(axis=1) for k in kept]).max(axis=0)
    return _stat(point, draws)


def _behaves(c: dict[str, Any], eps: float, every: int) -> dict[str, bool | None]:
    """Whether the cell looks as §13 says (reported, never tested: docs/method.md §13)."""
    lo_hi = c["slope"]["interval"]
    if eps == 0:
        return {"zero": c["max_mean_D"]["estimate"] == 0}
    if every == 0:
        return {"slope_positive": None if lo_hi is None else lo_hi[0] > 0}
    return {
        "max_within_N_eps": c["max_mean_D"]["estimate"] <= every * eps,
        "phase_max_within_N_eps": c["phase_max_mean_D"]["estimate"] <= every * eps,
        "slope_interval_has_0": None if lo_hi is None else lo_hi[0] <= 0 <= lo_hi[1],
    }


def summarize(header: DriftHeader, rows: Sequence[DriftRow]) -> dict[str, Any]:
    """drift.json: one cell per (trajectory, ε, N) in the header's order."""
    if 0.0 not in header.eps:
        raise PlaceError("drift rows without ε = 0: the twin is missing; allowed: ε lists with 0")
    groups: dict[tuple[str, float, int], list[DriftRow]] = {}
    for r in rows:
        groups.setdefault((r.trajectory, r.eps, r.every), []).append(r)
    cells = []
    for info in header.trajectories:
        for eps in header.eps:
            for every in header.every:
                got = groups.get((info.id, eps, every), [])
                if len(got) != header.seeds * info.checkpoints:
                    raise PlaceError(
                        f"drift rows of {info.id} at ε={eps}, N={every}: {len(got)} rows, "
                        f"expected {header.seeds * info.checkpoints} (seeds × T)"
                    )
                entry = cell(
                    got,
                    groups[(info.id, 0.0, every)],
                    eps,
                    every,
                    header.seeds,
                    info.checkpoints,
                    header.bootstrap_seed,
                    header.resamples,
                )
                cells.append({"trajectory": info.id, **entry})
    return {
        "schema": DRIFT_SCHEMA,
        "header": header.model_dump(by_alias=True, mode="json"),
        "violations": sum(c["violations"] for c in cells),
        "cells": cells,
    }


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def jsonl_text(header: DriftHeader, rows: Sequence[DriftRow]) -> str:
    lines = [header.model_dump_json(by_alias=True)]
    lines += [r.model_dump_json() for r in rows]
    return "\n".join(lines) + "\n"


def read_jsonl(path: Path) -> tuple[DriftHeader, list[DriftRow]]:
    """drift.jsonl: its header line, then one row per (trajectory, ε, N, seed, t)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise PlaceError(f"{path}: cannot read: {exc.strerror}") from exc
    if not lines:
        raise PlaceError(f"{path}: empty; expected a header line and rows")
    try:
        header = DriftHeader.model_validate_json(lines[0])
        if header.schema_ != DRIFT_SCHEMA:
            raise PlaceError(f"{path}: schema {header.schema_!r}; allowed: {DRIFT_SCHEMA!r}")
        rows = [DriftRow.model_validate_json(line) for line in lines[1:] if line]
    except ValidationError as exc:
        raise PlaceError(f"{path}: not a drift.jsonl of {DRIFT_SCHEMA}: {exc}") from exc
    return header, rows


def recompute(path: Path) -> dict[str, Any]:
    """drift.json's document recomputed from drift.jsonl alone."""
    return summarize(*read_jsonl(path))
