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
Op = Literal["assert", "correct", "retract", "forget"]
Role = Literal["user", "assistant", "tool"]
Family = Literal["supersession", "correction", "deletion", "scope", "temporal", "provenance"]

FORMAT: Final[str] = get_args(Format)[0]
GLOBAL_SCOPE = "global"
VALUE_TYPES: tuple[str, ...] = get_args(ValueType)
CARDINALITIES: tuple[str, ...] = get_args(Cardinality)
OPS: tuple[str, ...] = get_args(Op)
ROLES: tuple[str, ...] = get_args(Role)
FAMILIES: tuple[str, ...] = get_args(Family)


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


@dataclass(frozen=True)
class Schema:
    entities: dict[str, Entity]
    scopes: dict[str, Scope]
    """Declared scopes; `global` is implicit and never listed here."""
    predicates: dict[str, Predicate]

    def has_scope(self, scope: str) -> bool:
        return scope == GLOBAL_SCOPE or scope in self.scopes


@dataclass(frozen=True)
class Event:
    """A trusted user-level event: what the user wants the memory to hold."""

    id: str
    """`<turn id>#<index>`, 1-based, unique across the trajectory (world b included)."""
    op: Op
    entity: str
    predicate: str
    scope: str = GLOBAL_SCOPE
    value: str | None = None
    valid_from: dt.date | None = None
    valid_until: dt.date | None = None

    @property
    def slot(self) -> Slot:
        return Slot(self.entity, self.predicate, self.scope)


@dataclass(frozen=True)
class Turn:
    id: str
    role: Role
    text: str
    source: str | None = None
    """Origin of a `tool` turn (forwarded-email, sms, ...); None for other roles."""
    events: tuple[Event, ...] = ()
    query: Query | None = None


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
