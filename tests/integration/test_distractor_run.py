"""On-topic distractors through the real runner (docs/method.md §16): the smoke trajectory
with and without `entity`, `hypothetical` and `neutral` distractors, answer-free: Append,
Extract and CSS under the Native, QASC and Fullcontext reads, on the real stack (Mem0,
Qdrant local mode, MiniLM; no answer model is asked).

Every read-level endpoint is checked on a case built to move it: the distractors' records
are exposed (DistractorShare), Append writes them (DistractorWrites) and CSS writes nothing
(no event), another person's value reaches Append's reads (WrongEntityShown), and PLACE
keeps its state and forget obligations at ceiling. tests/recompute.py recomputes the
`reads` group from the raw records."""

from __future__ import annotations

import json
from pathlib import Path

import inprocess
import pytest
from recompute import load, read_figures

from place.design import make_design
from place.generate.distract import distract
from place.reference.validate import load_trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
DESIGN = make_design(
    "distractors", ["append", "extract", "css"], ["native", "qasc", "fullcontext"]
)


def _run(root: Path, name: str, path: Path) -> dict:
    run_dir = root / name
    inprocess.run_inprocess(
        run_dir, load_trajectory(path), DESIGN, plots=False, overrides=["experiment=state"]
    )
    return json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, Path]:
    root = tmp_path_factory.mktemp("distractors")
    smoke = ROOT / "trajectories" / "smoke.yaml"
    out = root / "distracted.yaml"
    out.write_text(
        distract(smoke, ["entity", "hypothetical", "neutral"], 8, 0).text, encoding="utf-8"
    )
    return _run(root, "base", smoke), _run(root, "distracted", out), root


def reads(m: dict, condition: str) -> dict:
    return m["conditions"][condition]["reads"]


def test_without_distractors_nothing_is_a_distractor(runs) -> None:
    base, _, _ = runs
    for c in base["conditions"]:
        assert reads(base, c)["distractor_share"] == 0.0
        assert reads(base, c)["distractor_writes"] == 0


def test_distractors_reach_the_reads_and_the_stores(runs) -> None:
    base, dist, _ = runs
    assert reads(dist, "Append/Native")["distractor_share"] > 0
    assert reads(dist, "Append/Native")["distractor_writes"] >= 2 * 8 * 3  # every turn
    assert reads(dist, "PLACE")["distractor_writes"] == 0  # no event: CSS writes nothing
    # The whole history reaches Fullcontext's reads, another person's value with it.
    assert (
        reads(dist, "Append/Fullcontext")["wrong_entity_shown"]
        > reads(base, "Append/Fullcontext")["wrong_entity_shown"]
    )


def test_place_stays_at_ceiling(runs) -> None:
    base, dist, _ = runs
    for m in (base, dist):
        place = m["conditions"]["PLACE"]
        assert place["state_correctness"] == 1.0
        assert place["deletion_residue"] in (0.0, None)
        assert reads(m, "PLACE")["wrong_value_shown"] == 0.0
    assert dist["aoep"]["PLACE"]["obligations"] == base["aoep"]["PLACE"]["obligations"]


def test_the_reads_group_is_recomputed_independently(runs) -> None:
    _, dist, root = runs
    run_dir = root / "distracted"
    records = {n: load(run_dir, f"{n}.jsonl") for n in ("probes", "queries", "steps")}
    producer_of = {c[0]: c[1] for c in dist["design"]["conditions"]}
    for c in dist["conditions"]:
        assert read_figures(records, c, producer_of) == reads(dist, c), c
