"""What the generator drafts before it writes a trajectory: events, turns, queries, the
episodes that own them, probe points and the plan of each episode."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from place.generate.library import PredicateSpec
from place.trajectory.model import Fact


@dataclass
class EventDraft:
    op: str
    entity: str
    predicate: str
    scope: str
    value: str | None = None
    valid_from: dt.date | None = None
    valid_until: dt.date | None = None

    @property
    def fact(self) -> Fact:
        return Fact(self.entity, self.predicate, self.value or "", self.scope)


@dataclass(eq=False)
class QueryDraft:
    family: str
    entity: str
    predicate: str
    scope: str
    gold: tuple[str, ...]
    as_of: dt.date | None = None
    pair_kind: str = ""
    insert: list[TurnDraft] = field(default_factory=list)
    id: str = ""


@dataclass(eq=False)
class TurnDraft:
    role: str
    text: str
    source: str | None = None
    events: list[EventDraft] = field(default_factory=list)
    query: QueryDraft | None = None
    id: str = ""
    filler: bool = False


Block = list[TurnDraft]


@dataclass(eq=False)
class Point:
    """A place for a probe: the state after `anchor`, with the gold the episode implies."""

    anchor: TurnDraft
    family: str
    entity: str
    predicate: str
    scope: str
    gold: tuple[str, ...]
    conflicts: list[str]
    """Conflict values, most harmful first."""


@dataclass(eq=False)
class Episode:
    family: str
    conv: int
    spec: PredicateSpec
    entity: str
    scope: str
    query: QueryDraft
    blocks: dict[int, list[Block]]
    points: list[Point]
    olds: list[str]
    """Values that were current once and are not any more (for stale-value pairs)."""


@dataclass(eq=False)
class ProbeDraft:
    point: Point
    text: str
    conflict: tuple[str, str] | None = None
    id: str = ""


@dataclass
class Plan:
    family: str
    conv: int
    variant: str
    early: bool = False
    extra: bool = False
    wide: bool = False

    def event_turns(self) -> int:
        v, extra = self.variant, int(self.extra)
        if self.family in ("supersession", "correction"):
            return 2 + extra
        if self.family == "deletion":
            if v == "keep":
                return (2 + int(self.wide)) + 1 if self.extra else 2
            return 2 + (extra if v == "forget" else 0)
        if self.family == "scope":
            return 1 if v == "absent" else 2
        if self.family == "temporal":
            if v in ("now", "asof"):
                return 2 if (self.extra or self.early) else 1
            if v in ("temporary", "expired"):
                return 1 + extra
            return 1
        return 1 + extra  # provenance

    def shrink(self) -> bool:
        """Make the episode one event turn shorter if it can be; True when it did."""
        if self.extra:
            self.extra = False
            if self.family == "temporal" and self.variant in ("now", "asof"):
                self.early = False
            return True
        if self.family == "temporal" and self.variant in ("now", "asof") and self.early:
            self.early = False
            return True
        return False


OPENING = TurnDraft("user", "(the opening turn of the query's conversation)")
"""Placeholder anchor: the probe sits after the greeting of the query's conversation."""
