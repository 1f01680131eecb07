"""The factorial: Native/CSS writing crossed with Native/QASC reading, unit by unit.

Each producer writes its row store once per update step; both read policies of a row read
that same store. Causal-pair worlds b and conflict-injected probe copies are clones of the
row store, written only with the inserted turns. Every unit's records are journaled, and a
resumed run continues after the last completed unit with the same stores and cache.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from place import faults
from place.agent.answer import AnswerModel, DialogueTurn
from place.agent.native import NativeWriter
from place.eligibility import Interpretation, is_eligible
from place.governance.authorizer import NativeRead, QASCRead, ReadDecision
from place.governance.certifier import Certifier, Provenance
from place.lexicon import Lexicon
from place.lexicon.outcome import outcome
from place.readback import LIFECYCLE_KEYS, LIFECYCLE_MARKER, Readback, ReadFact, is_certified
from place.records import (
    POLICY_OF,
    CheckpointRecord,
    ExposedRecord,
    ForgetRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    ReadFactRecord,
    StepRecord,
)
from place.reference.lifecycle import FactRecord
from place.reference.replay import Reference
from place.runner.journal import Journal
from place.runner.plan import Unit, build_plan
from place.trajectory.model import Conversation, Event, Fact, Probe, Trajectory, Turn

ROWS: dict[str, tuple[str, str]] = {"native": ("Native", "QASC"), "css": ("CSS", "PLACE")}
SNAPSHOT_SUFFIX = "__pre"


def fact_list(facts: Iterable[Fact | tuple[str, ...]]) -> list[tuple[str, str, str, str]]:
    return sorted(tuple(f) for f in facts)  # type: ignore[misc]


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


def tau_tuple(tau: Interpretation) -> tuple[str, str, str, str]:
    return (tau.entity, tau.predicate, tau.scope, tau.as_of.isoformat())


@dataclass(frozen=True)
class Sections:
    primary: bool = True
    utility: bool = True
    closed_loop: bool = True


class Experiment:
    """Runs one trajectory through the four conditions on one backend and model."""

    def __init__(
        self,
        trajectory: Trajectory,
        reference: Reference,
        backend: Any,
        answer_model: AnswerModel,
        journal: Journal,
        k: int,
        sections: Sections = Sections(),
        progress: bool = True,
        on_phase: Callable[[str], None] | None = None,
    ) -> None:
        self.traj = trajectory
        self.ref = reference
        self.backend = backend
        self.answers = answer_model
        self.journal = journal
        self.sections = sections
        self.progress = progress
        self.on_phase = on_phase or (lambda _phase: None)
        self.lexicon = Lexicon(trajectory.schema, trajectory.principal)
        self.readback = Readback(self.lexicon)
        self.policies = {"native": NativeRead(k), "qasc": QASCRead(k, self.readback)}
        self.native = NativeWriter()
        self.checkpoints = {(c.turn, c.kind): c for c in reference.checkpoints}
        self.probe_refs = {p.id: p for p in reference.probes}
        self.stores: dict[str, Any] = {}
        self.certifier: Certifier | None = None
        self.governance_seconds = 0.0

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
                if unit.writes:
                    self._snapshot(unit.index)
                self._execute(unit)
                self.backend.sync()
                self.journal.commit_unit(unit.index)
                bar.update(1)
            if self.journal.units_done == len(units):
                bar.set_description("deletion residue (end)")
                self.on_phase("deletion residue at the end of the run")
                self._final_residue()
                self.journal.commit_unit(len(units))
                bar.update(1)
        finally:
            bar.close()

    def close(self) -> None:
        for store in self.stores.values():
            store.close()
        self.stores.clear()

    def _open_stores(self, units: Sequence[Unit]) -> None:
        principal = self.traj.principal
        for name in ("native__b", "css__b", "native__probe", "css__probe"):
            if self.backend.exists(name):  # left over by a killed unit
                self.backend.open(name, principal).drop()
        snapshot = self.journal.state.get("snapshot")
        for row in ROWS:
            pre = row + SNAPSHOT_SUFFIX
            if snapshot == self.journal.units_done and self.backend.exists(pre):
                # The writing unit after the last completed one was interrupted: roll back.
                if self.backend.exists(row):
                    self.backend.open(row, principal).drop()
                saved = self.backend.open(pre, principal)
                self.stores[row] = saved.clone(row)
                saved.close()
            else:
                self.stores[row] = self.backend.open(row, principal)
        self.certifier = Certifier(self.stores["css"], self.traj.schema, self.readback)
        for unit in units[: self.journal.units_done]:
            if unit.kind == "step":
                for turn in unit.turns:
                    for event in turn.events:
                        self.certifier.governed.apply(event, unit.conversation.date)
                        self.certifier.applied.add(event.id)
        self.certifier.adopt_store()

    def _snapshot(self, unit_index: int) -> None:
        for row, store in self.stores.items():
            pre = row + SNAPSHOT_SUFFIX
            if self.backend.exists(pre):
                self.backend.open(pre, self.traj.principal).drop()
            store.clone(pre).close()
        self.backend.sync()
        self.journal.state["snapshot"] = unit_index
        self.journal.save()

    # -- units --------------------------------------------------------------------------

    def _execute(self, unit: Unit) -> None:
        if unit.kind == "step":
            self._step(unit)
        elif unit.kind == "query":
            if self.sections.primary or self.sections.closed_loop:
                self._query(unit)
        elif self.sections.utility:
            for probe in unit.probes:
                self._probe(probe, unit.conversation)

    def _step(self, unit: Unit) -> None:
        conv = unit.conversation
        assert unit.step is not None
        self._write(self.stores, unit.turns, conv, unit.step, "a")
        event_turn = unit.event_turn
        if event_turn is not None:
            self._checkpoint(event_turn.id, "post-update", conv)
            for event in event_turn.events:
                if event.op == "forget":
                    self._residue_check(event, "after")

    def _write(
        self,
        stores: dict[str, Any],
        turns: Sequence[Turn],
        conv: Conversation,
        step: int,
        world: str,
        certifier: Certifier | None = None,
    ) -> None:
        started = time.perf_counter()
        native = self.native.write(stores["native"], turns, conv.date)
        self.journal.append(
            StepRecord(
                step=step,
                producer="native",
                world=world,
                turns=[t.id for t in turns],
                operations=native.operations,
                failures=native.failures,
                seconds=round(time.perf_counter() - started, 3),
            )
        )
        started = time.perf_counter()
        certifier = certifier or self.certifier
        assert certifier is not None
        operations = []
        for turn in turns:
            for event in turn.events:  # CSS reads trusted events only; tool turns carry none
                record = certifier.apply(event, Provenance(turn.id, conv.id, conv.date))
                operations.append(record.__dict__)
        elapsed = time.perf_counter() - started
        self.governance_seconds += elapsed
        self.journal.append(
            StepRecord(
                step=step,
                producer="css",
                world=world,
                turns=[t.id for t in turns],
                operations=operations,
                failures=[],
                seconds=round(elapsed, 3),
            )
        )

    def _checkpoint(
        self,
        turn_id: str,
        kind: str,
        conv: Conversation,
        *,
        world: str = "a",
        stores: dict[str, Any] | None = None,
        reference: Iterable[FactRecord] | None = None,
        query: str | None = None,
    ) -> None:
        stores = stores if stores is not None else self.stores
        if reference is None:
            reference = self.checkpoints[(turn_id, kind)].live
        expected = windowed_list(reference)
        for row, conditions in ROWS.items():
            for n, condition in enumerate(conditions):
                if n == 1 and faults.perturb_due("checkpoint-read"):
                    self._perturb(stores[row], conv.date)
                # Each condition reads its row store itself: the factorization check compares.
                scan = stores[row].scan()
                observed = [
                    rf for p in scan.points for rf in self.readback.read_record(p, conv.date)
                ]
                self.journal.append(
                    CheckpointRecord(
                        turn=turn_id,
                        checkpoint=kind,  # type: ignore[arg-type]
                        conversation=conv.id,
                        date=conv.date.isoformat(),
                        condition=condition,  # type: ignore[arg-type]
                        world=world,  # type: ignore[arg-type]
                        query=query,
                        observed=windowed_list(observed),
                        reference=expected,
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
        from place.memory.store import read_only_view

        started = time.perf_counter()
        decision = self.policies[policy].read(read_only_view(store), question, tau, day)
        if policy == "qasc":
            self.governance_seconds += time.perf_counter() - started
        return decision

    def _exposed(
        self, decision: ReadDecision, tau: Interpretation, day: dt.date
    ) -> list[ExposedRecord]:
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
                    ineligible=self.readback.is_ineligible_exposure(item, tau, day),
                )
            )
        return out

    def _evaluated(
        self, store: Any, tau: Interpretation, day: dt.date
    ) -> tuple[frozenset[Fact], frozenset[Fact]]:
        """(β state of the store, the eligible facts in it) at `day`."""
        records = [rf for p in store.scan().points for rf in self.readback.read_record(p, day)]
        return (
            frozenset(r.fact for r in records),
            frozenset(r.fact for r in records if is_eligible(r, tau)),
        )

    def _query(self, unit: Unit) -> None:
        conv, turn = unit.conversation, unit.turns[0]
        query = turn.query
        assert query is not None
        qref = self.ref.query(query.id)
        self._checkpoint(turn.id, "pre-query", conv, query=query.id)
        worlds = [("a", self.stores, qref.state, qref.support.facts)]
        clones: dict[str, Any] = {}
        if self.sections.primary and query.pair_insert is not None:
            clones = {row: self.stores[row].clone(f"{row}__b") for row in ROWS}
            assert self.certifier is not None
            fork = self.certifier.fork(clones["css"])
            self._write(clones, query.pair_insert, conv, 0, "b", certifier=fork)
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
            )
            worlds.append(("b", clones, qref.state_b, qref.support_b.facts))
        authorized_b = None if qref.support_b is None else fact_list(qref.support_b.facts)
        try:
            for world, stores, state_ref, support in worlds:
                for row, conditions in ROWS.items():
                    state, evaluated = self._evaluated(stores[row], qref.tau, conv.date)
                    for condition in conditions:
                        self._answer(
                            unit,
                            condition,
                            world,
                            stores[row],
                            authorized=fact_list(support),
                            authorized_a=fact_list(qref.support.facts),
                            authorized_b=authorized_b,
                            evaluated=fact_list(evaluated),
                            state_correct=state == state_ref,
                        )
        finally:
            for clone in clones.values():
                clone.drop()

    def _answer(
        self,
        unit: Unit,
        condition: str,
        world: str,
        store: Any,
        *,
        authorized: list[tuple[str, str, str, str]],
        authorized_a: list[tuple[str, str, str, str]],
        authorized_b: list[tuple[str, str, str, str]] | None,
        evaluated: list[tuple[str, str, str, str]],
        state_correct: bool,
    ) -> None:
        """One condition reads `store` for the unit's query and answers it in every mode."""
        conv, turn = unit.conversation, unit.turns[0]
        query = turn.query
        assert query is not None
        tau = self.ref.query(query.id).tau
        decision = self._read(store, POLICY_OF[condition], turn.text, tau, conv.date)
        exposed = self._exposed(decision, tau, conv.date)
        shown = [item.text for item in decision.items]
        modes: list[tuple[str, Sequence[DialogueTurn]]] = []
        if self.sections.primary:
            modes.append(("primary", ()))
        if world == "a" and self.sections.closed_loop:
            modes.append(("closed_loop", self._dialogue(conv, turn, condition)))
        for mode, dialogue in modes:
            answer = self.answers.answer(turn.text, shown, dialogue)
            if mode == "closed_loop":
                own = self.journal.state.setdefault("closed_loop", {}).setdefault(condition, {})
                own[query.id] = answer.raw
            self.journal.append(
                QueryRecord(
                    query=query.id,
                    turn=turn.id,
                    conversation=conv.id,
                    family=query.family,
                    condition=condition,  # type: ignore[arg-type]
                    world=world,
                    mode=mode,  # type: ignore[arg-type]
                    tau=tau_tuple(tau),
                    question=turn.text,
                    exposed=exposed,
                    admitted=decision.admitted,
                    raw_answer=answer.raw,
                    outcome=sorted(outcome(self.lexicon, answer.raw, query.predicate)),
                    gold=sorted(query.gold),
                    authorized=authorized,
                    authorized_a=authorized_a,
                    authorized_b=authorized_b,
                    evaluated=evaluated,
                    state_correct=state_correct,
                )
            )

    def _dialogue(self, conv: Conversation, upto: Turn, condition: str) -> list[DialogueTurn]:
        """Earlier turns of this conversation; earlier queries answered by this condition."""
        own = self.journal.state.get("closed_loop", {}).get(condition, {})
        turns: list[DialogueTurn] = []
        answering = False
        for turn in conv.turns:
            if turn.id == upto.id:
                break
            if turn.query is not None:
                turns.append(DialogueTurn("user", turn.text))
                turns.append(DialogueTurn("assistant", own.get(turn.query.id, "unknown")))
                answering = True
                continue
            if turn.role == "assistant" and answering:
                continue  # replaced by the condition's own answer above
            answering = False
            role = f"tool ({turn.source})" if turn.role == "tool" else turn.role
            turns.append(DialogueTurn(role, turn.text))
        return turns

    def _probe(self, probe: Probe, conv: Conversation) -> None:
        pref = self.probe_refs[probe.id]
        for row, conditions in ROWS.items():
            clean = {
                c: self._probe_read(self.stores[row], c, probe, pref.tau, conv) for c in conditions
            }
            injected: dict[str, ProbeRead | None] = dict.fromkeys(conditions)
            if probe.conflict is not None:
                copy = self.stores[row].clone(f"{row}__probe")
                try:
                    copy.add_record(probe.conflict.text, {})  # plain text: no policy can tell
                    faults.kill_point("probes")
                    for condition in conditions:
                        injected[condition] = self._probe_read(
                            copy, condition, probe, pref.tau, conv, answer=True
                        )
                finally:
                    copy.drop()
            for condition in conditions:
                self.journal.append(
                    ProbeRecord(
                        probe=probe.id,
                        after=probe.after,
                        conversation=conv.id,
                        family=probe.family,
                        condition=condition,  # type: ignore[arg-type]
                        tau=tau_tuple(pref.tau),
                        question=probe.text,
                        clean=clean[condition],
                        injected=injected[condition],
                        gold=sorted(probe.gold),
                        authorized=fact_list(pref.support.facts),
                        conflict_value=probe.conflict.value if probe.conflict else None,
                    )
                )

    def _probe_read(
        self,
        store: Any,
        condition: str,
        probe: Probe,
        tau: Interpretation,
        conv: Conversation,
        answer: bool = False,
    ) -> ProbeRead:
        decision = self._read(store, POLICY_OF[condition], probe.text, tau, conv.date)
        raw = None
        if answer:
            raw = self.answers.answer(probe.text, [i.text for i in decision.items]).raw
        return ProbeRead(
            exposed=self._exposed(decision, tau, conv.date),
            admitted=decision.admitted,
            raw_answer=raw,
            outcome=None if raw is None else sorted(outcome(self.lexicon, raw, probe.predicate)),
        )

    # -- deletion residue ---------------------------------------------------------------

    def _forgotten_values(self, event: Event, at_end: bool) -> list[str]:
        """Values the slot held before `event` (at the end: minus values re-asserted later)."""
        before, after, seen = set(), set(), False
        for _conv, turn in self.traj.turns():
            for e in turn.events:
                if e.id == event.id:
                    seen = True
                elif e.slot == event.slot and e.value is not None and e.op in ("assert", "correct"):
                    (after if seen else before).add(e.value)
                elif e.slot == event.slot and e.op == "forget" and not seen:
                    before.clear()
        return sorted(before - after if at_end else before)

    def _residue(self, store: Any, event: Event, values: Sequence[str]) -> list[str]:
        scan = store.scan()
        hits = []
        for point in scan.points:
            meta = point.metadata
            if is_certified(meta):
                if (meta["entity"], meta["predicate"], meta["scope"]) == tuple(event.slot) and meta[
                    "value"
                ] in values:
                    hits.append(point.text)
            elif self._names_value(point.text, event, values):
                hits.append(point.text)
        for row in scan.history:
            for text in (row.old_memory, row.new_memory):
                if text and self._names_value(text, event, values):
                    hits.append(text)
        return sorted(set(hits))

    def _names_value(self, text: str, event: Event, values: Sequence[str]) -> bool:
        """Conservative: a forgotten value of the predicate, about the slot's entity."""
        if not set(values) & self.lexicon.values_in(text, event.predicate):
            return False
        entities = self.lexicon.entities_in(text) or [self.traj.principal]
        return event.entity in entities

    def _residue_check(
        self, event: Event, check: str, stores: dict[str, Any] | None = None
    ) -> None:
        values = self._forgotten_values(event, at_end=check == "end")
        for producer, store in (stores or self.stores).items():
            self.journal.append(
                ForgetRecord(
                    event=event.id,
                    producer=producer,
                    check=check,  # type: ignore[arg-type]
                    slot=tuple(event.slot),
                    values=values,  # type: ignore[arg-type]
                    residue=self._residue(store, event, values) if values else [],
                )
            )

    def _final_residue(self) -> None:
        for _conv, turn in self.traj.turns():
            for event in turn.events:
                if event.op == "forget":
                    self._residue_check(event, "end")
