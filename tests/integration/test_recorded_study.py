"""The recorded replication study (`experiments/replications/smollm2-135m/`, docs/method.md §9).

Ten `small` generated trajectories (seeds 0-9), append and css × five read policies (cited too).
Fast checks: every job is complete and recorded on one clean commit, its trajectory file is
exactly what `place generate` writes for its seed, and the committed summary is what
`place compare --replications` makes of the jobs. Slow: a sample of the jobs runs again as
one Hydra multirun (`trajectory=generated trajectory.seed=0,5,9`), every model call answered
from the jobs' committed caches (replay-only: a miss fails), and every replayed job's
metrics come out identical. (The whole study replayed in 244 s of CI's 45 minutes; the
fast test above ties the summary to every job's records.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from place.generate import generate

ROOT = Path(__file__).parents[2]
STUDY = ROOT / "experiments" / "replications" / "smollm2-135m"
SUMMARY = ROOT / "experiments" / "replications" / "summary-smollm2-135m"
SEEDS = range(10)
JOBS = [STUDY / f"{seed}_smollm2-135m" for seed in SEEDS]
REPLAYED = (0, 5, 9)
"""The jobs CI replays: the first, the last, and one whose answers Ω reads as abstentions."""
SWEEP = [
    "trajectory=generated",
    "design.name=replication",
    "design.producers=[append,css]",
    "design.policies=[native,posthoc,decay,qasc,cited]",
    "experiment.closed_loop=false",
]


def _compare(study: Path, out: Path) -> None:
    """`place compare --replications study --out out`, which must succeed."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "place.cli",
            "compare",
            "--replications",
            str(study),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _manifest(job: Path) -> dict:
    return json.loads((job / "manifest.json").read_text(encoding="utf-8"))


def test_every_job_is_committed_complete_on_one_clean_commit() -> None:
    assert sorted(p.name for p in STUDY.iterdir() if p.is_dir()) == sorted(j.name for j in JOBS)
    commits = set()
    for seed, job in zip(SEEDS, JOBS, strict=True):
        m = _manifest(job)
        assert m["status"] == "complete" and "invalid" not in m, job
        assert m["git"]["dirty"] is False
        commits.add(m["git"]["commit"])
        assert m["header"]["trajectory"]["generated"] == {
            "seed": seed,
            "design": "small",
            "filler": 0,
        }
        assert m["header"]["design"]["conditions"][0] == ["Append/Native", "append", "native"]
        assert len(m["header"]["design"]["conditions"]) == 10
    assert len(commits) == 1


@pytest.mark.parametrize("seed", SEEDS)
def test_each_jobs_trajectory_is_what_the_generator_writes_for_its_seed(seed: int) -> None:
    job = JOBS[seed]
    written = (job / "trajectory.yaml").read_text(encoding="utf-8")
    assert written == generate(seed, "small", 0).text
    assert (
        _manifest(job)["header"]["trajectory"]["sha256"]
        == generate(seed, "small").trajectory.sha256
    )


def test_the_committed_summary_is_what_compare_makes_of_the_jobs(tmp_path: Path) -> None:
    out = tmp_path / "summary"
    _compare(STUDY, out)
    for name in ("replications.md", "replications_endpoints.csv", "replications_effects.csv"):
        assert (out / name).read_bytes() == (SUMMARY / name).read_bytes(), name
    assert "10 trajectories" in (out / "replications.md").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.integration
def test_the_study_replays_as_a_multirun_to_identical_metrics(tmp_path: Path) -> None:
    caches = tmp_path / "caches"
    caches.mkdir()
    for seed in REPLAYED:
        shutil.copyfile(JOBS[seed] / "llm_cache.sqlite", caches / f"cache-{seed}.sqlite")
    sweep_dir = tmp_path / "study"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "place.cli",
            "run",
            "-m",
            *SWEEP,
            f"trajectory.seed={','.join(map(str, REPLAYED))}",
            "cache.mode=replay-only",
            f"cache.path={caches}/cache-${{trajectory.seed}}.sqlite",
            f"hydra.sweep.dir={sweep_dir}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3000,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for num, seed in enumerate(REPLAYED):
        job, replayed = JOBS[seed], sweep_dir / f"{num}_smollm2-135m"
        assert json.loads((replayed / "metrics.json").read_text()) == json.loads(
            (job / "metrics.json").read_text()
        ), job.name
        assert _manifest(replayed)["cache"]["misses"] == 0
        assert (replayed / "trajectory.yaml").read_bytes() == (job / "trajectory.yaml").read_bytes()
