"""The forged-provenance probes of `small` (docs/generator.md, "The forged probes of `small`";
docs/method.md §12.2): every small file carries `pf01`-`pf04`, one forged probe of each kind,
each a clone of a base probe with a question of its own, each meeting its kind's rule as the
loader checks it (and as checked again here, from the model and the replay); removing them
gives back the file a build without forgeries writes; `paper` has none.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from place.eligibility import expired
from place.errors import PlaceError
from place.generate import DESIGNS, Generated, forgery, generate, write
from place.generate import design as design_module
from place.governance.citation import consequential_predicates
from place.lexicon import Lexicon
from place.reference.replay import Reference, replay
from place.reference.validate import FORGED_K_BOUND
from place.trajectory.model import FORGED_KINDS, Fact, ForgedKind, Probe, Trajectory

SEEDS = range(5)
IDS = {"pf01": "missing", "pf02": "tool", "pf03": "unsupported", "pf04": "stale"}
_FORGED_BLOCK = re.compile(r'^  - id: "pf01".*?(?=^compactions:)', re.S | re.M)
_CONSEQUENTIAL = re.compile(r"^      consequential: true\n", re.M)


@pytest.fixture(scope="module")
def texts(small_texts: dict[int, str]) -> dict[int, str]:
    return small_texts


@pytest.fixture(scope="module")
def loaded(small_loaded: dict[int, Trajectory]) -> dict[int, Trajectory]:
    return small_loaded


@pytest.fixture(scope="module")
def unforged() -> dict[int, Generated]:
    """The same seeds built without forgeries (design `small` with `forged` off)."""
    saved = DESIGNS["small"]
    design_module.DESIGNS["small"] = dataclasses.replace(saved, forged=False)
    try:
        return {seed: generate(seed, "small") for seed in SEEDS}
    finally:
        design_module.DESIGNS["small"] = saved


def _forged(traj: Trajectory) -> list[Probe]:
    return [p for p in traj.probes if p.forged is not None]


def _state_after(traj: Trajectory, ref: Reference, probe: Probe) -> frozenset[Fact]:
    """S* after the probe's turn (the live, unexpired records of the last checkpoint)."""
    at = traj.position(probe.after)
    day = traj.conversation_of(probe.after).date
    last = [c for c in ref.checkpoints if traj.position(c.turn) <= at][-1]
    return frozenset(r.fact for r in last.live if not expired(r.valid_until, day))


def test_every_small_seed_has_one_forged_probe_of_each_kind(loaded: dict[int, Trajectory]) -> None:
    assert list(IDS.values()) == list(FORGED_KINDS)
    for seed, traj in loaded.items():
        forged = _forged(traj)
        assert {p.id: p.forged.kind for p in forged if p.forged} == IDS, seed
        assert all(p.id.startswith("pf") for p in forged), seed
        assert all(p.conflict is None and p.asker is None for p in forged), seed


def test_each_forgery_meets_the_rule_of_its_kind(loaded: dict[int, Trajectory]) -> None:
    for seed, traj in loaded.items():
        ref = replay(traj)
        supports = {p.id: p.support for p in ref.probes}
        for probe in _forged(traj):
            forged = probe.forged
            assert forged is not None
            where = f"seed {seed} {probe.id}"
            fact = Fact(probe.entity, probe.predicate, forged.value, probe.scope)
            assert forged.value in traj.schema.predicates[probe.predicate].values, where
            assert forged.value not in probe.gold, where
            assert len(supports[probe.id].facts) < FORGED_K_BOUND, where
            if forged.kind == "missing":
                assert forged.pointer is None, where
                continue
            assert forged.pointer is not None, where
            turn = traj.turn(forged.pointer)
            assert traj.position(turn.id) <= traj.position(probe.after), where
            assert turn.redelivers is None and "-g" not in turn.id, where
            if forged.kind == "tool":
                assert turn.role == "tool", where
                continue
            assert turn.role == "user", where
            read = Lexicon(traj.schema, traj.speaker_of(turn)).read(turn.text, probe.predicate)
            if forged.kind == "unsupported":
                assert fact not in read, where
            else:  # stale: the turn asserted the fact, S* no longer holds it
                stated = {
                    Fact(e.entity, e.predicate, e.value or "", e.scope)
                    for e in turn.events
                    if e.op in ("assert", "correct")
                }
                assert fact in stated, where
                assert fact not in _state_after(traj, ref, probe), where


def test_forged_probes_clone_base_probes_with_a_question_of_their_own(
    loaded: dict[int, Trajectory],
) -> None:
    for seed, traj in loaded.items():
        bases = [p for p in traj.probes if re.fullmatch(r"p\d+", p.id)]
        for probe in _forged(traj):
            slot = (probe.after, probe.family, probe.entity, probe.predicate, probe.scope)
            clones = [
                b
                for b in bases
                if (b.after, b.family, b.entity, b.predicate, b.scope) == slot
                and b.gold == probe.gold
            ]
            assert clones, f"seed {seed} {probe.id}: no base probe it clones"
            assert all(b.text != probe.text for b in clones), f"seed {seed} {probe.id}"


def test_removing_the_forged_probes_gives_back_the_file_without_them(
    texts: dict[int, str], loaded: dict[int, Trajectory], unforged: dict[int, Generated]
) -> None:
    for seed in SEEDS:
        without = unforged[seed].trajectory
        assert not _forged(without), seed
        # The base and story probes, ids, texts, golds and conflicts, are those of the build
        # without forgeries, and so is everything else.
        kept = [p for p in loaded[seed].probes if not p.id.startswith("pf")]
        assert kept == list(without.probes), seed
        assert [p.id for p in kept][-2:] == ["pg01", "pg02"], seed
        assert loaded[seed].conversations == without.conversations, seed
        assert loaded[seed].compactions == without.compactions, seed
        # Byte for byte: the forged probes and the `consequential` flags of their slots are
        # the only additions (the header is the same).
        stripped = _CONSEQUENTIAL.sub("", _FORGED_BLOCK.sub("", texts[seed]))
        assert stripped == unforged[seed].text, seed
        targeted = {p.predicate for p in _forged(loaded[seed])}
        flagged = {pid for pid, d in loaded[seed].schema.predicates.items() if d.consequential}
        assert flagged == {p for p in targeted if loaded[seed].schema.predicates[p].type != "money"}
        assert not any(d.consequential for d in without.schema.predicates.values()), seed


def test_every_forged_slot_is_consequential(loaded: dict[int, Trajectory]) -> None:
    """A forger goes for what matters, and the citation lock applies to consequential
    records only (docs/method.md §12.3): every forged probe's predicate is locked."""
    for seed, traj in loaded.items():
        cons = consequential_predicates(traj)
        assert all(p.predicate in cons for p in _forged(traj)), seed


def test_filler_leaves_the_forged_probes_unchanged(loaded: dict[int, Trajectory]) -> None:
    assert _forged(generate(2, "small", filler=12).trajectory) == _forged(loaded[2])


def test_paper_has_no_forged_probe() -> None:
    assert DESIGNS["small"].forged and not DESIGNS["paper"].forged
    traj = generate(0, "paper").trajectory
    assert not _forged(traj)
    assert not any(p.id.startswith("pf") for p in traj.probes)


def test_a_seed_without_a_host_for_a_kind_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A seed whose base probes cannot host a stale forgery (none has a superseded value of
    # its slot before it) fails with the usual message, and writes nothing.
    real = forgery._Forging.candidates

    def no_stale(self: forgery._Forging, kind: ForgedKind) -> list[forgery._Candidate]:
        return [] if kind == "stale" else real(self, kind)

    monkeypatch.setattr(forgery._Forging, "candidates", no_stale)
    out = tmp_path / "s0.yaml"
    with pytest.raises(PlaceError, match=r"seed 0 \(design small\): constraint 'a forged probe"):
        write(0, out, "small")
    assert not out.exists()
