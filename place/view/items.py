"""The item table and the item pages of one run: one row per (item, condition) for queries,
probes, checkpoints, forgets, audits and tasks, and per row the page that shows what the
records hold about it.

Every judgement shown (supported, ineligible, joint success, Ω's verdict, residue that
counts, a task decided as the reference decides) comes from the functions that compute the
metrics (`place.metrics`), so a page cannot disagree with metrics.json about an item. The
viewer adds only explanations: why an exposed fact fails E (`why`), in words.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from place.design import Design
from place.eligibility import scope_admits, within_window
from place.lexicon.outcome import gold_outcome
from place.metrics import citation as cit
from place.metrics import endpoints as ep
from place.metrics.aoep import Item, decision_matches
from place.records import (
    PROVENANCE_CLASSES,
    CheckpointRecord,
    ExposedRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    ReadFactRecord,
    RunRecords,
    StepRecord,
)
from place.view.pool import Pools

KINDS = ("query", "probe", "checkpoint", "forget", "audit", "task")
"""The item table's kinds, in the order it lists them."""
NONE = "none"
"""The distractor filter's value for a row whose reads and steps involve no distractor."""

Row = dict[str, Any]
"""One row of the item table: `k` kind, `id`, `c` condition, `fam` family, `st` status
(pass, fail, n/a), `dist` distractor kinds, `sum` a one-line summary, `ans` the answer (or
None), `d` the key of its page in `details`."""


def detail_key(kind: str, item: str, condition: str) -> str:
    return f"{kind}|{item}|{condition}"


def _four(rows: Iterable[Sequence[str | None]]) -> frozenset[tuple[str | None, ...]]:
    """Distinct (entity, predicate, value, scope) facts, windows dropped: how S^phys and S*
    are compared (`place.metrics.endpoints.checkpoint_f1`)."""
    return frozenset(tuple(r[:4]) for r in rows)


def _date(iso: str | None) -> dt.date | None:
    return None if iso is None else dt.date.fromisoformat(iso)


def why(f: ReadFactRecord, tau: Sequence[str], asker: str | None) -> str:
    """In words, why E holds or fails for one exposed fact at the read's τ (docs/method.md
    §1): the recorded `eligible` decides; the reasons are the clauses of
    `place.eligibility.is_eligible` it fails, and visibility and readability beside them."""
    entity, predicate, scope, as_of = tau[0], tau[1], tau[2], tau[3]
    reasons = []
    if f.predicate != predicate:
        reasons.append(f"another predicate ({f.predicate}, not {predicate})")
    if f.entity != entity:
        reasons.append(f"another entity ({f.entity}, not {entity})")
    if not scope_admits(f.scope, scope):
        reasons.append(f"scope {f.scope}, not {scope} or global")
    if f.status != "active":
        reasons.append(f"status {f.status}")
    day = _date(as_of)
    if day is not None and not within_window(_date(f.valid_from), _date(f.valid_until), day):
        reasons.append(f"window [{f.valid_from or '…'}, {f.valid_until or '…'}) excludes {as_of}")
    extra = []
    if not f.visible:
        extra.append(f"not visible to {asker or 'the asker'}")
    if not f.readable:
        extra.append("β reads nothing from it on the read's date")
    if f.eligible:
        head = "eligible"
    else:
        head = "ineligible: " + ("; ".join(reasons) if reasons else "fails E")
    return "; ".join([head, *extra])


def _read_fact(f: ReadFactRecord) -> list[Any]:
    return [
        f.entity,
        f.predicate,
        f.value,
        f.scope,
        f.status,
        f.valid_from,
        f.valid_until,
        f.certified,
        f.readable,
        f.eligible,
        f.visible,
    ]


def exposed_item(
    e: ExposedRecord, tau: Sequence[str], asker: str | None, pools: Pools
) -> dict[str, Any]:
    """One exposed item: its text, score, facts (each with why E holds or fails), raw
    lifecycle, evidence pointer, provenance class, source turns and distractor kind."""
    return {
        "id": e.id,
        "t": pools.text(e.text),
        "s": round(e.score, 4),
        "x": e.ineligible,
        "f": [[pools.fact(_read_fact(f)), pools.text(why(f, tau, asker))] for f in e.facts],
        "l": None if e.lifecycle is None else pools.blob(e.lifecycle),
        "p": e.pointer,
        "v": e.provenance,
        "src": e.sources,
        "d": e.distractor,
    }


def verdict(outcome: list[str] | None, gold: list[str]) -> str | None:
    """Ω's outcome against the gold: `correct`, `wrong`, or None when no answer was asked."""
    if outcome is None:
        return None
    return "correct" if frozenset(outcome) == gold_outcome(gold) else "wrong"


def _distractors(exposed: Iterable[ExposedRecord]) -> set[str]:
    return {e.distractor for e in exposed if e.distractor is not None}


class RunItems:
    """Builds the rows and pages of one run (`build`), interning into `pools`."""

    def __init__(self, records: RunRecords, design: Design, answers: bool, pools: Pools) -> None:
        self.records = records
        self.design = design
        self.answers = answers
        self.pools = pools
        self.rows: list[Row] = []
        self.details: dict[str, dict[str, Any]] = {}
        self.event_checkpoint: dict[str, str] = {}
        """Event id (a trusted or governance event) -> the id of the world-a post-update
        checkpoint whose transitions hold it: where a transition item is decided."""

    # -- shared --------------------------------------------------------------------------

    def _add(self, row: Row, detail: dict[str, Any] | None) -> None:
        key = detail_key(row["k"], row["id"], row["c"])
        if detail is not None:
            n = 2
            while key in self.details:  # never overwrite a page: a repeated id gets #n
                key = detail_key(row["k"], f"{row['id']}#{n}", row["c"])
                n += 1
            self.details[key] = detail
        row["d"] = key
        row["dist"] = sorted(row["dist"]) or [NONE]
        self.rows.append(row)

    def _exposed(
        self, exposed: list[ExposedRecord], tau: Sequence[str], asker: str | None
    ) -> list[dict[str, Any]]:
        return [exposed_item(e, tau, asker, self.pools) for e in exposed]

    def build(self) -> None:
        self.checkpoints()
        self.queries()
        self.probes()
        self.forgets()
        self.audits()
        self.tasks()
        # Checkpoints are built first (their transitions say where each event is decided);
        # the table lists the reads first, each kind in record order.
        order = {k: n for n, k in enumerate(KINDS)}
        self.rows.sort(key=lambda r: order[r["k"]])

    # -- queries -------------------------------------------------------------------------

    def _query_read(self, q: QueryRecord) -> dict[str, Any]:
        answered = q.outcome is not None
        return {
            "exposed": self._exposed(q.exposed, q.tau, q.asker),
            "admitted": q.admitted,
            "hearsay": q.hearsay,
            "answer": q.raw_answer,
            "outcome": q.outcome,
            "verdict": verdict(q.outcome, q.gold),
            "score": round(ep.answer_score(q), 4) if answered else None,
            "joint": ep.joint_success(q) if answered else None,
            "authorized": self.pools.fact_list(q.authorized),
            "evaluated": self.pools.fact_list(q.evaluated),
            "state_correct": q.state_correct,
            "supported": ep.supported(ep.exposed_facts(q), _four(q.authorized)),
            "ineligible": ep.has_ineligible_exposure(q),
        }

    def queries(self) -> None:
        grouped: dict[tuple[str, str], dict[tuple[str, str], QueryRecord]] = defaultdict(dict)
        for q in self.records.queries:
            grouped[(q.query, q.condition)].setdefault((q.mode, q.world), q)
        leaks = {c: ep.leakage_pairs(self.records.queries, c) for c in self.design.names}
        for (qid, condition), reads in grouped.items():
            a = reads.get(("primary", "a"))
            b = reads.get(("primary", "b"))
            closed = reads.get(("closed_loop", "a"))
            first = a or b or closed
            assert first is not None
            read_a = None if a is None else self._query_read(a)
            if read_a is None:
                status = "n/a"
            elif self.answers:
                status = "pass" if read_a["joint"] else "fail"
            else:  # answer-free: the clauses of JointSuccess that read no answer
                ok = read_a["state_correct"] and read_a["supported"] and not read_a["ineligible"]
                status = "pass" if ok else "fail"
            detail = {
                "kind": "query",
                "id": qid,
                "cond": condition,
                "question": first.question,
                "family": first.family,
                "turn": first.turn,
                "conversation": first.conversation,
                "tau": list(first.tau),
                "asker": first.asker,
                "read_on": first.read_on,
                "gold": first.gold,
                "forgotten": first.forgotten,
                "foreign_present": first.foreign_present,
                "authorized_a": self.pools.fact_list(first.authorized_a),
                "authorized_b": None
                if first.authorized_b is None
                else self.pools.fact_list(first.authorized_b),
                "a": read_a,
                "b": None if b is None else self._query_read(b),
                "closed_loop": None if closed is None else self._query_read(closed),
                # LeakageRate compares the worlds' answers: not measured without them.
                "leak": leaks.get(condition, {}).get(qid) if self.answers else None,
            }
            dist = set().union(*(_distractors(r.exposed) for r in reads.values()))
            self._add(
                {
                    "k": "query",
                    "id": qid,
                    "c": condition,
                    "fam": first.family,
                    "st": status,
                    "dist": dist,
                    "sum": first.question,
                    "ans": None if a is None else a.raw_answer,
                },
                detail,
            )

    # -- probes --------------------------------------------------------------------------

    def _probe_read(self, r: ProbeRead, p: ProbeRecord) -> dict[str, Any]:
        return {
            "exposed": self._exposed(r.exposed, p.tau, p.asker),
            "admitted": r.admitted,
            "hearsay": r.hearsay,
            "answer": r.raw_answer,
            "outcome": r.outcome,
            "verdict": verdict(r.outcome, p.gold),
            "supported": ep.supported(ep.exposed_facts(r), _four(p.authorized)),
            "ineligible": ep.has_ineligible_exposure(r),
        }

    def probes(self) -> None:
        for p in self.records.probes:
            clean = self._probe_read(p.clean, p)
            harmed: bool | None = None
            forged_exposed: bool | None = None
            if p.forged is not None:
                forged_exposed = p.injected is not None and cit.forged_exposed(p)
                harmed = cit.forged_harmed(p) if self.answers else None
            elif p.conflict_value is not None:
                harmed = ep.conflict_harmed(p) if self.answers else None
            if p.forged is not None:  # scored by §12's figures, not its clean read
                failed = bool(forged_exposed) or bool(harmed)
            else:
                failed = (
                    clean["ineligible"]
                    or (bool(p.authorized) and not clean["supported"])
                    or bool(harmed)
                )
            detail = {
                "kind": "probe",
                "id": p.probe,
                "cond": p.condition,
                "question": p.question,
                "family": p.family,
                "after": p.after,
                "conversation": p.conversation,
                "tau": list(p.tau),
                "asker": p.asker,
                "read_on": p.read_on,
                "follows": None if p.follows is None else list(p.follows),
                "gold": p.gold,
                "authorized": self.pools.fact_list(p.authorized),
                "conflict_value": p.conflict_value,
                "forged": None if p.forged is None else p.forged.model_dump(),
                "forged_exposed": forged_exposed,
                "harmed": harmed,
                "forgotten": p.forgotten,
                "foreign_present": p.foreign_present,
                "clean": clean,
                "injected": None if p.injected is None else self._probe_read(p.injected, p),
            }
            dist = _distractors(p.clean.exposed) | (
                _distractors(p.injected.exposed) if p.injected is not None else set()
            )
            self._add(
                {
                    "k": "probe",
                    "id": p.probe,
                    "c": p.condition,
                    "fam": p.family,
                    "st": "fail" if failed else "pass",
                    "dist": dist,
                    "sum": p.question,
                    "ans": None if p.injected is None else p.injected.raw_answer,
                },
                detail,
            )

    # -- checkpoints ---------------------------------------------------------------------

    def _steps(self) -> dict[tuple[str, str, str | None, str], StepRecord]:
        """(producer, world, query, turn) -> the step that wrote the turn."""
        out: dict[tuple[str, str, str | None, str], StepRecord] = {}
        for s in self.records.steps:
            for turn in s.turns:
                out.setdefault((s.producer, s.world, s.query, turn), s)
        return out

    def _distractors_since(self) -> dict[tuple[str, str, str, str | None, str], set[str]]:
        """(condition, world, turn, query, checkpoint kind) -> the distractor kinds of the
        update steps its producer took since the condition's previous checkpoint in that
        world. A distractor is a step of its own with no checkpoint (docs/method.md §16),
        so a checkpoint is where the state it may have moved is read next. A world-b
        checkpoint reads the steps of its query's causal pair."""
        position: dict[tuple[str, str, str | None, str], int] = {}
        kinds: dict[tuple[str, str, str | None], list[str | None]] = defaultdict(list)
        for s in self.records.steps:
            line = kinds[(s.producer, s.world, s.query)]
            for turn in s.turns:
                position.setdefault((s.producer, s.world, s.query, turn), len(line))
            line.append(s.distractor)
        out: dict[tuple[str, str, str, str | None, str], set[str]] = {}
        last: dict[tuple[str, str, str | None], int] = {}
        for c in self.records.checkpoints:
            if c.condition not in self.design.names:
                continue
            producer = self.design.producer_of(c.condition)
            query = c.query if c.world == "b" else None
            at = position.get((producer, c.world, query, c.turn))
            found: set[str] = set()
            if at is not None:
                key = (c.condition, c.world, query)
                steps = kinds[(producer, c.world, query)][last.get(key, -1) + 1 : at + 1]
                found = {k for k in steps if k is not None}
                last[key] = at
            out[(c.condition, c.world, c.turn, c.query, c.checkpoint)] = found
        return out

    def _world(self, c: CheckpointRecord) -> dict[str, Any]:
        observed = _four(c.observed)
        reference = _four(c.reference)
        governance = None
        if c.governance is not None:
            dumped = c.governance.model_dump()
            if any(rows for part in dumped.values() for rows in part.values()):
                governance = self.pools.blob(dumped)
        return {
            "o": self.pools.blob(self.pools.fact_list(c.observed)),
            "r": self.pools.blob(self.pools.fact_list(c.reference)),
            "match": observed == reference,
            "f1": round(ep.checkpoint_f1(c), 4),
            "untrusted": self.pools.blob([list(u) for u in c.untrusted]),
            "gov": governance,
        }

    def checkpoints(self) -> None:
        steps = self._steps()
        since = self._distractors_since()
        grouped: dict[tuple[str, str, str | None, str], dict[str, CheckpointRecord]] = defaultdict(
            dict
        )
        for c in self.records.checkpoints:
            grouped[(c.turn, c.checkpoint, c.query, c.condition)].setdefault(c.world, c)
        for (turn, kind, query, condition), worlds in grouped.items():
            cid = f"{turn}/{kind}" + (f"/{query}" if query else "")
            first = worlds.get("a") or worlds["b"]
            for t in first.transitions:
                self.event_checkpoint.setdefault(t.event, cid)
            for g in first.governance_transitions:
                self.event_checkpoint.setdefault(g.event, cid)
            shown = {w: self._world(c) for w, c in sorted(worlds.items())}
            producer = (
                self.design.producer_of(condition) if condition in self.design.names else None
            )
            step = None
            dist: set[str] = set()
            for w, c in worlds.items():
                s = steps.get((producer or "", w, c.query if w == "b" else None, turn))
                dist |= since.get((condition, w, turn, c.query, kind), set())
                if w == "a" and s is not None:
                    step = {
                        "step": s.step,
                        "turns": s.turns,
                        "ops": self.pools.blob(s.operations),
                        "failures": s.failures,
                        "distractor": s.distractor,
                        "distractors_since": sorted(
                            since.get((condition, w, turn, c.query, kind), set())
                        ),
                    }
            wrong = [w for w, v in shown.items() if not v["match"]]
            ok = not wrong
            summary = "S^phys = S*"
            if wrong:  # the first world that differs, in its own numbers
                c = worlds[wrong[0]]
                extra = len(_four(c.observed) - _four(c.reference))
                missing = len(_four(c.reference) - _four(c.observed))
                summary = (
                    f"world {wrong[0]}: {extra} not in S*, {missing} of S* missing "
                    f"(F1 {shown[wrong[0]]['f1']:.3f})"
                )
            detail = {
                "kind": "checkpoint",
                "id": cid,
                "cond": condition,
                "producer": producer,
                "turn": turn,
                "checkpoint": kind,
                "query": query,
                "conversation": first.conversation,
                "date": first.date,
                "previous": None if first.previous is None else list(first.previous),
                "transitions": self.pools.blob([t.model_dump() for t in first.transitions]),
                "governance_transitions": self.pools.blob(
                    [g.model_dump(exclude_none=True) for g in first.governance_transitions]
                ),
                "worlds": shown,
                "step": step,
            }
            self._add(
                {
                    "k": "checkpoint",
                    "id": cid,
                    "c": condition,
                    "fam": kind,
                    "st": "pass" if ok else "fail",
                    "dist": dist,
                    "sum": summary,
                    "ans": None,
                },
                detail,
            )

    # -- forgets, audits, tasks ----------------------------------------------------------

    def _conditions_of(self, producer: str) -> list[str]:
        return [c for c in self.design.names if self.design.producer_of(c) == producer]

    def forgets(self) -> None:
        by_event: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        slots: dict[tuple[str, str], list[str]] = {}
        for f, kept in ep.counted_residue(self.records.forgets):
            slots.setdefault((f.event, f.producer), list(f.slot))
            by_event[(f.event, f.producer)].append(
                {
                    "check": f.check,
                    "values": f.values,
                    "residue": [
                        {
                            "t": self.pools.text(text),
                            "where": f.where[i] if i < len(f.where) else None,
                            "counted": i in kept,
                        }
                        for i, text in enumerate(f.residue)
                    ],
                }
            )
        for (event, producer), checks in by_event.items():
            counted = sum(r["counted"] for c in checks for r in c["residue"])
            values = sorted({v for c in checks for v in c["values"]})
            for condition in self._conditions_of(producer):
                detail = {
                    "kind": "forget",
                    "id": event,
                    "cond": condition,
                    "producer": producer,
                    "slot": slots[(event, producer)],
                    "checks": checks,
                    "checkpoint": self.event_checkpoint.get(event),
                }
                self._add(
                    {
                        "k": "forget",
                        "id": event,
                        "c": condition,
                        "fam": "forget",
                        "st": "fail" if counted else "pass",
                        "dist": set(),
                        "sum": f"{'/'.join(slots[(event, producer)])}: {', '.join(values)}"
                        + (f" ({counted} residue)" if counted else ""),
                        "ans": None,
                    },
                    detail,
                )

    def audits(self) -> None:
        for a in self.records.audits:
            counts = {k: sum(i.provenance == k for i in a.items) for k in PROVENANCE_CLASSES}
            for condition in self._conditions_of(a.producer):
                detail = {
                    "kind": "audit",
                    "id": "store",
                    "cond": condition,
                    "producer": a.producer,
                    "counts": counts,
                    "items": self.pools.blob([[i.id, i.pointer, i.provenance] for i in a.items]),
                }
                self._add(
                    {
                        "k": "audit",
                        "id": "store",
                        "c": condition,
                        "fam": "audit",
                        "st": "n/a",
                        "dist": set(),
                        "sum": f"{len(a.items)} stored records of {a.producer}: "
                        + ", ".join(f"{v} {k}" for k, v in counts.items()),
                        "ans": None,
                    },
                    detail,
                )

    def tasks(self) -> None:
        grouped: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for t in self.records.tasks:
            grouped[(t.task, t.condition)].append(t)
        for (task, condition), recs in grouped.items():
            first = recs[0]
            ok = all(decision_matches(t) for t in recs)
            deliveries = [
                {
                    "delivery": t.delivery,
                    "redelivery": t.redelivery,
                    "read_on": t.read_on,
                    "decision": t.decision.model_dump(),
                    "request": t.request,
                    "matches": decision_matches(t),
                    "reads": [
                        {
                            "tau": list(tau),
                            "exposed": self._exposed(r.exposed, tau, t.asker),
                            "admitted": r.admitted,
                            "hearsay": r.hearsay,
                        }
                        for r, tau in zip(t.reads, t.taus, strict=False)
                    ],
                }
                for t in recs
            ]
            detail = {
                "kind": "task",
                "id": task,
                "cond": condition,
                "asker": first.asker,
                "turn": first.turn,
                "run_turn": first.run_turn,
                "conversation": first.conversation,
                "reference": first.reference.model_dump(),
                "foreign_present": any(t.foreign_present for t in recs),
                "deliveries": deliveries,
            }
            dist = set().union(*(_distractors(r.exposed) for t in recs for r in t.reads))
            self._add(
                {
                    "k": "task",
                    "id": task,
                    "c": condition,
                    "fam": "task",
                    "st": "pass" if ok else "fail",
                    "dist": dist,
                    "sum": f"reference {first.reference.decision}; decided "
                    + ", ".join(t.decision.kind for t in recs),
                    "ans": None,
                },
                detail,
            )

    # -- the scorecard's items -----------------------------------------------------------

    def scorecard_links(self, items: list[Item]) -> dict[str, dict[str, list[list[Any]]]]:
        """Per condition and kind, every scorecard item as [item, passed, evidence (text
        index), the key of its page or None]: what a scorecard cell links to."""
        out: dict[str, dict[str, list[list[Any]]]] = {}
        for i in items:
            out.setdefault(i.condition, {}).setdefault(i.kind, []).append(
                [i.item, i.passed, self.pools.text(i.evidence), self._link(i)]
            )
        return out

    def _link(self, i: Item) -> str | None:
        """The page an item is decided on: the read or task its id names, the forget
        record of a forget or deletion, else the checkpoint whose transitions hold its
        event."""
        c = i.condition
        prefix, _, rest = i.item.partition(":")
        candidates: list[str] = []
        if prefix in ("query", "probe", "task") and rest:
            candidates.append(detail_key(prefix, rest, c))
        if i.kind in ("forget", "deletion"):
            candidates.append(detail_key("forget", i.item, c))
        if i.kind == "support":
            candidates.append(detail_key("query", i.item, c))
        if i.kind == "conflict":
            candidates.append(detail_key("probe", i.item, c))
        candidates.append(detail_key("task", i.item, c))
        cid = self.event_checkpoint.get(i.item)
        if cid is not None:
            candidates.append(detail_key("checkpoint", cid, c))
        return next((k for k in candidates if k in self.details), None)
