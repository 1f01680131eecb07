"""Reference replay: S* at every checkpoint, Q* for every query (both worlds) and probe, and
(docs/method.md §11) Γ* at every world-a checkpoint and the reference decision of every task.

This is evaluator-side truth. Nothing on the runtime side (producers, read policies) may
import it; the CSS certifier shares only the transition rules in `lifecycle`.

A trajectory without §11's constructs has one principal, who owns every record and sees
everything, no task, share, grant or redelivery: its checkpoints, S* and Q* are exactly
those of docs/method.md §1 (its Γ* holds only the quarantine and deletion rows of §10's tool
turns and forgets).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from place.eligibility import Interpretation, is_eligible
from place.errors import Problem
from place.lexicon import Lexicon
from place.reference.governance import (
    Governance,
    GovernanceError,
    GovernanceTransition,
    GovernedState,
)
from place.reference.lifecycle import FactRecord, LifecycleError, LifecycleState
from place.reference.provenance import Provenance
from place.trajectory.model import (
    Conversation,
    Event,
    Expectation,
    Fact,
    Query,
    Reason,
    Slot,
    Task,
    Trajectory,
    Turn,
)

CheckpointKind = Literal["post-update", "pre-query"]
TaskCheckpointKind = Literal["pre-task"]
"""A world-a checkpoint at a task or run turn (docs/method.md §11): the state the
act gate reads, after the turn's request is recorded. Only trajectories with tasks have one."""


TransitionKind = Literal["assert", "supersede", "correct", "retract", "forget"]
_LIFECYCLE_KIND: dict[str, TransitionKind] = {
    "assert": "assert",
    "correct": "correct",
    "retract": "retract",
    "forget": "forget",
}


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
    """The turn after which (post-update) or before which (pre-query) the state is taken;
    pre-task: the task or run turn, its request recorded, its decision not taken."""
    kind: CheckpointKind | TaskCheckpointKind
    conversation: str
    date: dt.date
    state: frozenset[Fact]
    live: tuple[FactRecord, ...] = ()
    """The records behind `state`, with their validity windows (for the run records)."""
    transitions: tuple[EventTransition, ...] = ()
    """Post-update: what each lifecycle event of the turn did to its slot, in event order
    (a proposal or a redelivered event changes no slot: it is among `governance_events`)."""
    governance: Governance | None = None
    """Γ* at this checkpoint (world a; None only for a checkpoint built by hand)."""
    governance_events: tuple[GovernanceTransition, ...] = ()
    """What the turn did to Γ*, in event order: share, unshare, grant, revoke, propose,
    rollback, duplicate (post-update); request or duplicate (pre-task)."""
    visibility: Mapping[Slot, frozenset[str]] = field(default_factory=dict, compare=False)
    """Who may see each owned slot here (`GovernedState.visibility`): the `visible` of a
    fact exposed by a read at this checkpoint. A slot without an owner is everyone's."""

    def visible(self, slot: Slot, asker: str) -> bool:
        seen_by = self.visibility.get(slot)
        return seen_by is None or asker in seen_by


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
    asker: str | None = None
    """τ's asker: the query turn's speaker. E also requires that the asker sees the fact."""
    foreign_present: bool = False
    """S*'s history holds a record the asker cannot see (docs/method.md §11, non-exposure)."""


@dataclass(frozen=True)
class ProbeReference:
    id: str
    after: str
    conversation: str
    tau: Interpretation
    support: Support
    asker: str | None = None
    foreign_present: bool = False


Decision = Expectation
"""A task's reference decision: `allow` or `block`."""


@dataclass(frozen=True)
class TaskReference:
    """The reference decision of one task (docs/method.md §11), taken at its run turn."""

    id: str
    turn: str
    """The turn that requests it."""
    run_turn: str
    """Where it is decided: its own turn, or the turn that runs it when it is deferred."""
    conversation: str
    """The run turn's conversation (its date is the needs' as_of)."""
    asker: str
    handle: str
    permission: str | None
    deferred: bool
    taus: tuple[Interpretation, ...]
    """One interpretation per need: (entity, predicate, scope, the run turn's date)."""
    supports: tuple[Support, ...]
    """Q*_i per need: eligible facts of S* at the run turn that the asker sees."""
    decision: Decision | None
    """None: undecidable (a need has no support and no reason applies; the validator refuses
    such a task)."""
    reasons: tuple[Reason, ...]
    """Why it is blocked, in the order stale-epoch, out-of-scope, untrusted."""
    args: tuple[tuple[str, ...], ...] | None
    """For an allowed task: the values of each Q*_i, in the order of needs."""
    epoch: int | None
    """n(p, asker) at the request (None without a permission)."""
    epoch_at_run: int | None
    """n(p, asker) at the run turn."""
    held: bool | None
    """held(p, asker) at the run turn."""
    links: tuple[str, ...]
    """The links at the run turn, where the arguments are bound: `RequestRow.links` as
    `GovernedState.request_row` makes it there (the event ids of the live records the needs
    admit that the asker sees, sorted). For a task that is not deferred they are its request
    row's; a deferred task's are taken at its run, so a value superseded, corrected or
    retracted since the request is traced to the event that holds at the run. Γ*'s request
    row keeps the request's."""
    foreign_present: bool = False
    redeliveries: tuple[str, ...] = ()
    """Turns that deliver the task (its request or its run) again: `duplicate`, never run."""


@dataclass(frozen=True)
class Reference:
    checkpoints: tuple[Checkpoint, ...]
    queries: tuple[QueryReference, ...]
    probes: tuple[ProbeReference, ...]
    problems: tuple[Problem, ...] = ()
    """Lifecycle and governance rule violations met during replay (empty for a valid
    trajectory)."""
    tasks: tuple[TaskReference, ...] = ()
    """Every task's reference decision, in the order of their requests."""

    def query(self, query_id: str) -> QueryReference:
        return next(q for q in self.queries if q.id == query_id)

    def task(self, task_id: str) -> TaskReference:
        return next(t for t in self.tasks if t.id == task_id)


def authorized_support(state: LifecycleState, day: dt.date, tau: Interpretation) -> Support:
    """Eligible facts among S* at a checkpoint dated `day`."""
    return Support(frozenset(r.fact for r in state.live_records(day) if is_eligible(r, tau)))


def visible_support(world: GovernedState, day: dt.date, tau: Interpretation, asker: str) -> Support:
    """Eligible facts among S* at a checkpoint dated `day` that `asker` sees (τ with its
    asker, docs/method.md §11). With one principal this is `authorized_support`."""
    return Support(
        frozenset(
            r.fact
            for r in world.lifecycle.live_records(day)
            if is_eligible(r, tau) and world.visible(r, asker)
        )
    )


def interpretation(query: Query) -> Interpretation:
    return Interpretation(query.entity, query.predicate, query.scope, query.as_of)


class _Replayer:
    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self.problems: list[Problem] = []
        self.lexicons: dict[str, Lexicon] = {}
        self.tasks: dict[str, TaskReference] = {}
        self.redeliveries: dict[str, list[str]] = {}

    def problem(self, location: str, message: str) -> None:
        self.problems.append(Problem(self.trajectory.source_path, location, message))

    def lexicon(self, speaker: str) -> Lexicon:
        """β with `speaker` as the entity of a text that names none (docs/method.md §11)."""
        if speaker not in self.lexicons:
            self.lexicons[speaker] = Lexicon(self.trajectory.schema, speaker)
        return self.lexicons[speaker]

    @cached_property
    def provenance(self) -> Provenance:
        """§10's untrusted values (built only for a trajectory whose tasks need them)."""
        return Provenance(self.trajectory, self.lexicon(self.trajectory.principal))

    def apply_events(
        self, world: GovernedState, turn: Turn, speaker: str, day: dt.date, where: str
    ) -> tuple[tuple[EventTransition, ...], tuple[GovernanceTransition, ...]]:
        """Apply a turn's events in order, recording what each did to its slot's live values
        and to Γ* (an event the rules refuse is a problem of the trajectory, reported by
        validate). A redelivered event is a duplicate: nothing happens."""
        out: list[EventTransition] = []
        governance: list[GovernanceTransition] = []
        state = world.lifecycle
        for event in turn.events:
            if turn.redelivers is not None:
                slot = event.slot if event.has_slot else None
                governance.append(
                    GovernanceTransition(event.id, "duplicate", slot, task=event.task)
                )
                continue
            slot = event.slot
            before = {r.value for r in state.live_records(day) if r.slot == slot}
            try:
                if event.op == "rollback":
                    governance.append(self.rollback(world, event, speaker))
                    continue
                transition, acted = world.apply(event, speaker, day)
            except (LifecycleError, GovernanceError) as exc:
                self.problem(f"{where} > event {event.id}", str(exc))
                continue
            if acted is not None:
                governance.append(acted)
            if transition is None:
                continue
            after = {r.value for r in state.live_records(day) if r.slot == slot}
            one = self.trajectory.schema.predicates[event.predicate].cardinality == "one"
            kind = _LIFECYCLE_KIND[event.op]  # world.apply returns a Transition for these only
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
        return tuple(out), tuple(governance)

    def rollback(self, world: GovernedState, event: Event, speaker: str) -> GovernanceTransition:
        task_id = event.task
        assert task_id is not None  # the loader's rule
        decided = self.tasks.get(task_id)
        row = world.requests.get(task_id)
        if decided is None or row is None:
            raise GovernanceError(
                f"rollback of task {task_id!r}, which has not run yet; a task is rolled back "
                "after the turn that runs it"
            )
        if decided.decision != "allow":
            reasons = ", ".join(decided.reasons) or "undecidable"
            raise GovernanceError(
                f"rollback of task {task_id!r}, which the reference blocks ({reasons}); only an "
                "allowed task that has run is rolled back"
            )
        if row.status == "reverted":
            raise GovernanceError(f"task {task_id!r} is already rolled back")
        owner = (
            self.trajectory.schema.permissions[decided.permission].owner
            if decided.permission is not None
            else None
        )
        if speaker not in (decided.asker, owner):
            who = f"its asker {decided.asker!r}" + (
                f" or the owner {owner!r} of its permission" if owner is not None else ""
            )
            raise GovernanceError(
                f"rollback of task {task_id!r} by {speaker!r}; a task is rolled back by {who}"
            )
        return world.revert(event)

    def world_b(self, world: GovernedState, turns: Iterable[Turn], day: dt.date) -> GovernedState:
        copy = world.copy()
        for turn in turns:
            self.apply_events(copy, turn, self.trajectory.principal, day, f"pair turn {turn.id}")
        return copy

    # -- tasks --------------------------------------------------------------------------

    def request(
        self, world: GovernedState, task: Task, asker: str, turn: Turn, conv: Conversation
    ) -> GovernanceTransition:
        """Record the request of a task at its own turn (Γ*'s request row)."""
        return world.request(world.request_row(task, asker, conv.date))

    def decide(
        self, world: GovernedState, task: Task, request_turn: str, turn: Turn, conv: Conversation
    ) -> TaskReference:
        """The reference decision of `task` at its run turn `turn` (docs/method.md §11)."""
        row = world.requests[task.id]
        asker, day = row.asker, conv.date
        live = world.lifecycle.live_records(day)
        taus = tuple(Interpretation(n.entity, n.predicate, n.scope, day) for n in task.needs)
        supports = tuple(visible_support(world, day, tau, asker) for tau in taus)
        reasons: list[Reason] = []
        n_u = held = None
        if task.permission is not None:
            n_u, held = world.epoch(task.permission, asker), world.holds(task.permission, asker)
            if not held or (task.deferred and row.n != n_u):
                reasons.append("stale-epoch")
        empty = [i for i, support in enumerate(supports) if not support.facts]
        if any(
            is_eligible(r, taus[i]) and not world.visible(r, asker) for i in empty for r in live
        ):
            reasons.append("out-of-scope")
        if empty:
            untrusted = {p for p, _v in self.provenance.at(turn.id, after=False).untrusted()}
            if any(task.needs[i].predicate in untrusted for i in empty):
                reasons.append("untrusted")
        decision: Decision | None = "block" if reasons else None if empty else "allow"
        return TaskReference(
            id=task.id,
            turn=request_turn,
            run_turn=turn.id,
            conversation=conv.id,
            asker=asker,
            handle=task.handle,
            permission=task.permission,
            deferred=task.deferred,
            taus=taus,
            supports=supports,
            decision=decision,
            reasons=tuple(reasons),
            args=tuple(s.values for s in supports) if decision == "allow" else None,
            epoch=row.n,
            epoch_at_run=n_u,
            held=held,
            links=world.request_row(task, asker, day).links,
            foreign_present=world.foreign(asker),
        )

    def task_turn(
        self, world: GovernedState, turn: Turn, conv: Conversation
    ) -> tuple[GovernanceTransition, ...]:
        """A task or run turn (or its redelivery): record the request, decide what runs."""
        traj = self.trajectory
        task_id = turn.task.id if turn.task is not None else turn.run
        assert task_id is not None
        if turn.redelivers is not None:
            self.redeliveries.setdefault(task_id, []).append(turn.id)
            return (GovernanceTransition(task_id, "duplicate", task=task_id),)
        if turn.task is not None:
            done = (self.request(world, turn.task, traj.speaker_of(turn), turn, conv),)
            if not turn.task.deferred:
                self.tasks[task_id] = self.decide(world, turn.task, turn.id, turn, conv)
            return done
        requested = world.requests[task_id].task
        request_turn = next(t.id for _c, t, k in traj.tasks() if k.id == requested)
        self.tasks[task_id] = self.decide(world, traj.task(task_id), request_turn, turn, conv)
        return ()

    # -- the replay ---------------------------------------------------------------------

    def run(self) -> Reference:
        traj = self.trajectory
        world = GovernedState.empty(traj.schema)
        state = world.lifecycle
        checkpoints: list[Checkpoint] = []
        queries: list[QueryReference] = []
        probes_after: dict[str, list] = {}
        for probe in traj.probes:
            probes_after.setdefault(probe.after, []).append(probe)
        probe_refs: dict[str, ProbeReference] = {}
        for conv in traj.conversations:
            for turn in conv.turns:
                where = f"conversation {conv.id} > turn {turn.id}"
                speaker = traj.speaker_of(turn)
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
                            governance=world.snapshot(),
                            visibility=world.visibility(conv.date),
                        )
                    )
                    tau = interpretation(q)
                    support_b, state_b, live_b = None, None, None
                    if q.pair_insert is not None:
                        world_b = self.world_b(world, q.pair_insert, conv.date)
                        support_b = visible_support(world_b, conv.date, tau, speaker)
                        state_b = world_b.lifecycle.state_at(conv.date)
                        live_b = tuple(world_b.lifecycle.live_records(conv.date))
                    queries.append(
                        QueryReference(
                            q.id,
                            turn.id,
                            conv.id,
                            tau,
                            visible_support(world, conv.date, tau, speaker),
                            support_b,
                            state.state_at(conv.date),
                            state_b,
                            live,
                            live_b,
                            speaker,
                            world.foreign(speaker),
                        )
                    )
                if turn.task is not None or turn.run is not None:
                    acted = self.task_turn(world, turn, conv)
                    checkpoints.append(
                        Checkpoint(
                            turn.id,
                            "pre-task",
                            conv.id,
                            conv.date,
                            state.state_at(conv.date),
                            tuple(state.live_records(conv.date)),
                            governance=world.snapshot(),
                            governance_events=acted,
                            visibility=world.visibility(conv.date),
                        )
                    )
                if turn.events:
                    transitions, acted = self.apply_events(world, turn, speaker, conv.date, where)
                    checkpoints.append(
                        Checkpoint(
                            turn.id,
                            "post-update",
                            conv.id,
                            conv.date,
                            state.state_at(conv.date),
                            tuple(state.live_records(conv.date)),
                            transitions,
                            world.snapshot(),
                            acted,
                            world.visibility(conv.date),
                        )
                    )
                if turn.role == "tool":
                    world.quarantine_turn(turn.id, list(self.lexicon(speaker).read(turn.text)))
                for probe in probes_after.get(turn.id, []):
                    asker = traj.asker_of(probe)
                    tau = Interpretation(probe.entity, probe.predicate, probe.scope, conv.date)
                    probe_refs[probe.id] = ProbeReference(
                        probe.id,
                        turn.id,
                        conv.id,
                        tau,
                        visible_support(world, conv.date, tau, asker),
                        asker,
                        world.foreign(asker),
                    )
        ordered_probes = tuple(probe_refs[p.id] for p in traj.probes if p.id in probe_refs)
        tasks = tuple(
            replace(self.tasks[k.id], redeliveries=tuple(self.redeliveries.get(k.id, ())))
            for _c, _t, k in traj.tasks()
            if k.id in self.tasks
        )
        return Reference(
            tuple(checkpoints), tuple(queries), ordered_probes, tuple(self.problems), tasks
        )


def replay(trajectory: Trajectory) -> Reference:
    """Replay the trajectory's trusted events in order (deterministic, no I/O)."""
    return _Replayer(trajectory).run()
