"""SSGM's mutable memory M and its reconciliation (docs/method.md §13), in memory.

M is a lifecycle state (CSS's transition rules, `place.reference.lifecycle`) whose records
also carry where they came from: the turn, its speaker and whether the proposal was trusted
(a user event) or not (β's reading of a tool turn). Every delivered turn is observed once:
its proposals go through the core write gate (`ssgm_gate`) and the accepted ones through the
rules. The log of observed turns is SSGM's immutable episodic track; in the store it is the
evidence log V, and reconciliation R replays it, in order, through the same proposals and
gate into an empty M'.

Nothing here touches a store: the `ssgm` producer (place/producers/ssgm.py) realizes M in
Mem0 and verifies it by readback, and `place drift` (place/drift/) runs M alone, with its
seeded corruption, because the drift experiment is model- and store-independent (amendment
13). Both therefore share exactly one definition of what SSGM does.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from place.governance.evidence import REDACTED, redact_text
from place.governance.ssgm_gate import Proposal, contradicts, proposals
from place.lexicon import Lexicon
from place.reference.lifecycle import FactRecord, LifecycleError, LifecycleState, Transition
from place.trajectory.model import FACT_OPS, Conversation, Event, Fact, Schema, Slot, Turn

TRUSTED, UNTRUSTED = "trusted", "untrusted"


@dataclass(frozen=True)
class Observed:
    """One delivered turn as SSGM observes it: what V keeps of it."""

    id: str
    role: str
    speaker: str
    text: str
    events: tuple[Event, ...]
    day: dt.date
    conversation: str | None = None

    @classmethod
    def delivered(cls, turn: Turn, speaker: str, conv: Conversation) -> Observed:
        """A turn of the trajectory as it is delivered in conversation `conv`, said by
        `speaker`."""
        return cls(turn.id, turn.role, speaker, turn.text, turn.events, conv.date, conv.id)

    @classmethod
    def from_entry(cls, meta: Mapping[str, Any], principal: str) -> Observed:
        """A V entry (place.governance.evidence.entry) as an observed turn. An event a forget
        redacted (its value `[forgotten]`) is left out: replay skips what was deleted."""
        events = tuple(_event(e) for e in meta.get("events") or () if e.get("value") != REDACTED)
        return cls(
            id=str(meta["turn"]),
            role=str(meta["role"]),
            speaker=str(meta.get("speaker") or principal),
            text=str(meta.get("text") or ""),
            events=events,
            day=dt.date.fromisoformat(str(meta["written_on"])),
            conversation=meta.get("conversation"),
        )


def _event(fields: Mapping[str, Any]) -> Event:
    def day(key: str) -> dt.date | None:
        raw = fields.get(key)
        return None if raw in (None, "") else dt.date.fromisoformat(str(raw))

    return Event(
        id=str(fields["id"]),
        op=fields["op"],
        entity=str(fields.get("entity") or ""),
        predicate=str(fields.get("predicate") or ""),
        scope=str(fields.get("scope") or "global"),
        value=fields.get("value"),
        valid_from=day("valid_from"),
        valid_until=day("valid_until"),
    )


@dataclass(frozen=True)
class Origin:
    """Where a record of M came from (its `source_turn`, `speaker`, `trust`)."""

    turn: str
    speaker: str
    trust: str
    day: dt.date
    conversation: str | None = None


@dataclass
class Observation:
    """What observing one turn did to M."""

    transitions: list[Transition] = field(default_factory=list)
    rejected: list[Proposal] = field(default_factory=list)
    """Proposals the core gate refused (the step field `rejected`)."""
    forgotten: list[tuple[Event, tuple[str, ...]]] = field(default_factory=list)
    """Each applied forget and the values it deletes (`SSGMMemory.observe`): what the log
    is redacted of."""
    skipped: list[tuple[Proposal, str]] = field(default_factory=list)
    """Proposals that no longer apply to M (after a rejection or a corruption: a retract of
    a value M does not hold, a forget of a slot it never held) and events SSGM has no
    substrate for (share, grant, rollback...), with why; counted, never an error
    (docs/method.md §13)."""


@dataclass
class SSGMMemory:
    """M: the records SSGM holds, the gate's configuration, and where each record came from."""

    schema: Schema
    principal: str
    core: frozenset[str]
    gate: bool = True
    state: LifecycleState = field(init=False)
    origins: dict[str, Origin] = field(default_factory=dict)
    """event id of a record -> where it came from."""
    proposed: dict[Slot, set[str]] = field(default_factory=dict)
    """Every value proposed for a slot since it was last forgotten, applied or not: a forget
    deletes them all from the log, the rejected ones included (the user asked for the slot
    to be forgotten, not only for what M happened to keep)."""
    _lexicons: dict[str, Lexicon] = field(default_factory=dict, repr=False)
    _proposed: dict[Observed, list[Proposal]] = field(default_factory=dict, repr=False)
    """Proposals by observed turn: reconciliation replays the same turns many times, and β's
    reading of a tool turn is the costly part (shared by every M' made from this M)."""

    def __post_init__(self) -> None:
        self.state = LifecycleState(self.schema)

    def empty(self) -> SSGMMemory:
        """An empty M' with the same gate (what reconciliation replays into)."""
        out = SSGMMemory(self.schema, self.principal, self.core, self.gate)
        out._lexicons = self._lexicons
        out._proposed = self._proposed
        return out

    def copy(self) -> SSGMMemory:
        out = self.empty()
        out.state = self.state.copy()
        out.origins = dict(self.origins)
        out.proposed = {slot: set(values) for slot, values in self.proposed.items()}
        return out

    def lexicon(self, speaker: str) -> Lexicon:
        """β with `speaker` as the entity of a text that names none (as CSS's quarantine)."""
        if speaker not in self._lexicons:
            self._lexicons[speaker] = Lexicon(self.schema, speaker)
        return self._lexicons[speaker]

    def core_facts(self) -> list[Fact]:
        """M_core: the active facts of core predicates."""
        return [
            r.fact for r in self.state.records if r.status == "active" and r.predicate in self.core
        ]

    def observe(self, turn: Observed) -> Observation:
        """ΔM of one turn, gated and applied in order."""
        out = Observation()
        if turn not in self._proposed:
            self._proposed[turn] = proposals(turn, self.lexicon(turn.speaker), self.schema)
        for proposal in self._proposed[turn]:
            event = proposal.event
            if event.op in FACT_OPS and event.value is not None:
                self.proposed.setdefault(event.slot, set()).add(event.value)
            if event.op not in FACT_OPS:
                out.skipped.append((proposal, f"{event.op}: not a memory write"))
                continue
            if self.gate and contradicts(proposal, self.core_facts(), self.schema, self.core):
                out.rejected.append(proposal)
                continue
            try:
                transition = self.state.apply(event, turn.day)
            except LifecycleError as err:
                out.skipped.append((proposal, str(err)))
                continue
            for record in transition.added:
                self.origins[record.event_id] = Origin(
                    turn.id,
                    turn.speaker,
                    TRUSTED if proposal.trusted else UNTRUSTED,
                    turn.day,
                    turn.conversation,
                )
            for record in transition.removed:
                self.origins.pop(record.event_id, None)
            if event.op == "forget":
                values = {r.value for r in transition.removed} | self.proposed.pop(
                    event.slot, set()
                )
                out.forgotten.append((event, tuple(sorted(values))))
            out.transitions.append(transition)
        return out

    def replay(self, log: Iterable[Observed]) -> tuple[SSGMMemory, Observation]:
        """Reconciliation's M': the log replayed in order through proposals and the gate into
        an empty memory. Returns M' and what the replay rejected and skipped."""
        fresh, seen = self.empty(), Observation()
        for turn in log:
            got = fresh.observe(turn)
            seen.rejected += got.rejected
            seen.skipped += got.skipped
            seen.forgotten += got.forgotten
        return fresh, seen

    def records(self) -> list[FactRecord]:
        return list(self.state.records)

    def state_at(self, day: dt.date) -> frozenset[Fact]:
        return self.state.state_at(day)


def log_of(entries: Sequence[Mapping[str, Any]], principal: str) -> list[Observed]:
    """V's entries (in the order they were written) as the log reconciliation replays."""
    return [Observed.from_entry(e, principal) for e in entries]


def redact_log(
    log: Sequence[Observed], event: Event, values: Sequence[str], lexicon: Lexicon
) -> list[Observed]:
    """The in-memory log after a forget of `event`'s slot, redacted as CSS redacts V
    (place.governance.evidence): spans from which β reads a forgotten value about the slot's
    entity become `[forgotten]`, and the slot's events carrying a forgotten value are left
    out (a replay skips them, as it skips V's redacted events)."""
    out = []
    for turn in log:
        text = redact_text(turn.text, event, values, lexicon, lexicon.principal)
        events = tuple(
            e
            for e in turn.events
            if not (e.has_slot and e.slot == event.slot and e.value in values)
        )
        out.append(
            turn
            if text == turn.text and events == turn.events
            else Observed(
                turn.id, turn.role, turn.speaker, text, events, turn.day, turn.conversation
            )
        )
    return out
