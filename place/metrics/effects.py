"""The four effects of method.md §5 and their seeded intervals.

LeakageDrop has a pair-level bootstrap (pairs resampled jointly across conditions). The
longitudinal effects treat the trajectory as one unit: they get a conversation-block
bootstrap and the leave-one-conversation-out (LOCO) range, reported descriptively.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from place.metrics.endpoints import (
    checkpoint_f1,
    joint_success,
    leakage_pairs,
    primary,
    state_items,
)
from place.records import CheckpointRecord, QueryRecord

RESAMPLES = 4000
PERCENTILES = (2.5, 97.5)


@dataclass(frozen=True)
class Effect:
    estimate: float | None
    interval: tuple[float, float] | None
    loco_range: tuple[float, float] | None = None
    n: int | None = None


def percentile_interval(draws: np.ndarray) -> tuple[float, float]:
    lo, hi = np.percentile(draws, PERCENTILES)
    return float(lo), float(hi)


def pair_bootstrap(
    left: np.ndarray, right: np.ndarray, seed: int, resamples: int = RESAMPLES
) -> Effect:
    """mean(left) - mean(right) over paired items, resampling pairs jointly."""
    n = len(left)
    if n == 0:
        return Effect(None, None, n=0)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    draws = left[idx].mean(axis=1) - right[idx].mean(axis=1)
    return Effect(float(left.mean() - right.mean()), percentile_interval(draws), n=n)


def leakage_drop(queries: Sequence[QueryRecord], seed: int, resamples: int = RESAMPLES) -> Effect:
    """LR(CSS) - LR(PLACE) over the pairs counted in both."""
    css, place = leakage_pairs(queries, "CSS"), leakage_pairs(queries, "PLACE")
    both = sorted(q for q in css if css[q] is not None and place.get(q) is not None)
    left = np.array([float(css[q]) for q in both])
    right = np.array([float(place[q]) for q in both])
    return pair_bootstrap(left, right, seed, resamples)


@dataclass(frozen=True)
class BlockTotals:
    """Per-conversation sums and counts of one item-level endpoint, per condition."""

    conversations: tuple[str, ...]
    sums: Mapping[str, np.ndarray]
    counts: Mapping[str, np.ndarray]

    def means(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Endpoint per condition for each row of conversation weights (multiplicities)."""
        return {c: (weights @ self.sums[c]) / (weights @ self.counts[c]) for c in self.sums}


def block_totals(
    items: Mapping[str, Sequence[tuple[str, float]]], conversations: Sequence[str]
) -> BlockTotals:
    """`items[condition]` = [(conversation, value), ...]."""
    pos = {c: i for i, c in enumerate(conversations)}
    sums, counts = {}, {}
    for condition, rows in items.items():
        s, n = np.zeros(len(conversations)), np.zeros(len(conversations))
        for conv, value in rows:
            s[pos[conv]] += value
            n[pos[conv]] += 1
        sums[condition], counts[condition] = s, n
    return BlockTotals(tuple(conversations), sums, counts)


EffectFn = Callable[[Mapping[str, np.ndarray]], np.ndarray]


def block_effect(
    totals: BlockTotals, fn: EffectFn, seed: int, resamples: int = RESAMPLES
) -> Effect:
    k = len(totals.conversations)
    rng = np.random.default_rng(seed)
    draws_idx = rng.integers(0, k, size=(resamples, k))
    weights = np.stack([np.bincount(row, minlength=k) for row in draws_idx]).astype(float)
    loco_weights = np.ones((k, k)) - np.eye(k)
    # A resample without any item of some condition has no mean; such draws are dropped.
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = fn(totals.means(np.ones((1, k))))[0]
        draws = fn(totals.means(weights))
        loco = fn(totals.means(loco_weights)) if k > 1 else np.array([])
    draws = draws[np.isfinite(draws)]
    loco = loco[np.isfinite(loco)]
    return Effect(
        float(estimate) if np.isfinite(estimate) else None,
        percentile_interval(draws) if draws.size else None,
        (float(loco.min()), float(loco.max())) if loco.size else None,
    )


def state_gain(m: Mapping[str, np.ndarray]) -> np.ndarray:
    return m["CSS"] - m["Native"]


def joint_gain(m: Mapping[str, np.ndarray]) -> np.ndarray:
    return m["PLACE"] - m["Native"]


def interaction_gain(m: Mapping[str, np.ndarray]) -> np.ndarray:
    return (m["PLACE"] - m["CSS"]) - (m["QASC"] - m["Native"])


CONDITIONS = ("Native", "CSS", "QASC", "PLACE")


def longitudinal_effects(
    checkpoints: Sequence[CheckpointRecord],
    queries: Sequence[QueryRecord],
    conversations: Sequence[str],
    seed: int,
    resamples: int = RESAMPLES,
) -> dict[str, Effect]:
    state = block_totals(
        {
            c: [(x.conversation, checkpoint_f1(x)) for x in state_items(checkpoints, c)]
            for c in CONDITIONS
        },
        conversations,
    )
    joint = block_totals(
        {
            c: [(q.conversation, float(joint_success(q))) for q in primary(queries, c)]
            for c in CONDITIONS
        },
        conversations,
    )
    return {
        "StateGain": block_effect(state, state_gain, seed, resamples),
        "JointGain": block_effect(joint, joint_gain, seed, resamples),
        "InteractionGain": block_effect(joint, interaction_gain, seed, resamples),
    }
