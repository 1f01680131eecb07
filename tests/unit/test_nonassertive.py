"""The non-assertive clause rule (`place.lexicon.assertion`): β reads no fact from a
hypothetical, reported or negated clause, nor from one about a person the schema does not
declare; assertive controls still read, `values_in` (Ω) is unchanged, and the shipped
trajectories' event turns still read their facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from place.lexicon import Lexicon
from place.lexicon.assertion import CUES, KINDS
from place.producers.extract import stated_facts
from place.reference.validate import load_trajectory
from place.trajectory.model import Entity, Fact, Predicate, Schema, Scope

NORA = "nora"
SCHEMA = Schema(
    entities={
        NORA: Entity(NORA, "Nora"),
        "jonas": Entity("jonas", "Jonas", ("my brother",)),
        "priya": Entity("priya", "Priya"),
    },
    scopes={"trip-oslo": Scope("trip-oslo", ("Oslo",))},
    predicates={
        "flight": Predicate(
            "flight",
            "time",
            "one",
            ("flight", "flies", "departs"),
            {"07:15": (), "09:40": (), "10:05": ()},
        ),
        "dentist": Predicate("dentist", "time", "one", ("dentist",), {"14:00": ()}),
        "hotel": Predicate(
            "hotel",
            "enum",
            "one",
            ("hotel", "staying at"),
            {"Casa Azul": (), "Hotel Lumen": ("Lumen",)},
        ),
    },
)
LEX = Lexicon(SCHEMA, NORA)
G = "global"


def fact(predicate: str, value: str, entity: str = NORA, scope: str = G) -> Fact:
    return Fact(entity, predicate, value, scope)


NONE: set[Fact] = set()

# (kind, text, facts β must read); kind "assertive" marks a control that must still read.
CASES: list[tuple[str, str, set[Fact]]] = [
    # -- hypothetical: a condition or a wish, and a conditional's consequent
    ("hypothetical", "If I ever moved my flight to 9:40, I'd tell you.", NONE),
    ("hypothetical", "What if my flight were at 10:05?", NONE),
    ("hypothetical", "Suppose my hotel were Casa Azul.", NONE),
    ("hypothetical", "Imagine my flight left at 9:40 for once.", NONE),
    ("hypothetical", "I wish my dentist were at 2 pm.", NONE),
    ("hypothetical", "In case my flight to Oslo leaves at 7:15, pack early.", NONE),
    ("hypothetical", "Hypothetically, my hotel could be Hotel Lumen.", NONE),
    ("hypothetical", "If the strike ends, my flight would leave at 9:40.", NONE),
    ("hypothetical", "My flight would be at 10:05 if I changed it.", NONE),
    ("hypothetical", "I'd book Casa Azul if the hotel had rooms.", NONE),
    # -- reported: another person's belief or speech
    ("reported", "My colleague thinks my flight is at 9:40.", NONE),
    ("reported", "Jonas reckons my flight leaves at 10:05.", NONE),
    ("reported", "According to my sister, my hotel is Casa Azul.", NONE),
    ("reported", "She told me my dentist is at 2 pm.", NONE),
    ("reported", "He claims my flight departs at 7:15.", NONE),
    ("reported", "People say the hotel is Hotel Lumen.", NONE),
    ("reported", "Marta said my flight was at 9:40.", NONE),
    ("reported", "I heard my flight got moved to 10:05.", NONE),
    ("reported", "My brother says his flight is at 7:15.", NONE),
    # -- negated, also farther than the historical cue's one-word gap
    ("negated", "It's not true that my flight is at 9:40.", NONE),
    ("negated", "It would be wrong to say my flight is at 9:40.", NONE),
    ("negated", "Nobody ever told me my hotel is Casa Azul.", NONE),
    ("hypothetical", "Part of me wishes my flight were at 9:40.", NONE),
    ("undeclared", "By the way, my hairdresser's dentist is at 2 pm.", NONE),
    ("negated", "I never said my hotel was Casa Azul.", NONE),
    ("negated", "My flight isn't leaving at 9:40.", NONE),
    ("negated", "Don't put down 9:40 for my flight.", NONE),
    ("negated", "My dentist is not really at 2 pm.", NONE),
    ("negated", "The hotel was never going to be Hotel Lumen.", NONE),
    ("negated", "I can't say my flight leaves at 10:05.", NONE),
    # -- about a person the schema does not declare
    ("undeclared", "My neighbour's flight leaves at 10:05.", NONE),
    ("undeclared", "Marta's dentist is at 2 pm.", NONE),
    ("undeclared", "A friend of mine is staying at Casa Azul.", NONE),
    ("undeclared", "My cousin's hotel in Oslo is Hotel Lumen.", NONE),
    ("undeclared", "My boss flies at 7:15.", NONE),
    ("undeclared", "Oskar's flight departs at 9:40.", NONE),
    ("undeclared", "My colleague's dentist is at 2 pm.", NONE),
    # -- assertive controls
    ("assertive", "My flight leaves at 9:40.", {fact("flight", "09:40")}),
    (
        "assertive",
        "My flight leaves at 9:40. If you need anything else, ask.",
        {fact("flight", "09:40")},
    ),
    ("assertive", "Marta said she'd call. My hotel is Casa Azul.", {fact("hotel", "Casa Azul")}),
    ("assertive", "Priya's flight leaves at 10:05.", {fact("flight", "10:05", "priya")}),
    ("assertive", "My brother's flight leaves at 7:15.", {fact("flight", "07:15", "jonas")}),
    ("assertive", "Jonas flies at 9:40.", {fact("flight", "09:40", "jonas")}),
    ("assertive", "My friend Priya's dentist is at 2 pm.", {fact("dentist", "14:00", "priya")}),
    ("assertive", "My flight leaves at 9:40, in case it comes up.", {fact("flight", "09:40")}),
    (
        "assertive",
        "My dentist is at 2 pm; my colleague thinks that's early.",
        {fact("dentist", "14:00")},
    ),
    (
        "assertive",
        "If it rains we stay in, but my flight is at 9:40.",
        {fact("flight", "09:40")},
    ),
    (
        "assertive",
        "My flight to Oslo departs at 10:05.",
        {fact("flight", "10:05", scope="trip-oslo")},
    ),
    ("assertive", "I think my hotel is Casa Azul.", {fact("hotel", "Casa Azul")}),
    ("assertive", "My flight is at 9:40, not 7:15.", {fact("flight", "09:40")}),
    (
        "assertive",
        "Not sure about the rest, but my flight is at 9:40.",
        {fact("flight", "09:40")},
    ),
    (
        "assertive",
        "I never liked early starts. My flight is at 10:05.",
        {fact("flight", "10:05")},
    ),
    (
        "assertive",
        "My flight leaves at 9:40 and my neighbour is jealous.",
        {fact("flight", "09:40")},
    ),
    (
        "assertive",
        "My flight leaves at 9:40, even if the hotel is Casa Azul.",
        {fact("flight", "09:40")},
    ),
    (
        "assertive",
        "I'm staying at Hotel Lumen, according to the latest note.",
        {fact("hotel", "Hotel Lumen")},
    ),
    ("assertive", "Don't worry, my flight is at 9:40.", {fact("flight", "09:40")}),
    ("assertive", "Don't forget my flight is at 9:40.", {fact("flight", "09:40")}),
    ("assertive", "It's the hotel Casa Azul.", {fact("hotel", "Casa Azul")}),
    ("assertive", "Budget-wise, my hotel is Casa Azul.", {fact("hotel", "Casa Azul")}),
    (
        "assertive",
        "In Oslo my hotel is Hotel Lumen.",
        {fact("hotel", "Hotel Lumen", scope="trip-oslo")},
    ),
    (
        "assertive",
        "Lumen's rooms are nice, my hotel is Hotel Lumen.",
        {fact("hotel", "Hotel Lumen")},
    ),
]


@pytest.mark.parametrize(("kind", "text", "expected"), CASES, ids=[c[1][:40] for c in CASES])
def test_read(kind: str, text: str, expected: set[Fact]) -> None:
    assert LEX.read(text) == expected


@pytest.mark.parametrize(("kind", "text", "expected"), CASES, ids=[c[1][:40] for c in CASES])
def test_matches_name_the_kind(kind: str, text: str, expected: set[Fact]) -> None:
    """Every value occurrence of a non-assertive case is marked with the case's kind (or is
    historical); an assertive control's read values are unmarked."""
    for pid in SCHEMA.predicates:
        for m in LEX.matches(text, pid):
            if kind == "assertive":
                if m.value in {f.value for f in expected if f.predicate == pid}:
                    assert m.nonassertive is None or not m.asserted
            elif LEX.mentions(text, pid):
                assert m.historical or m.nonassertive == kind, (pid, m)


def test_table_covers_every_kind() -> None:
    counts = {k: sum(1 for kind, _t, _e in CASES if kind == k) for k in (*KINDS, "assertive")}
    assert len(CASES) >= 40
    assert all(counts[k] >= 6 for k in KINDS), counts
    assert counts["assertive"] >= 12, counts


def test_every_cue_is_documented_and_exercised() -> None:
    for cue in CUES:
        assert cue.reason and cue.kind in KINDS and cue.reach in ("sentence", "clause")
    exercised = {kind for kind, _t, _e in CASES}
    assert exercised >= set(KINDS)


def test_values_in_is_unchanged_on_a_non_assertive_sentence() -> None:
    """Ω (and the deletion-residue checks) read every value that is not historical."""
    text = "If I ever moved my flight to 9:40, I'd tell you."
    assert LEX.values_in(text, "flight") == {"09:40"}
    assert [(m.value, m.historical, m.nonassertive) for m in LEX.matches(text, "flight")] == [
        ("09:40", False, "hypothetical")
    ]
    assert LEX.values_in("Marta's dentist is at 2 pm.", "dentist") == {"14:00"}
    assert LEX.values_in("It's not true that my flight is at 9:40.", "flight") == {"09:40"}


@pytest.mark.parametrize("text", [t for _k, t, _e in CASES])
def test_stated_facts_agree_with_read(text: str) -> None:
    assert set(stated_facts(LEX, text)) == LEX.read(text)


def test_read_as_skips_non_assertive_occurrences() -> None:
    assert LEX.read_as("My colleague thinks my flight is at 9:40.", "priya") == set()
    assert LEX.read_as("My flight is at 9:40.", "priya") == {fact("flight", "09:40", "priya")}


def test_memo_gives_the_same_reading() -> None:
    text = "Marta reckons my flight leaves at 10:05. My hotel is Casa Azul."
    first = LEX.read(text)
    assert LEX.read(text) == first == Lexicon(SCHEMA, NORA).read(text)
    assert first == {fact("hotel", "Casa Azul")}


# --- regression guard: the shipped trajectories' event turns -------------------------------

TRAJECTORIES = Path(__file__).resolve().parents[2] / "trajectories"
SHIPPED = ("primary.yaml", "smoke.yaml", "aoep-pilot.yaml")

# Event facts that β read before the non-assertive rule and no longer reads, as
# (trajectory file, turn id, fact). Empty: the rule loses no asserted or corrected fact.
ALLOWED_LOSSES: set[tuple[str, str, Fact]] = set()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_event_turns_still_read_their_facts(name: str) -> None:
    traj = load_trajectory(TRAJECTORIES / name)
    lexicons: dict[str, Lexicon] = {}
    lost = set()
    checked = 0
    for conv in traj.conversations:
        for turn in conv.turns:
            if turn.role not in ("user", "tool"):
                continue
            events = [e for e in turn.events if e.op in ("assert", "correct") and e.value]
            if not events:
                continue
            speaker = turn.speaker or traj.principal
            lex = lexicons.setdefault(speaker, Lexicon(traj.schema, speaker))
            read = lex.read(turn.text)
            for e in events:
                checked += 1
                f = Fact(e.entity, e.predicate, e.value, e.scope)  # type: ignore[arg-type]  # reason: value is checked non-empty above
                if f not in read:
                    lost.add((name, turn.id, f))
    assert checked > 0
    assert lost <= ALLOWED_LOSSES, sorted(lost - ALLOWED_LOSSES)
