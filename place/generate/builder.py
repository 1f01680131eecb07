"""Build one `place-trajectory/1` from a seed: design counts, construction, self-check.

How a trajectory is built (docs/generator.md has the long version):

1. **World.** From `random.Random(f"{seed}:{design}")`: the principal and 2-5 other people
   (names and relations from the library), 2-3 trips (cities) plus `work` and `home`, a
   currency, the conversation dates, the predicates of the schema and the closed value
   domain of each.
2. **Episodes.** Every query belongs to one episode of its family: the events that set up
   its slot, then the query. Each episode owns its slots (entity, predicate, scope) alone,
   and a query's scope only ever admits facts of its own slot (trip, work, home and place
   predicates never hold `global` facts), so its gold follows from the episode alone: the
   builder writes the gold it intends, never one computed by the reference replay.
3. **Background.** Extra event turns on fresh slots (facts, changes, windows, many-valued
   adds and removals) bring the post-update checkpoints to the design's exact count.
4. **Dialogue.** A greeting opens each conversation; the episodes, background stories,
   chatter and spam are interleaved at random (each keeps its own order); assistant
   acknowledgements bring the turn count into the design's range.
5. **Pairs and probes.** Every query gets a causal pair of one of five kinds whose inserted
   turns cannot change its authorized support (no events; events for another person; events
   in another non-global scope; a tool turn). Probes sit on the episode's own turns with
   the gold the episode implies; a share of them carry conflicting evidence.
6. **Filler.** `--filler N` inserts N chatter turns per conversation drawn with a separate
   generator, so everything else (every count, every gold) is unchanged.
7. **Check.** The text is loaded with `place.reference.validate.load_trajectory` (structure
   plus the semantic validation of `place validate`), replayed with
   `place.reference.replay.replay` and compared with the intended golds, and checked for the
   design counts and the lexicon self-check. Any failure is a `PlaceError` naming the seed and
   the unmet constraint; only a trajectory that passes is written (atomically).
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
import random
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from place import __version__
from place.atomic import write_text
from place.errors import InputError, PlaceError
from place.generate import phrasing as ph
from place.generate.library import (
    CITIES,
    CURRENCIES,
    HOME_ALIASES,
    PEOPLE,
    PREDICATES,
    RELATIONS,
    WORK_ALIASES,
    PredicateSpec,
    date_aliases,
    value_aliases,
)
from place.lexicon import Lexicon
from place.lexicon.surface import LEFT, RIGHT, literal, value_pattern
from place.trajectory.model import (
    FAMILIES,
    FORMAT,
    GLOBAL_SCOPE,
    VALUE_TYPES,
    Entity,
    Fact,
    Predicate,
    Schema,
    Scope,
    Trajectory,
)

PAIR_KINDS: tuple[str, ...] = (
    "other-entity",
    "other-scope",
    "stale-value",
    "untrusted-tool",
    "chit-chat",
)
SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILLER = 500
_ATTEMPTS = 80


# ---------------------------------------------------------------- designs


@dataclass(frozen=True)
class Design:
    """The counts a design guarantees (checked on every generated trajectory) and the
    ranges the construction draws from."""

    name: str
    conversations: int
    turns: tuple[int, int]
    """Inclusive range of world-a turns (without filler)."""
    event_turns: int
    """Exactly this many post-update checkpoints (user turns that carry events)."""
    queries_per_family_per_conversation: int
    probes_per_family: int
    min_conflicts: int
    conflicts: tuple[int, int]
    others: tuple[int, int]
    """People besides the principal."""
    trips: tuple[int, int]
    predicates: tuple[int, int]
    """Predicates in the schema."""
    domain_size: tuple[int, int]
    """Values in each predicate's closed domain."""
    min_background: int
    """Fewest background event turns (the rest of the event turns come from episodes)."""
    chatter: tuple[int, int]
    """Distractor user turns per conversation, besides the greeting."""
    spam: tuple[int, int]
    """Tool turns without a claim, per trajectory."""
    gap_days: tuple[int, int]
    """Days between consecutive conversations."""

    @property
    def queries(self) -> int:
        return self.conversations * len(FAMILIES) * self.queries_per_family_per_conversation

    @property
    def queries_per_family(self) -> int:
        return self.conversations * self.queries_per_family_per_conversation

    @property
    def probes(self) -> int:
        return self.probes_per_family * len(FAMILIES)


DESIGNS: dict[str, Design] = {
    "paper": Design(
        name="paper",
        conversations=4,
        turns=(280, 320),
        event_turns=105,
        queries_per_family_per_conversation=2,
        probes_per_family=12,
        min_conflicts=24,
        conflicts=(36, 54),
        others=(3, 5),
        trips=(2, 3),
        predicates=(26, 32),
        domain_size=(6, 8),
        min_background=8,
        chatter=(1, 3),
        spam=(0, 2),
        gap_days=(24, 45),
    ),
    "small": Design(
        name="small",
        conversations=2,
        turns=(70, 80),
        event_turns=26,
        queries_per_family_per_conversation=1,
        probes_per_family=3,
        min_conflicts=6,
        conflicts=(9, 14),
        others=(2, 3),
        trips=(2, 2),
        predicates=(14, 18),
        domain_size=(5, 7),
        min_background=2,
        chatter=(0, 1),
        spam=(0, 0),
        gap_days=(21, 35),
    ),
}


def check_request(seed: object, design: object, filler: object) -> None:
    """Refuse a bad request before anything is built or written."""
    if design not in DESIGNS:
        raise PlaceError(
            f"--design {design!r} is not a design; allowed: {', '.join(DESIGNS)} "
            "(see docs/generator.md)"
        )
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise PlaceError(f"--seed must be a non-negative integer; got {seed!r}")
    if not isinstance(filler, int) or isinstance(filler, bool) or not 0 <= filler <= MAX_FILLER:
        raise PlaceError(
            f"--filler must be an integer from 0 to {MAX_FILLER} (turns of chatter added to "
            f"each conversation); got {filler!r}"
        )


def _has_type(p: PredicateSpec, vtype: str) -> bool:
    return p.type == vtype


def _fail(seed: int, design: str, message: str) -> PlaceError:
    return PlaceError(f"seed {seed} (design {design}): {message}")


# ---------------------------------------------------------------- drafts


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


# ---------------------------------------------------------------- the generator


@dataclass
class Generated:
    text: str
    trajectory: Trajectory
    suffix: str


class _Builder:
    def __init__(self, seed: int, design: str) -> None:
        self.seed = seed
        self.design_name = design
        self.d = DESIGNS[design]
        self.rng = random.Random(f"{seed}:{design}")
        self.used_texts: set[str] = set()
        self.used_slots: set[tuple[str, str, str]] = set()
        self.uses: Counter[str] = Counter()
        self.openings: list[TurnDraft] = []
        self._world()
        self.lexicon = Lexicon(self.schema, self.principal)
        self._mention = mention_pattern(self.schema)

    def fail(self, message: str) -> PlaceError:
        return _fail(self.seed, self.design_name, message)

    # ------------------------------------------------------------ world

    def _world(self) -> None:
        rng, d = self.rng, self.d
        people = list(PEOPLE)
        rng.shuffle(people)
        n_others = rng.randint(*d.others)
        relations = ["partner", "sibling", "parent", "friend", "colleague", "sibling", "friend"]
        rng.shuffle(relations)
        self.names: dict[str, str] = {}
        self.alias: dict[str, str | None] = {}
        used_alias: set[str] = set()
        for i, (name, gender) in enumerate(people[: n_others + 1]):
            eid = name.lower()
            self.names[eid] = name
            alias = None
            if i > 0:
                alias = RELATIONS[relations[i - 1]][gender]
                if alias in used_alias:
                    alias = None
                if alias:
                    used_alias.add(alias)
            self.alias[eid] = alias
        self.principal = people[0][0].lower()
        self.others = [e for e in self.names if e != self.principal]
        cities = rng.sample(CITIES, rng.randint(*d.trips))
        self.city = {f"trip-{c.lower()}": c for c in cities}
        self.trips = list(self.city)
        self.currency = rng.choice(CURRENCIES)
        start = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 540))
        self.dates = [start]
        for _ in range(d.conversations - 1):
            self.dates.append(self.dates[-1] + dt.timedelta(days=rng.randint(*d.gap_days)))
        self.specs = self._select_predicates()
        self.domains = {spec.id: self._domain(spec) for spec in self.specs}
        self.spec_by_id = {spec.id: spec for spec in self.specs}
        self.schema = Schema(
            entities={
                eid: Entity(eid, name, (alias,) if (alias := self.alias[eid]) else ())
                for eid, name in self.names.items()
            },
            scopes={
                **{sid: Scope(sid, (city,)) for sid, city in self.city.items()},
                "work": Scope("work", WORK_ALIASES),
                "home": Scope("home", HOME_ALIASES),
            },
            predicates={
                spec.id: Predicate(
                    id=spec.id,
                    type=spec.type,
                    cardinality=spec.cardinality,
                    keywords=spec.keywords,
                    values=self.domains[spec.id],
                    default_scope=spec.scope if spec.scope in ("work", "home") else None,
                    template=spec.template,
                )
                for spec in self.specs
            },
        )

    def _select_predicates(self) -> list[PredicateSpec]:
        rng, d = self.rng, self.d
        pool = list(PREDICATES)
        rng.shuffle(pool)
        chosen: list[PredicateSpec] = []

        def need(ok: Callable[[PredicateSpec], bool], count: int) -> None:
            have = sum(1 for p in chosen if ok(p))
            for p in pool:
                if have >= count:
                    return
                if p not in chosen and ok(p):
                    chosen.append(p)
                    have += 1

        for vtype in VALUE_TYPES:
            need(functools.partial(_has_type, vtype=vtype), 1)
        need(lambda p: p.cardinality == "many", 3 if d.name == "paper" else 2)
        need(lambda p: p.scope == "trip" and p.cardinality == "one", 3)
        need(lambda p: p.scope == "place", 1)
        need(lambda p: p.windows and p.cardinality == "one", 8 if d.name == "paper" else 5)
        need(lambda p: p.cardinality == "one", 14 if d.name == "paper" else 8)
        target = rng.randint(*d.predicates)
        for p in pool:
            if len(chosen) >= target:
                break
            if p not in chosen:
                chosen.append(p)
        order = {p.id: i for i, p in enumerate(PREDICATES)}
        return sorted(chosen, key=lambda p: order[p.id])

    def _domain(self, spec: PredicateSpec) -> dict[str, tuple[str, ...]]:
        rng = self.rng
        size = rng.randint(*self.d.domain_size)
        result: dict[str, tuple[str, ...]] = {}
        if spec.type == "date":
            assert spec.dates is not None
            days: list[dt.date] = []
            seen: set[tuple[int, int]] = set()
            while len(days) < size:
                if spec.dates.far:
                    year = self.dates[0].year + rng.randint(1, 10)
                    day = dt.date(year, rng.randint(1, 12), rng.randint(1, 28))
                else:
                    lo = self.dates[0] + dt.timedelta(days=spec.dates.lo)
                    hi = self.dates[-1] + dt.timedelta(days=spec.dates.hi)
                    day = lo + dt.timedelta(days=rng.randint(0, (hi - lo).days))
                if (day.month, day.day) in seen:
                    continue
                seen.add((day.month, day.day))
                days.append(day)
            for day in sorted(days):
                result[day.isoformat()] = tuple(date_aliases(day, with_year=spec.dates.far))
            return result
        picked = rng.sample(range(len(spec.pool)), min(size, len(spec.pool)))
        for i in sorted(picked):
            item = spec.pool[i]
            if spec.type == "money":
                canonical, listed = f"{item} {self.currency}", ()
            elif spec.type == "enum":
                canonical, listed = item[0], tuple(item[1])
            else:
                canonical, listed = item, ()
            result[canonical] = tuple(value_aliases(spec, canonical, listed))
        return result

    # ------------------------------------------------------------ slots and values

    def scope_options(self, spec: PredicateSpec) -> list[str]:
        return {
            "trip": self.trips,
            "work": ["work"],
            "home": ["home"],
            "place": ["work", "home"],
        }.get(spec.scope, [GLOBAL_SCOPE])

    def where(self, spec: PredicateSpec, scope: str) -> str:
        if spec.scope == "trip":
            return self.city[scope]
        if spec.scope == "place":
            return "at work" if scope == "work" else "at home"
        return ""

    def poss(self, entity: str, *, tool: bool = False, named: bool = False) -> str:
        if entity == self.principal and not named:
            return "your" if tool else "my"
        alias = self.alias[entity]
        if alias and not named and self.rng.random() < 0.4:
            return f"{alias}'s"
        return f"{self.names[entity]}'s"

    def free(self, entity: str, pid: str, scope: str) -> bool:
        return (entity, pid, scope) not in self.used_slots

    def take(self, entity: str, pid: str, scope: str) -> None:
        self.used_slots.add((entity, pid, scope))

    def pick_entity(self, p_principal: float = 0.8) -> str:
        return self.principal if self.rng.random() < p_principal else self.rng.choice(self.others)

    def pick_slot(
        self, spec: PredicateSpec, entity: str | None = None, p_principal: float = 0.8
    ) -> tuple[str, str]:
        e = entity or self.pick_entity(p_principal)
        candidates = [(e, s) for s in self.scope_options(spec) if self.free(e, spec.id, s)]
        if not candidates and entity is None:
            candidates = [
                (x, s)
                for x in self.people
                for s in self.scope_options(spec)
                if self.free(x, spec.id, s)
            ]
        if not candidates:
            raise self.fail(f"no free slot left for predicate {spec.id}")
        e, s = self.rng.choice(candidates)
        self.take(e, spec.id, s)
        return e, s

    @property
    def people(self) -> list[str]:
        return [self.principal, *self.others]

    def has_room(self, spec: PredicateSpec, per_scope: int = 1, per_person: int = 1) -> bool:
        """Whether some scope has `per_scope` people with a free slot of `spec`, or (with
        `per_person` > 1) some person has free slots in `per_person` scopes."""
        scopes = self.scope_options(spec)
        if per_person > 1:
            return any(
                sum(self.free(e, spec.id, s) for s in scopes) >= per_person for e in self.people
            )
        return any(sum(self.free(e, spec.id, s) for e in self.people) >= per_scope for s in scopes)

    def pick_pred(self, ok: Callable[[PredicateSpec], bool], what: str) -> PredicateSpec:
        candidates = [p for p in self.specs if ok(p) and self.has_room(p)]
        if not candidates:
            raise self.fail(f"the schema has no predicate for {what}")
        weights = [1.0 / (1 + self.uses[p.id]) ** 2 for p in candidates]
        spec = self.rng.choices(candidates, weights)[0]
        self.uses[spec.id] += 1
        return spec

    def values(self, spec: PredicateSpec, n: int, exclude: tuple[str, ...] = ()) -> list[str]:
        domain = [v for v in self.domains[spec.id] if v not in exclude]
        if len(domain) < n:
            raise self.fail(f"predicate {spec.id} has fewer than {n} values to choose from")
        return self.rng.sample(domain, n)

    def others_of(self, spec: PredicateSpec, exclude: tuple[str, ...]) -> list[str]:
        rest = [v for v in self.domains[spec.id] if v not in exclude]
        self.rng.shuffle(rest)
        return rest

    # ------------------------------------------------------------ text

    def sf(self, spec: PredicateSpec, value: str, k: int) -> str:
        aliases = self.domains[spec.id][value]
        return ph.surface(
            spec.type, value, aliases, self.rng, currency=self.currency, today=self.dates[k]
        )

    def clause(
        self, spec: PredicateSpec, entity: str, scope: str, value_text: str, *, tool=False
    ) -> str:
        template = self.rng.choice(spec.clauses())
        return template.format(
            poss=self.poss(entity, tool=tool), where=self.where(spec, scope), value=value_text
        )

    @overload
    def attempt(
        self,
        make: Callable[[], str],
        expect: set[Fact] | None,
        what: str,
        *,
        unique: bool = True,
        required: Literal[True] = True,
    ) -> str: ...

    @overload
    def attempt(
        self,
        make: Callable[[], str],
        expect: set[Fact] | None,
        what: str,
        *,
        unique: bool = True,
        required: bool,
    ) -> str | None: ...

    def attempt(
        self,
        make: Callable[[], str],
        expect: set[Fact] | None,
        what: str,
        *,
        unique: bool = True,
        required: bool = True,
    ) -> str | None:
        """A text from `make` that is new (when `unique`) and that β reads as exactly
        `expect` (None: not checked)."""
        for _ in range(_ATTEMPTS):
            text = make()
            if unique and text in self.used_texts:
                continue
            if expect is not None and self.lexicon.read(text) != expect:
                continue
            if unique:
                self.used_texts.add(text)
            return text
        if required:
            raise self.fail(f"cannot phrase {what} so that the readback reads it as intended")
        return None

    def user(self, text: str, events: list[EventDraft] | None = None) -> TurnDraft:
        return TurnDraft("user", text, events=list(events or []))

    # ------------------------------------------------------------ event turns

    def _facts(self, events: list[EventDraft]) -> set[Fact]:
        return {e.fact for e in events if e.op in ("assert", "correct")}

    def t_assert(
        self,
        k: int,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        values: list[str],
        *,
        valid_from: dt.date | None = None,
        valid_until: dt.date | None = None,
    ) -> TurnDraft:
        events = [
            EventDraft("assert", entity, spec.id, scope, v, valid_from, valid_until) for v in values
        ]

        def make() -> str:
            text = ph.join_values([self.sf(spec, v, k) for v in values])
            body = self.clause(spec, entity, scope, text)
            if valid_from is not None:
                date = ph.date_phrase(valid_from, self.dates[k], self.rng)
                return ph.fill(self.rng.choice(ph.SCHEDULED), body, date=date)
            if valid_until is not None:
                date = ph.date_phrase(valid_until, self.dates[k], self.rng)
                return ph.fill(self.rng.choice(ph.TEMPORARY), body, date=date)
            return ph.fill(self.rng.choice(ph.ASSERT), body)

        text = self.attempt(make, self._facts(events), f"an assert of {spec.id}")
        return self.user(text, events)

    def t_change(
        self, k: int, spec: PredicateSpec, entity: str, scope: str, new: str, old: str, op: str
    ) -> TurnDraft:
        """A supersession (`assert`) or a correction (`correct`) naming the old value."""
        events = [EventDraft(op, entity, spec.id, scope, new)]
        templates = ph.SUPERSEDE if op == "assert" else ph.CORRECT

        def make() -> str:
            body = self.clause(spec, entity, scope, self.sf(spec, new, k))
            return ph.fill(self.rng.choice(templates), body, old=self.sf(spec, old, k))

        text = self.attempt(make, self._facts(events), f"a change of {spec.id}")
        return self.user(text, events)

    def t_window_pair(
        self,
        k: int,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        first: str,
        second: str,
        day: dt.date,
        *,
        temporary: bool,
    ) -> TurnDraft:
        """Two events in one turn: `first` now and `second` from `day` (scheduled change), or
        `first` until `day` and `second` from `day` (temporary value and its successor)."""
        events = [
            EventDraft("assert", entity, spec.id, scope, first, None, day if temporary else None),
            EventDraft("assert", entity, spec.id, scope, second, day, None),
        ]
        templates = ph.TEMPORARY_WITH_SUCCESSOR if temporary else ph.SCHEDULED_WITH_CURRENT

        def make() -> str:
            body = self.clause(spec, entity, scope, self.sf(spec, first, k))
            return ph.fill(
                self.rng.choice(templates),
                body,
                date=ph.date_phrase(day, self.dates[k], self.rng),
                new=self.sf(spec, second, k),
            )

        text = self.attempt(make, self._facts(events), f"a dated change of {spec.id}")
        return self.user(text, events)

    def t_retract(
        self, k: int, spec: PredicateSpec, entity: str, scope: str, value: str
    ) -> TurnDraft:
        events = [EventDraft("retract", entity, spec.id, scope, value)]

        def make() -> str:
            poss, where = self.poss(entity), self.where(spec, scope)
            shown = self.sf(spec, value, k)
            if spec.cardinality == "one":
                subject = spec.subject.format(poss=poss, where=where)
                complement = spec.complement.format(value=shown)
                return self.rng.choice(ph.RETRACT_ONE).format(
                    subject=subject, Subject=ph.capitalize(subject), complement=complement
                )
            drop = self.rng.choice(spec.drops).format(poss=poss, where=where, value=shown)
            return self.rng.choice(ph.RETRACT_MANY).format(d=drop, D=ph.capitalize(drop))

        text = self.attempt(make, set(), f"a retraction of {spec.id}")
        return self.user(text, events)

    def t_forget(self, k: int, spec: PredicateSpec, entity: str, scope: str) -> TurnDraft:
        events = [EventDraft("forget", entity, spec.id, scope)]

        def make() -> str:
            noun = spec.noun.format(where=self.where(spec, scope))
            return self.rng.choice(ph.FORGET).format(poss=self.poss(entity), noun=noun)

        text = self.attempt(make, set(), f"a forget of {spec.id}")
        return self.user(text, events)

    # ------------------------------------------------------------ questions and answers

    def ask(self, spec: PredicateSpec, entity: str, scope: str) -> str:
        template = self.rng.choice(spec.asks)
        return template.format(poss=self.poss(entity), where=self.where(spec, scope))

    def t_query(
        self,
        k: int,
        family: str,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        gold: list[str],
        as_of: dt.date | None = None,
    ) -> Block:
        def make() -> str:
            q = self.ask(spec, entity, scope)
            if as_of is not None:
                date = ph.date_phrase(as_of, self.dates[k], self.rng)
                return self.rng.choice(ph.AS_OF).format(date=date, q=q)
            wrapper = self.rng.choice(ph.QUESTION["any"] + ph.QUESTION[family])
            return wrapper.format(q=q, Q=ph.capitalize(q))

        text = self.attempt(make, set(), f"a {family} question about {spec.id}")
        query = QueryDraft(family, entity, spec.id, scope, tuple(sorted(gold)), as_of)
        turn = TurnDraft("user", text, query=query)
        if gold:
            shown = ph.join_values([self.sf(spec, v, k) for v in sorted(gold)])
            answer = self.rng.choice(ph.ANSWER).format(v=shown)
        else:
            answer = self.rng.choice(ph.ABSTAIN)
        return [turn, TurnDraft("assistant", answer)]

    def t_tool(
        self, k: int, spec: PredicateSpec, entity: str, scope: str, value: str, source: str
    ) -> TurnDraft:
        claim = self.clause(spec, entity, scope, self.sf(spec, value, k), tool=True)
        text = self.rng.choice(ph.TOOL[source]).format(
            claim=claim, Claim=ph.capitalize(claim), sender=self.rng.choice(ph.SENDERS)
        )
        return TurnDraft("tool", text, source=source)

    # ------------------------------------------------------------ points

    def point(
        self,
        anchor: TurnDraft,
        family: str,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        gold: list[str],
        conflicts: list[str],
    ) -> Point:
        return Point(anchor, family, entity, spec.id, scope, tuple(sorted(gold)), list(conflicts))

    # ------------------------------------------------------------ plans

    def plans(self) -> list[Plan]:
        rng, d = self.rng, self.d
        per = d.queries_per_family_per_conversation
        slots = [(k, f) for k in range(d.conversations) for f in FAMILIES for _ in range(per)]
        plans = [Plan(f, k, "") for k, f in slots]
        by_family = {f: [p for p in plans if p.family == f] for f in FAMILIES}
        # deletion: at least one forget and one retraction
        deletions = by_family["deletion"]
        variants = ["forget", rng.choice(["keep", "all", "retract_one"])]
        while len(variants) < len(deletions):
            variants.append(rng.choices(["keep", "all", "retract_one", "forget"], [3, 2, 2, 2])[0])
        rng.shuffle(variants)
        for plan, v in zip(deletions, variants, strict=True):
            plan.variant = v
            plan.wide = v == "keep" and rng.random() < 0.5
        # scope: at most one query about a scope that holds nothing
        scopes = by_family["scope"]
        for plan in scopes:
            plan.variant = rng.choices(["other_scope", "other_entity"], [3, 2])[0]
        if rng.random() < (0.6 if d.name == "paper" else 0.3):
            rng.choice(scopes).variant = "absent"
        # temporal: at least one scheduled change and one temporary value
        temporal = by_family["temporal"]
        for plan in temporal:
            allowed = ["now", "asof", "temporary"] + (["expired", "successor"] if plan.conv else [])
            plan.variant = rng.choice(allowed)
        scheduled = {"now", "asof", "successor"}
        temporary = {"temporary", "expired", "successor"}
        if not any(p.variant in scheduled for p in temporal):
            rng.choice(temporal).variant = rng.choice(["now", "asof"])
        if not any(p.variant in temporary for p in temporal):
            n_scheduled = sum(p.variant in scheduled for p in temporal)
            candidates = [p for p in temporal if p.variant not in scheduled or n_scheduled > 1]
            rng.choice(candidates).variant = "temporary"
        for plan in plans:
            if plan.family in ("supersession", "correction", "provenance"):
                plan.variant = "simple"
            plan.extra = rng.random() < 0.35
            cross = plan.family != "scope" and plan.variant not in ("expired", "successor")
            plan.early = plan.conv > 0 and cross and rng.random() < 0.4
            if plan.family == "scope" or plan.variant in ("all", "retract_one", "successor"):
                plan.extra = False
        # shrink until the background has room
        while self.d.event_turns - sum(p.event_turns() for p in plans) < d.min_background:
            shrinkable = [p for p in plans if p.extra or (p.family == "temporal" and p.early)]
            if not shrinkable:
                raise self.fail(
                    f"the episodes need more than {d.event_turns} event turns; constraint "
                    f"'exactly {d.event_turns} post-update checkpoints' cannot be met"
                )
            rng.choice(shrinkable).shrink()
        return plans

    # ------------------------------------------------------------ episodes

    def episode(self, plan: Plan) -> Episode:
        build = {
            "supersession": self.ep_supersession,
            "correction": self.ep_correction,
            "deletion": self.ep_deletion,
            "scope": self.ep_scope,
            "temporal": self.ep_temporal,
            "provenance": self.ep_provenance,
        }[plan.family]
        return build(plan)

    def _episode(
        self,
        plan: Plan,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        setup: list[TurnDraft],
        turns: list[TurnDraft],
        query_block: Block,
        points: list[Point],
        olds: list[str],
        glue: Block | None = None,
    ) -> Episode:
        k = plan.conv
        blocks: dict[int, list[Block]] = {}
        if setup:
            blocks.setdefault(k - 1 if plan.early else k, []).extend([t] for t in setup)
        blocks.setdefault(k, []).extend([t] for t in turns)
        blocks[k].append([*(glue or []), *query_block])
        query = query_block[0].query
        assert query is not None
        return Episode(plan.family, k, spec, entity, scope, query, blocks, points, olds)

    def ep_supersession(self, plan: Plan) -> Episode:
        k, fam = plan.conv, plan.family
        k0 = k - 1 if plan.early else k
        spec = self.pick_pred(lambda p: p.cardinality == "one", "a supersession")
        e, s = self.pick_slot(spec)
        chain = self.values(spec, 3 if plan.extra else 2)
        first = self.t_assert(k0, spec, e, s, [chain[0]])
        changes = [
            self.t_change(k, spec, e, s, new, old, "assert")
            for old, new in itertools.pairwise(chain)
        ]
        gold = [chain[-1]]
        q = self.t_query(k, fam, spec, e, s, gold)
        points = [
            self.point(changes[-1], fam, spec, e, s, gold, [chain[-2], *chain[:-2]]),
            self.point(q[0], fam, spec, e, s, gold, [chain[0]]),
        ]
        if not plan.early:
            others = self.others_of(spec, (chain[0],))
            points.append(self.point(first, fam, spec, e, s, [chain[0]], others))
        return self._episode(plan, spec, e, s, [first], changes, q, points, chain[:-1])

    def ep_correction(self, plan: Plan) -> Episode:
        k, fam = plan.conv, plan.family
        k0 = k - 1 if plan.early else k
        spec = self.pick_pred(lambda p: p.cardinality == "one", "a correction")
        e, s = self.pick_slot(spec)
        vals = self.values(spec, 3 if plan.extra else 2)
        right, wrong = vals[-1], vals[-2]
        first = self.t_assert(k0, spec, e, s, [vals[0]])
        turns = []
        if plan.extra:
            turns.append(self.t_change(k, spec, e, s, wrong, vals[0], "assert"))
        fix = self.t_change(k, spec, e, s, right, wrong, "correct")
        turns.append(fix)
        q = self.t_query(k, fam, spec, e, s, [right])
        points = [
            self.point(fix, fam, spec, e, s, [right], [wrong, vals[0]]),
            self.point(q[0], fam, spec, e, s, [right], [wrong]),
        ]
        if not plan.early:
            others = self.others_of(spec, (vals[0],))
            points.append(self.point(first, fam, spec, e, s, [vals[0]], others))
        return self._episode(plan, spec, e, s, [first], turns, q, points, vals[:-1])

    def ep_deletion(self, plan: Plan) -> Episode:
        k, fam, v = plan.conv, plan.family, plan.variant
        k0 = k - 1 if plan.early else k
        if v in ("keep", "all"):
            spec = self.pick_pred(lambda p: p.cardinality == "many", "a many-valued deletion")
        elif v == "retract_one":
            spec = self.pick_pred(lambda p: p.cardinality == "one", "a retraction")
        elif plan.extra:
            spec = self.pick_pred(lambda p: p.cardinality == "one", "a forget after a change")
        else:
            spec = self.pick_pred(lambda p: True, "a forget")
        e, s = self.pick_slot(spec)
        setup: list[TurnDraft] = []
        turns: list[TurnDraft] = []
        if v == "keep":
            vals = self.values(spec, 3 if plan.wide else 2)
            if plan.extra:
                setup = [self.t_assert(k0, spec, e, s, [x]) for x in vals]
            else:
                setup = [self.t_assert(k0, spec, e, s, vals)]
            removed, gold = [vals[0]], vals[1:]
            turns.append(self.t_retract(k, spec, e, s, vals[0]))
            held = vals
        elif v in ("all", "retract_one"):
            vals = self.values(spec, 1)
            setup = [self.t_assert(k0, spec, e, s, vals)]
            removed, gold, held = vals, [], vals
            turns.append(self.t_retract(k, spec, e, s, vals[0]))
        else:  # forget
            many = spec.cardinality == "many"
            vals = self.values(spec, 2 if many or plan.extra else 1)
            if many:
                setup = [self.t_assert(k0, spec, e, s, vals)]
                held = vals
            else:
                setup = [self.t_assert(k0, spec, e, s, vals[:1])]
                held = vals[:1]
                if plan.extra:
                    turns.append(self.t_change(k, spec, e, s, vals[1], vals[0], "assert"))
            removed, gold = vals, []
            turns.append(self.t_forget(k, spec, e, s))
        removal = turns[-1]
        q = self.t_query(k, fam, spec, e, s, gold)
        points = [
            self.point(removal, fam, spec, e, s, gold, list(removed)),
            self.point(q[0], fam, spec, e, s, gold, list(removed)),
        ]
        if not plan.early:
            others = self.others_of(spec, tuple(held))
            points.append(self.point(setup[-1], fam, spec, e, s, held, others))
        return self._episode(plan, spec, e, s, setup, turns, q, points, list(removed))

    def ep_scope(self, plan: Plan) -> Episode:
        k, fam, v = plan.conv, plan.family, plan.variant
        if v in ("other_scope", "absent"):
            kinds = ("trip",) if v == "absent" else ("trip", "place")
            spec = self.pick_pred(
                lambda p: p.scope in kinds and self.has_room(p, per_person=2), "a scope question"
            )
            e = self.pick_entity()
            if sum(self.free(e, spec.id, x) for x in self.scope_options(spec)) < 2:
                e = self.rng.choice(
                    [
                        x
                        for x in self.people
                        if sum(self.free(x, spec.id, y) for y in self.scope_options(spec)) >= 2
                    ]
                )
            a, b = self.rng.sample(
                [x for x in self.scope_options(spec) if self.free(e, spec.id, x)], 2
            )
            self.take(e, spec.id, a)
            self.take(e, spec.id, b)
            if v == "absent":
                va = self.values(spec, 1)[0]
                t = self.t_assert(k, spec, e, a, [va])
                q = self.t_query(k, fam, spec, e, b, [])
                points = [
                    self.point(t, fam, spec, e, b, [], [va]),
                    self.point(q[0], fam, spec, e, b, [], [va]),
                ]
                return self._episode(plan, spec, e, b, [], [t], q, points, [])
            slots = [(e, a), (e, b)]
        else:
            spec = self.pick_pred(lambda p: self.has_room(p, per_scope=2), "a scope question")
            s = self.rng.choice(
                [
                    x
                    for x in self.scope_options(spec)
                    if sum(self.free(e, spec.id, x) for e in self.people) >= 2
                ]
            )
            e1, e2 = self.rng.sample([e for e in self.people if self.free(e, spec.id, s)], 2)
            self.take(e1, spec.id, s)
            self.take(e2, spec.id, s)
            slots = [(e1, s), (e2, s)]
        vals = self.values(spec, 2)
        turns = [
            self.t_assert(k, spec, ent, sc, [val])
            for (ent, sc), val in zip(slots, vals, strict=True)
        ]
        qi = self.rng.randrange(2)
        (qe, qs), gold, other = slots[qi], [vals[qi]], vals[1 - qi]
        q = self.t_query(k, fam, spec, qe, qs, gold)
        points = [
            self.point(turns[0], fam, spec, qe, qs, gold if qi == 0 else [], [other]),
            self.point(turns[1], fam, spec, qe, qs, gold, [other]),
            self.point(q[0], fam, spec, qe, qs, gold, [other]),
        ]
        return self._episode(plan, spec, qe, qs, [], turns, q, points, [])

    def ep_temporal(self, plan: Plan) -> Episode:
        k, fam, v = plan.conv, plan.family, plan.variant
        today = self.dates[k]
        if v in ("now", "asof"):
            separate = plan.extra or plan.early
            if separate:
                ok = lambda p: p.windows and p.type != "date"  # noqa: E731
            else:
                ok = lambda p: p.windows and p.cardinality == "one"  # noqa: E731
            spec = self.pick_pred(ok, "a scheduled change")
            e, s = self.pick_slot(spec)
            v1, v2 = self.values(spec, 2)
            day = today + dt.timedelta(days=self.rng.randint(3, 40))
            setup: list[TurnDraft] = []
            if separate:
                setup = [self.t_assert(k - 1 if plan.early else k, spec, e, s, [v1])]
                sched = self.t_assert(k, spec, e, s, [v2], valid_from=day)
            else:
                sched = self.t_window_pair(k, spec, e, s, v1, v2, day, temporary=False)
            if v == "asof":
                as_of = day + dt.timedelta(days=self.rng.randint(0, 10))
                gold = [v2] if spec.cardinality == "one" else [v1, v2]
                q = self.t_query(k, fam, spec, e, s, gold, as_of)
            else:
                q = self.t_query(k, fam, spec, e, s, [v1])
            points = [
                self.point(sched, fam, spec, e, s, [v1], [v2]),
                self.point(q[0], fam, spec, e, s, [v1], [v2]),
            ]
            if separate and not plan.early:
                others = self.others_of(spec, (v1,))
                points.append(self.point(setup[0], fam, spec, e, s, [v1], others))
            return self._episode(plan, spec, e, s, setup, [sched], q, points, [])
        spec = self.pick_pred(lambda p: p.windows and p.cardinality == "one", "a dated value")
        e, s = self.pick_slot(spec)
        if v == "temporary":
            k0 = k - 1 if plan.early else k
            vals = self.values(spec, 3)
            day = today + dt.timedelta(days=self.rng.randint(3, 40))
            setup = [self.t_assert(k0, spec, e, s, [vals[0]])] if plan.extra else []
            if self.rng.random() < 0.4:
                temp = self.t_window_pair(k, spec, e, s, vals[1], vals[2], day, temporary=True)
            else:
                temp = self.t_assert(k, spec, e, s, [vals[1]], valid_until=day)
            gold = [vals[1]]
            q = self.t_query(k, fam, spec, e, s, gold)
            points = [
                self.point(temp, fam, spec, e, s, gold, [vals[2], vals[0]]),
                self.point(q[0], fam, spec, e, s, gold, [vals[0], vals[2]]),
            ]
            if setup and not plan.early:
                others = self.others_of(spec, (vals[0],))
                points.append(self.point(setup[0], fam, spec, e, s, [vals[0]], others))
            olds = [vals[0]] if setup else []
            plan_copy = Plan(plan.family, plan.conv, v, early=plan.early and bool(setup))
            return self._episode(plan_copy, spec, e, s, setup, [temp], q, points, olds)
        # expired / successor: set up in the previous conversation, asked in this one
        before = self.dates[k - 1]
        span = (today - before).days
        day = before + dt.timedelta(days=self.rng.randint(2, span))
        vals = self.values(spec, 2)
        if v == "expired":
            setup = [self.t_assert(k - 1, spec, e, s, [vals[0]])] if plan.extra else []
            setup.append(self.t_assert(k - 1, spec, e, s, [vals[1]], valid_until=day))
            gold = []  # (a list[str], as above)
            olds = [vals[1], vals[0]] if plan.extra else [vals[1]]
            conflicts = olds
        else:
            setup = [self.t_window_pair(k - 1, spec, e, s, vals[0], vals[1], day, temporary=True)]
            gold, olds, conflicts = [vals[1]], [vals[0]], [vals[0]]
        q = self.t_query(k, fam, spec, e, s, gold)
        points = [
            self.point(OPENING, fam, spec, e, s, gold, conflicts),
            self.point(q[0], fam, spec, e, s, gold, conflicts),
        ]
        plan_copy = Plan(plan.family, plan.conv, v, early=True)
        return self._episode(plan_copy, spec, e, s, setup, [], q, points, olds)

    def ep_provenance(self, plan: Plan) -> Episode:
        k, fam = plan.conv, plan.family
        k0 = k - 1 if plan.early else k
        spec = self.pick_pred(lambda p: p.cardinality == "one", "a provenance question")
        e, s = self.pick_slot(spec)
        vals = self.values(spec, 3)
        first = self.t_assert(k0, spec, e, s, [vals[0]])
        turns = []
        trusted = vals[0]
        if plan.extra:
            turns.append(self.t_change(k, spec, e, s, vals[1], vals[0], "assert"))
            trusted = vals[1]
            claim = vals[0] if self.rng.random() < 0.5 else vals[2]
        else:
            claim = vals[1]
        source = self.rng.choice(ph.SOURCES)
        what = ph.SOURCE_NOUN[source]
        glue = [self.t_tool(k, spec, e, s, claim, source)]
        if self.rng.random() < 0.6:
            dismiss = self.attempt(
                lambda: self.rng.choice(ph.DISMISS).format(what=what),
                set(),
                "a dismissal",
                required=False,
            )
            if dismiss is not None:
                glue.append(self.user(dismiss))
        glue.append(TurnDraft("assistant", self.rng.choice(ph.TOOL_REMARK).format(what=what)))
        gold = [trusted]
        q = self.t_query(k, fam, spec, e, s, gold)
        points = [
            self.point(glue[0], fam, spec, e, s, gold, [claim]),
            self.point(q[0], fam, spec, e, s, gold, [claim]),
        ]
        last = turns[-1] if turns else (first if not plan.early else None)
        if last is not None:
            points.append(self.point(last, fam, spec, e, s, gold, [vals[0], claim]))
        olds = [vals[0]] if plan.extra else []
        return self._episode(plan, spec, e, s, [first], turns, q, points, olds, glue=glue)

    # ------------------------------------------------------------ background

    def background(self, k: int, length: int) -> list[Block]:
        rng = self.rng
        if length == 2:
            if rng.random() < 0.6:
                spec = self.pick_pred(lambda p: p.cardinality == "one", "a background change")
                e, s = self.pick_slot(spec, p_principal=0.5)
                v1, v2 = self.values(spec, 2)
                return [
                    [self.t_assert(k, spec, e, s, [v1])],
                    [self.t_change(k, spec, e, s, v2, v1, "assert")],
                ]
            spec = self.pick_pred(lambda p: p.cardinality == "many", "a background removal")
            e, s = self.pick_slot(spec, p_principal=0.5)
            a, b = self.values(spec, 2)
            return [[self.t_assert(k, spec, e, s, [a, b])], [self.t_retract(k, spec, e, s, a)]]
        kind = rng.choices(["fact", "many", "pair", "window"], [5, 2, 2, 2])[0]
        if kind == "pair":
            turn = self.t_two_facts(k)
            if turn is not None:
                return [[turn]]
            kind = "fact"
        if kind == "window":
            spec = self.pick_pred(lambda p: p.windows and p.cardinality == "one", "a window")
            e, s = self.pick_slot(spec, p_principal=0.5)
            value = self.values(spec, 1)
            day = self.dates[k] + dt.timedelta(days=rng.randint(3, 60))
            if rng.random() < 0.5:
                return [[self.t_assert(k, spec, e, s, value, valid_until=day)]]
            return [[self.t_assert(k, spec, e, s, value, valid_from=day)]]
        if kind == "many":
            spec = self.pick_pred(lambda p: p.cardinality == "many", "a many-valued fact")
            e, s = self.pick_slot(spec, p_principal=0.5)
            return [[self.t_assert(k, spec, e, s, self.values(spec, 2))]]
        spec = self.pick_pred(lambda p: True, "a fact")
        e, s = self.pick_slot(spec, p_principal=0.5)
        return [[self.t_assert(k, spec, e, s, self.values(spec, 1))]]

    def t_two_facts(self, k: int) -> TurnDraft | None:
        """Two facts about one person in one turn (two global predicates of different types)."""
        candidates = [p for p in self.specs if p.scope == "global"]
        if len(candidates) < 2:
            return None
        a, b = self.rng.sample(candidates, 2)
        if a.type == b.type:
            return None
        e = self.pick_entity(0.5)
        if not (self.free(e, a.id, GLOBAL_SCOPE) and self.free(e, b.id, GLOBAL_SCOPE)):
            return None
        va, vb = self.values(a, 1)[0], self.values(b, 1)[0]
        events = [
            EventDraft("assert", e, a.id, GLOBAL_SCOPE, va),
            EventDraft("assert", e, b.id, GLOBAL_SCOPE, vb),
        ]

        def make() -> str:
            first = self.clause(a, e, GLOBAL_SCOPE, self.sf(a, va, k))
            second = self.clause(b, e, GLOBAL_SCOPE, self.sf(b, vb, k))
            return ph.fill(self.rng.choice(ph.ASSERT), f"{first}, and {second}")

        text = self.attempt(make, self._facts(events), "two facts", required=False)
        if text is None:
            return None
        self.take(e, a.id, GLOBAL_SCOPE)
        self.take(e, b.id, GLOBAL_SCOPE)
        self.uses.update([a.id, b.id])
        return self.user(text, events)

    # ------------------------------------------------------------ pairs

    def pair_kinds(self, episodes: list[Episode]) -> None:
        weights = {
            "supersession": (3, 1, 4, 1, 1),
            "correction": (3, 1, 3, 1, 1),
            "deletion": (2, 1, 1, 2, 3),
            "scope": (2, 6, 0, 1, 1),
            "temporal": (2, 1, 2, 2, 2),
            "provenance": (2, 1, 1, 4, 1),
        }
        options = {}
        for ep in episodes:
            ok = [
                kind
                for kind, w in zip(PAIR_KINDS, weights[ep.family], strict=True)
                if w > 0 and self.pair_applies(ep, kind)
            ]
            options[id(ep)] = ok
            w = [weights[ep.family][PAIR_KINDS.index(kind)] for kind in ok]
            ep.query.pair_kind = self.rng.choices(ok, w)[0]
        for kind in PAIR_KINDS:
            counts = Counter(ep.query.pair_kind for ep in episodes)
            if counts[kind]:
                continue
            movable = [
                ep for ep in episodes if kind in options[id(ep)] and counts[ep.query.pair_kind] > 1
            ]
            if movable:
                self.rng.choice(movable).query.pair_kind = kind

    def pair_applies(self, ep: Episode, kind: str) -> bool:
        if kind == "other-scope":
            return ep.spec.scope in ("trip", "place")
        if kind == "stale-value":
            return bool(ep.olds)
        return True

    def pair(self, ep: Episode) -> None:
        rng, spec, kind = self.rng, ep.spec, ep.query.pair_kind
        k, e, s = ep.conv, ep.entity, ep.scope
        if kind in ("other-entity", "other-scope"):
            if kind == "other-entity":
                e2 = rng.choice([x for x in [self.principal, *self.others] if x != e])
                s2 = s
                p_event = 0.75
            else:
                e2 = e
                s2 = rng.choice([x for x in self.scope_options(spec) if x != s])
                p_event = 0.6
            value = rng.choice(list(self.domains[spec.id]))
            events = [EventDraft("assert", e2, spec.id, s2, value)]
            with_event = rng.random() < p_event

            def make() -> str:
                body = self.clause(spec, e2, s2, self.sf(spec, value, k))
                return ph.fill(rng.choice(ph.ASSERT), body)

            text = self.attempt(make, self._facts(events), f"a {kind} pair for {spec.id}")
            turn = self.user(text, events if with_event else [])
        elif kind == "stale-value":
            old = rng.choice(ep.olds)

            def make() -> str:
                noun = spec.noun.format(where=self.where(spec, s))
                return rng.choice(ph.STALE).format(
                    old=self.sf(spec, old, k), poss=self.poss(e), noun=noun
                )

            text = self.attempt(make, None, f"a stale-value pair for {spec.id}")
            turn = self.user(text)
        elif kind == "untrusted-tool":
            choices = [v for v in ep.olds if v not in ep.query.gold] or [
                v for v in self.domains[spec.id] if v not in ep.query.gold
            ]
            turn = self.t_tool(k, spec, e, s, rng.choice(choices), rng.choice(ph.SOURCES))
        else:
            lines = list(ph.CHIT_CHAT[spec.domain])
            rest = [x for d in sorted(ph.CHIT_CHAT) for x in ph.CHIT_CHAT[d] if x not in lines]
            free = [x for x in lines if x not in self.used_texts]
            free = free or [x for x in rest if x not in self.used_texts]
            if not free:
                raise self.fail("no chit-chat line left for a pair")
            text = rng.choice(free)
            self.used_texts.add(text)
            turn = self.user(text)
        ep.query.insert = [turn]

    # ------------------------------------------------------------ probes

    def probes(self, episodes: list[Episode]) -> list[ProbeDraft]:
        rng, d = self.rng, self.d
        n_conv = d.conversations
        alloc: dict[tuple[int, str], int] = {}
        for family in FAMILIES:
            base, extra = divmod(d.probes_per_family, n_conv)
            plus = set(rng.sample(range(n_conv), extra))
            for k in range(n_conv):
                alloc[(k, family)] = base + (1 if k in plus else 0)
        chosen: list[Point] = []
        for (k, family), n in alloc.items():
            points = [
                p for ep in episodes if ep.conv == k and ep.family == family for p in ep.points
            ]
            rng.shuffle(points)
            picked: list[Point] = []
            seen: set[tuple] = set()
            for p in points:
                key = (id(p.anchor), p.entity, p.predicate, p.scope)
                if key not in seen:
                    seen.add(key)
                    picked.append(p)
            if len(picked) < n:
                raise self.fail(f"too few probe points for {family} in conversation {k + 1}")
            chosen.extend(picked[:n])
        drafts = []
        for p in chosen:
            spec = self.spec_by_id[p.predicate]
            q = self.ask(spec, p.entity, p.scope)
            drafts.append(ProbeDraft(p, ph.capitalize(q)))
        n_conflicts = min(rng.randint(*d.conflicts), len(drafts))
        order = list(range(len(drafts)))
        rng.shuffle(order)
        made = 0
        for i in order:
            if made >= n_conflicts:
                break
            if self.conflict(drafts[i]):
                made += 1
        if made < d.min_conflicts:
            raise self.fail(
                f"only {made} probes could get a conflict; constraint 'at least "
                f"{d.min_conflicts} conflict probes' unmet"
            )
        return drafts

    def conflict(self, probe: ProbeDraft) -> bool:
        p = probe.point
        spec = self.spec_by_id[p.predicate]
        preferred = [v for v in p.conflicts if v not in p.gold and v in self.domains[spec.id]]
        rest = [v for v in self.others_of(spec, p.gold) if v not in preferred]
        k = self.conv_of_point(p)
        for value in [*preferred, *rest]:
            fact = Fact(p.entity, p.predicate, value, p.scope)

            def make(value: str = value) -> str:
                template = self.rng.choice(spec.clauses())
                body = template.format(
                    poss=self.poss(p.entity, named=True),
                    where=self.where(spec, p.scope),
                    value=self.sf(spec, value, k),
                )
                return ph.fill(self.rng.choice(ph.CONFLICT), body)

            text = self.attempt(make, {fact}, "a conflict", unique=False, required=False)
            if text is not None:
                probe.conflict = (text, value)
                return True
        return False

    def conv_of_point(self, p: Point) -> int:
        return int(p.anchor.id.split("-")[0][1:]) - 1 if p.anchor.id else 0

    # ------------------------------------------------------------ assembly

    def build(self) -> tuple[list[list[TurnDraft]], list[Episode], list[ProbeDraft]]:
        rng, d = self.rng, self.d
        plans = self.plans()
        episodes = [self.episode(plan) for plan in plans]
        # background: exactly the missing event turns, spread over the conversations
        ep_counts = [0] * d.conversations
        for ep in episodes:
            for k, blocks in ep.blocks.items():
                ep_counts[k] += sum(1 for b in blocks for t in b if t.events)
        missing = d.event_turns - sum(ep_counts)
        base, rem = divmod(d.event_turns, d.conversations)
        plus = set(rng.sample(range(d.conversations), rem))
        targets = [base + (1 if k in plus else 0) for k in range(d.conversations)]
        bg = [max(0, targets[k] - ep_counts[k]) for k in range(d.conversations)]
        while sum(bg) > missing:
            bg[bg.index(max(bg))] -= 1
        threads: list[list[list[Block]]] = [[] for _ in range(d.conversations)]
        for ep in episodes:
            for k, blocks in ep.blocks.items():
                threads[k].append(blocks)
        for k in range(d.conversations):
            left = bg[k]
            while left > 0:
                length = 2 if left >= 2 and rng.random() < 0.35 else 1
                threads[k].append(self.background(k, length))
                left -= length
        # chatter, spam and greetings
        chatter = ph.chatter_lines()
        rng.shuffle(chatter)
        greetings = rng.sample(ph.GREETINGS, d.conversations)
        for k in range(d.conversations):
            for _ in range(rng.randint(*d.chatter)):
                threads[k].append([[self.user(self.take_chatter(chatter))]])
        for _ in range(rng.randint(*d.spam)):
            k = rng.randrange(d.conversations)
            source = rng.choice(ph.SOURCES)
            threads[k].append([[TurnDraft("tool", rng.choice(ph.SPAM), source=source)]])
        conversations: list[list[TurnDraft]] = []
        for k in range(d.conversations):
            greeting = self.user(greetings[k])
            self.used_texts.add(greetings[k])
            self.openings.append(greeting)
            merged = _merge(rng, threads[k])
            conversations.append([greeting, *[t for block in merged for t in block]])
        self.acknowledge(conversations)
        self.assign_ids(conversations)
        self.pair_kinds(episodes)
        for ep in episodes:
            self.pair(ep)
        for ep in episodes:
            for p in ep.points:
                if p.anchor is OPENING:
                    p.anchor = self.openings[ep.conv]
        probes = self.probes(episodes)
        position = {id(t): i for i, t in enumerate(t for c in conversations for t in c)}
        probes.sort(key=lambda pr: position[id(pr.point.anchor)])
        for i, probe in enumerate(probes, 1):
            probe.id = f"p{i:02d}"
        return conversations, episodes, probes

    def acknowledge(self, conversations: list[list[TurnDraft]]) -> None:
        lo, hi = self.d.turns
        base = sum(len(c) for c in conversations)
        events = [t for c in conversations for t in c if t.events]
        low, high = max(lo, base), min(hi, base + len(events))
        if low > high:
            raise self.fail(
                f"constraint 'turns {lo}-{hi}' cannot be met: {base} turns before "
                f"acknowledgements and at most {len(events)} acknowledgements"
            )
        chosen = set(map(id, self.rng.sample(events, self.rng.randint(low, high) - base)))
        for c, conv in enumerate(conversations):
            out: list[TurnDraft] = []
            for turn in conv:
                out.append(turn)
                if id(turn) in chosen:
                    out.append(TurnDraft("assistant", self.ack_text(turn, c)))
            conversations[c] = out

    def ack_text(self, turn: TurnDraft, k: int) -> str:
        stated = [e for e in turn.events if e.op in ("assert", "correct")]
        if stated and self.rng.random() < 0.5:
            spec = self.spec_by_id[stated[0].predicate]
            value = stated[0].value or ""
            return self.rng.choice(ph.ACK_VALUE).format(v=self.sf(spec, value, k))
        return self.rng.choice(ph.ACK)

    def assign_ids(self, conversations: list[list[TurnDraft]]) -> None:
        q = 0
        for k, conv in enumerate(conversations):
            for i, turn in enumerate(conv, 1):
                turn.id = f"c{k + 1}-{i:03d}"
                if turn.query is not None:
                    q += 1
                    turn.query.id = f"q{q:02d}"

    def clean(self, text: str) -> bool:
        """Whether a chatter text mentions nothing of the schema (no keyword, no written form
        of any value, no person, no place): β reads nothing from it."""
        return self._mention.search(text) is None

    def take_chatter(self, pool: list[str]) -> str:
        """The next unused clean line of a shuffled chatter pool (consumed from the end)."""
        while pool:
            text = pool.pop()
            if text not in self.used_texts and self.clean(text):
                self.used_texts.add(text)
                return text
        raise self.fail("the chatter pool is exhausted; use a smaller --filler")

    # ------------------------------------------------------------ filler

    def filler(self, conversations: list[list[TurnDraft]], n: int, filler_rng: random.Random):
        if n == 0:
            return conversations
        pool = ph.chatter_lines()
        filler_rng.shuffle(pool)
        result = []
        for k, conv in enumerate(conversations):
            blocks: list[Block] = []
            left = n
            while left > 0:
                text = self.take_chatter(pool)
                block = [TurnDraft("user", text, filler=True)]
                if left >= 2:
                    reply = filler_rng.choice(ph.FILLER_REPLIES)
                    block.append(TurnDraft("assistant", reply, filler=True))
                blocks.append(block)
                left -= len(block)
            gaps = sorted(filler_rng.randint(1, len(conv)) for _ in blocks)
            out: list[TurnDraft] = []
            bi = 0
            for i, turn in enumerate(conv):
                while bi < len(gaps) and gaps[bi] == i:
                    out.extend(blocks[bi])
                    bi += 1
                out.append(turn)
            for block in blocks[bi:]:
                out.extend(block)
            for j, turn in enumerate((t for t in out if t.filler), 1):
                turn.id = f"c{k + 1}-f{j:03d}"
            result.append(out)
        return result

    # ------------------------------------------------------------ document

    def document(
        self,
        conversations: list[list[TurnDraft]],
        probes: list[ProbeDraft],
        filler: int,
    ) -> dict:
        ident = f"gen-{self.design_name}-s{self.seed}" + (f"-f{filler}" if filler else "")
        title = (
            f"Generated trajectory (place {__version__}, design {self.design_name}, "
            f"seed {self.seed}, filler {filler}): {self.names[self.principal]}'s "
            f"{len(conversations)} sessions"
        )
        entities = {}
        for eid, name in self.names.items():
            entry = Flow(name=name)
            if self.alias[eid]:
                entry["aliases"] = [self.alias[eid]]
            entities[eid] = entry
        scopes = {sid: Flow(aliases=list(sc.aliases)) for sid, sc in self.schema.scopes.items()}
        predicates = {}
        for spec in self.specs:
            predicate: dict[str, Any] = {
                "type": spec.type,
                "cardinality": spec.cardinality,
                "keywords": list(spec.keywords),
            }
            if spec.scope in ("work", "home"):
                predicate["default_scope"] = spec.scope
            predicate["template"] = spec.template
            predicate["values"] = {v: list(a) for v, a in self.domains[spec.id].items()}
            predicates[spec.id] = predicate
        convs = []
        for k, conv in enumerate(conversations):
            convs.append(
                {
                    "id": f"c{k + 1}",
                    "date": self.dates[k],
                    "turns": [_turn_doc(t, with_id=True) for t in conv],
                }
            )
        probe_docs = []
        for probe in probes:
            p = probe.point
            probe_doc: dict[str, Any] = {
                "id": probe.id,
                "after": p.anchor.id,
                "family": p.family,
                "text": probe.text,
                "entity": p.entity,
                "predicate": p.predicate,
                "scope": p.scope,
                "gold": list(p.gold),
            }
            if probe.conflict is not None:
                probe_doc["conflict"] = {"text": probe.conflict[0], "value": probe.conflict[1]}
            probe_docs.append(probe_doc)
        return {
            "format": FORMAT,
            "id": ident,
            "title": title,
            "principal": self.principal,
            "schema": {"entities": entities, "scopes": scopes, "predicates": predicates},
            "conversations": convs,
            "probes": probe_docs,
        }


OPENING = TurnDraft("user", "(the opening turn of the query's conversation)")
"""Placeholder anchor: the probe sits after the greeting of the query's conversation."""


class Flow(dict):
    """A mapping written in YAML flow style ({a: 1, b: 2})."""


def _turn_doc(turn: TurnDraft, *, with_id: bool) -> dict:
    doc: dict = {"id": turn.id} if with_id else {}
    doc["role"] = turn.role
    if turn.source is not None:
        doc["source"] = turn.source
    doc["text"] = turn.text
    if turn.events:
        doc["events"] = [_event_doc(e) for e in turn.events]
    if turn.query is not None:
        q = turn.query
        qdoc: dict = {
            "id": q.id,
            "family": q.family,
            "entity": q.entity,
            "predicate": q.predicate,
            "scope": q.scope,
        }
        if q.as_of is not None:
            qdoc["as_of"] = q.as_of
        qdoc["gold"] = list(q.gold)
        qdoc["#pair-kind"] = q.pair_kind
        qdoc["pair"] = {"insert": [_turn_doc(t, with_id=False) for t in q.insert]}
        doc["query"] = qdoc
    return doc


def _event_doc(e: EventDraft) -> Flow:
    doc = Flow(op=e.op, entity=e.entity, predicate=e.predicate)
    if e.value is not None:
        doc["value"] = e.value
    doc["scope"] = e.scope
    if e.valid_from is not None:
        doc["valid_from"] = e.valid_from
    if e.valid_until is not None:
        doc["valid_until"] = e.valid_until
    return doc


def mention_pattern(schema: Schema) -> re.Pattern[str]:
    """One regex finding any keyword, written value, person or place of the schema."""
    parts: list[str] = []
    for pred in schema.predicates.values():
        parts += [LEFT + literal(k) + RIGHT for k in pred.keywords]
        parts += [value_pattern(pred.type, v, a) for v, a in pred.values.items()]
    for entity in schema.entities.values():
        parts += [LEFT + literal(f) + RIGHT for f in entity.surface_forms]
    for scope in schema.scopes.values():
        parts += [LEFT + literal(a) + RIGHT for a in scope.aliases]
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


def _merge(rng: random.Random, threads: list[list[Block]]) -> list[Block]:
    """Interleave the threads at random, keeping the order inside each."""
    live = [list(t) for t in threads if t]
    out: list[Block] = []
    while live:
        i = rng.choices(range(len(live)), [len(t) for t in live])[0]
        out.append(live[i].pop(0))
        if not live[i]:
            live.pop(i)
    return out


# ---------------------------------------------------------------- emitters

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def _key(key: str) -> str:
    if _PLAIN_KEY.fullmatch(key) and key.lower() not in _YAML_WORDS:
        return key
    return json.dumps(key, ensure_ascii=False)


def _flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dt.date):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False)


def _block(value: dict, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for k, v in value.items():
        if k.startswith("#"):
            lines.append(f"{pad}# {k[1:]}: {v}")
            continue
        simple = not isinstance(v, dict | list) or (
            isinstance(v, list) and not any(isinstance(x, dict) for x in v)
        )
        if isinstance(v, Flow) or simple:
            lines.append(f"{pad}{_key(k)}: {_flow(v)}")
        elif isinstance(v, dict):
            lines.append(f"{pad}{_key(k)}:")
            _block(v, indent + 2, lines)
        else:
            lines.append(f"{pad}{_key(k)}:")
            for item in v:
                if isinstance(item, Flow):
                    lines.append(f"{pad}  - {_flow(item)}")
                    continue
                sub: list[str] = []
                _block(item, indent + 4, sub)
                sub[0] = f"{pad}  - {sub[0].lstrip()}"
                lines.extend(sub)


def to_yaml(doc: dict, header: list[str]) -> str:
    lines = [f"# {h}" if h else "#" for h in header]
    _block(doc, 0, lines)
    return "\n".join(lines) + "\n"


def to_json(doc: dict) -> str:
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not k.startswith("#")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dt.date):
            return value.isoformat()
        return value

    return json.dumps(strip(doc), indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- self-check


def self_check(traj: Trajectory) -> list[str]:
    """The lexicon self-check, strict: β on each world-a event turn reads exactly the facts
    its assert/correct events state (nothing for retract/forget turns); β reads nothing from
    other world-a user turns (questions, greetings, chatter, filler); inserted user turns with
    events read as their facts; conflict texts read as the injected fact; no user text twice."""
    lexicon = Lexicon(traj.schema, traj.principal)
    problems: list[str] = []

    def expect(turn_id: str, text: str, facts: set[Fact]) -> None:
        read = lexicon.read(text)
        if read != facts:
            problems.append(
                f"turn {turn_id}: β reads {sorted(read)} from {text!r}; expected {sorted(facts)}"
            )

    texts: list[str] = []
    for _conv, turn in traj.turns():
        if turn.role != "user":
            continue
        texts.append(turn.text)
        stated = {
            Fact(e.entity, e.predicate, e.value, e.scope)
            for e in turn.events
            if e.op in ("assert", "correct") and e.value is not None
        }
        expect(turn.id, turn.text, stated)
        if turn.query is not None:
            for inserted in turn.query.pair_insert or ():
                if inserted.role == "user":
                    texts.append(inserted.text)
                if inserted.events:
                    facts = {
                        Fact(e.entity, e.predicate, e.value, e.scope)
                        for e in inserted.events
                        if e.value is not None
                    }
                    expect(inserted.id, inserted.text, facts)
    for probe in traj.probes:
        if probe.conflict is not None:
            fact = Fact(probe.entity, probe.predicate, probe.conflict.value, probe.scope)
            if lexicon.read(probe.conflict.text) != {fact}:
                problems.append(f"probe {probe.id}: conflict text is not read as {fact}")
    dupes = sorted(t for t, n in Counter(texts).items() if n > 1)
    if dupes:
        problems.append(f"user texts used twice: {dupes[:3]}")
    return problems


# ---------------------------------------------------------------- entry points


def generate(seed: int, design: str = "paper", filler: int = 0, suffix: str = ".yaml") -> Generated:
    """Build, load, replay and check one trajectory; raise PlaceError naming the seed and the
    unmet constraint otherwise. Nothing is written."""
    check_request(seed, design, filler)
    if suffix not in SUFFIXES:
        raise PlaceError(f"the output must end in {', '.join(SUFFIXES)}; got {suffix!r}")
    builder = _Builder(seed, design)
    conversations, episodes, probes = builder.build()
    filler_rng = random.Random(f"{seed}:{design}:filler:{filler}")
    conversations = builder.filler(conversations, filler, filler_rng)
    doc = builder.document(conversations, probes, filler)
    header = [
        f"Generated by `place generate --seed {seed} --design {design} --filler {filler}` "
        f"(place {__version__}).",
        "Deterministic: the same seed, design, filler and package version give this exact file.",
        "Format: trajectories/FORMAT.md; how it is built: docs/generator.md.",
    ]
    text = to_json(doc) if suffix == ".json" else to_yaml(doc, header)
    traj = _load(text, suffix, seed, design)
    _verify(traj, builder, episodes, probes, filler, seed, design)
    return Generated(text, traj, suffix)


def write(seed: int, out: str | Path, design: str = "paper", filler: int = 0) -> Generated:
    """Generate and, only once everything checks out, write `out` atomically."""
    check_request(seed, design, filler)
    path = Path(out)
    result = generate(seed, design, filler, suffix=path.suffix.lower())
    write_text(path, result.text)
    return result


def _load(text: str, suffix: str, seed: int, design: str) -> Trajectory:
    from place.reference.validate import load_trajectory

    with tempfile.TemporaryDirectory(prefix="place-generate-") as tmp:
        path = Path(tmp) / f"generated{suffix}"
        path.write_text(text, encoding="utf-8")
        try:
            return load_trajectory(path)
        except InputError as exc:
            shown = "; ".join(p.message for p in exc.problems[:5])
            raise _fail(
                seed, design, f"the generated trajectory fails validation: {shown}"
            ) from None


def _verify(
    traj: Trajectory,
    builder: _Builder,
    episodes: list[Episode],
    probes: list[ProbeDraft],
    filler: int,
    seed: int,
    design: str,
) -> None:
    from place.reference.replay import replay

    d = DESIGNS[design]
    ref = replay(traj)

    def need(ok: bool, constraint: str, got: object) -> None:
        if not ok:
            raise _fail(seed, design, f"constraint '{constraint}' unmet (got {got})")

    # intended golds = the reference replay's authorized supports
    for ep in episodes:
        qref = ref.query(ep.query.id)
        need(
            qref.support.values == ep.query.gold,
            f"query {ep.query.id} gold equals the replayed support",
            qref.support.values,
        )
        need(
            qref.support_b == qref.support,
            f"pair of {ep.query.id} leaves the support unchanged",
            qref.support_b,
        )
    refs = {p.id: p for p in ref.probes}
    for probe in probes:
        need(
            refs[probe.id].support.values == probe.point.gold,
            f"probe {probe.id} gold equals the replayed support",
            refs[probe.id].support.values,
        )
    # design counts
    n = d.conversations
    need(len(traj.conversations) == n, f"{n} conversations", len(traj.conversations))
    lo, hi = d.turns
    base_turns = sum(1 for _c, t in traj.turns() if "-f" not in t.id)
    need(lo <= base_turns <= hi, f"{lo}-{hi} turns", base_turns)
    for conv in traj.conversations:
        fill = sum(1 for t in conv.turns if "-f" in t.id)
        need(fill == filler, f"{filler} filler turns in {conv.id}", fill)
    kinds = Counter(c.kind for c in ref.checkpoints)
    need(
        kinds["post-update"] == d.event_turns,
        f"{d.event_turns} post-update checkpoints",
        kinds["post-update"],
    )
    queries = traj.queries()
    families: Counter[str] = Counter(q.family for _c, _t, q in queries)
    need(len(queries) == d.queries, f"{d.queries} queries", len(queries))
    need(
        all(families[f] == d.queries_per_family for f in FAMILIES),
        f"{d.queries_per_family} queries per family",
        dict(families),
    )
    pairs = sum(1 for _c, _t, q in queries if q.pair_insert)
    need(pairs == d.queries, f"{d.queries} causal pairs", pairs)
    pfam: Counter[str] = Counter(p.family for p in traj.probes)
    need(len(traj.probes) == d.probes, f"{d.probes} probes", len(traj.probes))
    need(
        all(pfam[f] == d.probes_per_family for f in FAMILIES),
        f"{d.probes_per_family} probes per family",
        dict(pfam),
    )
    conflicts = sum(1 for p in traj.probes if p.conflict is not None)
    need(conflicts >= d.min_conflicts, f"at least {d.min_conflicts} conflict probes", conflicts)
    events = [(conv, e) for conv in traj.conversations for t in conv.turns for e in t.events]
    ops = {e.op for _c, e in events}
    need(ops == {"assert", "correct", "retract", "forget"}, "every event op", sorted(ops))
    need(
        any(e.valid_from is not None and e.valid_from > c.date for c, e in events),
        "a scheduled change",
        "none",
    )
    need(any(e.valid_until is not None for _c, e in events), "a temporary value", "none")
    problems = self_check(traj)
    need(not problems, "lexicon self-check", "; ".join(problems[:3]))
    for conv in traj.conversations:
        for turn in conv.turns:
            if "-f" in turn.id and turn.role == "user":
                need(builder.clean(turn.text), f"filler turn {turn.id} mentions nothing", turn.text)
