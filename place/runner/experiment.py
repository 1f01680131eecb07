"""The factorial: write producers crossed with read policies, unit by unit.

Each producer writes its row store once per update step; every read policy of its row reads
that same store. Causal-pair worlds b and conflict-injected probe copies are clones of the
row store, written only with the inserted turns. Every unit's records are journaled, and a
resumed run continues after the last completed unit with the same stores and cache. Which
producers and policies are crossed is the `Design` (place/design.py), the paper's 2 × 2 by
default.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from place import faults
from place.agent.answer import AnswerCall, AnswerModel, DialogueTurn, answer_all
from place.design import PAPER, Design
from place.eligibility import Interpretation, is_eligible, is_ineligible_exposure
from place.errors import PlaceError
from place.governance.act_gate import NeedRead, decide
from place.governance.authorizer import ReadDecision
from place.governance.citation import (
    Evidence,
    consequential_predicates,
    pointer,
    provenance,
    source_turns,
)
from place.governance.evidence import EVIDENCE
from place.governance.forgery import forged_record
from place.governance.ledger import read_governance
from place.lexicon import Lexicon
from place.lexicon.outcome import outcome
from place.policies import POLICIES, build_policy
from place.producers import PRODUCERS, Writer, build_writer
from place.producers.registry import RecordCounter
from place.readback import (
    DERIVED_FACTS,
    LIFECYCLE_KEYS,
    LIFECYCLE_MARKER,
    SPEAKER,
    Readback,
    ReadFact,
    is_certified,
    is_derived,
    lifecycle_fact,
)
from place.records import (
    AuditItemRecord,
    AuditRecord,
    CheckpointRecord,
    CompactionRecord,
    ExposedRecord,
    ForgedRecord,
    ForgetRecord,
    GateDecisionRecord,
    GovernanceRecord,
    GovernanceRows,
    GovernanceTransitionRecord,
    LLMCallRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    ReadFactRecord,
    StepRecord,
    TaskRecord,
    TaskReferenceRecord,
    TransitionRecord,
)
from place.reference.governance import Governance, GovernanceTransition
from place.reference.lifecycle import FactRecord
from place.reference.provenance import Provenance
from place.reference.replay import CheckpointKind, EventTransition, Reference, TaskCheckpointKind
from place.runner import closed_loop, residue, snapshots
from place.runner.journal import Journal
from place.runner.plan import Unit, build_plan
from place.trajectory.model import Conversation, Event, Fact, Probe, Slot, Trajectory, Turn


def fact_list(facts: Iterable[Fact | tuple[str, ...]]) -> list[tuple[str, str, str, str]]:
    rows = [Fact(*f) for f in facts]  # a tuple of any other length is refused here
    return sorted((r.entity, r.predicate, r.value, r.scope) for r in rows)


def _iso(day: dt.date | None) -> str | None:
    return None if day is None else day.isoformat()


def windowed_list(
    records: Iterable[FactRecord | ReadFact],
) -> list[tuple[str, str, str, str, str | None, str | None]]:
    """Distinct facts with their windows, sorted (None sorts before any date)."""
    rows = {
        (r.entity, r.predicate, r.value, r.scope, _iso(r.valid_from), _iso(r.valid_until))
        for r in records
    }
    return sorted(rows, key=lambda row: tuple("" if x is None else x for x in row))


def lifecycle_of(metadata: Any) -> dict[str, str | None] | None:
    """The raw lifecycle metadata of a certified record (None for a plain record)."""
    meta = dict(metadata or {})
    if not is_certified(meta):
        return None
    keys = (LIFECYCLE_MARKER, *LIFECYCLE_KEYS)
    return {k: None if meta.get(k) in (None, "") else str(meta[k]) for k in keys}


def call_record(meta: dict[str, Any] | None) -> LLMCallRecord:
    """A call's Completion.meta() as a record; None (not recorded) becomes all-null."""
    meta = meta or {}
    return LLMCallRecord(
        finish=meta.get("finish"),
        prompt_tokens=meta.get("prompt_tokens"),
        completion_tokens=meta.get("completion_tokens"),
    )


def transition_record(t: EventTransition) -> TransitionRecord:
    return TransitionRecord(
        event=t.event,
        kind=t.kind,
        slot=(t.entity, t.predicate, t.scope),
        removed=list(t.removed),
        added=list(t.added),
    )


def governance_rows(g: Governance) -> GovernanceRows:
    """Γ (the reference's, or Γ^phys read from a ledger) as record rows."""
    return GovernanceRows(
        epochs=[(e.permission, e.principal, e.n, e.held) for e in g.epochs],
        shares=[(*s.slot, s.principal) for s in g.shares],
        conflicts=[
            (c.k, *c.slot, c.proposer, c.value, list(c.active), c.status) for c in g.conflicts
        ],
        requests=[
            (r.task, r.handle, r.asker, r.permission, r.n, list(r.links), r.status)
            for r in g.requests
        ],
        quarantine=[(q.turn, *q.fact) for q in g.quarantine],
        deletions=[(d.event, *d.slot, d.status) for d in g.deletions],
    )


def governance_transition_record(t: GovernanceTransition) -> GovernanceTransitionRecord:
    return GovernanceTransitionRecord(
        event=t.event,
        kind=t.kind,
        slot=None if t.slot is None else tuple(t.slot),
        principal=t.principal,
        permission=t.permission,
        task=t.task,
        value=t.value,
    )


def gate_rank(item: Any) -> tuple[float, str, int, str]:
    """The act gate's ranking of exposed items: by similarity, ties (every item of a policy
    that does not rank by similarity, e.g. recency and fullcontext) newest first, by
    written_on, written_seq (docs/decisions.md, "The governance half in a run")."""
    meta = item.metadata or {}
    seq = meta.get("written_seq")
    return (
        -float(item.score or 0.0),
        _neg_date(meta.get("written_on")),
        -(seq if isinstance(seq, int) else 0),
        str(item.id),
    )


def _neg_date(day: Any) -> str:
    # Newest first within a score: invert the ISO date's digits so that a plain sort works.
    text = str(day or "0000-00-00")
    return "".join(chr(ord("9") - ord(c) + ord("0")) if c.isdigit() else c for c in text)


def tau_tuple(tau: Interpretation) -> tuple[str, str, str, str]:
    return (tau.entity, tau.predicate, tau.scope, tau.as_of.isoformat())


@dataclass(frozen=True)
class _PendingAnswer:
    """An answer a unit needs: what the model will be shown, and the record it completes."""

    condition: str
    mode: str
    shown: tuple[str, ...]
    dialogue: tuple[DialogueTurn, ...]
    fields: dict[str, Any]
    """Every field of the QueryRecord but `raw_answer` and `outcome`."""


@dataclass(frozen=True)
class Sections:
    primary: bool = True
    utility: bool = True
    closed_loop: bool = True
    answers: bool = True
    """False: an answer-free run (docs/method.md §15): every read is made and recorded, no
    answer is asked (`raw_answer` and `outcome` are null)."""


class Experiment:
    """Runs one trajectory through every condition of a design on one backend and model."""

    def __init__(
        self,
        trajectory: Trajectory,
        reference: Reference,
        backend: Any,
        answer_model: AnswerModel | None,
        journal: Journal,
        k: int,
        sections: Sections = Sections(),
        progress: bool = True,
        on_phase: Callable[[str], None] | None = None,
        design: Design = PAPER,
        params: Mapping[str, Mapping[str, Any]] | None = None,
        concurrency: int = 1,
    ) -> None:
        self.traj = trajectory
        self.ref = reference
        self.backend = backend
        self.answers = answer_model
        self.journal = journal
        self.sections = sections
        self.progress = progress
        self.on_phase = on_phase or (lambda _phase: None)
        self.design = design
        self.rows = design.rows
        self.lexicon = Lexicon(trajectory.schema, trajectory.principal)
        self.readback = Readback(self.lexicon)
        # Each component's `design.<name>` section (absent: its declared defaults).
        self.params = dict(params or {})
        self.consequential = consequential_predicates(trajectory)
        self.policies = {
            r: build_policy(r, k, self.readback, self.params.get(r), self.consequential)
            for r in design.policies
        }
        # Whose time counts as governance overhead (manifest timings): their declarations say.
        self.governance_producers = {p for p in design.producers if PRODUCERS[p].governance}
        self.governance_policies = {r for r in design.policies if POLICIES[r].governance}
        self.checkpoints = {(c.turn, c.kind): c for c in reference.checkpoints}
        self.previous = {
            (c.turn, c.kind): (p.turn, p.kind)
            for p, c in zip(reference.checkpoints, reference.checkpoints[1:], strict=False)
        }
        self.provenance = Provenance(trajectory, self.lexicon)
        self.probe_refs = {p.id: p for p in reference.probes}
        self.task_refs = {t.id: t for t in reference.tasks}
        self.follows = self._checkpoint_before_each_turn()
        self.stores: dict[str, Any] = {}
        self.writers: dict[str, Writer] = {}
        self.governance_seconds = 0.0
        # The answer calls of one unit are independent; a server that serves several requests
        # at once (Ollama, a GPU) answers them concurrently. Reads and writes stay sequential.
        self.pool = ThreadPoolExecutor(concurrency) if concurrency > 1 else None

    # -- lifecycle ----------------------------------------------------------------------

    def run(self) -> None:
        units = build_plan(self.traj)
        self._open_stores(units)
        todo = units[self.journal.units_done :]
        bar = tqdm(
            total=len(units) + 1,
            initial=self.journal.units_done,
            disable=not self.progress,
            unit="unit",
            dynamic_ncols=True,
        )
        try:
            for unit in todo:
                bar.set_description(f"{unit.kind} {unit.conversation.id}")
                self.on_phase(
                    f"{unit.kind} (unit {unit.index}, conversation {unit.conversation.id})"
                )
                if unit.restart:
                    # Every producer restarts: its writer is rebuilt from its store (and ledger)
                    # alone, as after an interrupted run.
                    self._build_writers(units[: unit.index])
                if unit.writes:
                    snapshots.take(self.backend, self.stores, self.traj.principal)
                    self.journal.state["snapshot"] = unit.index
                    self.journal.save()
                self._execute(unit)
                self.backend.sync()
                faults.slow_unit()
                self.journal.commit_unit(unit.index)
                bar.update(1)
            if self.journal.units_done == len(units):
                bar.set_description("deletion residue (end)")
                self.on_phase("deletion residue at the end of the run")
                self._final_residue()
                self._store_audit()
                self.journal.commit_unit(len(units))
                bar.update(1)
        finally:
            bar.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
        for store in self.stores.values():
            store.close()
        self.stores.clear()

    def _open_stores(self, units: Sequence[Unit]) -> None:
        self.stores = snapshots.open_rows(
            self.backend,
            self.design.producers,
            self.traj.principal,
            self.journal.state.get("snapshot"),
            self.journal.units_done,
        )
        self._build_writers(units[: self.journal.units_done])

    def _build_writers(self, done_units: Sequence[Unit]) -> None:
        """A writer per producer on its row store, resumed from the units already done (its
        in-memory state rebuilt from the store and, for a producer that keeps one, its
        ledger): at the start of a run, on resume, and at a `restart`."""
        done = [(u.turns, u.conversation) for u in done_units if u.writes]
        for producer, store in self.stores.items():
            writer = build_writer(
                producer, store, self.traj.schema, self.readback, self.params.get(producer)
            )
            if self.traj.compactions and not callable(getattr(writer, "compact", None)):
                raise PlaceError(
                    f"producer {producer!r} has no compact(entry, day), and trajectory "
                    f"{self.traj.id!r} has compaction points: a producer writes its summary "
                    "there (docs/extending.md, 'Adding a producer')"
                )
            writer.resume(done)
            self.writers[producer] = writer

    def _checkpoint_before_each_turn(self) -> dict[str, tuple[str, str]]:
        """For each world-a turn, the last world-a checkpoint taken at or before it: the
        state a probe after that turn reads (its record's `follows`)."""
        order = {t.id: i for i, (_c, t) in enumerate(self.traj.turns())}
        taken = sorted(
            ((order[c.turn], c.kind != "pre-query", c.turn, c.kind) for c in self.ref.checkpoints),
        )
        out: dict[str, tuple[str, str]] = {}
        last: tuple[str, str] | None = None
        marks = iter(taken)
        mark = next(marks, None)
        for _conv, turn in self.traj.turns():
            while mark is not None and mark[0] <= order[turn.id]:
                last = (mark[2], mark[3])
                mark = next(marks, None)
            if last is not None:
                out[turn.id] = last
        return out

    def query_tau(self, query: str) -> Interpretation:
        """τ of a query with its asker (visibility is then part of E)."""
        qref = self.ref.query(query)
        return qref.tau._replace(asker=qref.asker)

    def probe_tau(self, probe: str) -> Interpretation:
        pref = self.probe_refs[probe]
        return pref.tau._replace(asker=pref.asker)

    # -- units --------------------------------------------------------------------------

    def _execute(self, unit: Unit) -> None:
        if unit.kind == "step":
            self._step(unit)
        elif unit.kind == "query":
            if self.sections.primary or self.sections.closed_loop:
                self._query(unit)
        elif unit.kind == "task":
            self._task(unit)
        elif unit.kind == "compaction":
            self._compaction(unit)
        elif self.sections.utility:
            self._probes(unit.probes, unit.conversation)

    def _step(self, unit: Unit) -> None:
        conv = unit.conversation
        assert unit.step is not None
        self._write(self.writers, unit.turns, conv, unit.step, "a")
        event_turn = unit.event_turn
        if event_turn is not None:
            self._checkpoint(event_turn.id, "post-update", conv)
            for event in event_turn.events:
                if event.op == "forget":
                    self._residue_check(event, "after", event_turn.id)

    def _compaction(self, unit: Unit) -> None:
        """A compaction point (docs/method.md §11): every producer writes its summary of the
        entry's (entity, scope) in world a."""
        entry = unit.compaction
        assert entry is not None
        for producer in self.design.producers:
            started = time.perf_counter()
            done = self.writers[producer].compact(entry, unit.conversation.date)
            elapsed = time.perf_counter() - started
            if producer in self.governance_producers:
                self.governance_seconds += elapsed
            self.journal.append(
                CompactionRecord(
                    after=entry.after,
                    entity=entry.entity,
                    scope=entry.scope,
                    producer=producer,
                    operations=done.operations,
                    seconds=round(elapsed, 3),
                )
            )

    def _task(self, unit: Unit) -> None:
        """A task or run turn (docs/method.md §11). Producers write first (a ledger records the
        request; dialogue memories write nothing), then the world-a pre-task checkpoint, then,
        where the task is decided (its own turn, or its run turn when deferred, and every
        redelivery of either), the act gate decides it for every condition."""
        conv, turn = unit.conversation, unit.turns[0]
        for producer in self.design.producers:
            started = time.perf_counter()
            self.writers[producer].write(unit.turns, conv)
            if producer in self.governance_producers:
                self.governance_seconds += time.perf_counter() - started
        self._checkpoint(turn.id, "pre-task", conv)
        task_id = turn.task.id if turn.task is not None else turn.run
        assert task_id is not None
        task, tref = self.traj.task(task_id), self.task_refs[task_id]
        redelivery = turn.redelivers is not None
        if turn.task is not None and task.deferred and not redelivery:
            return  # a deferred task's request: recorded, decided when it runs
        asker = self.traj.speaker_of(turn)
        taus = [
            Interpretation(n.entity, n.predicate, n.scope, conv.date, asker) for n in task.needs
        ]
        permissions = self.traj.schema.permissions
        for row, conditions in self.rows.items():
            store = self.stores[row]
            scan = store.scan()
            ledger = read_governance(scan)
            keeps_ledger = bool(scan.tables)
            invisible = self._invisible_certified(scan.points, asker, conv.date)
            request = next((r.handle for r in ledger.requests if r.task == task_id), None)
            for condition in conditions:
                policy = self.design.policy_of(condition)
                decisions = [self._read(store, policy, turn.text, tau, conv.date) for tau in taus]
                reads = [
                    self._need_read(d, need, conv.date)
                    for d, need in zip(decisions, task.needs, strict=True)
                ]
                decision = decide(
                    task,
                    asker,
                    reads,
                    ledger,
                    keeps_ledger=keeps_ledger,
                    owner_of_permission=lambda p: permissions[p].owner,
                    redelivery=redelivery,
                    invisible_certified=invisible.__contains__,
                )
                self.journal.append(
                    TaskRecord(
                        task=task_id,
                        delivery=turn.id,
                        turn=tref.turn,
                        run_turn=tref.run_turn,
                        conversation=conv.id,
                        read_on=conv.date.isoformat(),
                        condition=condition,
                        asker=asker,
                        redelivery=redelivery,
                        reads=[
                            ProbeRead(
                                exposed=self._exposed(
                                    d, tau, conv.date, at=(turn.id, "pre-task"), store=store
                                ),
                                admitted=d.admitted,
                                hearsay=list(d.hearsay),
                                raw_answer=None,
                                outcome=None,
                            )
                            for d, tau in zip(decisions, taus, strict=True)
                        ],
                        taus=[tau_tuple(tau) for tau in taus],
                        decision=GateDecisionRecord(
                            kind=decision.kind,
                            reasons=list(decision.reasons),
                            args=None
                            if decision.args is None
                            else [list(a) for a in decision.args],
                            handle=decision.handle,
                            sources=None if decision.sources is None else list(decision.sources),
                        ),
                        reference=TaskReferenceRecord(
                            decision=tref.decision or "block",
                            reasons=list(tref.reasons),
                            args=None if tref.args is None else [list(a) for a in tref.args],
                            links=list(tref.links),
                            handle=tref.handle,
                        ),
                        request=request,
                        foreign_present=tref.foreign_present,
                    )
                )

    def _need_read(self, decision: ReadDecision, need: Slot, day: dt.date) -> NeedRead:
        """What one need's read gives the act gate: per exposed item in the gate's ranking,
        the values β reads of the need's entity and predicate, and a certified item's event."""
        items: list[tuple[tuple[str, ...], str | None]] = []
        for item in sorted(decision.items, key=gate_rank):
            if is_derived(item.metadata or {}):
                # A derived summary supplies each value through the fact line that holds it,
                # whose source is that fact's event (docs/method.md §11.5): one entry per line.
                items += [
                    ((f.value,), str(line.get("event_id")) if line.get("event_id") else None)
                    for line in (item.metadata or {}).get(DERIVED_FACTS) or ()
                    for f, readable in [lifecycle_fact(line, self.traj.principal, day)]
                    if readable and (f.entity, f.predicate) == (need.entity, need.predicate)
                ]
                continue
            values = sorted(
                {
                    f.value
                    for f in self.readback.read_record(item, day)
                    if (f.entity, f.predicate) == (need.entity, need.predicate)
                }
            )
            event = (item.metadata or {}).get("event_id") if is_certified(item.metadata) else None
            items.append((tuple(values), None if event is None else str(event)))
        many = self.traj.schema.predicates[need.predicate].cardinality == "many"
        return NeedRead(need, many, tuple(items))

    def _invisible_certified(self, points: Iterable[Any], asker: str, day: dt.date) -> set[Slot]:
        """Slots with an active, unexpired certified record `asker` may not see (the act
        gate's out-of-scope test)."""
        out: set[Slot] = set()
        for point in points:
            for fact, readable in self.readback.held_facts(point, day):
                if fact.certified and readable and asker not in (fact.visible_to or ()):
                    out.add(Slot(fact.entity, fact.predicate, fact.scope))
        return out

    def _write(
        self,
        writers: Mapping[str, Writer],
        turns: Sequence[Turn],
        conv: Conversation,
        step: int,
        world: str,
        query: str | None = None,
    ) -> None:
        for producer in self.design.producers:
            started = time.perf_counter()
            done = writers[producer].write(turns, conv)
            elapsed = time.perf_counter() - started
            if producer in self.governance_producers:
                self.governance_seconds += elapsed
            self.journal.append(
                StepRecord(
                    step=step,
                    producer=producer,
                    world=world,
                    turns=[t.id for t in turns],
                    operations=done.operations,
                    failures=done.failures,
                    llm_calls=[call_record(meta) for meta in done.llm_calls],
                    seconds=round(elapsed, 3),
                    query=query,
                    distractor=self.traj.distractors.get(turns[0].id) if turns else None,
                )
            )

    def _checkpoint(
        self,
        turn_id: str,
        kind: CheckpointKind | TaskCheckpointKind,
        conv: Conversation,
        *,
        world: str = "a",
        stores: dict[str, Any] | None = None,
        reference: Iterable[FactRecord] | None = None,
        query: str | None = None,
        inserted: Sequence[Turn] = (),
    ) -> None:
        stores = stores if stores is not None else self.stores
        if reference is None:
            reference = self.checkpoints[(turn_id, kind)].live
        expected = windowed_list(reference)
        post = kind == "post-update"
        ref = self.checkpoints.get((turn_id, kind))
        transitions = [transition_record(t) for t in ref.transitions] if post and ref else []
        previous = self.previous.get((turn_id, kind)) if post else None
        untrusted = self.provenance.at(
            turn_id, after=kind != "pre-query", inserted=inserted
        ).untrusted()
        # World a's post-update and pre-task checkpoints: Γ^phys of each row beside Γ*.
        governed = world == "a" and kind != "pre-query" and ref is not None
        reference_gov = (
            governance_rows(ref.governance)
            if governed and ref is not None and ref.governance is not None
            else None
        )
        moves = (
            [governance_transition_record(t) for t in ref.governance_events]
            if governed and ref is not None
            else []
        )
        for row, conditions in self.rows.items():
            for n, condition in enumerate(conditions):
                if n == 1 and faults.perturb_due("checkpoint-read"):
                    self._perturb(stores[row], conv.date)
                # Each condition reads its row store itself: the factorization check compares.
                scan = stores[row].scan()
                observed = [
                    rf for p in scan.points for rf in self.readback.read_record(p, conv.date)
                ]
                governance = (
                    None
                    if reference_gov is None
                    else GovernanceRecord(
                        observed=governance_rows(read_governance(scan)), reference=reference_gov
                    )
                )
                self.journal.append(
                    CheckpointRecord(
                        turn=turn_id,
                        checkpoint=kind,
                        conversation=conv.id,
                        date=conv.date.isoformat(),
                        condition=condition,
                        world=world,
                        query=query,
                        observed=windowed_list(observed),
                        reference=expected,
                        transitions=transitions,
                        previous=previous,
                        untrusted=untrusted,
                        governance=governance,
                        governance_transitions=moves,
                    )
                )

    def _perturb(self, store: Any, day: dt.date) -> None:
        """Fault injection: add a plain record holding a fact the store does not hold."""
        held = self.readback.state(store.scan().points, day)
        for _name, predicate in sorted(self.traj.schema.predicates.items()):
            keyword = predicate.keywords[0]
            for value in predicate.values:
                text = f"{keyword}: {value}"
                facts = self.lexicon.read(text)
                if facts and not facts & held:
                    store.add_record(text, {})
                    return
        raise RuntimeError("no fact of the schema is missing from the store to perturb it with")

    # -- reads and answers --------------------------------------------------------------

    def _read(
        self, store: Any, policy: str, question: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        from place.memory.view import read_only_view

        started = time.perf_counter()
        decision = self.policies[policy].read(read_only_view(store), question, tau, day)
        if policy in self.governance_policies:
            self.governance_seconds += time.perf_counter() - started
        return decision

    def _exposed(
        self,
        decision: ReadDecision,
        tau: Interpretation,
        day: dt.date,
        at: tuple[str, str] | None = None,
        store: Any = None,
    ) -> list[ExposedRecord]:
        """The exposed items as records; `at` is the world-a checkpoint the read follows,
        whose Γ* says which facts the asker may see (`visible`); `store` is the one read,
        whose evidence log V the provenance audit opens (docs/method.md §12.4)."""
        # V is opened only when some exposed record has a pointer to open.
        pointed = store is not None and any(pointer(i.metadata) for i in decision.items)
        evidence = Evidence.of(store) if pointed else Evidence()
        ref = self.checkpoints.get(at) if at is not None else None  # type: ignore[arg-type]  # reason: `at` is one of the reference's own (turn, kind) keys
        asker = tau.asker
        out = []
        for item in decision.items:
            facts = [
                ReadFactRecord(
                    entity=f.entity,
                    predicate=f.predicate,
                    value=f.value,
                    scope=f.scope,
                    status=f.status,
                    valid_from=f.valid_from.isoformat() if f.valid_from else None,
                    valid_until=f.valid_until.isoformat() if f.valid_until else None,
                    certified=f.certified,
                    readable=readable,
                    eligible=is_eligible(f, tau),
                    visible=(
                        True
                        if ref is None or asker is None
                        else ref.visible(Slot(f.entity, f.predicate, f.scope), asker)
                    ),
                )
                for f, readable in self.readback.held_facts(item, day)
            ]
            out.append(
                ExposedRecord(
                    id=str(item.id),
                    text=item.text,
                    score=round(float(item.score or 0.0), 6),
                    facts=facts,
                    lifecycle=lifecycle_of(item.metadata),
                    ineligible=is_ineligible_exposure(self.readback, item, tau, day),
                    pointer=pointer(item.metadata),
                    provenance=provenance(item.metadata, evidence, self.lexicon),
                    sources=(sources := source_turns(item.metadata)),
                    distractor=next(
                        (self.traj.distractors[t] for t in sources if t in self.traj.distractors),
                        None,
                    ),
                )
            )
        return out

    def _evaluated(
        self, store: Any, tau: Interpretation, day: dt.date
    ) -> tuple[frozenset[Fact], frozenset[Fact]]:
        """(β state of the store, the eligible facts in it that the asker may see) at `day`."""
        records = [(p, rf) for p in store.scan().points for rf in self.readback.read_record(p, day)]
        return (
            frozenset(r.fact for _p, r in records),
            frozenset(
                r.fact
                for p, r in records
                if is_eligible(r, tau)
                and (tau.asker is None or tau.asker in self.readback.visible_to(p))
            ),
        )

    def _query(self, unit: Unit) -> None:
        conv, turn = unit.conversation, unit.turns[0]
        query = turn.query
        assert query is not None
        qref = self.ref.query(query.id)
        tau = self.query_tau(query.id)
        self._checkpoint(turn.id, "pre-query", conv, query=query.id)
        worlds = [("a", self.stores, qref.state, qref.support.facts)]
        clones: dict[str, Any] = {}
        # An answer-free run makes world b too: its answers are not compared, but its
        # checkpoints are scorecard items (promotion) and its pairs are counted.
        if self.sections.primary and query.pair_insert is not None:
            clones = {row: self.stores[row].clone(f"{row}__b") for row in self.rows}
            forks = {row: self.writers[row].fork(clone) for row, clone in clones.items()}
            self._write(forks, query.pair_insert, conv, 0, "b", query=query.id)
            faults.kill_point("pair-world-b")
            assert qref.state_b is not None and qref.support_b is not None
            self._checkpoint(
                turn.id,
                "pre-query",
                conv,
                world="b",
                stores=clones,
                reference=qref.live_b,
                query=query.id,
                inserted=query.pair_insert,
            )
            worlds.append(("b", clones, qref.state_b, qref.support_b.facts))
        authorized_b = None if qref.support_b is None else fact_list(qref.support_b.facts)
        pending: list[_PendingAnswer] = []
        try:
            for world, stores, state_ref, support in worlds:
                for row, conditions in self.rows.items():
                    state, evaluated = self._evaluated(stores[row], tau, conv.date)
                    for condition in conditions:
                        pending += self._plan_answers(
                            unit,
                            condition,
                            world,
                            stores[row],
                            authorized=fact_list(support),
                            authorized_a=fact_list(qref.support.facts),
                            authorized_b=authorized_b,
                            evaluated=fact_list(evaluated),
                            state_correct=state == state_ref,
                            forgotten=self.provenance.at(
                                turn.id,
                                after=False,
                                inserted=(query.pair_insert or ()) if world == "b" else (),
                            ).forgotten_facts(),
                        )
        finally:
            for clone in clones.values():
                clone.drop()
        raws = self._answer([(turn.text, p.shown, p.dialogue) for p in pending])
        for p, raw in zip(pending, raws, strict=True):
            if p.mode == "closed_loop":
                own = self.journal.state.setdefault("closed_loop", {}).setdefault(p.condition, {})
                own[query.id] = raw
            self.journal.append(
                QueryRecord(
                    **p.fields,
                    raw_answer=raw,
                    outcome=None
                    if raw is None
                    else sorted(outcome(self.lexicon, raw, query.predicate)),
                )
            )

    def _answer(self, asks: Sequence[AnswerCall]) -> list[str | None]:
        """The answers to `asks`; in an answer-free run none is asked (all None)."""
        if not self.sections.answers:
            return [None] * len(asks)
        assert self.answers is not None, "a run that asks answers has an answer model"
        return list(answer_all(self.answers, asks, self.pool))

    def _plan_answers(
        self,
        unit: Unit,
        condition: str,
        world: str,
        store: Any,
        **scored: Any,
    ) -> list[_PendingAnswer]:
        """One condition reads `store` for the unit's query; the answers it needs, one per
        mode, with everything its records hold but the answer (`scored`: Q*, Q_eval, ...)."""
        conv, turn = unit.conversation, unit.turns[0]
        query = turn.query
        assert query is not None
        qref = self.ref.query(query.id)
        tau = self.query_tau(query.id)
        decision = self._read(store, self.design.policy_of(condition), turn.text, tau, conv.date)
        exposed = self._exposed(decision, tau, conv.date, at=(turn.id, "pre-query"), store=store)
        shown = tuple(item.text for item in decision.items)
        modes: list[tuple[str, Sequence[DialogueTurn]]] = []
        if self.sections.primary:
            modes.append(("primary", ()))
        if world == "a" and self.sections.closed_loop:
            modes.append(("closed_loop", self._dialogue(conv, turn, condition)))
        hearsay = list(decision.hearsay)
        return [
            _PendingAnswer(
                condition,
                mode,
                shown,
                tuple(dialogue),
                dict(
                    query=query.id,
                    turn=turn.id,
                    conversation=conv.id,
                    family=query.family,
                    condition=condition,
                    world=world,
                    mode=mode,
                    tau=tau_tuple(tau),
                    question=turn.text,
                    exposed=exposed,
                    admitted=decision.admitted,
                    hearsay=hearsay,
                    gold=sorted(query.gold),
                    asker=qref.asker,
                    foreign_present=qref.foreign_present,
                    read_on=conv.date.isoformat(),
                    **scored,
                ),
            )
            for mode, dialogue in modes
        ]

    def _dialogue(self, conv: Conversation, upto: Turn, condition: str) -> list[DialogueTurn]:
        own = self.journal.state.get("closed_loop", {}).get(condition, {})
        return closed_loop.dialogue(conv, upto, own)

    def _probes(self, probes: Sequence[Probe], conv: Conversation) -> None:
        """The probes of one unit: every read first, then the conflict probes' answers (all
        of the unit's at once, concurrently if configured), then the records in order."""
        planned: list[tuple[Probe, str, ProbeRead, ProbeRead | None]] = []
        forged_ids: dict[tuple[str, str], str] = {}
        for probe in probes:
            tau = self.probe_tau(probe.id)
            for row, conditions in self.rows.items():
                clean_reads = {
                    c: self._probe_read(self.stores[row], c, probe, tau, conv) for c in conditions
                }
                injected: dict[str, ProbeRead | None] = dict.fromkeys(conditions)
                # A conflict probe's injected read is scored only by its answer
                # (ConflictHarm): an answer-free run reads it only for a forged probe, whose
                # exposure is scored without one (ForgedExposure).
                inject = probe.forged is not None or (
                    probe.conflict is not None and self.sections.answers
                )
                if inject:
                    copy = self.stores[row].clone(f"{row}__probe")
                    try:
                        asker = tau.asker or self.traj.principal
                        if probe.conflict is not None:
                            # Plain text (no policy can tell it from a memory), spoken by the
                            # asker (docs/method.md §11: a text naming no one is theirs).
                            copy.add_record(probe.conflict.text, {SPEAKER: asker})
                        else:
                            # Certified-looking metadata it was never entitled to (§12.2).
                            text, meta = forged_record(
                                self.traj.schema,
                                probe,
                                asker,
                                self.traj.principal,
                                conv.id,
                                conv.date,
                                RecordCounter(copy).take(),
                            )
                            forged_ids[(probe.id, row)] = copy.add_record(text, meta)
                        faults.kill_point("probes")
                        for condition in conditions:
                            injected[condition] = self._probe_read(
                                copy, condition, probe, tau, conv
                            )
                    finally:
                        copy.drop()
                planned += [(probe, c, clean_reads[c], injected[c]) for c in conditions]
        forgotten = {
            p.id: self.provenance.at(p.after, after=True).forgotten_facts() for p in probes
        }
        asked = [(probe, read) for probe, _c, _clean, read in planned if read is not None]
        raws = iter(
            self._answer(
                [(probe.text, [i.text for i in read.exposed], ()) for probe, read in asked]
            )
        )
        for probe, condition, clean, read in planned:
            pref = self.probe_refs[probe.id]
            if read is not None and (raw := next(raws)) is not None:
                read = read.model_copy(
                    update={
                        "raw_answer": raw,
                        "outcome": sorted(outcome(self.lexicon, raw, probe.predicate)),
                    }
                )
            self.journal.append(
                ProbeRecord(
                    probe=probe.id,
                    after=probe.after,
                    conversation=conv.id,
                    family=probe.family,
                    condition=condition,
                    tau=tau_tuple(pref.tau),
                    question=probe.text,
                    clean=clean,
                    injected=read,
                    gold=sorted(probe.gold),
                    authorized=fact_list(pref.support.facts),
                    conflict_value=probe.conflict.value if probe.conflict else None,
                    forged=(
                        None
                        if probe.forged is None
                        else ForgedRecord(
                            kind=probe.forged.kind,
                            value=probe.forged.value,
                            pointer=probe.forged.source_turn(probe.id),
                            item=forged_ids[(probe.id, self.design.producer_of(condition))],
                        )
                    ),
                    forgotten=forgotten[probe.id],
                    asker=pref.asker,
                    foreign_present=pref.foreign_present,
                    read_on=conv.date.isoformat(),
                    follows=self.follows.get(probe.after),
                )
            )

    def _probe_read(
        self, store: Any, condition: str, probe: Probe, tau: Interpretation, conv: Conversation
    ) -> ProbeRead:
        """What the condition's read policy exposes for the probe (not yet answered)."""
        decision = self._read(store, self.design.policy_of(condition), probe.text, tau, conv.date)
        return ProbeRead(
            exposed=self._exposed(
                decision, tau, conv.date, at=self.follows.get(probe.after), store=store
            ),
            admitted=decision.admitted,
            hearsay=list(decision.hearsay),
            raw_answer=None,
            outcome=None,
        )

    # -- deletion residue ---------------------------------------------------------------

    def _residue_check(
        self, event: Event, check: str, turn: str, stores: dict[str, Any] | None = None
    ) -> None:
        """Residue of `event`'s values still forgotten after `turn` (the provenance's
        forgetting: the slot's values before the event, minus any the user stated again)."""
        values = sorted(
            v
            for ev, _e, _p, v, _s in self.provenance.at(turn, after=True).forgotten_facts()
            if ev == event.id
        )
        for producer, store in (stores or self.stores).items():
            found = (
                residue.residue_where(store, event, values, self.lexicon, self.traj.principal)
                if values
                else []
            )
            self.journal.append(
                ForgetRecord(
                    event=event.id,
                    producer=producer,
                    check=check,
                    slot=tuple(event.slot),
                    values=values,
                    residue=[text for text, _where in found],
                    where=[where for _text, where in found],
                )
            )

    def _store_audit(self) -> None:
        """The provenance audit of every producer's store at the end (docs/method.md §12.4):
        each record of the state partition, its pointer and class."""
        for producer, store in self.stores.items():
            scan = store.scan()
            evidence = Evidence.from_rows(r for r in scan.tables if r.table == EVIDENCE)
            items = [
                AuditItemRecord(
                    id=str(p.id),
                    pointer=pointer(p.metadata),
                    provenance=provenance(p.metadata, evidence, self.lexicon),
                )
                for p in sorted(scan.points, key=lambda p: str(p.id))
            ]
            self.journal.append(AuditRecord(producer=producer, items=items))

    def _final_residue(self) -> None:
        turns = self.traj.turns()
        last = turns[-1][1].id
        for _conv, turn in turns:
            for event in turn.events:
                if event.op == "forget":
                    self._residue_check(event, "end", last)
