"""The AOEP conditions' rules on FAKE stores (docs/method.md §8.6-§8.11): recency's and
fullcontext's order and budget, the record counter and speakers every producer writes, the
lexicon's reading of a request to forget, Extract's record text, and the prompt check's
count of fullcontext's budget (keyed on the policy's declaration, not its name)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakes.stores import FakeStore

from place.eligibility import Interpretation
from place.lexicon import Lexicon
from place.memory.item import StoredItem
from place.memory.scan import PointRecord, StoreScan
from place.policies import POLICIES, register_policy
from place.policies.fullcontext import FullcontextParams, FullcontextRead
from place.policies.recency import RecencyRead, written_order
from place.producers.extract import record_text, stated_facts
from place.producers.registry import RecordCounter, speakers, turn_speaker, written
from place.reference.validate import load_trajectory
from place.trajectory.model import Fact, Slot, Turn

ROOT = Path(__file__).parents[2]
SMOKE = load_trajectory(ROOT / "trajectories" / "smoke.yaml")
LEXICON = Lexicon(SMOKE.schema, SMOKE.principal)
DAY = dt.date(2026, 5, 20)
TAU = Interpretation("sam", "hotel", "trip-vienna", DAY)


class ScanStore(FakeStore):
    """FAKE read-only store that also scans: its records in a fixed, arbitrary order (the
    order a scan returns has no meaning), with similarity scores the policies must ignore."""

    name = "fake"
    principal = "sam"

    def scan(self) -> StoreScan:
        points = sorted(self.items, key=lambda i: i.text)
        return StoreScan(points=tuple(PointRecord(i.id, i.text, i.metadata, {}) for i in points))


def rec(i: str, text: str, on: str | None, seq: int | None, score: float = 0.5) -> StoredItem:
    meta: dict[str, Any] = {}
    if on is not None:
        meta["written_on"] = on
    if seq is not None:
        meta["written_seq"] = seq
    return StoredItem(i, text, meta, score)


# --- recency ----------------------------------------------------------------------------------


def ids(items: Any) -> list[str]:
    return [i.id for i in items]


def test_recency_exposes_the_k_newest_by_date_then_counter_then_id() -> None:
    store = ScanStore(
        [
            rec("z", "oldest", "2026-05-01", 9),  # a large counter does not beat a later date
            rec("c", "same day, written first", "2026-05-04", 2),  # the larger id...
            rec("b", "same day, written second", "2026-05-04", 3),  # ...is not the newer
            rec("d", "same day and counter, smaller id", "2026-05-18", 7),
            rec("e", "same day and counter, larger id", "2026-05-18", 7),
        ]
    )
    read = RecencyRead(3).read(store, "Which hotel?", TAU, DAY)
    assert ids(read.items) == ["e", "d", "b"]  # newest first
    assert ids(RecencyRead(10).read(store, "x", TAU, DAY).items) == ["e", "d", "b", "c", "z"]
    assert read.admitted is None  # nothing is authorized
    assert all(i.score == 0.0 for i in read.items)  # nothing is scored


def test_recency_ignores_the_query_and_the_similarity() -> None:
    # the most similar records are the oldest: a similarity ranking would expose them
    similar_old = ScanStore(
        [rec(str(n), f"record {n}", "2026-05-04", n, score=1 - n / 10) for n in range(6)]
    )
    for question in ("Which hotel am I in?", "What time is my flight?", ""):
        assert ids(RecencyRead(2).read(similar_old, question, TAU, DAY).items) == ["5", "4"]


def test_a_record_without_date_or_counter_counts_as_the_newest() -> None:
    store = ScanStore(
        [
            rec("dated", "a", "2026-05-18", 5),
            rec("no-seq", "b", "2026-05-18", None),  # newest of its date
            rec("injected", "c", None, None),  # the probe's conflict record: no metadata
        ]
    )
    assert ids(RecencyRead(3).read(store, "q", TAU, DAY).items) == ["injected", "no-seq", "dated"]
    assert written_order("x", {"written_on": "2026-05-18", "written_seq": True}) == written_order(
        "x", {"written_on": "2026-05-18"}
    )  # a boolean is no counter


# --- fullcontext ------------------------------------------------------------------------------


def test_fullcontext_takes_the_newest_that_fit_and_shows_them_oldest_first() -> None:
    store = ScanStore(
        [
            rec("r1", "x" * 10, "2026-05-01", 1),
            rec("r2", "x" * 40, "2026-05-02", 2),
            rec("r3", "x" * 30, "2026-05-03", 3),
            rec("r4", "x" * 20, "2026-05-04", 4),
        ]
    )
    read = FullcontextRead(FullcontextParams(budget_chars=60)).read(store, "q", TAU, DAY)
    # r4 (20) + r3 (30) = 50 fit; r2 (40) does not, and ends the read: r1 (10) would fit in
    # what is left, but nothing older than the first record that does not fit is taken.
    assert ids(read.items) == ["r3", "r4"]
    assert sum(len(i.text) for i in read.items) <= 60
    exact = FullcontextRead(FullcontextParams(budget_chars=90)).read(store, "q", TAU, DAY)
    assert ids(exact.items) == ["r2", "r3", "r4"]  # 90 characters fit exactly
    assert read.admitted is None and all(i.score == 0.0 for i in read.items)


def test_fullcontext_ignores_k_and_the_query_and_may_show_nothing() -> None:
    store = ScanStore([rec(f"r{n}", f"record {n}", "2026-05-04", n) for n in range(20)])
    read = FullcontextRead().read(store, "anything", TAU, DAY)
    assert len(read.items) == 20  # the default budget holds them all; k plays no part
    assert ids(read.items) == [f"r{n}" for n in range(20)]
    assert ids(FullcontextRead().read(store, "", TAU, DAY).items) == ids(read.items)
    big = ScanStore([rec("big", "x" * 61, "2026-05-04", 2), rec("small", "y", "2026-05-03", 1)])
    assert FullcontextRead(FullcontextParams(budget_chars=60)).read(big, "q", TAU, DAY).items == ()


def test_the_declarations() -> None:
    recency, fullcontext = POLICIES["recency"], POLICIES["fullcontext"]
    assert (recency.display, recency.params, recency.max_exposed_chars) == ("Recency", None, None)
    assert fullcontext.display == "Fullcontext" and fullcontext.params is FullcontextParams
    assert fullcontext.make_params(None).budget_chars == 6000
    assert fullcontext.max_exposed_chars is not None
    assert fullcontext.max_exposed_chars(FullcontextParams(budget_chars=123)) == 123
    from place.errors import PlaceError

    with pytest.raises(PlaceError, match="budget_chars"):
        fullcontext.make_params({"budget_chars": 0})


# --- the prompt check counts the character budget, from the declaration -----------------------


def _needs(policies: list[str], *overrides: str) -> dict[str, int]:
    from inprocess import compose

    from place.design import make_design
    from place.runner.checks import prompt_needs

    cfg = compose(make_design("t", ["append"], policies), overrides)
    return {n.what: n.prompt for n in prompt_needs(cfg, SMOKE)}


def test_the_prompt_check_counts_fullcontexts_budget() -> None:
    small = _needs(["native", "fullcontext"], "design.fullcontext.budget_chars=200")
    large = _needs(["native", "fullcontext"], "design.fullcontext.budget_chars=2000")
    key = "the answer prompt with design.fullcontext: {} characters of items"
    assert small[key.format(200)] < large[key.format(2000)]
    assert large[key.format(2000)] > large["the answer prompt with experiment.k=5 items"]
    assert f"the closed-loop {key[4:].format(2000)} and the dialogue" in large
    assert not any("characters" in what for what in _needs(["native", "recency"]))


def test_the_prompt_check_reads_the_declaration_not_the_name() -> None:
    @dataclass
    class WideParams:
        chars: int = 3000

    def wide(context: Any) -> Any:
        return FullcontextRead(FullcontextParams(context.params.chars))

    with POLICIES.scoped():
        register_policy("wide", params=WideParams, max_exposed_chars=lambda p: p.chars)(wide)
        from place.runner.config import register_configs

        register_configs()
        needs = _needs(["native", "wide"])
    assert "the answer prompt with design.wide: 3000 characters of items" in needs


def test_items_within_the_budget_fit_it() -> None:
    from inprocess import compose

    from place.design import make_design
    from place.runner.checks import exposed_within_chars, item_texts, token_counter

    cfg = compose(
        make_design("t", ["append"], ["fullcontext"]), ["design.fullcontext.budget_chars=500"]
    )
    items = item_texts(SMOKE)
    ((what, shown),) = exposed_within_chars(cfg, items, token_counter(cfg))
    assert sum(len(t) for t in shown) <= 500 < sum(len(t) for t in items)
    assert what == "design.fullcontext: 500 characters of items"


# --- what every producer writes on every record -------------------------------------------


def test_written_carries_date_counter_and_speaker() -> None:
    assert written(dt.date(2026, 5, 4), 7, "sam") == {
        "written_on": "2026-05-04",
        "written_seq": 7,
        "speaker": "sam",
    }


def test_the_record_counter_continues_the_stores_largest_number() -> None:
    store = ScanStore([rec("a", "a", "2026-05-04", 4), rec("b", "b", "2026-05-04", 9)])
    counter = RecordCounter(store)
    assert [counter.take(), counter.take()] == [10, 11]
    assert RecordCounter(ScanStore([])).take() == 1
    unnumbered = ScanStore([rec("a", "a", "2026-05-04", None), rec("c", "c", None, None)])
    assert RecordCounter(unnumbered).take() == 1


@dataclass(frozen=True)
class SpokenTurn(Turn):
    """A turn with the `speaker` the trajectory format gains (method §11)."""

    speaker: str | None = None


def test_speakers_default_to_the_principal_and_an_answer_is_its_askers() -> None:
    turns = [
        SpokenTurn("t1", "user", "hi", speaker="theo"),
        Turn("t2", "assistant", "hello"),
        Turn("t3", "user", "me again"),
        Turn("t4", "assistant", "yes"),
    ]
    assert turn_speaker(turns[0], "nora") == "theo"
    assert turn_speaker(turns[2], "nora") == "nora"
    assert speakers(turns, "nora") == ["theo", "theo", "nora", "nora"]
    assert speakers([Turn("a", "assistant", "x")], "nora") == ["nora"]


# --- the lexicon's reading of a request to forget -------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Please forget my dentist appointment.",
        "Actually, delete everything about my dentist appointment.",
        "Forget what I told you about my dentist appointment, please.",
        "I'd rather you kept nothing about my dentist appointment - please forget it.",
        "Please wipe my dentist appointment from your memory.",
        "Could you erase the dentist thing?",
    ],
)
def test_a_request_to_forget_is_read_as_the_slot(text: str) -> None:
    assert LEXICON.forget_requests(text) == {Slot("sam", "dentist_date", "global")}
    assert LEXICON.read(text) == set()  # it states no fact


@pytest.mark.parametrize(
    "text",
    [
        "Don't forget my dentist appointment on 12 May.",  # a reminder
        "Never forget the dentist.",
        "I forgot my dentist appointment again.",  # a report
        "Done: dentist forgotten.",
        "I had three alarms for the dentist, I can delete them now.",  # not addressed to memory
        "Please forget it. The dentist is on 12 May.",  # the keyword is in another sentence
        "My dentist appointment is on 12 May.",
    ],
)
def test_what_is_not_a_request_to_forget(text: str) -> None:
    assert LEXICON.forget_requests(text) == set()


def test_a_request_reads_entity_and_scope_as_beta_does() -> None:
    assert LEXICON.forget_requests("Please forget my sister's hotel in Vienna.") == {
        Slot("rita", "hotel", "trip-vienna")
    }
    # no scope named: the predicate's default scope (flight_time's is trip-rome)
    assert LEXICON.forget_requests("Please forget my flight.") == {
        Slot("sam", "flight_time", "trip-rome")
    }


def test_every_forget_event_of_the_trajectories_is_read_exactly() -> None:
    for name in ("smoke", "primary"):
        traj = load_trajectory(ROOT / "trajectories" / f"{name}.yaml")
        lexicon = Lexicon(traj.schema, traj.principal)
        for _, turn in traj.turns():
            if turn.role == "assistant":
                continue
            forgets = {e.slot for e in turn.events if e.op == "forget"}
            assert lexicon.forget_requests(turn.text) == forgets, (name, turn.id, turn.text)


# --- Extract's record text --------------------------------------------------------------------


def readable_facts(schema: Any) -> list[Fact]:
    """Every fact β can read from a message: each entity, value, and scope β can assign."""
    out = []
    for pid, predicate in schema.predicates.items():
        scopes = {*schema.scopes, predicate.default_scope or "global"}
        for entity in schema.entities:
            for value in predicate.values:
                out += [Fact(entity, pid, value, scope) for scope in sorted(scopes)]
    return out


def test_extracts_record_text_reads_back_as_exactly_its_fact() -> None:
    for name in ("smoke", "primary"):
        traj = load_trajectory(ROOT / "trajectories" / f"{name}.yaml")
        lexicon = Lexicon(traj.schema, traj.principal)
        for fact in readable_facts(traj.schema):
            text, exact = record_text(traj.schema, lexicon, fact)
            assert exact and lexicon.read(text) == {fact}, (name, fact, text)


def test_extracts_record_text_is_the_template_when_it_reads_back() -> None:
    hotel = Fact("sam", "hotel", "Hotel Kaiser", "trip-vienna")
    assert record_text(SMOKE.schema, LEXICON, hotel) == (
        "Sam's hotel for Vienna is Hotel Kaiser",
        True,
    )
    # diet's template "dietary requirement" names no keyword of diet for this value
    lactose = Fact("sam", "diet", "lactose intolerance", "global")
    text, exact = record_text(SMOKE.schema, LEXICON, lactose)
    assert exact and text != "Sam's dietary requirement: lactose intolerance"
    assert LEXICON.read(text) == {lactose}


def test_facts_are_taken_in_the_order_the_text_states_them() -> None:
    text = "Rome budget is €1,200 now; from June 1 it rises to €1,500."
    assert [f.value for f in stated_facts(LEXICON, text)] == ["1200 EUR", "1500 EUR"]
    text = "From June 1 it rises to €1,500; the Rome budget is €1,200 now."
    assert [f.value for f in stated_facts(LEXICON, text)] == ["1500 EUR", "1200 EUR"]

