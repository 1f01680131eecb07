"""Property tests for β over text: it never invents a value, and it is deterministic.

Texts are assembled from random fragments: value surfaces (plain and tricky), keywords,
entity names, scope aliases, cue words, noise words, number-like junk and punctuation,
glued with random separators (including none, so "9:40" can become "19:40" or "9:40pm").
The oracle is deliberately independent of `place.lexicon.surface`: it only knows, per
canonical value, substrings that every written form of that value must contain.
"""

from __future__ import annotations

import re

from builders import schema_from_yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from place.lexicon import Lexicon
from place.trajectory.model import GLOBAL_SCOPE

SCHEMA, PRINCIPAL = schema_from_yaml()
LEX = Lexicon(SCHEMA, PRINCIPAL)

# Per canonical value: groups of substrings; every group must have a member in the
# (lower-cased, whitespace-collapsed) text for the value to be written there at all.
ORACLE: dict[str, list[tuple[str, ...]]] = {
    "07:15": [("7:15", "7.15")],
    "09:40": [("9:40", "9.40", "twenty to ten")],
    "21:40": [("21:40", "21.40", "9:40", "9.40")],
    "19:40": [("19:40", "19.40", "7:40", "7.40")],
    "06:05": [("6:05", "6.05")],
    "07:00": [("7:00", "7.00", "7 a", "7a", "7 o")],
    "19:00": [("19:00", "19.00", "7:00", "7.00", "7 p", "7p")],
    "12:00": [("12:00", "12.00", "noon", "midday", "12 p", "12p")],
    "00:00": [("0:00", "0.00", "12:00", "12.00", "midnight", "12 a", "12a")],
    "2026-03-14": [("14",), ("-03-", "mar")],
    "2026-03-04": [("4",), ("-03-", "mar")],
    "2026-04-14": [("14",), ("-04-", "apr")],
    "3": [("3",)],
    "13": [("13",)],
    "300": [("300",)],
    "2.5": [("2.5",)],
    "1200 EUR": [("1200", "1,200"), ("€", "eur")],
    "200 EUR": [("200",), ("€", "eur")],
    "300 USD": [("300",), ("$", "usd", "dollar")],
    "1200.50 GBP": [("1200.5", "1,200.5"), ("£", "gbp", "pound")],
    "Hotel Avenida": [("avenida",)],
    "Hotel Lumen": [("lumen",)],
    "Lumen Spa": [("lumen spa",)],
    "Marriott": [("marriott",)],
    "Pensão Amor": [("pensão amor", "pensao amor")],
    "vegetarian": [("vegetarian",)],
    "vegan": [("vegan",)],
    "nut allergy": [("nut allergy", "allergic to nuts", "nut-free")],
    "Porto": [("porto",)],
    "Lisbon": [("lisbon",)],
}

VALUE_FRAGMENTS_BY_PREDICATE: dict[str, list[str]] = {
    "flight_departure": [
        "7:15",
        "07:15",
        "7.15",
        "9:40",
        "9.40",
        "09:40",
        "9:40 am",
        "9:40pm",
        "9.40 p.m.",
        "21:40",
        "19:40",
        "twenty to ten",
        "6:05",
        "7 am",
        "7pm",
        "7 o'clock",
        "noon",
        "midnight",
        "12 am",
    ],
    "checkin": [
        "2026-03-14",
        "14 March",
        "14th of March",
        "March 14, 2026",
        "March 14, 2027",
        "Mar. 4",
        "April 14",
    ],
    "party_size": ["3", "13", "300", "2.5", "3.5"],
    "budget": [
        "€1,200",
        "1200 euros",
        "EUR 200",
        "$300",
        "300 dollars",
        "£1,200.50",
        "1,200.50 pounds",
    ],
    "hotel": [
        "Hotel Avenida",
        "Avenida",
        "Hotel Lumen",
        "Lumen Spa",
        "Marriott",
        "Pensão Amor",
        "Pensao Amor",
    ],
    "diet": ["vegetarian", "vegan", "nut allergy", "nut-free"],
    "current_city": ["Porto", "Lisbon"],
}
VALUE_FRAGMENTS = sorted({v for vs in VALUE_FRAGMENTS_BY_PREDICATE.values() for v in vs})
KEYWORD_FRAGMENTS = sorted({k for p in SCHEMA.predicates.values() for k in p.keywords})
NAME_FRAGMENTS = ["Alex", "Dana", "my sister", "I", "we", "work trips", "for work", "business"]
CUE_FRAGMENTS = [
    "instead of",
    "rather than",
    "no longer",
    "previously",
    "used to",
    "formerly",
    "originally",
    "was changed from",
    "moved my flight from",
    "to",
    "not",
    "don't",
    "anymore",
    "any more",
    "old",
    "cancelled",
    "but",
    "now",
]
NOISE_FRAGMENTS = ["the", "a", "at", "on", "and", "is", "it", "-", "pm", "am", "of", "1", "0"]
SEPARATORS = [" ", " ", " ", "", ", ", ". ", "; ", "\n", "! ", ":"]

FRAGMENT = st.one_of(
    st.sampled_from(VALUE_FRAGMENTS),
    st.sampled_from(KEYWORD_FRAGMENTS),
    st.sampled_from(NAME_FRAGMENTS),
    st.sampled_from(CUE_FRAGMENTS),
    st.sampled_from(NOISE_FRAGMENTS),
    st.text(alphabet="0123456789:.,-€$£ apmAPM", max_size=6),
)


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(FRAGMENT, max_size=12))
    # Seed most texts with a keyword and a value of one predicate so that β has something
    # to read.
    if draw(st.integers(0, 4)):
        pid = draw(st.sampled_from(sorted(SCHEMA.predicates)))
        for pool in (SCHEMA.predicates[pid].keywords, VALUE_FRAGMENTS_BY_PREDICATE[pid]):
            parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(pool)))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(parts), max_size=len(parts)))
    text = "".join(p + s for p, s in zip(parts, seps, strict=True))
    return text.upper() if draw(st.booleans()) else text


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def _written(value: str, text: str) -> bool:
    plain = _plain(text)
    return all(any(alt in plain for alt in group) for group in ORACLE[value])


def _any_in(phrases: tuple[str, ...], text: str) -> bool:
    plain = _plain(text)
    return any(_plain(p) in plain for p in phrases)


def test_oracle_covers_the_schema() -> None:
    domain = {v for p in SCHEMA.predicates.values() for v in p.values}
    assert domain == set(ORACLE)


@settings(max_examples=200, deadline=None)
@given(texts())
def test_read_never_invents_a_value(text: str) -> None:
    for fact in LEX.read(text):
        pred = SCHEMA.predicates[fact.predicate]
        assert _written(fact.value, text), (fact, text)
        assert _any_in(pred.keywords, text), (fact, text)
        entity = SCHEMA.entities[fact.entity]
        assert fact.entity == PRINCIPAL or _any_in(entity.surface_forms, text), (fact, text)
        if fact.scope not in (GLOBAL_SCOPE, pred.default_scope):
            assert _any_in(SCHEMA.scopes[fact.scope].aliases, text), (fact, text)


@settings(max_examples=200, deadline=None)
@given(texts())
def test_values_in_never_invents_a_value(text: str) -> None:
    for pid in SCHEMA.predicates:
        for value in LEX.values_in(text, pid):
            assert _written(value, text), (pid, value, text)


@settings(max_examples=200, deadline=None)
@given(texts())
def test_read_is_deterministic_and_consistent(text: str) -> None:
    first = LEX.read(text)
    assert LEX.read(text) == first
    assert Lexicon(SCHEMA, PRINCIPAL).read(text) == first  # not an artefact of the cache
    for pid in SCHEMA.predicates:
        own = LEX.read(text, pid)
        assert own == {f for f in first if f.predicate == pid}
        assert {f.value for f in own} <= LEX.values_in(text, pid)


@settings(max_examples=200, deadline=None)
@given(texts())
def test_read_ignores_case(text: str) -> None:
    assert LEX.read(text.upper()) == LEX.read(text.lower())
