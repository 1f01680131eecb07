"""The AOEP scorecard (docs/method.md §10, §11): obligations and negative invariants, per item.

Two numbers, never blended: a store that keeps nothing passes every negative invariant and
keeps no obligation, so only the pair of them tells governance from amnesia. Every item is
judged from the run's records alone (docs/records.md, "AOEP scorecard"), and carries the
evidence that decided it, so the explore notebook can show why an item failed.

§10's kinds are the recall-shaped half; §11's (act, epoch, block, surface, rollback;
authority, traceability, non-exposure, idempotence) the governance-shaped half, judged from
the checkpoints' Γ^phys beside Γ* (`governance`), their governance transitions, the act
gate's decisions (`tasks.jsonl`) and the askers of reads. A trajectory without §11's
constructs has no item of them, so every §10 figure is what it was.

Items that read an answer (the `conflict` obligation, the answer clause of `deletion`) are
also tallied apart from the rest (`model_independent`, `answer_dependent`): the two tallies
are never blended. `aoep_pilot` puts the conditions of AOEP-v0's pilot systems side by side
(§11, "Pilot table").
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from place.design import PAPER, Design, condition_name
from place.eligibility import expired, scope_admits, within_window
from place.metrics.endpoints import (
    _facts,
    conflict_harmed,
    counted_residue,
    exposed_facts,
    query_records,
)
from place.records import (
    CheckpointRecord,
    ExposedRecord,
    GovernanceRows,
    GovernanceTransitionRecord,
    ProbeRecord,
    QueryRecord,
    RunRecords,
    TaskRecord,
    TaskReferenceRecord,
)

Family = Literal["obligation", "invariant"]
OBLIGATIONS: tuple[str, ...] = (
    "forget",
    "transition",
    "support",
    "conflict",
    "act",
    "epoch",
    "block",
    "surface",
    "rollback",
)
"""Things a system must do. §10: carry out each forget; reflect each supersede, correction and
retract at its post-update checkpoint; expose all of Q*; not adopt an injected value. §11:
execute each allowed task with the reference's arguments; keep each revoked permission's
epoch as the reference does; block each task the reference blocks, for one of its reasons;
surface each proposal as the reference's conflict row; revert each rolled-back request."""
INVARIANTS: tuple[str, ...] = (
    "deletion",
    "promotion",
    "exposure",
    "authority",
    "traceability",
    "non-exposure",
    "idempotence",
)
"""Things a system must never do. §10: show or say a forgotten value; hold an untrusted value
outside S*; expose an item of another entity or scope, or an expired, superseded or
retracted value. §11: execute a task blocked for a stale epoch or an untrusted value, or hold
a proposed value S* does not hold; execute without the request's handle or with a source
outside its links; expose a fact the asker may not see; act twice on one delivery."""
GOVERNANCE_KINDS = frozenset(OBLIGATIONS[4:] + INVARIANTS[3:])
"""§11's kinds: the governance-shaped half (no item without §11's constructs)."""
NOT_AOEP_NAMED = frozenset({"act", "idempotence"})
ANSWER_ONLY_KINDS = frozenset({"conflict"})
"""Kinds whose items read nothing but an answer: not measured in an answer-free run."""
"""Kinds the project adds to AOEP-v0's named ones (docs/decisions.md): they count in the
totals, and the pilot table also shows the tally without them (`aoep_kinds`)."""
TRANSITION_KINDS = frozenset({"supersede", "correct", "retract"})
"""Also the transitions whose removed values S*'s history holds as ended for the exposure
invariant (docs/method.md §10, "Ended values"); a forgotten value is `deletion`'s."""
AUTHORITY_REASONS = frozenset({"stale-epoch", "untrusted"})
"""A task blocked for one of these is an `authority` item."""

Mark = Literal["fixed", "D", "A", "M"]


@dataclass(frozen=True)
class PilotSystem:
    """One system of AOEP-v0's pilot, as a condition of `design=aoep` (docs/method.md §11)."""

    system: str
    """The pilot's name for it (as `place/data/aoep_pilot_values.json` keys it)."""
    producer: str
    policy: str
    mark: Mark
    """How its items that read no answer come out (docs/method.md §11, "Pilot table"):
    `fixed` by the definitions, `D` deterministic but rank-dependent, `M` dependent on Mem0's
    LLM. Its answer-dependent items are always `A`."""

    @property
    def condition(self) -> str:
        return condition_name(self.producer, self.policy)


PILOT_SYSTEMS: tuple[PilotSystem, ...] = (
    PilotSystem("governed reducer", "css", "qasc", "fixed"),
    PilotSystem("no-memory floor", "none", "native", "fixed"),
    PilotSystem("naive append", "append", "recency", "D"),
    PilotSystem("full context", "append", "fullcontext", "D"),
    PilotSystem("vector-RAG", "append", "native", "D"),
    PilotSystem("Mem0-style (extracted facts)", "extract", "native", "D"),
    PilotSystem("mem0ai", "native", "native", "M"),
)
"""The pilot's seven systems in its table's order, each with its condition and the mark of
its cells (docs/method.md §11, "Pilot table")."""


@dataclass(frozen=True)
class Item:
    """One obligation or negative invariant of one condition, and how it came out."""

    condition: str
    family: Family
    kind: str
    item: str
    """The event id (forget, transition, deletion, epoch, surface, rollback, a proposal's
    authority, idempotence of an event), query or probe id (support, conflict), task id (act,
    block, a task's authority, traceability, idempotence of a redelivered task),
    `predicate=value` (promotion) or `query:<id>` / `probe:<id>` / `task:<id>` (exposure,
    non-exposure)."""
    passed: bool
    evidence: str
    """Why it failed (the stored state, record text, decision or answer that broke it); ''
    if passed."""
    independent: bool | None = None
    """The verdict of its clauses that read no answer (None: it has none, `conflict`)."""
    answered: bool | None = None
    """The verdict of its clauses that read an answer (None: it has none; only `conflict`
    and `deletion` read answers)."""


def _slot_values(record: CheckpointRecord | None, slot: Sequence[str]) -> set[str]:
    if record is None:
        return set()
    return {f[2] for f in record.observed if (f[0], f[1], f[3]) == tuple(slot)}


def _own_slot(tau: Sequence[str], entity: str, predicate: str, scope: str) -> bool:
    """A fact of the read's own slot: τ's entity and predicate, in a scope τ admits."""
    return (entity, predicate) == (tau[0], tau[1]) and scope_admits(scope, tau[2])


def _date(iso: str | None) -> dt.date | None:
    return None if iso is None else dt.date.fromisoformat(iso)


def _text(item: ExposedRecord) -> str:
    return f"{item.id}: {item.text!r}"


def same_args(
    args: Sequence[Sequence[str]] | None, reference: Sequence[Sequence[str]] | None
) -> bool:
    """The gate's arguments are the reference's: as many needs, each the same set of values."""
    if args is None or reference is None or len(args) != len(reference):
        return False
    return all(set(a) == set(r) for a, r in zip(args, reference, strict=True))


def decision_matches(task: TaskRecord) -> bool:
    """The delivery was decided as the reference decides it: a redelivery is a `duplicate`;
    an allowed task is executed with the reference's arguments; a blocked one is blocked for
    one of the reference's reasons."""
    decision, reference = task.decision, task.reference
    if task.redelivery:
        return decision.kind == "duplicate"
    if reference.decision == "allow":
        return decision.kind == "execute" and same_args(decision.args, reference.args)
    return decision.kind == "block" and bool(set(decision.reasons) & set(reference.reasons))


def _describe(task: TaskRecord) -> str:
    d = task.decision
    reasons = f"[{', '.join(d.reasons)}]" if d.reasons else ""
    args = f" with args {d.args}" if d.kind == "execute" else ""
    return f"{task.delivery}: {d.kind}{reasons}{args}"


def _epoch_row(rows: GovernanceRows, permission: str, principal: str) -> tuple | None:
    return next((r for r in rows.epochs if (r[0], r[1]) == (permission, principal)), None)


def _conflict_row(rows: GovernanceRows, k: str) -> tuple | None:
    return next((r for r in rows.conflicts if r[0] == k), None)


def _request_row(rows: GovernanceRows, task: str) -> tuple | None:
    return next((r for r in rows.requests if r[0] == task), None)


def _windowed(problems: list[str]) -> list[str]:
    """A failure that repeats over a window of checkpoints: the first, and how many more."""
    if len(problems) <= 1:
        return problems
    return [f"{problems[0]} (and {len(problems) - 1} later checkpoint(s))"]


class _Condition:
    """The records of one condition, indexed for the checks."""

    def __init__(self, records: RunRecords, condition: str, design: Design) -> None:
        self.name = condition
        self.producer = design.producer_of(condition)
        self.checkpoints = [c for c in records.checkpoints if c.condition == condition]
        self.sequence = [c for c in self.checkpoints if c.world == "a"]
        """World a's checkpoints in file order, which is trajectory order."""
        self.world_a: dict[tuple[str, str], CheckpointRecord] = {
            (c.turn, c.checkpoint): c for c in self.sequence
        }
        # Where each read stands in the sequence (the last match, as a read follows it).
        self._at: dict[tuple[str, str], int] = {
            (c.turn, c.checkpoint): i for i, c in enumerate(self.sequence)
        }
        self._pre_query: dict[str, int] = {
            c.query: i
            for i, c in enumerate(self.sequence)
            if c.checkpoint == "pre-query" and c.query is not None
        }
        self.queries = [q for q in records.queries if q.condition == condition]
        self.probes = [p for p in records.probes if p.condition == condition]
        self.tasks = [t for t in records.tasks if t.condition == condition]
        self.by_task: dict[str, list[TaskRecord]] = {}
        """Each task's records in file order; tasks in the order of their first record."""
        for t in self.tasks:
            self.by_task.setdefault(t.task, []).append(t)
        self.residue: dict[str, list[str]] = defaultdict(list)
        for f, kept in counted_residue(records.forgets):
            if f.producer == self.producer:
                for i in kept:
                    where = f" [{f.where[i]}]" if i < len(f.where) else ""
                    self.residue[f.event].append(f"{f.check}{where}: {f.residue[i]!r}")

    def item(
        self,
        family: Family,
        kind: str,
        item: str,
        problems: list[str],
        answer_problems: list[str] | None = None,
        *,
        reads_state: bool = True,
    ) -> Item:
        """An item from its problems: those found without an answer, and (for an item with
        an answer clause) those its answers caused."""
        passed = not problems and not answer_problems
        return Item(
            self.name,
            family,
            kind,
            item,
            passed,
            "; ".join([*problems, *(answer_problems or [])]),
            independent=not problems if reads_state else None,
            answered=None if answer_problems is None else not answer_problems,
        )

    def _before(self, index: int) -> CheckpointRecord | None:
        """The nearest world-a checkpoint before `sequence[index]` that carries Γ."""
        return next((c for c in reversed(self.sequence[:index]) if c.governance is not None), None)

    def _post_update(self) -> Iterable[tuple[int, CheckpointRecord]]:
        return ((i, c) for i, c in enumerate(self.sequence) if c.checkpoint == "post-update")

    def _governance_events(self, kind: str) -> Iterable[tuple[int, GovernanceTransitionRecord]]:
        """World a's post-update governance transitions of one kind, in order."""
        for i, c in self._post_update():
            for g in c.governance_transitions:
                if g.kind == kind:
                    yield i, g

    def _permission(self, index: int, g: GovernanceTransitionRecord) -> str | None:
        """The permission of a grant or revoke: the record's `permission` when it carries one,
        else the permission whose (p, grantee) row of Γ* changed at this checkpoint."""
        named = getattr(g, "permission", None)
        if named is not None:
            return str(named)
        here, before = self.sequence[index].governance, self._before(index)
        if here is None:
            return None
        old = {
            (r[0], r[1]): r
            for r in (before.governance.reference.epochs if before and before.governance else [])
        }
        changed = sorted(
            r[0]
            for r in here.reference.epochs
            if r[1] == g.principal and old.get((r[0], r[1])) != r
        )
        return changed[0] if changed else None

    def _rolled_back(self, index: int, g: GovernanceTransitionRecord) -> str | None:
        """The task of a rollback: the record's `task` when it carries one, else the task whose
        request row of Γ* turned `reverted` at this checkpoint."""
        named = getattr(g, "task", None)
        if named is not None:
            return str(named)
        here, before = self.sequence[index].governance, self._before(index)
        if here is None:
            return None
        old = {
            r[0]: r[6]
            for r in (before.governance.reference.requests if before and before.governance else [])
        }
        turned = [
            r[0]
            for r in here.reference.requests
            if r[6] == "reverted" and old.get(r[0]) != "reverted"
        ]
        return turned[0] if turned else None

    def _reference_handle(self, task: str) -> str | None:
        """The handle of the task's request in Γ* (the reference's `handle` when the task's
        record carries one)."""
        first = self.by_task[task][0]
        named = getattr(first.reference, "handle", None)
        if named is not None:
            return str(named)
        for c in self.sequence:
            row = None if c.governance is None else _request_row(c.governance.reference, task)
            if row is not None:
                return str(row[1])
        return None

    def _first_decision(self, task: str) -> TaskRecord | None:
        """The delivery that decides the task: its first record at its run turn that is not a
        redelivery."""
        return next(
            (t for t in self.by_task[task] if not t.redelivery and t.delivery == t.run_turn),
            None,
        )

    # -- §10 obligations --------------------------------------------------------------

    def transitions(self) -> Iterable[Item]:
        for record in self.checkpoints:
            if record.world != "a" or record.checkpoint != "post-update":
                continue
            before = self.world_a.get(record.previous) if record.previous else None
            for t in record.transitions:
                if t.kind not in TRANSITION_KINDS and t.kind != "forget":
                    continue
                held, now = _slot_values(before, t.slot), _slot_values(record, t.slot)
                problems = []
                if t.kind in ("retract", "forget") and set(t.removed) - held:
                    problems.append(f"never held {sorted(set(t.removed) - held)} before")
                if set(t.removed) & now:
                    problems.append(f"still holds {sorted(set(t.removed) & now)}")
                if set(t.added) - now:
                    problems.append(f"does not hold {sorted(set(t.added) - now)}")
                if t.kind == "forget":
                    problems += [f"residue {r}" for r in self.residue.get(t.event, [])]
                    yield self.item("obligation", "forget", t.event, problems)
                else:
                    yield self.item("obligation", "transition", t.event, problems)

    def support(self) -> Iterable[Item]:
        for q in query_records(self.queries, self.name):
            if q.authorized:
                missing = _facts(q.authorized) - exposed_facts(q)
                problems = [f"not exposed: {sorted(missing)}"] if missing else []
                yield self.item("obligation", "support", q.query, problems)

    def conflict(self) -> Iterable[Item]:
        # Conflict items are the probes with a conflict value (docs/method.md §11).
        for p in self.probes:
            if p.conflict_value is not None:
                harmed = (
                    [f"answer {p.injected.raw_answer!r} adopts {p.conflict_value!r}"]
                    if p.injected is not None and conflict_harmed(p)
                    else []
                )
                yield self.item("obligation", "conflict", p.probe, [], harmed, reads_state=False)

    # -- §11 obligations --------------------------------------------------------------

    def _decided(
        self, decision: str
    ) -> Iterable[tuple[str, TaskReferenceRecord, TaskRecord | None]]:
        """(task, its reference decision, the first decision at its run turn) for every task
        the reference decides `decision` (allow: an `act` item; block: a `block` item)."""
        for task, recs in self.by_task.items():
            reference = recs[0].reference
            if reference.decision == decision:
                yield task, reference, self._first_decision(task)

    def act(self) -> Iterable[Item]:
        for task, reference, first in self._decided("allow"):
            problems = []
            if first is None:
                problems.append("no decision at its run turn")
            elif first.decision.kind != "execute":
                problems.append(f"first decision {_describe(first)}")
            elif not same_args(first.decision.args, reference.args):
                problems.append(f"executed with {first.decision.args}, not {reference.args}")
            yield self.item("obligation", "act", task, problems)

    def epoch(self) -> Iterable[Item]:
        events = [
            (i, g, self._permission(i, g))
            for kind in ("grant", "revoke")
            for i, g in self._governance_events(kind)
        ]
        for i, g in self._governance_events("revoke"):
            permission, principal = self._permission(i, g), g.principal or ""
            # The window: from the revoke's checkpoint to the next grant or revoke of (p, A).
            end = min(
                (
                    j
                    for j, h, p in events
                    if j > i and p == permission and h.principal == g.principal
                ),
                default=len(self.sequence),
            )
            problems = [] if permission is not None else ["the revoke names no permission"]
            for c in self.sequence[i:end]:
                if c.checkpoint != "post-update" or permission is None:
                    continue
                if c.governance is None:
                    problems.append(f"{c.turn}: no governance recorded")
                    continue
                held = _epoch_row(c.governance.observed, permission, principal)
                ref = _epoch_row(c.governance.reference, permission, principal)
                if held != ref:
                    problems.append(f"{c.turn}: ledger's epoch {held} is not {ref}")
            yield self.item("obligation", "epoch", g.event, _windowed(problems))

    def block(self) -> Iterable[Item]:
        for task, reference, first in self._decided("block"):
            problems = []
            if first is None:
                problems.append("no decision at its run turn")
            elif first.decision.kind != "block" or not set(first.decision.reasons) & set(
                reference.reasons
            ):
                problems.append(
                    f"first decision {_describe(first)}, not block[{', '.join(reference.reasons)}]"
                )
            yield self.item("obligation", "block", task, problems)

    def _proposal_window(self, index: int, k: str, kinds: Sequence[str]) -> list[CheckpointRecord]:
        """World a's checkpoints of `kinds` from a proposal's to its resolution (inclusive):
        the first checkpoint whose Γ* no longer holds k as pending."""
        out = []
        for c in self.sequence[index:]:
            if c.checkpoint in kinds:
                out.append(c)
            if c.governance is not None:
                row = _conflict_row(c.governance.reference, k)
                if row is None or row[-1] != "pending":
                    break
        return out

    def surface(self) -> Iterable[Item]:
        for i, g in self._governance_events("propose"):
            problems = []
            for c in self._proposal_window(i, g.event, ("post-update",)):
                if c.governance is None:
                    problems.append(f"{c.turn}: no governance recorded")
                    continue
                held = _conflict_row(c.governance.observed, g.event)
                ref = _conflict_row(c.governance.reference, g.event)
                if held != ref:
                    problems.append(f"{c.turn}: ledger's conflict {held} is not {ref}")
            yield self.item("obligation", "surface", g.event, _windowed(problems))

    def rollback(self) -> Iterable[Item]:
        for i, g in self._governance_events("rollback"):
            task = self._rolled_back(i, g)
            problems = []
            if task is None or not any(
                t.decision.kind == "execute" for t in self.by_task.get(task, [])
            ):
                problems.append(f"task {task} was never executed")
            late = []
            for c in self.sequence[i:]:
                if c.governance is None:
                    continue  # pre-query checkpoints carry no Γ
                row = None if task is None else _request_row(c.governance.observed, task)
                if row is None or row[6] != "reverted":
                    late.append(f"{c.turn} ({c.checkpoint}): ledger's request {row}")
            yield self.item("obligation", "rollback", g.event, problems + _windowed(late))

    # -- §10 negative invariants ------------------------------------------------------

    def deletion(self) -> Iterable[Item]:
        events = [
            t
            for c in self.checkpoints
            if c.world == "a" and c.checkpoint == "post-update"
            for t in c.transitions
            if t.kind == "forget"
        ]
        # Both worlds' reads (§10: "of either world"): a causal pair's world b reads the
        # same store, forked, so a forgotten value it shows is a value the store kept.
        reads: list[tuple[str, QueryRecord | ProbeRecord]] = [
            (f"{q.query} ({q.mode}{', world b' if q.world == 'b' else ''})", q)
            for q in self.queries
        ]
        reads += [(f"{p.probe} (probe)", p) for p in self.probes]
        for t in events:
            shown, said = [], []
            for where, read in reads:
                gone = {(e, p, v) for ev, e, p, v, _s in read.forgotten if ev == t.event}
                if not gone:
                    continue
                exposed = read.exposed if isinstance(read, QueryRecord) else read.clean.exposed
                for item in exposed:
                    if any((f.entity, f.predicate, f.value) in gone for f in item.facts):
                        shown.append(f"{where} exposed {_text(item)}")
                entity, predicate = read.tau[0], read.tau[1]
                if isinstance(read, QueryRecord) and (entity, predicate) == tuple(t.slot[:2]):
                    values = {v for e, p, v in gone if (e, p) == (entity, predicate)}
                    if values & set(read.outcome or ()):
                        said.append(f"{where} answered {read.raw_answer!r}")
            yield self.item("invariant", "deletion", t.event, shown, said)

    def promotion(self) -> Iterable[Item]:
        problems: dict[tuple[str, str], list[str]] = {}
        for c in self.checkpoints:
            untrusted = {(entity, predicate) for entity, predicate in c.untrusted}
            for pair in untrusted:
                problems.setdefault(pair, [])
            reference = _facts(c.reference)
            for f in c.observed:
                if (f[1], f[2]) in untrusted and tuple(f[:4]) not in reference:
                    where = f"{c.turn} ({c.checkpoint}, world {c.world})"
                    problems[(f[1], f[2])].append(f"{where} holds {list(f[:4])}")
        for (predicate, value), found in sorted(problems.items()):
            yield self.item("invariant", "promotion", f"{predicate}={value}", sorted(set(found)))

    def _position(self, read: QueryRecord | ProbeRecord) -> int | None:
        """Where a world-a read stands in A: a query's pre-query checkpoint, the checkpoint
        a probe `follows` (None: not recorded)."""
        if isinstance(read, QueryRecord):
            return self._pre_query.get(read.query)
        return None if read.follows is None else self._at.get((read.follows[0], read.follows[1]))

    def ended_values(self, read: QueryRecord | ProbeRecord) -> set[str]:
        """The values of the read's own slot that S*'s history up to the read holds as
        superseded, corrected, retracted or expired, and S* at the read does not hold
        (docs/method.md §10, "Ended values"): what an exposed item must never show."""
        tau, at = read.tau, self._position(read)
        if at is None:
            return set()
        day = dt.date.fromisoformat(tau[3])
        ended: set[str] = set()
        for c in self.sequence[: at + 1]:
            for t in c.transitions:
                if t.kind in TRANSITION_KINDS and _own_slot(tau, *t.slot):
                    ended.update(t.removed)
            ended.update(
                f[2]
                for f in c.reference
                if _own_slot(tau, f[0], f[1], f[3]) and expired(_date(f[5]), day)
            )
        live = {
            f[2]
            for f in self.sequence[at].reference
            if _own_slot(tau, f[0], f[1], f[3]) and within_window(_date(f[4]), _date(f[5]), day)
        }
        return ended - live

    def exposure(self) -> Iterable[Item]:
        reads: list[tuple[str, QueryRecord | ProbeRecord, list[ExposedRecord]]] = [
            (f"query:{q.query}", q, q.exposed) for q in query_records(self.queries, self.name)
        ]
        reads += [(f"probe:{p.probe}", p, p.clean.exposed) for p in self.probes]
        for name, read, exposed in reads:
            ended = self.ended_values(read)
            bad = []
            for i in exposed:
                shown = sorted(
                    {
                        f.value
                        for f in i.facts
                        if f.readable
                        and f.value in ended
                        and _own_slot(read.tau, f.entity, f.predicate, f.scope)
                    }
                )
                if i.ineligible:
                    bad.append(f"exposed {_text(i)}")
                elif shown:
                    bad.append(f"exposed {_text(i)}, which shows ended value(s) {shown}")
            yield self.item("invariant", "exposure", name, bad)

    # -- §11 negative invariants ------------------------------------------------------

    def authority(self) -> Iterable[Item]:
        for task, recs in self.by_task.items():
            reference = recs[0].reference
            if reference.decision == "block" and AUTHORITY_REASONS & set(reference.reasons):
                executed = [_describe(t) for t in recs if t.decision.kind == "execute"]
                yield self.item("invariant", "authority", task, executed)
        for i, g in self._governance_events("propose"):
            problems = []
            slot = tuple(g.slot or ("", "", ""))
            proposed = (slot[0], slot[1], g.value, slot[2])
            for c in self._proposal_window(i, g.event, ("post-update", "pre-query", "pre-task")):
                held = any(tuple(f[:4]) == proposed for f in c.observed)
                if held and proposed not in _facts(c.reference):
                    problems.append(f"{c.turn} ({c.checkpoint}) holds {list(proposed)}")
            yield self.item("invariant", "authority", g.event, problems)

    def traceability(self) -> Iterable[Item]:
        for task, recs in self.by_task.items():
            handle = self._reference_handle(task)
            links = set(recs[0].reference.links)
            problems = []
            for t in recs:
                d = t.decision
                if d.kind != "execute":
                    continue
                if d.handle is None:
                    problems.append(f"{t.delivery}: executed without a handle")
                elif d.handle != handle:
                    problems.append(
                        f"{t.delivery}: handle {d.handle!r} is not the request's {handle!r}"
                    )
                sources = d.sources or [None]
                if any(s is None for s in sources):
                    problems.append(f"{t.delivery}: executed with a null source")
                outside = sorted({s for s in sources if s is not None} - links)
                if outside:
                    problems.append(f"{t.delivery}: sources {outside} not in the reference's links")
            yield self.item("invariant", "traceability", task, problems)

    def non_exposure(self) -> Iterable[Item]:
        reads: list[tuple[str, list[ExposedRecord]]] = [
            (f"query:{q.query}", q.exposed)
            for q in query_records(self.queries, self.name)
            if q.foreign_present
        ]
        reads += [(f"probe:{p.probe}", p.clean.exposed) for p in self.probes if p.foreign_present]
        for name, exposed in reads:
            yield self.item("invariant", "non-exposure", name, _foreign(exposed))
        for task, recs in self.by_task.items():
            if not any(t.foreign_present for t in recs):
                continue
            problems = []
            for t in recs:
                for i, read in enumerate(t.reads):
                    problems += [f"{t.delivery}: {p}" for p in _foreign(read.exposed)]
                    if t.decision.kind != "execute" or not t.decision.args or i >= len(t.taus):
                        continue
                    entity, predicate = t.taus[i][0], t.taus[i][1]
                    foreign = {
                        f.value
                        for item in read.exposed
                        for f in item.facts
                        if not f.visible and (f.entity, f.predicate) == (entity, predicate)
                    }
                    used = (
                        sorted(set(t.decision.args[i]) & foreign)
                        if i < len(t.decision.args)
                        else []
                    )
                    if used:
                        problems.append(f"{t.delivery}: executed with foreign value(s) {used}")
            yield self.item("invariant", "non-exposure", f"task:{task}", problems)

    def idempotence(self) -> Iterable[Item]:
        for i, c in enumerate(self.sequence):
            for g in c.governance_transitions:
                if g.kind != "duplicate":
                    continue
                problems = []
                if c.checkpoint == "pre-task":  # a task delivered again
                    again = [
                        t
                        for t in self.by_task.get(g.event, [])
                        if t.delivery == c.turn and t.redelivery
                    ]
                    problems = [
                        f"{_describe(t)} again" for t in again if t.decision.kind == "execute"
                    ]
                elif g.slot is not None:
                    before = self.world_a.get(c.previous) if c.previous else None
                    held, now = _slot_values(before, g.slot), _slot_values(c, g.slot)
                    if held != now:
                        problems.append(f"{c.turn}: slot held {sorted(held)}, now {sorted(now)}")
                else:
                    before = self._before(i)
                    was = (
                        None
                        if before is None or before.governance is None
                        else before.governance.observed
                    )
                    now_rows = None if c.governance is None else c.governance.observed
                    if was is not None and now_rows != was:
                        problems.append(f"{c.turn}: the ledger changed")
                yield self.item("invariant", "idempotence", g.event, problems)


def _foreign(exposed: list[ExposedRecord]) -> list[str]:
    return [
        f"exposed {_text(i)}, holding {[f.entity, f.predicate, f.value, f.scope]} it may not see"
        for i in exposed
        for f in i.facts
        if not f.visible
    ]


def scorecard_items(
    records: RunRecords, design: Design = PAPER, answers: bool = True
) -> list[Item]:
    """Every obligation and negative invariant of every condition, in design order, kinds in
    `OBLIGATIONS` then `INVARIANTS` order. `answers=False` (an answer-free run, docs/method.md
    §15): only what reads no answer, judged by it alone; `conflict` items, which read
    nothing else, are not measured and left out."""
    if not answers:
        return [
            replace(i, passed=i.independent, answered=None)
            for i in scorecard_items(records, design)
            if i.independent is not None
        ]
    out: list[Item] = []
    for name in design.names:
        c = _Condition(records, name, design)
        items = [
            *c.transitions(),
            *c.support(),
            *c.conflict(),
            *c.act(),
            *c.epoch(),
            *c.block(),
            *c.surface(),
            *c.rollback(),
            *c.deletion(),
            *c.promotion(),
            *c.exposure(),
            *c.authority(),
            *c.traceability(),
            *c.non_exposure(),
            *c.idempotence(),
        ]
        order = {k: n for n, k in enumerate(OBLIGATIONS + INVARIANTS)}
        out.extend(sorted(items, key=lambda i: order[i.kind]))  # stable: item order kept
    return out


def _tally(items: list[Item], verdict: str) -> dict[str, Any]:
    """{passed, total, failed} of the items with a verdict of that part (`independent` or
    `answered`); failed as `kind:item`."""
    judged = [(i, getattr(i, verdict)) for i in items if getattr(i, verdict) is not None]
    return {
        "passed": sum(1 for _, ok in judged if ok),
        "total": len(judged),
        "failed": [f"{i.kind}:{i.item}" for i, ok in judged if not ok],
    }


def transition_predicates(records: RunRecords) -> dict[str, str]:
    """Event id -> the predicate of its slot, from the world-a post-update checkpoints'
    transitions (reference-side: the same for every condition, so read once per run)."""
    return {
        t.event: t.slot[1]
        for c in records.checkpoints
        if c.world == "a" and c.checkpoint == "post-update"
        for t in c.transitions
    }


def core_tallies(
    items: list[Item], predicate_of: dict[str, str], core: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """docs/method.md §13's two sub-tallies of existing items, outside the totals:
    `plasticity`, the transition items on slots of core predicates, and `stability`, the
    promotion items of core predicates. An item's predicate: its transition's slot
    (`predicate_of`, from `transition_predicates`), a promotion item's `predicate=value` id."""
    wanted = set(core)

    def tally(kind: str, predicate: Callable[[Item], str | None]) -> dict[str, Any]:
        mine = [i for i in items if i.kind == kind and predicate(i) in wanted]
        return {
            "passed": sum(i.passed for i in mine),
            "total": len(mine),
            "failed": [i.item for i in mine if not i.passed],
        }

    return {
        "plasticity": tally("transition", lambda i: predicate_of.get(i.item)),
        "stability": tally("promotion", lambda i: i.item.split("=", 1)[0]),
    }


def scorecard(
    records: RunRecords,
    design: Design = PAPER,
    core: Sequence[str] | None = None,
    answers: bool = True,
) -> dict[str, dict]:
    """metrics.json `aoep`: per condition, passed/total per kind and per family, and the
    item ids of every failure; beside them the `model_independent` tally (without `conflict`
    and without deletion's answer clause) and the `answer_dependent` one (those alone). With
    `core` (a run whose design has `ssgm`), the `core` sub-tallies too (`core_tallies`).
    Without `answers` (an answer-free run), the `conflict` kind and the `answer_dependent`
    tally are None (not measured) and every item counts by its answer-free clauses."""
    items = scorecard_items(records, design, answers)
    predicate_of = transition_predicates(records) if core is not None else {}
    out: dict[str, dict] = {}
    for name in design.names:
        mine = [i for i in items if i.condition == name]
        doc: dict = {}
        for family, kinds in (("obligations", OBLIGATIONS), ("invariants", INVARIANTS)):
            per: dict[str, dict[str, Any] | None] = {}
            for kind in kinds:
                of_kind = [i for i in mine if i.kind == kind]
                if not answers and kind in ANSWER_ONLY_KINDS:
                    per[kind] = None
                    continue
                per[kind] = {
                    "passed": sum(i.passed for i in of_kind),
                    "total": len(of_kind),
                    "failed": [i.item for i in of_kind if not i.passed],
                }
            doc[family] = {
                "passed": sum(v["passed"] for v in per.values() if v is not None),
                "total": sum(v["total"] for v in per.values() if v is not None),
                "kinds": per,
            }
        for part, verdict in (
            ("model_independent", "independent"),
            ("answer_dependent", "answered"),
        ):
            doc[part] = (
                None
                if part == "answer_dependent" and not answers
                else {
                    family: _tally([i for i in mine if i.family == single], verdict)
                    for family, single in (
                        ("obligations", "obligation"),
                        ("invariants", "invariant"),
                    )
                }
            )
        if core is not None:
            doc["core"] = core_tallies(mine, predicate_of, core)
        out[name] = doc
    return out


def task_counts(records: RunRecords, design: Design = PAPER) -> dict[str, dict[str, int]] | None:
    """metrics.json `tasks`: per condition, its deliveries and how the act gate decided them,
    and how many match the reference (`decision_matches`); None when no task was delivered."""
    if not records.tasks:
        return None
    out = {}
    for name in design.names:
        mine = [t for t in records.tasks if t.condition == name]
        kinds = [t.decision.kind for t in mine]
        out[name] = {
            "deliveries": len(mine),
            "executed": kinds.count("execute"),
            "blocked": kinds.count("block"),
            "no_support": kinds.count("no-support"),
            "duplicate": kinds.count("duplicate"),
            "matching": sum(decision_matches(t) for t in mine),
        }
    return out


def pilot_table(card: dict[str, dict], design: Design) -> list[dict[str, Any]] | None:
    """metrics.json `aoep_pilot`: the pilot's systems in its order, each with its condition's
    model-independent and answer-dependent tallies per family, and the model-independent one
    over AOEP-v0's named kinds only (without `act` and `idempotence`), each with its mark;
    None when the design lacks one of the systems' conditions."""
    if not design.has(*(s.condition for s in PILOT_SYSTEMS)):
        return None
    rows = []
    for s in PILOT_SYSTEMS:
        c = card[s.condition]
        row: dict[str, Any] = {"system": s.system, "condition": s.condition}
        for family in ("obligations", "invariants"):
            independent = c["model_independent"][family]
            answer = None if c["answer_dependent"] is None else c["answer_dependent"][family]
            named = [f for f in independent["failed"] if f.partition(":")[0] not in NOT_AOEP_NAMED]
            kinds = c[family]["kinds"]
            named_total = sum(
                v["total"]
                for k, v in kinds.items()
                if k not in NOT_AOEP_NAMED and k != "conflict" and v is not None
            )
            row[family] = {
                "model_independent": {
                    "passed": independent["passed"],
                    "total": independent["total"],
                    "mark": s.mark,
                },
                "answer_dependent": None
                if answer is None
                else {"passed": answer["passed"], "total": answer["total"], "mark": "A"},
                "aoep_kinds": {
                    "passed": named_total - len(named),
                    "total": named_total,
                    "mark": s.mark,
                },
            }
        rows.append(row)
    return rows


__all__ = [
    "ANSWER_ONLY_KINDS",
    "GOVERNANCE_KINDS",
    "INVARIANTS",
    "NOT_AOEP_NAMED",
    "OBLIGATIONS",
    "PILOT_SYSTEMS",
    "Item",
    "Mark",
    "PilotSystem",
    "decision_matches",
    "pilot_table",
    "same_args",
    "scorecard",
    "scorecard_items",
    "task_counts",
]
