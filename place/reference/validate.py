"""Validation rules that need the replay (lifecycle legality, golds, pair irrelevance, and the
governance rules and task decisions of docs/method.md §11), and
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
    problems += _task_problems(trajectory, ref)
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


def _args(args: tuple[tuple[str, ...], ...] | None) -> str:
    if args is None:
        return "none (the task is blocked)"
    return "[" + ", ".join("[" + ", ".join(repr(v) for v in a) + "]" for a in args) + "]"


def _task_problems(trajectory: Trajectory, ref: Reference) -> list[Problem]:
    """Each task's `expect`, `reasons` and `args` against the decision the replay computes
    (as `gold` is checked against Q*); an undecidable task is refused."""
    problems: list[Problem] = []
    path = trajectory.source_path
    decided = {t.id: t for t in ref.tasks}
    for _conv, turn, task in trajectory.tasks():
        tref = decided.get(task.id)
        if tref is None:
            continue  # never run: a structural problem reported by the loader
        where = f"turn {turn.id} > task {task.id}"
        at = "" if tref.run_turn == turn.id else f" at its run turn {tref.run_turn}"
        if tref.decision is None:
            empty = [
                f"({n.entity}, {n.predicate}, {n.scope})"
                for n, support in zip(task.needs, tref.supports, strict=True)
                if not support.facts
            ]
            problems.append(
                Problem(
                    path,
                    where,
                    f"the task is undecidable{at}: its need(s) {', '.join(empty)} have no "
                    f"eligible value that {tref.asker!r} sees, and no reason to block applies "
                    "(stale-epoch, out-of-scope, untrusted); a task must be decidable: allowed "
                    "with a value for every need, or blocked for a reason",
                )
            )
            continue
        if task.expect != tref.decision:
            why = f" (reasons: {', '.join(tref.reasons)})" if tref.reasons else ""
            problems.append(
                Problem(
                    path,
                    where,
                    f"expect {task.expect!r} does not match the decision computed by replay"
                    f"{at} {tref.decision!r}{why}; expect must equal the replayed decision",
                )
            )
        if task.reasons is not None and set(task.reasons) != set(tref.reasons):
            problems.append(
                Problem(
                    path,
                    where,
                    f"reasons {list(task.reasons)} do not match the reasons computed by replay"
                    f"{at} {list(tref.reasons)}; reasons must equal the replayed reasons",
                )
            )
        if task.args is not None:
            written = tuple(tuple(sorted(set(a))) for a in task.args)
            if written != tref.args:
                problems.append(
                    Problem(
                        path,
                        where,
                        f"args {_args(written)} do not match the arguments computed by replay"
                        f"{at} {_args(tref.args)}; args must equal the values of each need's "
                        "authorized support, in the order of needs",
                    )
                )
    return problems
