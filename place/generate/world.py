"""The world of one trajectory and its bookkeeping: who and where (people, trips, work and
home), when (the conversation dates), the schema's predicates with their closed value
domains, and which slots (entity, predicate, scope) the episodes have taken.

Everything is drawn from `random.Random(f"{seed}:{design}")` in a fixed order; the later
stages (turns, episodes, assembly) draw from the same generator, so the order of every draw
is part of what a seed produces.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from collections import Counter
from collections.abc import Callable

from place.errors import PlaceError
from place.generate.design import design_named, fail
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
from place.lexicon.surface import LEFT, RIGHT, literal, value_pattern
from place.trajectory.model import (
    GLOBAL_SCOPE,
    VALUE_TYPES,
    Entity,
    Predicate,
    Schema,
    Scope,
)


def _has_type(p: PredicateSpec, vtype: str) -> bool:
    return p.type == vtype


class World:
    """The drawn world of one (seed, design) and the slots taken so far."""

    def __init__(self, seed: int, design: str) -> None:
        self.seed = seed
        self.design_name = design
        self.d = design_named(design)
        self.rng = random.Random(f"{seed}:{design}")
        self.used_slots: set[tuple[str, str, str]] = set()
        self.uses: Counter[str] = Counter()
        self._world()
        self._mention = mention_pattern(self.schema)

    def fail(self, message: str) -> PlaceError:
        return fail(self.seed, self.design_name, message)

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
        entries = spec.entries
        picked = rng.sample(range(len(entries)), min(size, len(entries)))
        for i in sorted(picked):
            canonical, listed = entries[i]
            if spec.type == "money":
                canonical = f"{canonical} {self.currency}"
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
            return WORK_ALIASES[0] if scope == "work" else HOME_ALIASES[0]
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

    def clean(self, text: str) -> bool:
        """Whether a chatter text mentions nothing of the schema (no keyword, no written form
        of any value, no person, no place): β reads nothing from it."""
        return self._mention.search(text) is None


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
