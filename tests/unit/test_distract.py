"""`place distract` (docs/method.md §16.1): on-topic distractors that leave the reference as
it was, nested by dose, checked as text, refused with a located message when the input or
the request is bad."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from place.cli import main
from place.generate import generate
from place.generate.distract import (
    MIN_TEMPLATES,
    distract,
    distract_loaded,
    phrasing,
    same_reference,
)
from place.lexicon import Lexicon
from place.lexicon.cues import CUES
from place.reference.replay import replay
from place.reference.validate import load_trajectory
from place.runner.plan import build_plan
from place.trajectory.model import DISTRACTOR_KINDS, Turn
from place.trajectory.yaml_source import parse_yaml

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("smoke", "primary", "aoep-pilot")
ALL = ",".join(DISTRACTOR_KINDS)


@cache
def distracted(name: str, dose: int, kinds: str = ALL, seed: int = 0):
    return distract(ROOT / "trajectories" / f"{name}.yaml", kinds.split(","), dose, seed)


@cache
def generated(seed: int):
    return generate(seed, "small")


@pytest.mark.parametrize("name", SHIPPED)
def test_the_reference_of_a_shipped_trajectory_is_unchanged(name: str) -> None:
    before = load_trajectory(ROOT / "trajectories" / f"{name}.yaml")
    after = distracted(name, 8).trajectory
    assert len(after.distractors) == 2 * 8 * len(DISTRACTOR_KINDS)
    assert same_reference(replay(before), replay(after)) is None
    # Every original turn is there, in order, unchanged.
    kept = [t for _, t in after.turns() if t.id not in after.distractors]
    assert kept == [t for _, t in before.turns()]


@pytest.mark.parametrize("seed", range(5))
def test_the_reference_of_a_generated_trajectory_is_unchanged(seed: int) -> None:
    made = generated(seed)
    source = parse_yaml(made.text)
    assert source is not None
    out = distract_loaded(made.trajectory, source.data, list(DISTRACTOR_KINDS), 6, seed)
    assert same_reference(replay(made.trajectory), replay(out.trajectory)) is None
    assert out.added == 2 * 6 * len(DISTRACTOR_KINDS)


def test_same_reference_names_the_first_difference() -> None:
    smoke = load_trajectory(ROOT / "trajectories" / "smoke.yaml")
    primary = load_trajectory(ROOT / "trajectories" / "primary.yaml")
    assert same_reference(replay(smoke), replay(primary)) is not None
    assert same_reference(replay(smoke), replay(smoke)) is None


def test_doses_are_nested_and_the_output_is_deterministic() -> None:
    low, high = distracted("primary", 5, "hypothetical"), distracted("primary", 20, "hypothetical")
    turns = {t.id: t for _, t in high.trajectory.turns()}
    assert set(low.trajectory.distractors) < set(high.trajectory.distractors)
    for tid in low.trajectory.distractors:
        assert low.trajectory.turn(tid) == turns[tid]
    again = distract(ROOT / "trajectories" / "primary.yaml", ["hypothetical"], 20, 0)
    assert again.text == high.text
    other = distract(ROOT / "trajectories" / "primary.yaml", ["hypothetical"], 20, 1)
    assert other.text != high.text


def test_distractors_are_placed_across_every_conversation() -> None:
    t = distracted("primary", 40, "topic").trajectory
    convs = {t.conversation_of(tid).id for tid in t.distractors}
    assert convs == {c.id for c in t.conversations}


def _user_turns(name: str, kind: str, dose: int = 30) -> list[Turn]:
    t = distracted(name, dose, kind).trajectory
    return [x for _, x in t.turns() if t.distractors.get(x.id) == kind and x.role == "user"]


@pytest.mark.parametrize("kind", ["hypothetical", "reported", "negated", "entity"])
def test_beta_reads_no_fact_of_the_principal_from_a_non_assertive_distractor(kind: str) -> None:
    """The value is written (a store that keeps the raw text holds it), but β, with its
    non-assertive clause rule, reads it as nobody's current fact, or (entity) as the
    other declared person's."""
    t = load_trajectory(ROOT / "trajectories" / "primary.yaml")
    lexicon = Lexicon(t.schema, t.principal)
    turns = _user_turns("primary", kind)
    assert len(turns) == 30
    written = 0
    for turn in turns:
        written += any(lexicon.matches(turn.text, p) for p in t.schema.predicates)
        for fact in lexicon.read(turn.text):
            assert kind == "entity" and fact.entity != t.principal, (turn.text, fact)
    assert written == len(turns)


def test_a_restate_reads_as_the_slots_current_fact() -> None:
    t = load_trajectory(ROOT / "trajectories" / "primary.yaml")
    ref = replay(t)
    lexicon = Lexicon(t.schema, t.principal)
    out = distracted("primary", 30, "restate").trajectory
    for turn in _user_turns("primary", "restate"):
        facts = lexicon.read(turn.text)
        assert len(facts) == 1, turn.text
        # The fact is in S* at the distractor's place: the last update before it.
        ci, ti = out.position(turn.id)
        before = [
            c
            for c in ref.checkpoints
            if c.kind == "post-update" and out.position(c.turn) < (ci, ti)
        ]
        assert facts <= before[-1].state, turn.text


@pytest.mark.parametrize("kind", ["topic", "neutral"])
def test_topic_and_neutral_distractors_state_no_value(kind: str) -> None:
    t = load_trajectory(ROOT / "trajectories" / "primary.yaml")
    lexicon = Lexicon(t.schema, t.principal)
    for turn in _user_turns("primary", kind):
        assert not any(lexicon.matches(turn.text, p) for p in t.schema.predicates), turn.text
        mentioned = any(lexicon.mentions(turn.text, p) for p in t.schema.predicates)
        assert mentioned == (kind == "topic"), turn.text


def test_a_distractor_and_its_reply_are_a_step_of_their_own() -> None:
    t = distracted("primary", 20, ALL).trajectory
    for unit in build_plan(t):
        if unit.kind != "step":
            continue
        flags = {turn.id in t.distractors for turn in unit.turns}
        assert len(flags) == 1, [x.id for x in unit.turns]
        if flags == {True}:
            assert [x.role for x in unit.turns] == ["user", "assistant"]


def test_the_kind_never_reaches_a_turn() -> None:
    """Producers receive turns and conversations; the kind is on the trajectory only."""
    t = distracted("smoke", 3, ALL).trajectory
    assert t.distractors
    assert "distractor" not in Turn.__dataclass_fields__


def test_the_phrasing_has_enough_varied_templates_per_kind() -> None:
    data = phrasing()
    assert set(data.kinds) == set(DISTRACTOR_KINDS)
    for kind, entry in data.kinds.items():
        assert len(entry.templates) >= MIN_TEMPLATES
        # Varied frames: the templates do not share one opening or one skeleton.
        openings = {re.sub(r"\{[a-z_]+\}", "_", x).split()[0].lower() for x in entry.templates}
        assert len(openings) >= MIN_TEMPLATES // 2, kind


def test_only_negated_templates_carry_a_historical_cue() -> None:
    """A historical cue would make β skip a value for the old reason, so the kinds would
    not test the new rule; the negated kind's negations are its point."""
    cues = [re.compile(rf"(?<!\w)(?:{c.pattern})(?!\w)", re.IGNORECASE) for c in CUES]
    for kind, entry in phrasing().kinds.items():
        if kind == "negated":
            continue
        for template in entry.templates + entry.replies:
            bare = re.sub(r"\{[a-z_]+\}", "", template)
            assert not any(c.search(bare) for c in cues), (kind, template)


# ---------------------------------------------------------------- refusals


def test_an_unknown_kind_exits_2_with_the_allowed_kinds(tmp_path: Path, capsys) -> None:
    out = tmp_path / "o.yaml"
    args = ["distract", str(ROOT / "trajectories/smoke.yaml"), "--kinds", "topic,gossip"]
    assert main([*args, "--dose", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown kind 'gossip'" in err and "allowed: entity, topic" in err
    assert "Traceback" not in err and not out.exists()


def test_a_malformed_trajectory_exits_2_located_and_writes_nothing(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    text = (ROOT / "trajectories/smoke.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("role: assistant", "role: narrator", 1), encoding="utf-8")
    out = tmp_path / "o.yaml"
    assert main(["distract", str(bad), "--kinds", "topic", "--dose", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "line " in err and "narrator" in err
    assert not out.exists()


def test_a_distractor_key_on_an_event_turn_is_refused_by_the_loader(tmp_path: Path) -> None:
    from place.errors import InputError

    doc = yaml.safe_load((ROOT / "trajectories/smoke.yaml").read_text(encoding="utf-8"))
    first = doc["conversations"][0]["turns"][0]
    assert first.get("events")
    first["distractor"] = "topic"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_trajectory(path)
    assert "a distractor turn carries no 'events'" in str(err.value)


def test_place_distract_writes_a_valid_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "o.yaml"
    smoke = str(ROOT / "trajectories/smoke.yaml")
    assert (
        main(["distract", smoke, "--kinds", "entity,restate", "--dose", "2", "--out", str(out)])
        == 0
    )
    assert "8 distractor turns" in capsys.readouterr().out
    assert main(["validate", str(out)]) == 0
    assert load_trajectory(out).id == "smoke.distract-entity-restate-2-s0"


def test_place_generate_distracts_too(tmp_path: Path, capsys) -> None:
    out = tmp_path / "g.yaml"
    argv = ["generate", "--seed", "3", "--design", "small", "--distract", "negated"]
    assert main([*argv, "--dose", "4", "--out", str(out)]) == 0
    t = load_trajectory(out)
    assert sorted(set(t.distractors.values())) == ["negated"] and len(t.distractors) == 8
    assert main(["generate", "--seed", "3", "--dose", "4", "--out", str(out)]) == 2
    assert "--dose needs --distract" in capsys.readouterr().err
