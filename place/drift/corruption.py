"""The seeded corruption of the drift experiment (docs/method.md §13; docs/drift.md).

Each world-a post-update checkpoint t draws (u_t, a_t, b_t) from `default_rng(seed)`, always
all three, whatever ε and whatever M holds: the draws of a seed are then the same sequence in
every run, so the steps a seed corrupts are shared across N, and nested across ε (u_t < ε
implies u_t < ε' for every ε' > ε).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from place.governance.ssgm_memory import SSGMMemory
from place.trajectory.model import Slot

DRAW_BOUND = 2**31
"""a_t and b_t are drawn from [0, 2**31) (docs/drift.md)."""


@dataclass(frozen=True)
class Draw:
    """One checkpoint's draws."""

    u: float
    """Corrupt when u < ε."""
    a: int
    """Which record: index a mod m among the m active one-valued records."""
    b: int
    """Which other value: index b mod (|domain| - 1) among the other values."""


class Draws:
    """The draws of one seed, in checkpoint order."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def next(self) -> Draw:
        u = float(self.rng.random())
        a, b = self.rng.integers(0, DRAW_BOUND, 2)
        return Draw(u, int(a), int(b))


@dataclass(frozen=True)
class Corruption:
    """A wrong write M believes: the record of `slot` holding `old` now holds `new`."""

    slot: Slot
    old: str
    new: str


def corrupt(memory: SSGMMemory, draw: Draw) -> Corruption | None:
    """Apply the draw's corruption to M (the caller has checked u < ε). Returns None when
    nothing can be corrupted: M holds no active one-valued record (m = 0), or the chosen
    record's predicate has a one-value domain (no other value to take)."""
    schema = memory.schema
    records = memory.state.records
    # Status `active`, as the lifecycle says: a record whose window has ended (or not
    # begun) is still active and may be chosen; its corruption then shows only when its
    # window is in force (docs/decisions.md, "Drift (§13)").
    candidates = sorted(
        (
            i
            for i, r in enumerate(records)
            if r.status == "active" and schema.predicates[r.predicate].cardinality == "one"
        ),
        # By slot; two active records of one slot (a scheduled change) keep M's order.
        key=lambda i: (records[i].slot, i),
    )
    if not candidates:
        return None
    index = candidates[draw.a % len(candidates)]
    record = records[index]
    others = [v for v in schema.predicates[record.predicate].values if v != record.value]
    if not others:
        return None
    new = others[draw.b % len(others)]
    records[index] = replace(record, value=new)
    return Corruption(record.slot, record.value, new)
