"""The in-memory form of a `place-trajectory/1` document.

Everything here is immutable: a loaded trajectory is the prespecified input of every
condition, so nothing downstream may alter it. The loader (`place.trajectory.loader`) is
the only way to build one from a file (via the file format's pydantic models in
`place.trajectory.document`); tests may build them directly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple, get_args

# The format's enumerations, stated once: the file format (`place.trajectory.document`)
# validates against these Literals and the tuples below are derived from them.
Format = Literal["place-trajectory/1"]
ValueType = Literal["time", "date", "number", "money", "enum"]
Cardinality = Literal["one", "many"]
Op = Literal[
    "assert", "correct", "retract", "forget", "share", "unshare", "grant", "revoke", "rollback"
]
Role = Literal["user", "assistant", "tool"]
Family = Literal["supersession", "correction", "deletion", "scope", "temporal", "provenance"]
Expectation = Literal["allow", "block"]
Reason = Literal["stale-epoch", "out-of-scope", "untrusted"]
DistractorKind = Literal[
    "entity", "topic", "hypothetical", "reported", "negated", "restate", "neutral"
]
"""The on-topic distractor kinds of docs/method.md §16 (`place distract`)."""

FORMAT: Final[str] = get_args(Format)[0]
GLOBAL_SCOPE = "global"
VALUE_TYPES: tuple[str, ...] = get_args(ValueType)
CARDINALITIES: tuple[str, ...] = get_args(Cardinality)
OPS: tuple[str, ...] = get_args(Op)
FACT_OPS: tuple[str, ...] = OPS[:4]
"""The lifecycle ops of docs/method.md §1: they act on a slot's values (S*)."""
SHARE_OPS: tuple[str, ...] = ("share", "unshare")
"""Governance ops on a slot's visibility (docs/method.md §11): issued by the slot's owner."""
EPOCH_OPS: tuple[str, ...] = ("grant", "revoke")
"""Governance ops on a permission (docs/method.md §11): issued by the permission's owner."""
EXPECTATIONS: tuple[str, ...] = get_args(Expectation)
REASONS: tuple[str, ...] = get_args(Reason)
ROLES: tuple[str, ...] = get_args(Role)
FAMILIES: tuple[str, ...] = get_args(Family)
DISTRACTOR_KINDS: tuple[str, ...] = get_args(DistractorKind)


class Fact(NamedTuple):
    """A fact as state correctness compares it: (entity, predicate, value, scope)."""

    entity: str
    predicate: str
    value: str
    scope: str


class Slot(NamedTuple):
    """A slot holds the active value(s) of one predicate for one entity in one scope."""

    entity: str
    predicate: str
    scope: str


@dataclass(frozen=True)
class Entity:
    id: str
    name: str
    aliases: tuple[str, ...] = ()

    @property
    def surface_forms(self) -> tuple[str, ...]:
        """Every string that names this entity in text (name first)."""
        return (self.name, *[a for a in self.aliases if a != self.name])


@dataclass(frozen=True)
class Scope:
    id: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Predicate:
    id: str
    type: ValueType
    cardinality: Cardinality
    keywords: tuple[str, ...]
    values: dict[str, tuple[str, ...]]
    """Closed value domain: canonical value -> extra aliases."""
    default_scope: str | None = None
    template: str | None = None
    consequential: bool = False
    """Acting on a wrong value of it does harm (docs/method.md §12, §13)."""
    core: bool = False
    """A core predicate (docs/method.md §13)."""


@dataclass(frozen=True)
class Permission:
    """A right to act (docs/method.md §11), held by its owner and by whoever the owner grants it."""

    id: str
    owner: str


@dataclass(frozen=True)
class Schema:
    entities: dict[str, Entity]
    scopes: dict[str, Scope]
    """Declared scopes; `global` is implicit and never listed here."""
    predicates: dict[str, Predicate]
    permissions: dict[str, Permission] = field(default_factory=dict)

    def has_scope(self, scope: str) -> bool:
        return scope == GLOBAL_SCOPE or scope in self.scopes


@dataclass(frozen=True)
class Event:
    """A trusted user-level event: what the user wants the memory to hold, or (docs/method.md
    §11) a governance act of the turn's speaker: share/unshare a slot, grant/revoke a
    permission, roll back a task.

    `grant`, `revoke` and `rollback` name no slot: their `entity` and `predicate` are empty
    (`has_slot` is false) and their scope is `global`."""

    id: str
    """`<turn id>#<index>`, 1-based, unique across the trajectory (world b included). A
    redelivery carries its original's events, ids included (the idempotency key)."""
    op: Op
    entity: str
    predicate: str
    scope: str = GLOBAL_SCOPE
    value: str | None = None
    valid_from: dt.date | None = None
    valid_until: dt.date | None = None
    with_: str | None = None
    """`share`/`unshare`: the principal the slot is shared with (the file's key `with`)."""
    permission: str | None = None
    """`grant`/`revoke`: the permission."""
    to: str | None = None
    """`grant`/`revoke`: the principal who gets or loses it."""
    task: str | None = None
    """`rollback`: the task rolled back."""

    @property
    def slot(self) -> Slot:
        return Slot(self.entity, self.predicate, self.scope)

    @property
    def has_slot(self) -> bool:
        """Lifecycle and share ops act on a slot; grant, revoke and rollback do not."""
        return self.op in FACT_OPS or self.op in SHARE_OPS


@dataclass(frozen=True)
class Task:
    """A request to act (docs/method.md §11), decided at its run turn: its own turn, or the turn
    that runs it when it is deferred."""

    id: str
    action: str
    needs: tuple[Slot, ...]
    """The slots the action reads its arguments from, one argument list per need."""
    expect: Expectation
    """The decision the author expects; the validator recomputes it."""
    permission: str | None = None
    deferred: bool = False
    handle: str = ""
    """The recoverability handle (the file's default: `h-<id>`)."""
    reasons: tuple[Reason, ...] | None = None
    """The block reasons the author expects (None: not stated, not checked)."""
    args: tuple[tuple[str, ...], ...] | None = None
    """The arguments the author expects, one list of values per need (None: not stated)."""


@dataclass(frozen=True)
class Turn:
    id: str
    role: Role
    text: str
    source: str | None = None
    """Origin of a `tool` turn (forwarded-email, sms, ...); None for other roles."""
    events: tuple[Event, ...] = ()
    query: Query | None = None
    speaker: str | None = None
    """The principal who said (user) or forwarded (tool) the turn; None: the trajectory's
    `principal` (`Trajectory.speaker_of`)."""
    task: Task | None = None
    run: str | None = None
    """The id of the deferred task that runs at this turn."""
    redelivers: str | None = None
    """The earlier world-a user turn this turn delivers again. A redelivery carries its
    original's text, speaker, events (ids included), task and run, and nothing of its own."""
    restart: bool = False
    """Every producer restarts before this turn (nothing changes in S* or Γ*)."""


@dataclass(frozen=True)
class Query:
    id: str
    family: Family
    entity: str
    predicate: str
    scope: str
    as_of: dt.date
    """Explicit `as_of`, else the conversation's date (resolved by the loader)."""
    gold: tuple[str, ...]
    """Canonical values; empty means the correct answer is to abstain."""
    pair_insert: tuple[Turn, ...] | None = None
    """World b's inserted turns (ids `<query turn id>~b1`, ...); None when there is no pair."""


@dataclass(frozen=True)
class Conversation:
    id: str
    date: dt.date
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conflict:
    text: str
    value: str


ForgedKind = Literal["missing", "tool", "unsupported", "stale"]
FORGED_KINDS: tuple[ForgedKind, ...] = ("missing", "tool", "unsupported", "stale")
FORGED_SUFFIX = "~forged"
"""A `missing` forgery's record names `<probe id>~forged` as its source turn: no turn has it."""


@dataclass(frozen=True)
class Forged:
    """A forged-provenance probe's record (docs/method.md §12): a value of the probe's slot
    written into a copy of the store with the metadata CSS would give an active record, its
    `source_turn` the pointer. What the pointer must be depends on the kind: none (`missing`),
    a tool turn (`tool`), a user turn from which β does not read the fact (`unsupported`), a
    user turn that once asserted the fact, no longer in S* (`stale`)."""

    kind: ForgedKind
    value: str
    pointer: str | None = None

    def source_turn(self, probe_id: str) -> str:
        """The record's `source_turn`: the pointer, or for `missing` a key no turn has."""
        return self.pointer if self.pointer is not None else f"{probe_id}{FORGED_SUFFIX}"


@dataclass(frozen=True)
class Probe:
    id: str
    after: str
    family: Family
    text: str
    entity: str
    predicate: str
    scope: str
    gold: tuple[str, ...]
    conflict: Conflict | None = None
    asker: str | None = None
    """The principal who asks (None: the trajectory's `principal`)."""
    forged: Forged | None = None
    """A forged-provenance probe (docs/method.md §12); never together with `conflict`."""


@dataclass(frozen=True)
class Compaction:
    """A derived-summary point (docs/method.md §11): after this world-a turn, producers write one
    summary of the entity's facts in the scope."""

    after: str
    entity: str
    scope: str = GLOBAL_SCOPE


@dataclass(frozen=True)
class Trajectory:
    id: str
    principal: str
    schema: Schema
    conversations: tuple[Conversation, ...]
    probes: tuple[Probe, ...] = ()
    title: str | None = None
    source_path: str = "<memory>"
    sha256: str = ""
    """sha256 of the file's bytes (empty when built in memory)."""
    principals: tuple[str, ...] = ()
    """The workspace's principals as declared (empty: `principal` alone; `all_principals`)."""
    compactions: tuple[Compaction, ...] = ()
    distractors: dict[str, DistractorKind] = field(default_factory=dict)
    """Turn id -> distractor kind of every turn written with a `distractor` key (docs/method.md
    §16). Kept on the trajectory, not on `Turn`, because producers receive turns and
    conversations but never the trajectory: a producer cannot see which turns are
    distractors, only the evaluator's endpoints can."""
    _turn_index: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        index = {
            turn.id: (ci, ti)
            for ci, conv in enumerate(self.conversations)
            for ti, turn in enumerate(conv.turns)
        }
        object.__setattr__(self, "_turn_index", index)

    def turns(self) -> list[tuple[Conversation, Turn]]:
        """World a's turns in order, each with its conversation."""
        return [(conv, turn) for conv in self.conversations for turn in conv.turns]

    def queries(self) -> list[tuple[Conversation, Turn, Query]]:
        return [(c, t, t.query) for c, t in self.turns() if t.query is not None]

    def conversation_of(self, turn_id: str) -> Conversation:
        ci, _ = self._turn_index[turn_id]
        return self.conversations[ci]

    def has_turn(self, turn_id: str) -> bool:
        return turn_id in self._turn_index

    def position(self, turn_id: str) -> tuple[int, int]:
        """(conversation index, turn index) of a world-a turn."""
        return self._turn_index[turn_id]

    def turn(self, turn_id: str) -> Turn:
        ci, ti = self._turn_index[turn_id]
        return self.conversations[ci].turns[ti]

    # -- docs/method.md §11 ------------------------------------------------------------------

    def all_principals(self) -> tuple[str, ...]:
        """The declared principals, or `(principal,)` when the file declares none."""
        return self.principals or (self.principal,)

    def speaker_of(self, turn: Turn) -> str:
        return turn.speaker or self.principal

    def asker_of(self, probe: Probe) -> str:
        return probe.asker or self.principal

    def tasks(self) -> list[tuple[Conversation, Turn, Task]]:
        """Every task at the turn that requests it (redeliveries left out)."""
        return [
            (c, t, t.task) for c, t in self.turns() if t.task is not None and t.redelivers is None
        ]

    def task(self, task_id: str) -> Task:
        return next(task for _c, _t, task in self.tasks() if task.id == task_id)

    @property
    def governed(self) -> bool:
        """Whether the trajectory uses any construct of docs/method.md §11 (principals, speakers,
        permissions, tasks, shares, redeliveries, restarts, compactions, askers, predicate
        flags). Without one, its reference is exactly that of docs/method.md §1."""
        schema = self.schema
        if self.principals or self.compactions or schema.permissions:
            return True
        if any(p.consequential or p.core for p in schema.predicates.values()):
            return True
        if any(p.asker is not None for p in self.probes):
            return True
        return any(
            t.speaker is not None
            or t.task is not None
            or t.run is not None
            or t.redelivers is not None
            or t.restart
            or any(e.op not in FACT_OPS for e in t.events)
            for _c, t in self.turns()
        )
