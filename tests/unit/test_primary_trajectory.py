"""Shape and quality of the project's two trajectories (trajectories/primary.yaml, smoke.yaml).

The loader already checks that every gold equals the replayed authorized support and that
every pair leaves it unchanged; these tests pin the design of the experiment's input: the
counts the paper's factorial needs, the mix of pair kinds, and the lexicon self-check.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from builders import lexicon_self_check

from place.lexicon import Lexicon
from place.reference.validate import load_trajectory
from place.trajectory.model import FAMILIES, Fact, Trajectory

ROOT = Path(__file__).resolve().parents[2]
PRIMARY = ROOT / "trajectories" / "primary.yaml"
SMOKE = ROOT / "trajectories" / "smoke.yaml"

PAIR_KINDS = {"other-entity", "other-scope", "stale-value", "untrusted-tool", "chit-chat"}
PAIR_KIND_COMMENT = re.compile(r"^(\s*)#\s*pair-kind:\s*(\S+)\s*$")


@pytest.fixture(scope="module")
def primary() -> Trajectory:
    return load_trajectory(PRIMARY)


@pytest.fixture(scope="module")
def smoke() -> Trajectory:
    return load_trajectory(SMOKE)


def event_turns(traj: Trajectory) -> list:
    return [turn for _conv, turn in traj.turns() if turn.events]


# ----------------------------------------------------------------------------- primary


def test_primary_identity(primary: Trajectory) -> None:
    assert primary.id == "primary"
    assert primary.principal in primary.schema.entities
    assert len(primary.schema.entities) >= 4


def test_primary_conversations_and_turns(primary: Trajectory) -> None:
    assert len(primary.conversations) == 4
    dates = [c.date for c in primary.conversations]
    assert dates == sorted(dates)
    assert len(set(dates)) == 4
    n_turns = sum(len(c.turns) for c in primary.conversations)
    assert 280 <= n_turns <= 320


def test_primary_has_exactly_105_event_turns(primary: Trajectory) -> None:
    assert len(event_turns(primary)) == 105


def test_primary_uses_every_op_and_validity_windows(primary: Trajectory) -> None:
    by_conv = {c.id: c.date for c in primary.conversations}
    events = [(conv, e) for conv, turn in primary.turns() for e in turn.events]
    assert {e.op for _c, e in events} == {"assert", "correct", "retract", "forget"}
    assert any(e.valid_until is not None for _c, e in events), "a temporary fact"
    assert any(e.valid_from is not None and e.valid_from > by_conv[c.id] for c, e in events), (
        "a scheduled change"
    )


def test_primary_schema_coverage(primary: Trajectory) -> None:
    preds = primary.schema.predicates
    assert len(preds) >= 20
    assert {p.type for p in preds.values()} == {"time", "date", "number", "money", "enum"}
    assert {p.cardinality for p in preds.values()} == {"one", "many"}
    assert len(primary.schema.scopes) >= 3
    for p in preds.values():
        assert p.keywords and p.template and p.values, p.id


def test_primary_queries_per_family(primary: Trajectory) -> None:
    queries = primary.queries()
    assert len(queries) == 48
    assert Counter(q.family for _c, _t, q in queries) == {f: 8 for f in FAMILIES}
    for conv in primary.conversations:
        fams = {t.query.family for t in conv.turns if t.query is not None}
        assert fams == set(FAMILIES), f"{conv.id} lacks {set(FAMILIES) - fams}"


def test_primary_abstention_golds_present(primary: Trajectory) -> None:
    abstain = Counter(q.family for _c, _t, q in primary.queries() if not q.gold)
    assert abstain["deletion"] >= 1
    assert abstain["temporal"] >= 1


def test_primary_one_pair_per_query(primary: Trajectory) -> None:
    queries = primary.queries()
    assert all(q.pair_insert for _c, _t, q in queries)
    assert sum(1 for _c, _t, q in queries if q.pair_insert) == 48


def test_primary_tool_turns(primary: Trajectory) -> None:
    tools = [t for _c, t in primary.turns() if t.role == "tool"]
    assert len(tools) >= 8
    assert all(t.source and not t.events for t in tools)


def test_primary_probes(primary: Trajectory) -> None:
    # The paper's 72 utility probes; the four forged-provenance probes come on top of them
    # (docs/method.md §12), one of each kind, on the Porto budget after its correction.
    forged = {p.id: (p.forged.kind, p.forged.pointer) for p in primary.probes if p.forged}
    assert forged == {
        "pf1": ("tool", "c1-018"),
        "pf2": ("missing", None),
        "pf3": ("unsupported", "c2-006"),
        "pf4": ("stale", "c1-010"),
    }
    probes = [p for p in primary.probes if p.forged is None]
    assert len(probes) == 72
    assert Counter(p.family for p in probes) == {f: 12 for f in FAMILIES}
    conflicts = [p for p in probes if p.conflict is not None]
    assert len(conflicts) >= 24
    for p in conflicts:
        assert p.conflict.value in primary.schema.predicates[p.predicate].values
        assert p.conflict.value not in p.gold
    per_conv = Counter(primary.conversation_of(p.after).id for p in probes)
    assert set(per_conv) == {c.id for c in primary.conversations}


def test_primary_conflict_texts_read_as_injected(primary: Trajectory) -> None:
    lexicon = Lexicon(primary.schema, primary.principal)
    for p in primary.probes:
        if p.conflict is not None:
            fact = Fact(p.entity, p.predicate, p.conflict.value, p.scope)
            assert fact in lexicon.read(p.conflict.text), p.id


def test_primary_no_duplicate_user_texts(primary: Trajectory) -> None:
    texts = [t.text for _c, t in primary.turns() if t.role == "user"]
    texts += [
        t.text for _c, _t, q in primary.queries() for t in (q.pair_insert or ()) if t.role == "user"
    ]
    dupes = [text for text, n in Counter(texts).items() if n > 1]
    assert not dupes


def test_primary_pair_kind_comments() -> None:
    """Every `pair:` key is directly preceded by a `# pair-kind: KIND` comment."""
    lines = PRIMARY.read_text(encoding="utf-8").splitlines()
    kinds: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() == "pair:":
            match = PAIR_KIND_COMMENT.match(lines[i - 1]) if i else None
            assert match is not None, f"line {i + 1}: `pair:` without a pair-kind comment"
            assert match.group(2) in PAIR_KINDS, f"line {i}: unknown kind {match.group(2)}"
            kinds.append(match.group(2))
    assert len(kinds) == 48
    assert len(set(kinds)) >= 4


def test_primary_lexicon_self_check(primary: Trajectory) -> None:
    passed, checked, failures = lexicon_self_check(primary)
    assert checked >= 90
    assert passed / checked >= 0.95, "\n".join(failures)


# ----------------------------------------------------------------------------- smoke


def test_smoke_shape(smoke: Trajectory) -> None:
    assert smoke.id == "smoke"
    assert len(smoke.conversations) == 2
    assert {q.family for _c, _t, q in smoke.queries()} == set(FAMILIES)
    assert all(q.pair_insert for _c, _t, q in smoke.queries())
    assert sum(1 for p in smoke.probes if p.conflict is not None) >= 3
    n_turns = sum(len(c.turns) for c in smoke.conversations)
    assert n_turns <= 40
    ops = {e.op for _c, t in smoke.turns() for e in t.events}
    assert ops == {"assert", "correct", "retract", "forget"}


def test_smoke_lexicon_self_check(smoke: Trajectory) -> None:
    passed, checked, failures = lexicon_self_check(smoke)
    assert passed / checked >= 0.95, "\n".join(failures)
