"""Validation rules that need the replay (lifecycle legality, golds, pair irrelevance, the
governance rules and task decisions of docs/method.md §11, and the pointers of forged probes,
§12), and
`load_trajectory`, the checked load every command uses: the structure first
(`place.trajectory.loader`), then these rules, which assume a well-formed trajectory.

The composition lives here, not in the trajectory layer, so that `place.trajectory` never
depends on the reference semantics built on top of it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from place.eligibility import expired
from place.errors import InputError, Problem
from place.lexicon import Lexicon
from place.reference.replay import Reference, replay
from place.trajectory.loader import load_structure
from place.trajectory.model import Event, Fact, Probe, Trajectory

FORGED_K_BOUND = 5
"""A forged probe's slot must have fewer admissible facts than this at its read, so that QASC,
which keeps the k best admissible records, exposes the forged record (docs/method.md §12).
5 is the default k (`configs/experiment/all.yaml`); the file does not know the k a run will
use, so the runner checks the configured k separately."""


def load_trajectory(path: str | Path) -> Trajectory:
    """Read and fully validate the trajectory at `path`; raise InputError listing every
    problem found otherwise. The replay's rules run only once the structure is sound."""
    trajectory, locate = load_structure(path)
    problems = semantic_problems(trajectory)
    if problems:
        raise InputError(problems=[locate(p) for p in problems])
    return trajectory


def load_trajectory_text(text: str, suffix: str) -> Trajectory:
    """`load_trajectory` of a text not yet written anywhere (a generated or distracted
    trajectory), read from a temporary file exactly as `place validate` reads one."""
    with tempfile.TemporaryDirectory(prefix="place-trajectory-") as tmp:
        path = Path(tmp) / f"trajectory{suffix}"
        path.write_text(text, encoding="utf-8")
        return load_trajectory(path)


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
    problems += _forged_problems(trajectory, ref)
    return problems


def _forged_problems(trajectory: Trajectory, ref: Reference) -> list[Problem]:
    """Each forged probe's pointer against the turn it names and the replay (docs/method.md
    §12), and its slot's support against `FORGED_K_BOUND`. The loader has checked the kind,
    the value, that the pointer is there exactly when the kind cites a turn, and that it names
    a world-a turn."""
    problems: list[Problem] = []
    probe_refs = {p.id: p for p in ref.probes}
    for probe in trajectory.probes:
        forged, pref = probe.forged, probe_refs.get(probe.id)
        if forged is None or pref is None:
            continue
        where = f"probe {probe.id} > forged"
        fact = Fact(probe.entity, probe.predicate, forged.value, probe.scope)
        shown = f"({fact.entity}, {fact.predicate}, {fact.value!r}, {fact.scope})"
        found: list[str] = []
        count = len(pref.support.facts)
        if count >= FORGED_K_BOUND:
            found.append(
                f"the slot has {count} admissible facts at the probe (its authorized support "
                f"after turn {probe.after}); a forged probe needs fewer than {FORGED_K_BOUND}, "
                f"so that a read of the k best admissible records (k = {FORGED_K_BOUND} by "
                "default) still exposes the forged record"
            )
        pointer = forged.pointer
        if pointer is not None and trajectory.has_turn(pointer):
            turn = trajectory.turn(pointer)
            if trajectory.position(pointer) > trajectory.position(probe.after):
                found.append(
                    f"pointer {pointer} comes after the probe's turn {probe.after}; a forged "
                    "record may cite only a turn at or before the probe's 'after'"
                )
            wanted = "tool" if forged.kind == "tool" else "user"
            if turn.redelivers is not None:
                found.append(
                    f"pointer {pointer} is a redelivery of turn {turn.redelivers}; the evidence "
                    "log keeps no entry for a redelivery, so a forged record cites the turn as "
                    f"first delivered ({turn.redelivers})"
                )
            elif turn.role != wanted:
                found.append(
                    f"a forgery of kind {forged.kind!r} points at a {wanted} turn; turn "
                    f"{pointer} is a{'n' if turn.role == 'assistant' else ''} {turn.role} turn"
                )
            elif forged.kind == "unsupported":
                speaker = trajectory.speaker_of(turn)
                read = Lexicon(trajectory.schema, speaker).read(turn.text, probe.predicate)
                if fact in read:
                    found.append(
                        f"β (the text readback) reads {shown} from turn {pointer} (said by "
                        f"{speaker!r}); a forgery of kind 'unsupported' points at a user turn "
                        "from which β does not read the forged fact"
                    )
            elif forged.kind == "stale" and not _asserts(turn.events, fact):
                found.append(
                    f"turn {pointer} has no 'assert' or 'correct' event of {shown}; a forgery "
                    "of kind 'stale' points at a user turn whose events asserted the forged fact"
                )
        if forged.kind == "stale" and fact in state_at_probe(trajectory, ref, probe):
            found.append(
                f"{shown} is still in the reference state S* after turn {probe.after}; a "
                "forgery of kind 'stale' cites a fact that is no longer in S* at the probe"
            )
        problems += [Problem(trajectory.source_path, where, message) for message in found]
    return problems


def _asserts(events: Iterable[Event], fact: Fact) -> bool:
    return any(
        e.op in ("assert", "correct")
        and Fact(e.entity, e.predicate, e.value or "", e.scope) == fact
        for e in events
    )


def state_at_probe(trajectory: Trajectory, ref: Reference, probe: Probe) -> frozenset[Fact]:
    """S* after the probe's turn, at its conversation's date: the live records of the last
    checkpoint at or before that turn (no event changes them in between) whose window has
    not ended by the probe's date."""
    at = trajectory.position(probe.after)
    day = trajectory.conversation_of(probe.after).date
    before = [c for c in ref.checkpoints if trajectory.position(c.turn) <= at]
    if not before:
        return frozenset()
    return frozenset(r.fact for r in before[-1].live if not expired(r.valid_until, day))


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
