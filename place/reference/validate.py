"""Validation rules that need the replay (lifecycle legality, golds, pair irrelevance), and
`load_trajectory`, the checked load every command uses: the structure first
(`place.trajectory.loader`), then these rules, which assume a well-formed trajectory.

The composition lives here, not in the trajectory layer, so that `place.trajectory` never
depends on the reference semantics built on top of it.
"""

from __future__ import annotations

from pathlib import Path

from place.errors import InputError, Problem
from place.reference.replay import Reference, replay
from place.trajectory.loader import load_structure
from place.trajectory.model import Trajectory


def load_trajectory(path: str | Path) -> Trajectory:
    """Read and fully validate the trajectory at `path`; raise InputError listing every
    problem found otherwise. The replay's rules run only once the structure is sound."""
    trajectory, locate = load_structure(path)
    problems = semantic_problems(trajectory)
    if problems:
        raise InputError(problems=[locate(p) for p in problems])
    return trajectory


def _fmt(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(repr(v) for v in values) + "]" if values else "[] (abstain)"


def semantic_problems(trajectory: Trajectory, reference: Reference | None = None) -> list[Problem]:
    """Every problem the replay finds; empty for a valid trajectory."""
    ref = reference or replay(trajectory)
    problems = list(ref.problems)
    path = trajectory.source_path
    for _conv, turn, query in trajectory.queries():
        qref = ref.query(query.id)
        gold = tuple(sorted(set(query.gold)))
        where = f"turn {turn.id} > query {query.id}"
        if gold != qref.support.values:
            problems.append(
                Problem(
                    path,
                    where,
                    f"gold {_fmt(gold)} does not match the authorized support computed by replay "
                    f"{_fmt(qref.support.values)}; gold must equal the replayed eligible values",
                )
            )
        if qref.support_b is not None and qref.support_b != qref.support:
            problems.append(
                Problem(
                    path,
                    f"{where} > pair",
                    f"pair world b changes the authorized support from "
                    f"{_fmt(qref.support.values)} to {_fmt(qref.support_b.values)}; inserted turns "
                    "must be irrelevant to the query (world b must leave Q* unchanged)",
                )
            )
    probe_refs = {p.id: p for p in ref.probes}
    for probe in trajectory.probes:
        pref = probe_refs.get(probe.id)
        if pref is None:
            continue  # an unknown `after` is a structural problem reported by the loader
        gold = tuple(sorted(set(probe.gold)))
        if gold != pref.support.values:
            problems.append(
                Problem(
                    path,
                    f"probe {probe.id}",
                    f"gold {_fmt(gold)} does not match the authorized support computed by replay "
                    f"after turn {probe.after} {_fmt(pref.support.values)}",
                )
            )
    return problems
