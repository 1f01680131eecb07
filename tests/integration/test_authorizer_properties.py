"""QASC on random stores (real Mem0 + Qdrant local + MiniLM): never an ineligible record, and
every eligible one when at most k exist. Certified and plain-text records, every lifecycle
state, scopes, windows and entities."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from builders import schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from place.eligibility import Interpretation, admits, is_ineligible_exposure
from place.governance.authorizer import NativeRead, QASCRead
from place.governance.certifier import Provenance, metadata_for, render
from place.lexicon import Lexicon
from place.readback import Readback
from place.reference.lifecycle import STATUSES, FactRecord
from place.runtime.embedder import MINILM_DIMS, minilm_mem0_embedder_config

pytestmark = pytest.mark.integration

SCHEMA = schema()
LEXICON = Lexicon(SCHEMA, "alex")
READBACK = Readback(LEXICON)
DAY = dt.date(2026, 3, 10)
K = 3
UNREACHABLE_LLM = {
    "provider": "openai",
    "config": {"model": "none", "openai_base_url": "http://127.0.0.1:9/v1", "api_key": "sk-none"},
}
PREDICATES = ["hotel", "diet", "flight"]
VALUES = {p: sorted(SCHEMA.predicates[p].values) for p in PREDICATES}
ENTITIES = ["alex", "dana"]
SCOPES = ["global", "trip", "work"]
DATES = [None, dt.date(2026, 3, 1), dt.date(2026, 3, 10), dt.date(2026, 3, 20)]
_names = itertools.count()


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory):
    from place.memory.backend import Backend

    with Backend(
        tmp_path_factory.mktemp("qasc"), UNREACHABLE_LLM, minilm_mem0_embedder_config(), MINILM_DIMS
    ) as b:
        yield b


@st.composite
def certified(draw) -> tuple[str, dict]:
    predicate = draw(st.sampled_from(PREDICATES))
    start, end = sorted(
        draw(st.lists(st.sampled_from(DATES), min_size=2, max_size=2)),
        key=lambda d: (d is not None, d or dt.date.min),
    )
    if start is not None and end is not None and start >= end:
        end = None
    record = FactRecord(
        entity=draw(st.sampled_from(ENTITIES)),
        predicate=predicate,
        value=draw(st.sampled_from(VALUES[predicate])),
        scope=draw(st.sampled_from(SCOPES)),
        status=draw(st.sampled_from(STATUSES)),
        valid_from=start,
        valid_until=end,
        event_id=f"e{next(_names)}",
        version=1,
    )
    return render(SCHEMA, record), metadata_for(record, Provenance("t", "c1", DAY))


@st.composite
def plain(draw) -> tuple[str, dict]:
    predicate = draw(st.sampled_from(PREDICATES))
    keyword = SCHEMA.predicates[predicate].keywords[0]
    who = draw(st.sampled_from(["", "Dana's ", "my sister's ", "Alex's "]))
    where = draw(st.sampled_from(["", " in Lisbon", " for work"]))
    cue = draw(st.sampled_from(["", "instead of "]))
    value = draw(st.sampled_from(VALUES[predicate]))
    other = draw(st.sampled_from(VALUES[predicate]))
    return f"{who}{keyword}: {value}{where}, {cue}{other}", {}


taus = st.builds(
    Interpretation,
    entity=st.sampled_from(ENTITIES),
    predicate=st.sampled_from(PREDICATES),
    scope=st.sampled_from(["global", "trip", "work"]),
    as_of=st.sampled_from([dt.date(2026, 3, 5), DAY, dt.date(2026, 3, 25)]),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=st.lists(st.one_of(certified(), plain()), min_size=0, max_size=10), tau=taus)
def test_qasc_returns_only_and_all_eligible_records(backend, records, tau) -> None:
    from place.memory.view import read_only_view

    store = backend.open(f"qasc{next(_names)}", "alex")
    try:
        for text, metadata in records:
            store.add_record(text, metadata)
        points = store.scan().points
        admissible = {p.id for p in points if admits(READBACK, p, tau, DAY)}
        decision = QASCRead(K, READBACK).read(read_only_view(store), "hotel flight diet", tau, DAY)
        returned = [item.id for item in decision.items]
        assert len(returned) == len(set(returned)) <= K
        for item in decision.items:
            assert admits(READBACK, item, tau, DAY), item.text
            assert not is_ineligible_exposure(READBACK, item, tau, DAY), item.text
        if len(admissible) <= K:
            assert set(returned) == admissible
        else:
            assert len(returned) == K and set(returned) <= admissible
        assert decision.admitted == len(admissible)
    finally:
        store.drop()


def test_native_read_is_plain_top_k(backend) -> None:
    store = backend.open("native_topk", "alex")
    try:
        for value in ("Avenida", "Lumen", "Marriott"):
            store.add_record(f"hotel: {value}", {})
        decision = NativeRead(2).read(
            store, "Which hotel?", Interpretation("alex", "hotel", "global", DAY), DAY
        )
        assert len(decision.items) == 2 and decision.admitted is None
    finally:
        store.drop()
