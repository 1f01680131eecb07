"""Reference replay: S* at every checkpoint, Q* for every query (both worlds) and probe.

This is evaluator-side truth. Nothing on the runtime side (producers, read policies) may
import it; the CSS certifier shares only the transition rules in `lifecycle`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from place.eligibility import Interpretation, is_eligible
from place.errors import Problem
from place.reference.lifecycle import FactRecord, LifecycleError, LifecycleState
from place.trajectory.model import Fact, Query, Trajectory, Turn

CheckpointKind = Literal["post-update", "pre-query"]


TransitionKind = Literal["assert", "supersede", "correct", "retract", "forget"]


@dataclass(frozen=True)
class EventTransition:
    """What one trusted event did to its slot's reference state (the AOEP obligations of
    docs/method.md §10 are judged against it at the event's post-update checkpoint)."""

    event: str
    kind: TransitionKind
    """`supersede`: an `assert` on a one-valued slot that held a value; `assert`: any other
    assert (a first value, or a value joining a many-valued set)."""
    entity: str
    predicate: str
    scope: str
    removed: tuple[str, ...]
    """Values of the slot live in S* just before the event and not after it (sorted)."""
    added: tuple[str, ...]
    """The event's own value when it is live in S* after the event (assert, correct)."""


@dataclass(frozen=True)
class Checkpoint:
    turn: str
    """The turn after which (post-update) or before which (pre-query) the state is taken."""
    kind: CheckpointKind
    conversation: str
    date: dt.date
    state: frozenset[Fact]
    live: tuple[FactRecord, ...] = ()
    """The records behind `state`, with their validity windows (for the run records)."""
    transitions: tuple[EventTransition, ...] = ()
    """Post-update: what each event of the turn did to its slot, in event order."""


@dataclass(frozen=True)
class Support:
    """Q*: the eligible facts for one interpretation, and their values (the gold answer)."""

    facts: frozenset[Fact]

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(sorted({f.value for f in self.facts}))


@dataclass(frozen=True)
class QueryReference:
    id: str
    turn: str
    conversation: str
    tau: Interpretation
    support: Support
    support_b: Support | None
    """World b's Q* (None when the query has no pair)."""
    state: frozenset[Fact] = frozenset()
    """S* at the pre-query checkpoint (world a)."""
    state_b: frozenset[Fact] | None = None
    """S* of world b after the inserted turns (None when the query has no pair)."""
    live: tuple[FactRecord, ...] = ()
    """The records behind `state`, with their windows."""
    live_b: tuple[FactRecord, ...] | None = None
    """The records behind `state_b`, with their windows."""


@dataclass(frozen=True)
class ProbeReference:
    id: str
    after: str
    conversation: str
    tau: Interpretation
    support: Support


@dataclass(frozen=True)
class Reference:
    checkpoints: tuple[Checkpoint, ...]
    queries: tuple[QueryReference, ...]
    probes: tuple[ProbeReference, ...]
    problems: tuple[Problem, ...] = ()
    """Lifecycle rule violations met during replay (empty for a valid trajectory)."""

    def query(self, query_id: str) -> QueryReference:
        return next(q for q in self.queries if q.id == query_id)


def authorized_support(state: LifecycleState, day: dt.date, tau: Interpretation) -> Support:
    """Eligible facts among S* at a checkpoint dated `day`."""
    return Support(frozenset(r.fact for r in state.live_records(day) if is_eligible(r, tau)))


def interpretation(query: Query) -> Interpretation:
    return Interpretation(query.entity, query.predicate, query.scope, query.as_of)


class _Replayer:
    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self.problems: list[Problem] = []

    def problem(self, location: str, message: str) -> None:
        self.problems.append(Problem(self.trajectory.source_path, location, message))

    def apply_events(
        self, state: LifecycleState, turn: Turn, day: dt.date, where: str
    ) -> tuple[EventTransition, ...]:
        """Apply a turn's events in order, recording what each did to its slot's live values
        (an event the rules refuse is a problem of the trajectory, reported by validate)."""
        out = []
        for event in turn.events:
            slot = event.slot
            before = {r.value for r in state.live_records(day) if r.slot == slot}
            try:
                state.apply(event, day)
            except LifecycleError as exc:
                self.problem(f"{where} > event {event.id}", str(exc))
                continue
            after = {r.value for r in state.live_records(day) if r.slot == slot}
            one = self.trajectory.schema.predicates[event.predicate].cardinality == "one"
            kind: TransitionKind = event.op
            if event.op == "assert" and one and before - {event.value}:
                kind = "supersede"
            out.append(
                EventTransition(
                    event=event.id,
                    kind=kind,
                    entity=event.entity,
                    predicate=event.predicate,
                    scope=event.scope,
                    removed=tuple(sorted(before - after)),
                    added=(event.value,)
                    if event.value is not None and event.op != "retract" and event.value in after
                    else (),
                )
            )
        return tuple(out)

    def world_b(self, state: LifecycleState, turns: Iterable[Turn], day: dt.date) -> LifecycleState:
        world = state.copy()
        for turn in turns:
            self.apply_events(world, turn, day, f"pair turn {turn.id}")
        return world

    def run(self) -> Reference:
        traj = self.trajectory
        state = LifecycleState(traj.schema)
        checkpoints: list[Checkpoint] = []
        queries: list[QueryReference] = []
        probes_after: dict[str, list] = {}
        for probe in traj.probes:
            probes_after.setdefault(probe.after, []).append(probe)
        probe_refs: dict[str, ProbeReference] = {}
        for conv in traj.conversations:
            for turn in conv.turns:
                where = f"conversation {conv.id} > turn {turn.id}"
                if turn.query is not None:
                    q = turn.query
                    live = tuple(state.live_records(conv.date))
                    checkpoints.append(
                        Checkpoint(
                            turn.id,
                            "pre-query",
                            conv.id,
                            conv.date,
                            state.state_at(conv.date),
                            live,
                        )
                    )
                    tau = interpretation(q)
                    support_b, state_b, live_b = None, None, None
                    if q.pair_insert is not None:
                        world = self.world_b(state, q.pair_insert, conv.date)
                        support_b = authorized_support(world, conv.date, tau)
                        state_b = world.state_at(conv.date)
                        live_b = tuple(world.live_records(conv.date))
                    queries.append(
                        QueryReference(
                            q.id,
                            turn.id,
                            conv.id,
                            tau,
                            authorized_support(state, conv.date, tau),
                            support_b,
                            state.state_at(conv.date),
                            state_b,
                            live,
                            live_b,
                        )
                    )
                if turn.events:
                    transitions = self.apply_events(state, turn, conv.date, where)
                    checkpoints.append(
                        Checkpoint(
                            turn.id,
                            "post-update",
                            conv.id,
                            conv.date,
                            state.state_at(conv.date),
                            tuple(state.live_records(conv.date)),
                            transitions,
                        )
                    )
                for probe in probes_after.get(turn.id, []):
                    tau = Interpretation(probe.entity, probe.predicate, probe.scope, conv.date)
                    probe_refs[probe.id] = ProbeReference(
                        probe.id, turn.id, conv.id, tau, authorized_support(state, conv.date, tau)
                    )
        ordered_probes = tuple(probe_refs[p.id] for p in traj.probes if p.id in probe_refs)
        return Reference(tuple(checkpoints), tuple(queries), ordered_probes, tuple(self.problems))


def replay(trajectory: Trajectory) -> Reference:
    """Replay the trajectory's trusted events in order (deterministic, no I/O)."""
    return _Replayer(trajectory).run()
