"""The effects of docs/method.md §5 and §8 and their seeded intervals.

LeakageDrop has a pair-level bootstrap (pairs resampled jointly across conditions). The
longitudinal effects treat the trajectory as one unit: they get a conversation-block
bootstrap and the leave-one-conversation-out (LOCO) range, reported descriptively. The
extended design's per-producer and per-policy effects (§8) reuse the same machinery; the
utility contrasts (SupportCost, ExposureGap) resample probes jointly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from place.design import PAPER, Design, policy_display, producer_display
from place.metrics.endpoints import (
    checkpoint_f1,
    exposed_facts,
    has_ineligible_exposure,
    joint_success,
    leakage_pairs,
    query_records,
    state_items,
    supported,
)
from place.records import CheckpointRecord, ProbeRecord, QueryRecord

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


def leakage_drop(
    queries: Sequence[QueryRecord],
    seed: int,
    resamples: int = RESAMPLES,
    left: str = "CSS",
    right: str = "PLACE",
) -> Effect:
    """LR(left) - LR(right) over the pairs counted in both (paper: CSS - PLACE)."""
    a, b = leakage_pairs(queries, left), leakage_pairs(queries, right)
    both = sorted(q for q in a if a[q] is not None and b.get(q) is not None)
    x = np.array([float(bool(a[q])) for q in both])
    y = np.array([float(bool(b[q])) for q in both])
    return pair_bootstrap(x, y, seed, resamples)


def probe_contrast(
    probes: Sequence[ProbeRecord],
    left: str,
    right: str,
    endpoint: str,
    seed: int,
    resamples: int = RESAMPLES,
) -> Effect:
    """mean endpoint(left) - mean endpoint(right) over the same probes, resampled jointly.

    `needed_support`: probes with non-empty Q*, 1 when Q* is readable from the clean read;
    `exposure_rate`: all probes, 1 when the clean read exposes an ineligible item."""
    # The paper's probes only: a forged probe's clean read repeats another probe's and is
    # scored by §12's figures (docs/decisions.md, "The citation lock").
    by = {
        c: {p.probe: p for p in probes if p.condition == c and p.forged is None}
        for c in (left, right)
    }
    ids = sorted(set(by[left]) & set(by[right]))

    def value(p: ProbeRecord) -> float:
        if endpoint == "needed_support":
            return float(
                supported(exposed_facts(p.clean), frozenset(tuple(f) for f in p.authorized))
            )
        return float(has_ineligible_exposure(p.clean))

    if endpoint == "needed_support":
        ids = [i for i in ids if by[left][i].authorized]
    x = np.array([value(by[left][i]) for i in ids])
    y = np.array([value(by[right][i]) for i in ids])
    return pair_bootstrap(x, y, seed, resamples)


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


def _gain(m: Mapping[str, np.ndarray], over: str) -> np.ndarray:
    """CSS's per-conversation values minus those of the row `over` (StateGain_<producer>)."""
    return m["CSS"] - m[over]


def interaction_gain(m: Mapping[str, np.ndarray]) -> np.ndarray:
    return (m["PLACE"] - m["CSS"]) - (m["QASC"] - m["Native"])


ANSWER_EFFECTS = frozenset({"JointGain", "InteractionGain", "LeakageDrop"})
"""Effects that read answers (JointSuccess or answer outcomes); `LeakageDrop_<producer>`
too. Not measured in an answer-free run (docs/method.md §15)."""


def longitudinal_effects(
    checkpoints: Sequence[CheckpointRecord],
    queries: Sequence[QueryRecord],
    conversations: Sequence[str],
    seed: int,
    resamples: int = RESAMPLES,
    design: Design = PAPER,
) -> dict[str, Effect]:
    """The paper's longitudinal effects (those whose conditions the design has), then
    StateGain_P = SC(CSS) - SC(P/Native) for every producer P outside the paper's two."""
    names = design.names
    state = block_totals(
        {
            c: [(x.conversation, checkpoint_f1(x)) for x in state_items(checkpoints, c)]
            for c in names
        },
        conversations,
    )
    joint = block_totals(
        {
            c: [(q.conversation, float(joint_success(q))) for q in query_records(queries, c)]
            for c in names
        },
        conversations,
    )
    out: dict[str, Effect] = {}
    if design.has("CSS", "Native"):
        out["StateGain"] = block_effect(state, state_gain, seed, resamples)
    if design.has("PLACE", "Native"):
        out["JointGain"] = block_effect(joint, joint_gain, seed, resamples)
    if design.has("Native", "CSS", "QASC", "PLACE"):
        out["InteractionGain"] = block_effect(joint, interaction_gain, seed, resamples)
    for producer in extra_producers(design):
        row = design.condition_name(producer, "native")
        if design.has("CSS", row):
            out[f"StateGain_{producer_display(producer)}"] = block_effect(
                state, functools.partial(_gain, over=row), seed, resamples
            )
    return out


def extra_producers(design: Design) -> list[str]:
    return [p for p in design.producers if p not in PAPER.producers]


def extra_policies(design: Design) -> list[str]:
    return [r for r in design.policies if r not in PAPER.policies]


def extended_effects(
    queries: Sequence[QueryRecord],
    probes: Sequence[ProbeRecord],
    seed: int,
    resamples: int = RESAMPLES,
    design: Design = PAPER,
) -> dict[str, Effect]:
    """docs/method.md §8: LeakageDrop_P for every extra producer; SupportCost_R and ExposureGap_R
    on the CSS row for every extra policy."""
    out: dict[str, Effect] = {}
    for producer in extra_producers(design):
        native = design.condition_name(producer, "native")
        qasc = design.condition_name(producer, "qasc")
        if design.has(native, qasc):
            out[f"LeakageDrop_{producer_display(producer)}"] = leakage_drop(
                queries, seed, resamples, left=native, right=qasc
            )
    for policy in extra_policies(design):
        css_r = design.condition_name("css", policy)
        if design.has("PLACE", css_r):
            out[f"SupportCost_{policy_display(policy)}"] = probe_contrast(
                probes, "PLACE", css_r, "needed_support", seed, resamples
            )
            out[f"ExposureGap_{policy_display(policy)}"] = probe_contrast(
                probes, css_r, "PLACE", "exposure_rate", seed, resamples
            )
    return out
