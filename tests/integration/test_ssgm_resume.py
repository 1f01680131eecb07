"""The `ssgm` writer on a real store (Mem0 in-process, Qdrant local mode, MiniLM): a run
interrupted after a step wrote but before it was journaled resumes to exactly the store
an uninterrupted run holds (store and evidence log)."""

from __future__ import annotations

from pathlib import Path

import inprocess
import pytest

from place.lexicon import Lexicon
from place.producers.registry import build_writer, speakers
from place.readback import Readback
from place.reference.validate import load_trajectory
from place.runner.plan import build_plan

pytestmark = pytest.mark.integration

PILOT = Path(__file__).parents[2] / "trajectories" / "aoep-pilot.yaml"


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory):
    with inprocess.backend(tmp_path_factory.mktemp("ssgm")) as b:
        yield b


def held(store) -> list[tuple]:
    """What the store holds, without ids: every record's text and metadata but its
    `written_seq` (a resumed step numbers its records anew)."""
    return sorted(
        (p.text, tuple(sorted((k, str(v)) for k, v in p.metadata.items() if k != "written_seq")))
        for p in store.scan().points
    )


def test_an_interrupted_step_resumes_to_the_uninterrupted_store(backend) -> None:
    traj = load_trajectory(PILOT)
    readback = Readback(Lexicon(traj.schema, traj.principal))
    steps = [(u.turns, u.conversation) for u in build_plan(traj) if u.writes and u.turns]
    values = {"reconcile_every": 3}

    whole = backend.open("ssgm_whole", traj.principal)
    writer = build_writer("ssgm", whole, traj.schema, readback, values)
    for turns, conv in steps:
        writer.write(turns, conv)

    # the step of c3-03 (a rejected supersede) and c3-05 (a rejected tool claim): the run
    # died after the step logged its turns in V (V is written first) and before it wrote
    # a record
    cut = next(i for i, (turns, _c) in enumerate(steps) if any(t.id == "c3-01" for t in turns))
    killed = backend.open("ssgm_killed", traj.principal)
    first = build_writer("ssgm", killed, traj.schema, readback, values)
    for turns, conv in steps[:cut]:
        first.write(turns, conv)
    turns, conv = steps[cut]
    for turn, speaker in zip(turns, speakers(turns, traj.principal), strict=True):
        who = None if turn.role == "assistant" else speaker  # as the writer logs them
        first.evidence.record(turn, who, conv.date, conversation=conv.id)
    again = build_writer("ssgm", killed, traj.schema, readback, values)
    again.resume(steps[:cut])
    for turns, conv in steps[cut:]:
        again.write(turns, conv)

    assert held(killed) == held(whole)
    assert [r.metadata for r in killed.side_rows("evidence")] == [
        r.metadata for r in whole.side_rows("evidence")
    ]
