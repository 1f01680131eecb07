"""Hand-written cases for the lexicon: typed surface forms, β over text, historical cues, Ω."""

from __future__ import annotations

import re

import pytest
from builders import schema_from_yaml

from place.lexicon import (
    ABSTAIN,
    CUES,
    Cue,
    Lexicon,
    abstains,
    f1,
    gold_outcome,
    is_canonical,
    outcome,
    value_pattern,
)
from place.lexicon.outcome import ABSTENTION_PHRASES
from place.trajectory.model import Fact

SCHEMA, PRINCIPAL = schema_from_yaml()
LEX = Lexicon(SCHEMA, PRINCIPAL)

TRIP = "trip-lisbon"


def facts(*items: tuple[str, str, str, str]) -> set[Fact]:
    return {Fact(*item) for item in items}


# --- typed surface forms, read through values_in ----------------------------------------

VALUE_CASES: list[tuple[str, str, set[str]]] = [
    # times: 24 h, dotted, am/pm, whole hours, named hours, aliases
    ("flight_departure", "leaves at 9.40", {"09:40"}),
    ("flight_departure", "leaves at 9:40", {"09:40"}),
    ("flight_departure", "leaves at 09:40", {"09:40"}),
    ("flight_departure", "leaves at 9:40 am", {"09:40"}),
    ("flight_departure", "leaves at 9:40am", {"09:40"}),
    ("flight_departure", "leaves at 9:40 a.m. sharp", {"09:40"}),
    ("flight_departure", "leaves at 21:40", {"21:40"}),
    ("flight_departure", "leaves at 9:40 pm", {"21:40"}),
    ("flight_departure", "leaves at 9:40pm", {"21:40"}),
    ("flight_departure", "leaves at 9.40 p.m.", {"21:40"}),
    ("flight_departure", "leaves at 19:40", {"19:40"}),
    ("flight_departure", "leaves at twenty to ten", {"09:40"}),
    ("flight_departure", "leaves at Twenty To Ten", {"09:40"}),
    ("flight_departure", "leaves at 7 am", {"07:00"}),
    ("flight_departure", "leaves at 7am.", {"07:00"}),
    ("flight_departure", "leaves at 7 o'clock", {"07:00"}),
    ("flight_departure", "leaves at 7 pm", {"19:00"}),
    ("flight_departure", "leaves at 7:00", {"07:00"}),
    ("flight_departure", "leaves at noon", {"12:00"}),
    ("flight_departure", "leaves at midnight", {"00:00"}),
    ("flight_departure", "leaves at 17:15 or 7:155", set()),
    ("flight_departure", "gate 9:40:12 closes", set()),
    # dates
    ("checkin", "on 2026-03-14", {"2026-03-14"}),
    ("checkin", "on 14 March", {"2026-03-14"}),
    ("checkin", "on the 14th of March", {"2026-03-14"}),
    ("checkin", "on March 14th", {"2026-03-14"}),
    ("checkin", "on Mar. 14", {"2026-03-14"}),
    ("checkin", "on mar 14", {"2026-03-14"}),
    ("checkin", "on March 14, 2026", {"2026-03-14"}),
    ("checkin", "on 14 March 2026", {"2026-03-14"}),
    ("checkin", "on March 14, 2027", set()),
    ("checkin", "on 4 March", {"2026-03-04"}),
    ("checkin", "on April 14", {"2026-04-14"}),
    ("checkin", "on 2026-03-141", set()),
    # numbers: never inside another number, time, date, decimal or amount of money
    ("party_size", "13 people", {"13"}),
    ("party_size", "3 people", {"3"}),
    ("party_size", "at 3:00", set()),
    ("party_size", "on 2026-03-14", set()),
    ("party_size", "about 3.5", set()),
    ("party_size", "costs €300", set()),
    ("party_size", "3.0 people", {"3"}),
    ("party_size", "2.50 people", {"2.5"}),
    ("party_size", "300 guests", {"300"}),
    # money
    ("budget", "is €1,200", {"1200 EUR"}),
    ("budget", "is €1200", {"1200 EUR"}),
    ("budget", "is € 1200", {"1200 EUR"}),
    ("budget", "is 1200€", {"1200 EUR"}),
    ("budget", "is 1200 EUR", {"1200 EUR"}),
    ("budget", "is EUR 1200", {"1200 EUR"}),
    ("budget", "is 1,200 EUR", {"1200 EUR"}),
    ("budget", "is 1,200 euros", {"1200 EUR"}),
    ("budget", "is 1200 euro", {"1200 EUR"}),
    ("budget", "is €200", {"200 EUR"}),
    ("budget", "is $300", {"300 USD"}),
    ("budget", "is US$300", {"300 USD"}),
    ("budget", "is 300 dollars", {"300 USD"}),
    ("budget", "is £1,200.50", {"1200.50 GBP"}),
    ("budget", "is 1200.50 pounds", {"1200.50 GBP"}),
    ("budget", "is 1200", set()),
    ("budget", "is €1,200.75", set()),
    ("budget", "is A$300", set()),
    # enums: canonical, aliases, case, accents, longest match
    ("hotel", "the Pensão Amor", {"Pensão Amor"}),
    ("hotel", "the PENSAO AMOR", {"Pensão Amor"}),
    ("hotel", "the Lumen Spa", {"Lumen Spa"}),
    ("hotel", "Hotel  Lumen", {"Hotel Lumen"}),
    ("hotel", "Lumenspa and Avenidas", set()),
    ("diet", "strictly nut-free", {"nut allergy"}),
    ("diet", "I'm allergic to nuts", {"nut allergy"}),
]


@pytest.mark.parametrize(("predicate", "text", "expected"), VALUE_CASES)
def test_values_in(predicate: str, text: str, expected: set[str]) -> None:
    assert LEX.values_in(text, predicate) == expected


# --- historical cues ----------------------------------------------------------------------

CUE_CASES: list[tuple[str, str, set[str]]] = [
    ("flight_departure", "My flight was changed from 7:15 to 9:40", {"09:40"}),
    ("flight_departure", "They moved my flight from 7:15 to 9:40.", {"09:40"}),
    ("flight_departure", "Previously it was 7:15; now 9:40", {"09:40"}),
    ("flight_departure", "The flight was moved to 9:40 from 7:15", {"09:40"}),
    ("flight_departure", "The old 7:15 flight is gone, I take the 9:40", {"09:40"}),
    ("flight_departure", "Originally at 7:15. Now it leaves at 9:40", {"09:40"}),
    ("flight_departure", "The flight isn't at 7:15 anymore", set()),
    ("flight_departure", "Not sure, but I think 9:40", {"09:40"}),
    ("flight_departure", "I'm not sure if it leaves at 9:40", {"09:40"}),
    ("flight_departure", "It was 7:15 and no longer is", {"07:15"}),
    ("hotel", "I'm staying at Hotel Lumen instead of Avenida", {"Hotel Lumen"}),
    ("hotel", "Lumen rather than the Avenida", {"Hotel Lumen"}),
    ("hotel", "it's Hotel Lumen in Lisbon, not Avenida.", {"Hotel Lumen"}),
    ("hotel", "I used to stay at the Marriott", set()),
    ("hotel", "I switched from Avenida to Lumen", {"Hotel Lumen"}),
    ("hotel", "I cancelled the Avenida booking and took the Marriott", {"Marriott"}),
    ("hotel", "Formerly Hotel Avenida", set()),
    (
        "hotel",
        "The Marriott, not the Avenida but maybe Avenida again",
        {"Hotel Avenida", "Marriott"},
    ),
    ("diet", "I no longer eat vegetarian food", set()),
    ("diet", "I'm not vegetarian anymore", set()),
    ("diet", "I'm not vegetarian any more, I'm vegan", {"vegan"}),
    ("diet", "I don't have a nut allergy", set()),
    ("diet", "I'm vegetarian, not vegan", {"vegetarian"}),
    ("diet", "I eat vegan food instead of vegetarian food", {"vegan"}),
    ("checkin", "Arrival changed from 4 March to 14 March", {"2026-03-14"}),
    ("budget", "Budget went up to €1,200 instead of €200", {"1200 EUR"}),
]


@pytest.mark.parametrize(("predicate", "text", "expected"), CUE_CASES)
def test_historical_cues(predicate: str, text: str, expected: set[str]) -> None:
    assert LEX.values_in(text, predicate) == expected


CUE_EXAMPLES = {
    r"instead\s+of": "instead of",
    r"rather\s+than": "rather than",
    r"no\s+longer": "no longer",
    r"previously": "previously",
    r"used\s+to": "used to",
    r"formerly": "formerly",
    r"originally": "originally",
    "(?:changed": "was changed from",
    r"cancell?ed": "cancelled",
    r"former|old": "the old",
    "not": "not",
}


@pytest.mark.parametrize("cue", CUES, ids=lambda c: c.pattern[:20])
def test_every_cue_marks_the_value_after_it(cue: Cue) -> None:
    example = next(v for k, v in CUE_EXAMPLES.items() if cue.pattern.startswith(k))
    assert cue.reason and cue.max_gap >= 1
    assert LEX.values_in(f"the hotel is {example} Avenida", "hotel") == set()
    assert LEX.values_in(f"the hotel is Avenida, {example} something", "hotel") == {"Hotel Avenida"}


# --- β over a record: keywords, entities, scopes ----------------------------------------

READ_CASES: list[tuple[str, str | None, set[Fact]]] = [
    (
        "My flight leaves at 9.40",
        None,
        facts(("alex", "flight_departure", "09:40", TRIP)),
    ),
    (
        "My sister Dana's flight leaves at 6:05.",
        None,
        facts(("dana", "flight_departure", "06:05", TRIP)),
    ),
    (
        "Alex and Dana both take off at 7:15",
        None,
        facts(
            ("alex", "flight_departure", "07:15", TRIP), ("dana", "flight_departure", "07:15", TRIP)
        ),
    ),
    (
        "Alex and my sister are vegetarian",
        None,
        facts(("alex", "diet", "vegetarian", "global"), ("dana", "diet", "vegetarian", "global")),
    ),
    (
        "I booked Hotel Avenida for Lisbon. For work trips I always book the Marriott.",
        None,
        facts(
            ("alex", "hotel", "Hotel Avenida", TRIP),
            ("alex", "hotel", "Hotel Avenida", "work"),
            ("alex", "hotel", "Marriott", TRIP),
            ("alex", "hotel", "Marriott", "work"),
        ),
    ),
    (
        "On business I book the Marriott",
        None,
        facts(("alex", "hotel", "Marriott", "work")),
    ),
    (
        "I'm staying at the Pensão Amor",
        None,
        facts(("alex", "hotel", "Pensão Amor", "global")),
    ),
    (
        "For work my flight departs at 21:40",
        None,
        facts(("alex", "flight_departure", "21:40", "work")),
    ),
    (
        "I love the Avenida",
        None,
        set(),
    ),
    (
        "Hotel Lumen is near the 9:40 bus stop",
        None,
        facts(("alex", "hotel", "Hotel Lumen", "global")),
    ),
    (
        "My flight at 9:40 lands near Hotel Lumen",
        "hotel",
        facts(("alex", "hotel", "Hotel Lumen", "global")),
    ),
    (
        "My flight at 9:40 lands near Hotel Lumen",
        "flight_departure",
        facts(("alex", "flight_departure", "09:40", TRIP)),
    ),
    (
        "Hotel Lumen",
        "flight_departure",
        set(),
    ),
    (
        "I'm currently in Lisbon",
        None,
        facts(("alex", "current_city", "Lisbon", "global")),
    ),
    (
        "I'm currently in Porto for work",
        None,
        facts(("alex", "current_city", "Porto", "work")),
    ),
    (
        "We arrive on the 14th of March, 13 people in total, budget €1,200",
        None,
        facts(
            ("alex", "checkin", "2026-03-14", "global"),
            ("alex", "party_size", "13", "global"),
            ("alex", "budget", "1200 EUR", "global"),
        ),
    ),
    (
        "Dana's flight was changed from 7:15 to twenty to ten",
        None,
        facts(("dana", "flight_departure", "09:40", TRIP)),
    ),
    (
        "It takes off at 9:40",
        None,
        set(),  # "take off" is the keyword; "takes off" is another word
    ),
    (
        "",
        None,
        set(),
    ),
]


@pytest.mark.parametrize(("text", "predicate", "expected"), READ_CASES)
def test_read(text: str, predicate: str | None, expected: set[Fact]) -> None:
    assert LEX.read(text, predicate) == expected


def test_read_with_predicate_is_a_filter_of_full_read() -> None:
    text = "My flight at 9:40 lands near Hotel Lumen; I'm vegan. Budget €200."
    full = LEX.read(text)
    for pid in SCHEMA.predicates:
        assert LEX.read(text, pid) == {f for f in full if f.predicate == pid}


def test_read_returns_a_fresh_set() -> None:
    first = LEX.read("My flight leaves at 9.40")
    first.clear()
    assert LEX.read("My flight leaves at 9.40")


def test_matches_report_historical_occurrences() -> None:
    found = LEX.matches("changed from 7:15 to 9:40", "flight_departure")
    assert [(m.value, m.historical) for m in found] == [("07:15", True), ("09:40", False)]


def test_value_counts_when_one_occurrence_is_current() -> None:
    assert LEX.values_in("instead of Avenida. Avenida it is.", "hotel") == {"Hotel Avenida"}


# --- construction errors ------------------------------------------------------------------


def test_unknown_principal_is_rejected() -> None:
    with pytest.raises(ValueError, match="principal"):
        Lexicon(SCHEMA, "nobody")


def test_unknown_predicate_is_rejected() -> None:
    with pytest.raises(KeyError):
        LEX.values_in("x", "nope")


@pytest.mark.parametrize(
    ("value_type", "value", "ok"),
    [
        ("time", "09:40", True),
        ("time", "9:40", False),
        ("time", "24:00", False),
        ("date", "2026-03-14", True),
        ("date", "14 March", False),
        ("number", "2.5", True),
        ("number", "2,5", False),
        ("money", "1200 EUR", True),
        ("money", "€1200", False),
        ("enum", "Hotel Lumen", True),
        ("enum", " ", False),
    ],
)
def test_is_canonical(value_type: str, value: str, ok: bool) -> None:
    assert is_canonical(value_type, value) is ok


@pytest.mark.parametrize(
    ("value_type", "canonical", "text", "found"),
    [
        ("money", "20 CHF", "CHF 20", True),
        ("money", "20 CHF", "20 Swiss francs", True),
        ("money", "20 CHF", "120 francs", False),
        ("money", "500 JPY", "¥500", True),
        ("money", "500 JPY", "500 yen", True),
        ("money", "5 GBP", "£5", True),
        ("money", "5 GBP", "5 pounds", True),
        ("money", "40 USD", "40 dollars", True),
        ("money", "40 USD", "40 CAD", False),
        ("money", "70 SEK", "SEK 70", True),
        ("time", "00:30", "12:30 am", True),
        ("time", "12:30", "12:30 pm", True),
        ("time", "12:30", "12:30 am", False),
        ("time", "21:40", "9:40", False),
        ("date", "2026-09-02", "2 Sept", True),
        ("date", "2026-09-02", "Sep 2nd", True),
        ("date", "2026-09-02", "22 Sept", False),
    ],
)
def test_value_pattern(value_type: str, canonical: str, text: str, found: bool) -> None:
    pattern = re.compile(value_pattern(value_type, canonical), re.IGNORECASE)
    assert (pattern.search(text) is not None) is found


def test_non_canonical_typed_value_is_an_error() -> None:
    with pytest.raises(ValueError, match="canonical time"):
        value_pattern("time", "9:40")


# --- Ω and F1 -------------------------------------------------------------------------------

A = frozenset({ABSTAIN})
EMPTY: frozenset[str] = frozenset()

# Ω pinned (docs/method.md §4): values, real abstentions (state that the information is
# missing) and near-misses (bare negations, negated assertions about the world, "none",
# "nothing", "forgot", empty answers) in about equal numbers.
OUTCOME_CASES: list[tuple[str, str, frozenset[str]]] = [
    # values
    ("Your flight leaves at 9:40.", "flight_departure", frozenset({"09:40"})),
    ("9.40 p.m.", "flight_departure", frozenset({"21:40"})),
    ("It was changed from 7:15 to 9:40.", "flight_departure", frozenset({"09:40"})),
    ("I don't know, maybe 9:40", "flight_departure", frozenset({"09:40"})),
    ("No, it leaves at 9:40.", "flight_departure", frozenset({"09:40"})),
    (
        "Hotel Lumen in Lisbon, and the Marriott for work",
        "hotel",
        frozenset({"Hotel Lumen", "Marriott"}),
    ),
    ("You are vegetarian and allergic to nuts.", "diet", frozenset({"vegetarian", "nut allergy"})),
    # a value wins over a negated clause or an abstention next to it
    ("Nothing changed: the budget is €1,200.", "budget", frozenset({"1200 EUR"})),
    (
        "Nothing about Theo's flight is stored, but yours leaves at 9:40.",
        "flight_departure",
        frozenset({"09:40"}),
    ),
    # real abstentions
    ("You never told me which hotel.", "hotel", A),
    ("Nobody mentioned a hotel.", "hotel", A),
    ("It was never mentioned, sorry.", "hotel", A),
    ("That hasn't come up yet.", "diet", A),
    ("No check-in date was given.", "checkin", A),
    ("I'm afraid I wasn't told.", "diet", A),
    ("Not that I know of.", "diet", A),
    ("Sorry, I don't have your hotel.", "hotel", A),
    ("Unfortunately that's not something I have on file.", "hotel", A),
    ("That information isn't available to me.", "flight_departure", A),
    ("Honestly? No clue.", "flight_departure", A),
    ("You'll have to remind me.", "hotel", A),
    ("I don't think you've said which hotel.", "hotel", A),
    ("I don't know.", "flight_departure", A),
    ("I don’t know", "flight_departure", A),
    ("I do not know", "flight_departure", A),
    ("Unknown", "hotel", A),
    ("unknown.", "hotel", A),
    ("There is no record of that.", "hotel", A),
    ("I do not have any information about your diet.", "diet", A),
    ("I don't have that information.", "diet", A),
    ("I have no information about that.", "diet", A),
    ("It is not mentioned in my memory.", "diet", A),
    ("It's not mentioned anywhere.", "diet", A),
    ("That isn't stored in my memory.", "diet", A),
    ("I can't find that.", "hotel", A),
    ("I cannot find anything about it", "hotel", A),
    ("I'm not sure.", "hotel", A),
    ("Not sure.", "hotel", A),
    ("No idea.", "hotel", A),
    ("No information about that.", "hotel", A),
    ("The memory doesn't mention it.", "hotel", A),
    ("The memories do not say.", "hotel", A),
    ("I'm unable to determine that.", "hotel", A),
    ("N/A", "hotel", A),
    ("No, nothing on record for Theo.", "hotel", A),
    ("Nothing is recorded about that.", "hotel", A),
    ("I have no memory of that.", "hotel", A),
    ("That hasn't been mentioned.", "hotel", A),
    ("It is unclear from what I have.", "hotel", A),
    # statements of absence (issue #30): a negative quantifier over information with a
    # recording predicate up to 8 words later in its clause, an existential, or a holder
    ("Nothing about Theo's flight is stored.", "flight_departure", A),
    ("Nothing regarding the Porto budget has been recorded", "budget", A),
    ("No information about the door code is stored", "hotel", A),
    ("No details of the hotel were saved.", "hotel", A),
    ("Nothing's been noted about your diet.", "diet", A),
    ("Sorry, no flight details were mentioned anywhere.", "flight_departure", A),
    ("None recorded.", "diet", A),
    ("Nothing was recorded because we never talked about it.", "hotel", A),
    ("No information is available on that.", "hotel", A),
    ("There's nothing on Theo's dietary needs in my memory", "diet", A),
    ("Nothing was found in my notes about the flight.", "flight_departure", A),
    ("Nothing in my memory mentions a hotel.", "hotel", A),
    ("There's nothing about your hotel.", "hotel", A),
    ("There isn't any information on Dana's diet.", "diet", A),
    ("I have nothing stored about that", "hotel", A),
    ("No, I don't have anything on this.", "diet", A),
    ("I've got nothing on the Lisbon budget.", "budget", A),
    ("I know nothing about your check-in.", "checkin", A),
    ("My records show no hotel booking for Lisbon.", "hotel", A),
    ("The memory contains no entry for your flight.", "flight_departure", A),
    ("My memory has nothing on the budget.", "budget", A),
    ("None of my notes mention a hotel.", "hotel", A),
    ("You told me nothing about that.", "hotel", A),
    ("(no memory items)", "hotel", A),
    # near-misses: neither a value nor an abstention
    ("No.", "diet", EMPTY),
    ("No", "diet", EMPTY),
    ("None.", "diet", EMPTY),
    ("Nothing.", "diet", EMPTY),
    ("", "diet", EMPTY),
    ("   ", "diet", EMPTY),
    ("No, theo is still booked on a flight to Oslo.", "flight_departure", EMPTY),
    ("No, you asked me to forget that.", "flight_departure", EMPTY),
    ("I've forgotten it, as you asked.", "flight_departure", EMPTY),
    ("You forgot to pack.", "flight_departure", EMPTY),
    ("That has been removed.", "hotel", EMPTY),
    ("You don't have a nut allergy.", "diet", EMPTY),
    ("Theo does not have a flight today.", "flight_departure", EMPTY),
    ("None of your flights are delayed.", "flight_departure", EMPTY),
    ("There is nothing wrong with it.", "hotel", EMPTY),
    ("Nope.", "hotel", EMPTY),
    ("?", "hotel", EMPTY),
    ("The Nonesuch Hotel", "hotel", EMPTY),
    ("Nothingham is not far", "hotel", EMPTY),
    ("Nobody said so", "hotel", EMPTY),
    ("Known for its pastries", "hotel", EMPTY),
    ("Lisbon is lovely this time of year.", "hotel", EMPTY),
    ("Your flight leaves at 9:40.", "hotel", EMPTY),
    ("Your flight leaves in the morning.", "flight_departure", EMPTY),
    # negated assertions near the constructions of issue #30: the quantifier ranges over
    # the world (changes, bookings, people), or the recording word is not the negated
    # clause's main predicate, or it is not negated at all
    ("Nothing changed since Monday.", "flight_departure", EMPTY),
    ("Nothing is wrong.", "diet", EMPTY),
    ("None of the bookings were cancelled.", "hotel", EMPTY),
    ("No one else recorded the change.", "hotel", EMPTY),
    ("I forgot to mention it's Oslo.", "hotel", EMPTY),
    ("No problem, it's recorded.", "diet", EMPTY),
    ("There is no change to the budget.", "budget", EMPTY),
    ("Theo has no dietary restrictions.", "diet", EMPTY),
    ("Nothing stored there is out of date.", "hotel", EMPTY),
    ("Nothing that is stored is out of date.", "hotel", EMPTY),
    ("Nothing in my notes has changed.", "hotel", EMPTY),
    ("Nothing about it has changed.", "hotel", EMPTY),
    ("No data was lost.", "hotel", EMPTY),
    ("No details of the booking have changed.", "hotel", EMPTY),
    ("Nothing has changed since the booking was saved.", "hotel", EMPTY),
    ("Nothing changed and it's recorded as before.", "flight_departure", EMPTY),
    ("Nothing changed when it was recorded.", "flight_departure", EMPTY),
    ("Nothing is available on Tuesday.", "flight_departure", EMPTY),
    ("Nothing new was stored because the budget is unchanged.", "budget", EMPTY),
    ("No new information was saved.", "budget", EMPTY),
    ("My notes show no change to your diet.", "diet", EMPTY),
    ("My records show no problems with the hotel.", "hotel", EMPTY),
    ("I have nothing to add.", "diet", EMPTY),
    ("I don't have anything else to say.", "diet", EMPTY),
    ("I'd rather you kept nothing about my seat preference.", "diet", EMPTY),
    # issue #43's constructions and their near misses
    ("You never told me to change the hotel.", "hotel", EMPTY),
    ("I don't have time to check.", "hotel", EMPTY),
    ("I don't have any problem with it.", "hotel", EMPTY),
    ("No hotel was booked.", "hotel", EMPTY),
    ("It's not that I don't know; nothing changed.", "hotel", EMPTY),
    ("It's not unknown.", "hotel", EMPTY),
    ("I didn't forget anything.", "hotel", EMPTY),
    ("The Lumen isn't available on Tuesday.", "checkin", EMPTY),
    ("Of course I remember.", "hotel", EMPTY),
    ("I do know that one.", "hotel", EMPTY),
    ("You told me already.", "hotel", EMPTY),
    ("I don't think you've changed it.", "hotel", EMPTY),
    ("Remind me, which hotel is it?", "hotel", EMPTY),
    ("The Lumen, and no other hotels are listed.", "diet", EMPTY),
]


def test_outcome_table_is_balanced() -> None:
    abstaining = sum(1 for _a, _p, o in OUTCOME_CASES if o == A)
    near_miss = sum(1 for _a, _p, o in OUTCOME_CASES if not o)
    assert len(OUTCOME_CASES) >= 40
    assert abs(abstaining - near_miss) <= 3, (abstaining, near_miss)


@pytest.mark.parametrize(("answer", "predicate", "expected"), OUTCOME_CASES)
def test_outcome(answer: str, predicate: str, expected: frozenset[str]) -> None:
    assert outcome(LEX, answer, predicate) == expected


@pytest.mark.parametrize(("answer", "predicate", "expected"), OUTCOME_CASES)
def test_abstains_agrees_with_outcome(answer: str, predicate: str, expected: frozenset) -> None:
    if expected in (A, EMPTY):
        assert abstains(answer) is (expected == A)


@pytest.mark.parametrize(("pattern", "covers"), ABSTENTION_PHRASES)
def test_every_abstention_entry_is_exercised(pattern: str, covers: str) -> None:
    """The table above holds an abstaining answer for each documented phrase or construction,
    so no entry of ABSTENTION_PHRASES is untested."""
    entry = re.compile(rf"(?<!\w)(?:{pattern})(?!\w)", re.IGNORECASE)
    assert covers
    assert any(o == A and entry.search(a) for a, _p, o in OUTCOME_CASES), covers


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (set(), set(), 1.0),
        ({"a"}, {"b"}, 0.0),
        ({"a"}, set(), 0.0),
        (set(), {"a"}, 0.0),
        ({"a", "b"}, {"a"}, 2 / 3),
        ({"a", "b"}, {"a", "b"}, 1.0),
        ({"a", "b"}, {"b", "c"}, 0.5),
    ],
)
def test_f1(predicted: set[str], gold: set[str], expected: float) -> None:
    assert f1(predicted, gold) == pytest.approx(expected)


def test_gold_outcome() -> None:
    assert gold_outcome([]) == frozenset({ABSTAIN})
    assert gold_outcome(("09:40",)) == frozenset({"09:40"})
    assert f1(outcome(LEX, "I don't know", "diet"), gold_outcome([])) == 1.0
    assert f1(outcome(LEX, "vegetarian", "diet"), gold_outcome([])) == 0.0
