"""The recorded distractor study (`experiments/population/distractors/`, docs/population.md
"On-topic distractors"): generated `small` trajectories of `design=population` answer-free,
without distractors and with each of the seven kinds at each dose.

Every job is complete, answer-free and recorded on one clean commit; a sample's trajectories
are what the runner makes for their seed, kind and dose; a sample's metrics are what its
archived records give; the committed dose-response is what `place compare --dose-response`
makes of the jobs' metrics. Two of its jobs run again on SLURM through the study's one
command (tests/integration/test_slurm.py, `test_distractor_study_in_one_command`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from recorded_jobs import check_answer_free_job

from place.report.distractors import load_distractors, write_distractors
from place.report.metrics import dump_metrics
from place.report.report import recompute
from place.runner.trajectory_source import made_from
from place.trajectory.model import DISTRACTOR_KINDS

ROOT = Path(__file__).parents[2]
BASE = ROOT / "experiments" / "population" / "distractors"
N = 19
"""Seeds recorded so far (the study resumes seed by seed: experiments/README.md)."""
SEEDS = range(N)
DOSES = (4, 16, 64)
SAMPLE = ((0, None, 0), (1, "entity", 64), (N // 2, "hypothetical", 16), (N - 1, "negated", 4))
"""(seed, kind, dose) of the jobs whose trajectories and records are recomputed."""


def _job(seed: int, kind: str | None, dose: int) -> Path:
    if kind is None:
        return BASE / "baseline" / f"s{seed}_d0"
    return BASE / "distracted" / f"s{seed}_{kind}_d{dose}"


def _manifest(job: Path) -> dict[str, Any]:
    return json.loads((job / "manifest.json").read_text(encoding="utf-8"))


def _all() -> list[tuple[int, str | None, int]]:
    cells: list[tuple[int, str | None, int]] = [(s, None, 0) for s in SEEDS]
    return cells + [(s, k, d) for s in SEEDS for k in DISTRACTOR_KINDS for d in DOSES]


def test_every_job_is_there_complete_answer_free_and_on_one_clean_commit() -> None:
    wanted = {_job(*c) for c in _all()}
    present = {p for part in ("baseline", "distracted") for p in (BASE / part).iterdir()}
    assert {p for p in present if p.is_dir()} == wanted
    commits = set()
    for seed, kind, dose in _all():
        job = _job(seed, kind, dose)
        m = _manifest(job)
        commits.add(check_answer_free_job(job, m, 42))
        generated = m["header"]["trajectory"]["generated"]
        extra = {} if kind is None else {"distract": kind, "dose": dose, "distract_seed": seed}
        assert generated == {"seed": seed, "design": "small", "filler": 0, **extra}, job
    assert len(commits) == 1


@pytest.mark.parametrize(("seed", "kind", "dose"), SAMPLE)
def test_a_sampled_jobs_trajectory_is_the_runners(seed: int, kind: str | None, dose: int) -> None:
    header = _manifest(_job(seed, kind, dose))["header"]["trajectory"]
    made = made_from(seed, "small", 0, None, kind, dose, seed)
    assert header["sha256"] == made.trajectory.sha256


@pytest.mark.parametrize(("seed", "kind", "dose"), SAMPLE)
def test_a_sampled_jobs_metrics_are_its_records(seed: int, kind: str | None, dose: int) -> None:
    job = _job(seed, kind, dose)
    assert dump_metrics(recompute(job)) == (job / "metrics.json").read_text(encoding="utf-8")


def test_the_committed_dose_response_is_what_compare_makes_of_the_jobs(tmp_path: Path) -> None:
    study = load_distractors([BASE / "baseline", BASE / "distracted"], recompute=False)
    assert study.kinds == list(DISTRACTOR_KINDS) and study.doses == list(DOSES)
    assert study.seeds == list(SEEDS)
    write_distractors(study, tmp_path)
    committed = BASE / "dose-response"
    names = sorted(p.name for p in committed.iterdir())
    assert names == sorted(p.name for p in tmp_path.iterdir())
    for name in names:
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), name
