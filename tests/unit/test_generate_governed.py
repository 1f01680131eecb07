"""`place generate --design small` (docs/generator.md, "The governance story of `small`"): the
small design's counts plus a governance story that uses every construct of trajectories/FORMAT.md
("Principals, permissions and tasks"). Each seed loads with the validating loader (which
recomputes every task's `expect`, `reasons` and `args` and every probe's gold), uses each
construct at least once, is byte-stable, and leaves the base trajectory as the seed draws it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from place.cli import main
from place.errors import InputError, PlaceError
from place.generate import DESIGNS, generate
from place.generate.assembly import build
from place.generate.datafile import parse
from place.generate.design import check_request
from place.generate.governance_text import GOVERNANCE, GovernanceText, check_governance
from place.generate.turns import Writer
from place.reference.replay import replay
from place.reference.validate import load_trajectory
from place.trajectory.model import FAMILIES, Trajectory

SEEDS = range(5)
TEMPLATES = (
    "share",
    "unshare",
    "grant",
    "revoke",
    "request",
    "defer",
    "run",
    "rollback",
    "rollback_by_asker",
)
DATA = Path(__file__).resolve().parents[2] / "place" / "data" / "generator" / "governance.yaml"


@pytest.fixture(scope="module")
def texts(small_texts: dict[int, str]) -> dict[int, str]:
    return small_texts


@pytest.fixture(scope="module")
def loaded(small_loaded: dict[int, Trajectory]) -> dict[int, Trajectory]:
    return small_loaded


def _constructs(traj: Trajectory) -> Counter[str]:
    """How often each construct the design guarantees occurs, counted from the model."""
    found: Counter[str] = Counter()
    ref = replay(traj)
    turns = [t for _c, t in traj.turns()]
    found["principals beyond the first"] = len(traj.principals) - 1
    found["turns of another principal"] = sum(
        t.speaker is not None and t.speaker != traj.principal for t in turns
    )
    for t in turns:
        if t.redelivers is None:
            found.update(e.op for e in t.events if e.op != "assert")
    runs = {t.run for t in turns if t.run is not None}
    for _c, _t, task in traj.tasks():
        decision = ref.task(task.id).decision
        assert decision == task.expect
        found["tasks to block"] += decision == "block"
        if task.deferred:
            found["deferred tasks that run"] += task.id in runs
        else:
            found["immediate tasks"] += 1
    allowed = {t.id for t in ref.tasks if t.decision == "allow"}
    found["rollbacks of an allowed task"] = sum(
        e.task in allowed for t in turns for e in t.events if e.op == "rollback"
    )
    found["redeliveries"] = sum(t.redelivers is not None for t in turns)
    found["restarts"] = sum(t.restart for t in turns)
    found["compactions"] = len(traj.compactions)
    found["probes asked by another principal"] = sum(
        p.asker is not None and p.asker != traj.principal for p in traj.probes
    )
    return found


GUARANTEED = (
    "principals beyond the first",
    "turns of another principal",
    "share",
    "unshare",
    "grant",
    "revoke",
    "rollback",
    "immediate tasks",
    "tasks to block",
    "deferred tasks that run",
    "rollbacks of an allowed task",
    "redeliveries",
    "restarts",
    "compactions",
    "probes asked by another principal",
)


def test_every_seed_loads_and_uses_every_construct(loaded: dict[int, Trajectory]) -> None:
    for seed, traj in loaded.items():
        found = _constructs(traj)
        missing = [name for name in GUARANTEED if found[name] < 1]
        assert not missing, f"seed {seed}: no {missing}"


def test_the_small_designs_counts_hold_beside_the_story(loaded: dict[int, Trajectory]) -> None:
    small = DESIGNS["small"]
    for seed, traj in loaded.items():
        base = [t for _c, t in traj.turns() if "-g" not in t.id]
        assert small.turns[0] <= len(base) <= small.turns[1], seed
        updates = [
            c for c in replay(traj).checkpoints if c.kind == "post-update" and "-g" not in c.turn
        ]
        assert len(updates) == small.event_turns, seed
        queries = Counter(q.family for *_, q in traj.queries())
        assert queries == {f: small.queries_per_family for f in FAMILIES}, seed
        probes = Counter(p.family for p in traj.probes if not p.id.startswith(("pg", "pf")))
        assert probes == {f: small.probes_per_family for f in FAMILIES}, seed


def test_same_seed_same_bytes_and_seeds_differ(texts: dict[int, str]) -> None:
    assert generate(0, "small").text == texts[0]
    assert len(set(texts.values())) == len(SEEDS)


def test_the_story_leaves_the_base_trajectory_as_drawn(loaded: dict[int, Trajectory]) -> None:
    # The story draws from a generator of its own after the base is built: taking its turns
    # out gives back exactly what the seed's base build produces.
    for seed in (0, 3):
        conversations, _episodes, probes = build(Writer(seed, "small"))
        traj = loaded[seed]
        kept = [[(t.id, t.text) for t in c.turns if "-g" not in t.id] for c in traj.conversations]
        assert kept == [[(t.id, t.text) for t in conv] for conv in conversations], seed
        kept_probes = [p.id for p in traj.probes if not p.id.startswith(("pg", "pf"))]
        assert kept_probes == [p.id for p in probes], seed


def test_filler_leaves_the_story_unchanged(loaded: dict[int, Trajectory]) -> None:
    more = generate(1, "small", filler=10).trajectory
    base = loaded[1]

    def story(traj: Trajectory) -> list[tuple[str, str]]:
        return [(t.id, t.text) for _c, t in traj.turns() if "-g" in t.id]

    assert story(more) == story(base)
    assert more.probes == base.probes and more.compactions == base.compactions


def test_the_cli_writes_a_governed_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "gov.json"
    assert main(["generate", "--seed", "2", "--design", "small", "--out", str(out)]) == 0
    assert "generated:" in capsys.readouterr().out
    assert load_trajectory(out).principals


def test_small_carries_the_story_and_paper_does_not() -> None:
    # Issue #27: every small trajectory carries the story; `governed`, its former name as a
    # design of its own, is gone (docs/decisions.md).
    assert DESIGNS["small"].governance and not DESIGNS["paper"].governance
    with pytest.raises(PlaceError, match="'governed' is not a design"):
        check_request(0, "governed", 0)
    assert not any(p.id.startswith("pg") for p in generate(0, "paper").trajectory.probes)


def test_a_template_with_a_foreign_placeholder_is_refused() -> None:
    text = DATA.read_text(encoding="utf-8").replace(
        '"Please share my {noun} with {name}."', '"Please share my {noun} with {who}."'
    )
    with pytest.raises(InputError) as err:
        parse("governance.yaml", text, GovernanceText, check_governance)
    message = str(err.value)
    assert "share[0]" in message and "placeholder {who} is not allowed" in message


def test_the_stories_fixed_words_mention_nothing_of_the_schema() -> None:
    # Only the slot's noun may name the library in a story sentence; everything the data file
    # adds around it (templates, permission names, actions, replies) must read as nothing.
    g = GOVERNANCE
    blank = {k: "X" for k in ("noun", "name", "permission", "action", "poss", "undo")}
    pieces = [
        *(p.name for p in g.permissions),
        *(a.request.format(**blank) for p in g.permissions for a in p.actions),
        *(a.undo for p in g.permissions for a in p.actions),
        *(t.format(**blank) for kind in TEMPLATES for t in getattr(g, kind)),
        *g.replies.request,
        *g.replies.defer,
        *g.replies.run,
    ]
    for seed in SEEDS:
        w = Writer(seed, "small")
        dirty = [text for text in pieces if not w.clean(text)]
        assert not dirty, (seed, dirty)
