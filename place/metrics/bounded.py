"""metrics.json `bounded` (docs/method.md §14): what the state budget did, per condition whose
producer keeps a budget, from the records alone.

The bounded producer appends one `op: bounded` entry to the operations of each world-a
update step it writes (place/producers/bounded.py). Summed over a run:

- `budget_state`: B_state as the run set it (null: unbounded);
- `max_state`: the most certified state records held after any step;
- `over_budget`: steps that ended with more records than B_state (only active records, and
  each slot's latest record, are never folded);
- `folds`, `versions`, `rebuild_checks`: records folded into archive summaries, summary
  versions logged in L, and summaries rebuilt from L and V and checked;
- `deletion`: the deletion rows the producer wrote (one per forget), by status, and how many
  are `accurate`: `done` exactly when the harness found no residue right after the forget's
  step (records/forgets.jsonl, check `after`), and `retained` only when every residue the
  harness found is in a retained class.

A design without a bounded producer has no `bounded` group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from place.design import Design
from place.records import RunRecords

OP = "bounded"
RETAINED_CLASSES = {"evidence": "evidence"}
"""A retainable class -> where the harness's residue check names it (`where` of a forget)."""


def bounded_steps(records: RunRecords, producer: str) -> list[Mapping[str, Any]]:
    """The `op: bounded` entries of `producer`'s world-a steps, in step order."""
    return [
        op
        for step in records.steps
        if step.producer == producer and step.world == "a"
        for op in step.operations
        if op.get("op") == OP
    ]


def accurate(status: str, residue: Iterable[str], where: Iterable[str], retained: set[str]) -> bool:
    """A deletion row is accurate when `done` ⟺ no harness residue, and `retained` ⇒ every
    residue string was found only in retained classes."""
    residue, where = list(residue), list(where)
    if (status == "done") != (not residue):
        return False
    if status == "retained":
        places = {part for w in where for part in w.split("+")}
        return bool(residue) and places <= retained
    return True


def bounded_figures(records: RunRecords, producer: str) -> dict[str, Any] | None:
    """The figures of one producer's row; None when it wrote no `bounded` entry."""
    ops = bounded_steps(records, producer)
    if not ops:
        return None
    residue = {f.event: f for f in records.forgets if f.producer == producer and f.check == "after"}
    retained = {RETAINED_CLASSES[c] for op in ops for c in op.get("retain") or ()}
    counts = {"done": 0, "pending": 0, "retained": 0}
    right = total = 0
    for op in ops:
        for row in op.get("deletions") or ():
            total += 1
            counts[str(row["status"])] += 1
            found = residue.get(str(row["event"]))
            if found is not None and accurate(
                str(row["status"]), found.residue, found.where, retained
            ):
                right += 1
    return {
        "budget_state": ops[-1].get("budget_state"),
        "max_state": max(int(op["state"]) for op in ops),
        "over_budget": sum(1 for op in ops if op.get("over_budget")),
        "folds": sum(len(op.get("folds") or ()) for op in ops),
        "versions": sum(len(op.get("versions") or ()) for op in ops),
        "rebuild_checks": sum(int(op.get("rebuild_checks") or 0) for op in ops),
        "deletion": {**counts, "total": total, "accurate": right},
    }


def bounded_group(records: RunRecords, design: Design) -> dict[str, dict[str, Any]] | None:
    """metrics.json `bounded`: per condition (in design order) whose producer wrote `bounded`
    entries, its row's figures (the read policies of a row share its store); None when no
    condition has any."""
    out: dict[str, dict[str, Any]] = {}
    by_producer: dict[str, dict[str, Any] | None] = {}
    for c in design.conditions:
        if c.producer not in by_producer:
            by_producer[c.producer] = bounded_figures(records, c.producer)
        figures = by_producer[c.producer]
        if figures is not None:
            out[c.name] = figures
    return out or None
