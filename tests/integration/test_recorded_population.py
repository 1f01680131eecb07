"""The recorded population study (`experiments/population/`, docs/population.md): 100
generated trajectories of `design=population` answer-free, and the history-length sweep.

Fast: every job is complete, answer-free and recorded on one clean commit; a sample's
trajectories are what the generator writes for their seeds; a sample's metrics are what its
archived records give; the committed summary and dose-response are what `place compare`
makes of the jobs' metrics. Slow: a sample of jobs runs again, to byte-identical metrics.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from recorded_jobs import check_answer_free_job

from place.generate import generate
from place.report.dose import load_dose, write_dose
from place.report.metrics import dump_metrics
from place.report.replications import load_replications, write_replications
from place.report.report import recompute

ROOT = Path(__file__).parents[2]
BASE = ROOT / "experiments" / "population"
STUDY = BASE / "study"
HISTORY = BASE / "history"
N = 100
LENGTHS = (10, 50, 250)
"""The sweep's filler counts beyond 0 (filler 0 is the study's own jobs of the same seeds)."""
SWEEP_SEEDS = range(20)
SAMPLE = (0, 37, 99)
"""The jobs whose records are recomputed."""
RERUN = (0, 99)
"""The jobs CI runs again."""


def _manifest(job: Path) -> dict:
    return json.loads((job / "manifest.json").read_text(encoding="utf-8"))


def _jobs(root: Path) -> list[Path]:
    return sorted(
        (p for p in root.iterdir() if p.is_dir()), key=lambda p: int(p.name.split("_")[0])
    )


def test_every_job_is_complete_answer_free_and_on_one_clean_commit() -> None:
    jobs = _jobs(STUDY) + _jobs(HISTORY)
    assert len(_jobs(STUDY)) == N and len(_jobs(HISTORY)) == len(LENGTHS) * len(SWEEP_SEEDS)
    commits = set()
    for job in jobs:
        commits.add(check_answer_free_job(job, _manifest(job), 42))
    assert len(commits) == 1
    seeds = [_manifest(j)["header"]["trajectory"]["generated"]["seed"] for j in _jobs(STUDY)]
    assert seeds == list(range(N))


@pytest.mark.parametrize("seed", SAMPLE)
def test_a_sampled_jobs_trajectory_is_the_generators(seed: int) -> None:
    header = _manifest(_jobs(STUDY)[seed])["header"]["trajectory"]
    assert header["generated"] == {"seed": seed, "design": "small", "filler": 0}
    assert header["sha256"] == generate(seed, "small", 0).trajectory.sha256


@pytest.mark.parametrize("seed", SAMPLE)
def test_a_sampled_jobs_metrics_are_its_records(seed: int) -> None:
    job = _jobs(STUDY)[seed]
    assert dump_metrics(recompute(job)) == (job / "metrics.json").read_text(encoding="utf-8")


def test_the_committed_summary_is_what_compare_makes_of_the_jobs(tmp_path: Path) -> None:
    study = load_replications([STUDY], recompute=False)
    write_replications(study.docs, tmp_path)
    for name in ("replications.md", "replications_endpoints.csv", "replications_effects.csv"):
        assert (tmp_path / name).read_bytes() == (BASE / "summary" / name).read_bytes(), name


def test_the_committed_dose_response_is_what_compare_makes_of_the_sweep(tmp_path: Path) -> None:
    zero = [_jobs(STUDY)[s] for s in SWEEP_SEEDS]
    dose = load_dose([*zero, HISTORY], recompute=False)
    assert dose.lengths == [0, *LENGTHS]
    write_dose(dose.groups, tmp_path)
    for name in ("dose_response.md", "dose_response_endpoints.csv", "dose_response_effects.csv"):
        assert (tmp_path / name).read_bytes() == (BASE / "dose-response" / name).read_bytes(), name


@pytest.mark.slow
@pytest.mark.integration
def test_sampled_jobs_run_again_to_identical_metrics(tmp_path: Path) -> None:
    sweep = tmp_path / "again"
    done = subprocess.run(
        [
            sys.executable, "-m", "place.cli", "run", "-m",
            "experiment=state", "trajectory=generated", "design=population", "plots=false",
            f"trajectory.seed={','.join(map(str, RERUN))}", "progress=false",
            f"hydra.sweep.dir={sweep}", "hydra.sweep.subdir=${hydra.job.num}",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for num, seed in enumerate(RERUN):
        job = _jobs(STUDY)[seed]
        assert (sweep / str(num) / "metrics.json").read_bytes() == (
            job / "metrics.json"
        ).read_bytes()
