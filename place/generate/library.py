"""The generator's domain library: life domains, predicates, value pools, people and places.

The library itself is data, `place/data/generator/library.yaml` (its header explains the
placeholders, scope kinds, pools and the rules tests/unit/test_generate.py checks). This
module states what that file may hold (the models below), loads it once, and derives what
is not worth writing down: the aliases of times ("quarter past seven"), numbers ("twelve")
and dates ("14th March").
"""

from __future__ import annotations

import datetime as dt
import re
import typing
from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    model_validator,
)

from place.generate.datafile import Check, DataModel, Placeholders, load
from place.trajectory.model import Cardinality, ValueType

ScopeKind = Literal["global", "trip", "work", "home", "place"]
Gender = Literal["f", "m"]
Relation = Literal["partner", "sibling", "parent", "friend", "colleague"]
"""The relations the builder draws for the people besides the principal."""

NAMED_SCOPES: tuple[ScopeKind, ...] = ("trip", "place")
"""Scope kinds whose clauses name the scope ({where}) and whose template names it ({scope})."""

_CLOCK = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")

Text = Annotated[str, StringConstraints(min_length=1), AfterValidator(Placeholders())]
"""Plain text: no placeholders."""
RecordTemplate = Annotated[
    str,
    AfterValidator(Placeholders(("entity_name", "value", "scope"), needs=("entity_name", "value"))),
]
Noun = Annotated[str, StringConstraints(min_length=1), AfterValidator(Placeholders(("where",)))]
Clause = Annotated[
    str, AfterValidator(Placeholders(("poss", "where", "value"), needs=("poss", "value")))
]
Question = Annotated[str, AfterValidator(Placeholders(("poss", "where"), needs=("poss",)))]
Subject = Annotated[str, AfterValidator(Placeholders(("poss", "where"), needs=("poss",)))]
Complement = Annotated[str, AfterValidator(Placeholders(("value",), needs=("value",)))]
MoneyForm = Annotated[str, AfterValidator(Placeholders(("a", "c"), needs=(("a", "c"),)))]
Currency = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")]


class DateSpec(DataModel):
    """How a date predicate's closed domain is drawn for one trajectory."""

    lo: StrictInt = 10
    """Earliest date, in days after the first conversation (negative: before it)."""
    hi: StrictInt = 60
    """Latest date, in days after the last conversation."""
    far: StrictBool = False
    """Draw dates 1-10 years after the first conversation instead (a passport expiry); `lo`
    and `hi` are then unused, and the year is part of every written form."""


class PredicateSpec(DataModel):
    """One predicate of the library: everything needed to put it in a schema and to write,
    change, remove and ask about its facts."""

    id: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
    """The predicate's id in generated schemas (lower-case, digits, underscores)."""
    domain: str
    """The life domain it belongs to (one of `domains`)."""
    type: ValueType
    """Value type: time, date, number, money or enum."""
    cardinality: Cardinality
    """`one` value per slot, or `many` (a set that grows and shrinks)."""
    scope: ScopeKind
    """Where its facts live: `global`; `trip` (one of the trajectory's trips); `work` or
    `home` (the predicate's default scope, never written); `place` (work or home, always
    written)."""
    keywords: tuple[Text, ...] = Field(min_length=1)
    """Words β needs to attribute a sentence to this predicate; none may occur in another
    predicate's clauses."""
    template: RecordTemplate
    """The certifier's record sentence: {entity_name}, {value} and, for `trip` and `place`
    predicates, {scope}."""
    noun: Noun
    """What the slot is called after a possessive: "flight to {where}", "GP", "diet"."""
    says: tuple[Clause, ...] = Field(min_length=2)
    """Clauses stating a value, the value last or followed only by a plain complement:
    "{poss} flight to {where} leaves at {value}"."""
    asks: tuple[Question, ...] = Field(min_length=2)
    """Questions about the slot, lower-case first letter."""
    pool: tuple[StrictInt | str, ...] | dict[Text, tuple[Text, ...]] = ()
    """Candidate values: quoted 24-hour times ("07:15") for `time`, whole numbers for
    `number`, whole amounts for `money` (the currency is the trajectory's), canonical value
    -> listed aliases for `enum`; empty for `date` (see `dates`). At least five."""
    dates: DateSpec | None = None
    """`date` predicates only: how the dates of a trajectory are drawn."""
    subject: Subject = ""
    """Cardinality one: the copular subject, "{poss} flight to {where}"."""
    complement: Complement = ""
    """Cardinality one: the copular complement, "at {value}" ("{subject} is {complement}")."""
    drops: tuple[Clause, ...] = ()
    """Cardinality many: clauses removing one value, the value right after a cue such as "no
    longer", "not" or "cancelled"."""
    windows: StrictBool = True
    """Whether facts may carry validity windows (scheduled and temporary values). Date
    predicates never do ("from 2 March the deadline is 9 March" reads ambiguously), so for
    them it defaults to false."""

    @model_validator(mode="before")
    @classmethod
    def _dates_take_no_windows(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("type") == "date" and "windows" not in data:
            return {**data, "windows": False}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> PredicateSpec:
        problems = list(self._problems())
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _problems(self) -> Iterator[str]:
        kind = self.type
        if kind == "date":
            if self.dates is None:
                yield "a date predicate needs `dates` (how its dates are drawn), not a pool"
            if self.pool:
                yield "a date predicate has no `pool`; its dates are drawn (`dates`)"
            if self.windows:
                yield "a date predicate takes no validity windows; remove `windows: true`"
        else:
            if self.dates is not None:
                yield f"`dates` is for date predicates only; this one is {kind}"
            yield from self._pool_problems()
        if self.cardinality == "one":
            if not (self.subject and self.complement):
                yield "cardinality one needs `subject` and `complement` (for retractions)"
            if self.drops:
                yield "`drops` is for cardinality many only"
        else:
            if not self.drops:
                yield "cardinality many needs `drops` (clauses removing one value)"
            if self.subject or self.complement:
                yield "`subject` and `complement` are for cardinality one only"
        named = self.scope in NAMED_SCOPES
        parts = {"noun": [self.noun], "says": self.says, "asks": self.asks, "drops": self.drops}
        if self.subject:
            parts["subject"] = [self.subject]
        for key, texts in parts.items():
            for text in texts:
                if ("{where}" in text) != named:
                    yield (
                        f"{key} {text!r}: {{where}} is written by trip and place predicates "
                        f"in every clause and by no other kind (this one is {self.scope})"
                    )
        if ("{scope}" in self.template) != named:
            yield "the template names {scope} exactly when the predicate is trip or place"

    def _pool_problems(self) -> Iterator[str]:
        pool, kind = self.pool, self.type
        if len(pool) < 5:
            yield f"the pool needs at least five values; it has {len(pool)}"
        if kind == "enum":
            if not isinstance(pool, dict):
                yield "an enum pool maps each canonical value to its listed aliases ([] for none)"
                return
            forms = [f.casefold() for value, aliases in pool.items() for f in (value, *aliases)]
            repeated = sorted(f for f, n in Counter(forms).items() if n > 1)
            if repeated:
                yield f"values and aliases must differ (ignoring case); repeated: {repeated}"
        elif isinstance(pool, dict):
            yield f"a {kind} pool is a list of values; only enum pools list aliases"
        elif kind == "time":
            bad = [v for v in pool if not (isinstance(v, str) and _CLOCK.fullmatch(v))]
            if bad:
                yield (
                    f'a time pool lists quoted 24-hour times such as "07:15"; got {bad[0]!r} '
                    "(unquoted, YAML reads 07:15 as a base-60 number)"
                )
        else:
            bad = [v for v in pool if not (isinstance(v, int) and v >= 0)]
            if bad:
                yield f"a {kind} pool lists whole non-negative numbers; got {bad[0]!r}"
        if len(set(pool)) != len(pool):
            yield "the pool lists a value twice"

    @property
    def entries(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The pool as (value as written, listed aliases); money amounts without currency."""
        if isinstance(self.pool, dict):
            return tuple(self.pool.items())
        return tuple((str(v), ()) for v in self.pool)

    def clauses(self) -> tuple[str, ...]:
        """Every clause stating a value (the copular one included for cardinality one)."""
        if self.cardinality == "one" and self.subject:
            return (*self.says, f"{self.subject} is {self.complement}")
        return self.says


class RelationAliases(DataModel):
    """How a person of one relation is called, by gender; absent: only ever named."""

    f: Text | None = None
    """The alias of a woman ("my sister")."""
    m: Text | None = None
    """The alias of a man ("my brother")."""


class Library(DataModel):
    """library.yaml."""

    domains: tuple[Text, ...] = Field(min_length=1)
    """The life domains, each with at least one predicate."""
    predicates: tuple[PredicateSpec, ...] = Field(min_length=1)
    """Every predicate a schema can draw, grouped by domain."""
    people: dict[Annotated[str, StringConstraints(pattern=r"^[A-Z][a-z]+$")], Gender] = Field(
        min_length=2
    )
    """First name -> gender (`f` or `m`; it only picks the relation word). The principal and
    the others are drawn from these."""
    relations: dict[Relation, RelationAliases]
    """Relation -> its aliases by gender."""
    cities: tuple[Text, ...] = Field(min_length=3)
    """Trip destinations: scope `trip-<city>`, alias the city's name."""
    work_aliases: tuple[Text, ...] = Field(min_length=1)
    """Aliases of the `work` scope; the first is what `place` predicates write."""
    home_aliases: tuple[Text, ...] = Field(min_length=1)
    """Aliases of the `home` scope; the first is what `place` predicates write."""
    currencies: dict[Currency, Annotated[tuple[MoneyForm, ...], Field(min_length=1)]] = Field(
        min_length=1
    )
    """ISO code -> written forms of an amount ({a}: digits, {c}: digits with thousands
    separators), each a form `place.lexicon.surface.money_forms` recognises."""


def check_library(library: Library) -> Iterator[Check]:
    ids = Counter(p.id for p in library.predicates)
    for i, p in enumerate(library.predicates):
        if ids[p.id] > 1:
            yield ("predicates", i, "id"), f"predicate id {p.id!r} is used twice"
        if p.domain not in library.domains:
            allowed = ", ".join(library.domains)
            yield ("predicates", i, "domain"), f"{p.domain!r} is not a domain; allowed: {allowed}"
    used = {p.domain for p in library.predicates}
    for i, domain in enumerate(library.domains):
        if domain not in used:
            yield ("domains", i), f"domain {domain!r} has no predicate"
    missing = [r for r in typing.get_args(Relation) if r not in library.relations]
    if missing:
        yield ("relations",), f"every relation needs an entry (`{{}}` for none); missing: {missing}"
    for key in ("cities", "domains"):
        items: tuple[str, ...] = getattr(library, key)
        for i, item in enumerate(items):
            if item in items[:i]:
                yield (key, i), f"{item!r} is listed twice"


LIBRARY: Library = load("library.yaml", Library, check_library)

DOMAINS: tuple[str, ...] = LIBRARY.domains
PREDICATES: tuple[PredicateSpec, ...] = LIBRARY.predicates
PEOPLE: tuple[tuple[str, str], ...] = tuple(LIBRARY.people.items())
"""(name, gender) pairs."""
RELATIONS: dict[str, dict[str, str | None]] = {
    relation: {"f": aliases.f, "m": aliases.m} for relation, aliases in LIBRARY.relations.items()
}
CITIES: tuple[str, ...] = LIBRARY.cities
WORK_ALIASES: tuple[str, ...] = LIBRARY.work_aliases
HOME_ALIASES: tuple[str, ...] = LIBRARY.home_aliases
CURRENCIES: tuple[str, ...] = tuple(LIBRARY.currencies)
MONEY_FORMS: dict[str, tuple[str, ...]] = dict(LIBRARY.currencies)

# ---------------------------------------------------------------- derived aliases

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
MONTHS: tuple[str, ...] = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def number_words(n: int) -> str | None:
    """English words for 0-99 and whole thousands up to 99 000 ("twenty-seven",
    "ten thousand"); None otherwise."""
    if 0 <= n < 20:
        return _ONES[n]
    if 20 <= n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n % 1000 == 0 and 0 < n < 100_000:
        return f"{number_words(n // 1000)} thousand"
    return None


def clock_phrase(canonical: str) -> str | None:
    """A spoken clock time: "quarter past seven", "twenty to ten", "half past six in the
    evening"; None for minutes that are not a multiple of five."""
    hour, minute = (int(p) for p in canonical.split(":"))
    if minute % 5:
        return None

    def h12(h: int) -> str:
        return _ONES[h % 12 or 12]

    if minute == 0:
        phrase = f"{h12(hour)} o'clock"
    elif minute == 15:
        phrase = f"quarter past {h12(hour)}"
    elif minute == 30:
        phrase = f"half past {h12(hour)}"
    elif minute == 45:
        phrase = f"quarter to {h12(hour + 1)}"
    elif minute < 30:
        phrase = f"{number_words(minute)} past {h12(hour)}"
    else:
        phrase = f"{number_words(60 - minute)} to {h12(hour + 1)}"
    if 12 <= hour < 18:
        phrase += " in the afternoon"
    elif hour >= 18:
        phrase += " in the evening"
    return phrase


def ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def date_aliases(day: dt.date, with_year: bool) -> list[str]:
    """Ordinal spellings a person or a model writes: "14th March", "March 14th",
    "14th of March" (plus the year when the date is far away)."""
    month = MONTHS[day.month - 1]
    forms = [f"{ordinal(day.day)} {month}", f"{month} {ordinal(day.day)}"]
    if with_year:
        forms += [f"{day.day} {month} {day.year}", f"{month} {day.day}, {day.year}"]
    else:
        forms.append(f"{ordinal(day.day)} of {month}")
    return forms


def value_aliases(spec: PredicateSpec, canonical: str, listed: tuple[str, ...] = ()) -> list[str]:
    """The schema aliases of one canonical value: derived for times and numbers, the listed
    ones otherwise."""
    if spec.type == "time":
        phrase = clock_phrase(canonical)
        return [phrase] if phrase else []
    if spec.type == "number":
        words = number_words(int(canonical))
        return [words] if words else []
    return list(listed)
