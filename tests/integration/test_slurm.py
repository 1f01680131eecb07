"""Sweeps, job arrays, requeues and time limits through `hydra/launcher=place_slurm`, on a
real one-node SLURM cluster (the `slurm` fixture: munged, slurmctld and slurmd of Debian's
SLURM 22.05, started for the session; tests/slurm_cluster.py).

Every job is a real `sbatch` array task run by submitit on the node, with the real stack:
the smoke trajectory replayed from its committed LLM cache (replay-only: a miss fails; the
embedded SmolLM2's identity, real Mem0, Qdrant local mode and MiniLM) and generated
trajectories replayed from the replication study's committed caches. What each job writes
is compared with the same job run by the local launcher.

`PLACE_SLOW_UNIT_S` (place.faults) makes each unit of the requeue and time-limit runs a
second or two longer, so a signal lands inside a run that would otherwise take seconds.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from slurm_cluster import Cluster
from smoke_runs import PLACE, ROOT, units_done

from place import faults

pytestmark = [pytest.mark.slow, pytest.mark.integration]

SMOKE_CACHE = ROOT / "experiments" / "smoke" / "smollm2-135m" / "llm_cache.sqlite"
STUDY = ROOT / "experiments" / "replications" / "smollm2-135m"
STUDY_SWEEP = [
    "trajectory=generated",
    "design.name=replication",
    "design.producers=[append,css]",
    "design.policies=[native,posthoc,decay,qasc,cited]",
    "experiment.closed_loop=false",
]
"""The recorded replication study's design (tests/integration/test_recorded_study.py)."""
ARRAY_SEEDS = (0, 1, 2)
DEFAULT_BOOTSTRAP = 20260302
"""`seeds.bootstrap`'s default: the smoke jobs of the requeue tests run with it."""
JOB = "0_smollm2-135m"


def smoke_args(caches: Path) -> list[str]:
    """The smoke trajectory answered from a copy of its committed cache, one per job."""
    caches.mkdir(parents=True, exist_ok=True)
    for bootstrap in (DEFAULT_BOOTSTRAP, 7):
        shutil.copyfile(SMOKE_CACHE, caches / f"cache-{bootstrap}.sqlite")
    return [
        "trajectory=smoke",
        "cache.mode=replay-only",
        f"cache.path={caches}/cache-${{seeds.bootstrap}}.sqlite",
    ]


LAUNCHED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def no_launcher_left_behind() -> Iterator[None]:
    """A test that fails while `place run -m` waits for its jobs leaves nothing running."""
    yield
    while LAUNCHED:
        proc = LAUNCHED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def launch(
    sweep_dir: Path, *overrides: str, cluster: Cluster | None, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`place run -m` with the SLURM launcher (or, without a cluster, Hydra's local one)."""
    slurm = (
        [
            "hydra/launcher=place_slurm",
            "hydra.launcher.cpus_per_task=1",
            "hydra.launcher.mem_gb=3",
            "hydra.launcher.timeout_min=20",
        ]
        if cluster is not None
        else []
    )
    base = cluster.env if cluster is not None else None
    proc = subprocess.Popen(
        [*PLACE, "run", "-m", *slurm, *overrides, f"hydra.sweep.dir={sweep_dir}", "progress=false"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**(base or {}), **(env or {})} if base or env else None,
    )
    LAUNCHED.append(proc)
    return proc


def job_logs(sweep_dir: Path) -> str:
    """Every SLURM job's submitit log (stdout and stderr, all attempts: --open-mode=append)."""
    return "\n".join(
        p.read_text(errors="replace") for p in sorted((sweep_dir / ".submitit").rglob("*_log.*"))
    )


def finish(
    proc: subprocess.Popen[str], sweep_dir: Path, cluster: Cluster | None, timeout: float
) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        if cluster is not None:
            subprocess.run(["scancel", "--user=root"], env=cluster.env, check=False)
        pytest.fail(
            f"place run -m did not end in {timeout:g} s\n{out[-2000:]}\n"
            f"{job_logs(sweep_dir)[-4000:]}"
            + (f"\n{cluster.log_tail()}" if cluster is not None else "")
        )
    quiet = "\n".join(
        line for line in out.splitlines() if "accounting" not in line and "sacct" not in line
    )
    assert proc.returncode == 0, f"{quiet[-3000:]}\n{job_logs(sweep_dir)[-3000:]}"
    return out


def compare(*args: str) -> None:
    """`place compare ARGS`, which must succeed."""
    done = subprocess.run(
        [*PLACE, "compare", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def records_without_timings(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Every record of the run, in order, with the wall-time field (`seconds`) dropped."""
    out = {}
    for path in sorted((run_dir / "records").glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row.pop("seconds", None)
        out[path.name] = rows
    return out


def array_ids(sweep_dir: Path) -> list[str]:
    """The SLURM jobs submitit ran, by the folders holding their logs: `<job id>_<task>` for
    the tasks of an array, `<job id>` for a sweep of one job (submitted without an array)."""
    return sorted(
        p.name
        for p in (sweep_dir / ".submitit").iterdir()
        if re.fullmatch(r"\d+(_\d+)?", p.name) and any(p.glob("*_log.out"))
    )


@pytest.fixture(scope="module")
def local_smoke(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two-job smoke sweep (`seeds.bootstrap=<default>,7`) with Hydra's local launcher."""
    root = tmp_path_factory.mktemp("local")
    sweep = root / "sweep"
    proc = launch(sweep, *smoke_args(root / "caches"), "seeds.bootstrap=20260302,7", cluster=None)
    finish(proc, sweep, None, timeout=900)
    return sweep


def test_two_job_sweep_equals_the_local_launcher(
    slurm: Cluster, local_smoke: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    proc = launch(
        sweep, *smoke_args(tmp_path / "caches"), "seeds.bootstrap=20260302,7", cluster=slurm
    )
    finish(proc, sweep, slurm, timeout=900)
    tasks = array_ids(sweep)
    assert len(tasks) == 2 and len({t.split("_")[0] for t in tasks}) == 1, tasks  # one array
    metrics = []
    for num in (0, 1):
        job = f"{num}_smollm2-135m"
        got, local = read(sweep / job / "metrics.json"), read(local_smoke / job / "metrics.json")
        assert got == local, job
        manifest = read(sweep / job / "manifest.json")
        assert manifest["status"] == "complete" and manifest["cache"]["misses"] == 0
        metrics.append(got)
    assert metrics[0] != metrics[1]  # each job got its own seeds.bootstrap
    assert "Job completed successfully" in job_logs(sweep)


def test_replication_study_as_one_job_array(slurm: Cluster, tmp_path: Path) -> None:
    caches = tmp_path / "caches"
    caches.mkdir()
    for seed in ARRAY_SEEDS:
        job = STUDY / f"{seed}_smollm2-135m"
        shutil.copyfile(job / "llm_cache.sqlite", caches / f"cache-{seed}.sqlite")
    sweep = tmp_path / "study"
    proc = launch(
        sweep,
        *STUDY_SWEEP,
        f"trajectory.seed=range(0,{len(ARRAY_SEEDS)})",
        "cache.mode=replay-only",
        f"cache.path={caches}/cache-${{trajectory.seed}}.sqlite",
        cluster=slurm,
    )
    finish(proc, sweep, slurm, timeout=1200)
    tasks = array_ids(sweep)
    array = {t.split("_")[0] for t in tasks}
    assert len(array) == 1 and sorted(t.split("_")[1] for t in tasks) == ["0", "1", "2"], tasks
    script = next((sweep / ".submitit").glob("*/*_submission.sh")).read_text()
    assert "#SBATCH --array=0-2" in script
    for num, seed in enumerate(ARRAY_SEEDS):
        job = sweep / f"{num}_smollm2-135m"
        recorded = STUDY / f"{seed}_smollm2-135m"  # made with the local joblib launcher
        assert read(job / "metrics.json") == read(recorded / "metrics.json"), seed
        assert (job / "trajectory.yaml").read_bytes() == (recorded / "trajectory.yaml").read_bytes()
    ours, theirs = tmp_path / "summary", tmp_path / "summary-recorded"
    for dirs, out in (
        ([sweep], ours),
        ([STUDY / f"{s}_smollm2-135m" for s in ARRAY_SEEDS], theirs),
    ):
        compare("--replications", *map(str, dirs), "--out", str(out))
    table = (ours / "replications.md").read_text()
    assert "3 trajectories" in table
    assert table == (theirs / "replications.md").read_text()
    assert (ours / "replications_effects.csv").read_bytes() == (
        theirs / "replications_effects.csv"
    ).read_bytes()


def stops_and_resumes(logs: str) -> tuple[list[tuple[str, int]], list[tuple[int, int]]]:
    """(signal, units journaled) of each stop at a boundary, and (units journaled, record
    lines cut) of each resume, from the job's log."""
    signals = re.findall(r"place run: (SIG\w+) during unit (\d+)", logs)
    stopped = [int(n) for n in re.findall(r"stopped at a unit boundary: (\d+) units", logs)]
    assert len(signals) == len(stopped), logs[-3000:]
    resumed = [
        (int(a), int(b))
        for a, b in re.findall(r"place run: resuming .*: (\d+) units journaled, (\d+) record", logs)
    ]
    return [(s, n) for (s, _), n in zip(signals, stopped, strict=True)], resumed


def assert_same_as_uninterrupted(run_dir: Path, local: Path) -> None:
    assert read(run_dir / "metrics.json") == read(local / "metrics.json")
    # Line for line the same records (only wall times differ): no unit twice, none missing.
    assert records_without_timings(run_dir) == records_without_timings(local)


def test_scontrol_requeue_resumes_after_the_last_journaled_unit(
    slurm: Cluster, local_smoke: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    proc = launch(
        sweep,
        *smoke_args(tmp_path / "caches"),
        cluster=slurm,
        env={faults.SLOW_ENV: "1"},
    )
    deadline = time.monotonic() + 600
    while units_done(sweep / JOB) < 5:  # progress.json is replaced atomically
        assert proc.poll() is None and time.monotonic() < deadline, "the job never got going"
        time.sleep(0.2)
    (task,) = array_ids(sweep)
    slurm.scontrol("requeue", task)
    finish(proc, sweep, slurm, timeout=900)
    logs = job_logs(sweep)
    stops, resumes = stops_and_resumes(logs)
    assert [s for s, _ in stops] == ["SIGTERM"], logs[-3000:]
    (journaled,) = [n for _, n in stops]
    assert journaled >= 5
    # The restart went on after the last journaled unit and had nothing to cut.
    assert resumes == [(journaled, 0)]
    assert len(read(sweep / JOB / "manifest.json")["resumed"]) == 1
    assert_same_as_uninterrupted(sweep / JOB, local_smoke / JOB)


def test_time_limit_stops_at_a_unit_boundary_and_is_requeued(
    slurm: Cluster, local_smoke: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    # A 1-minute limit with the warning 10 s before it: SLURM checks limits every 30 s, so
    # USR2 comes 20-50 s into each attempt; 27 units of 2 s each outlast the first.
    proc = launch(
        sweep,
        *smoke_args(tmp_path / "caches"),
        "hydra.launcher.timeout_min=1",
        "hydra.launcher.signal_delay_s=10",
        cluster=slurm,
        env={faults.SLOW_ENV: "2"},
    )
    finish(proc, sweep, slurm, timeout=1200)
    logs = job_logs(sweep)
    stops, resumes = stops_and_resumes(logs)
    assert stops and {s for s, _ in stops} == {"SIGUSR2"}, logs[-3000:]
    # An attempt whose signal came after its last unit (in the report) was requeued at once
    # and did only the report again: it resumes with every unit journaled.
    every_unit = units_done(sweep / JOB)
    in_report = [r for r in resumes if r[0] == every_unit]
    assert in_report in ([], [(every_unit, 0)])
    # submitit logs each event to the task's stdout and stderr: counted once by timestamp.
    timed_out = set(re.findall(r"\(([\d:, -]+)\) - Caught signal SIGUSR2 .*timed-out", logs))
    requeued = set(re.findall(r"\(([\d:, -]+)\) - Requeued job \S+ \(\d+ remaining", logs))
    assert len(timed_out) == len(requeued) == len(stops) + len(in_report), logs[-3000:]
    # Each attempt went on from exactly where the one before stopped, with nothing to cut.
    assert resumes == [(n, 0) for _, n in stops] + in_report
    assert len(read(sweep / JOB / "manifest.json")["resumed"]) == len(resumes)
    assert_same_as_uninterrupted(sweep / JOB, local_smoke / JOB)


DISTRACTORS = ROOT / "experiments" / "population" / "distractors"
STUDY_SCRIPT = DISTRACTORS / "run-study.sh"


def test_distractor_study_in_one_command(slurm: Cluster, tmp_path: Path) -> None:
    """The distractor study's one command (docs/sweeps.md) on SLURM, cut to one seed, one
    kind and one dose: both sweeps run as arrays, each job's metrics equal the recorded
    study's, the same command again skips every job, and `place compare --dose-response`
    reads the two sweeps as a distractor study."""
    sweep = tmp_path / "study"
    env = {
        **slurm.env,
        "LAUNCHER": "place_slurm",
        "SEEDS": "0",
        "KINDS": "entity",
        "DOSES": "4",
        "PLACE": " ".join(PLACE),
    }
    command = [
        "bash",
        str(STUDY_SCRIPT),
        str(sweep),
        "hydra.launcher.cpus_per_task=1",
        "hydra.launcher.mem_gb=3",
        "hydra.launcher.timeout_min=20",
    ]

    def study() -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False
        )
        assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    study()
    jobs = ("baseline/s0_d0", "distracted/s0_entity_d4")
    for job in jobs:
        assert read(sweep / job / "metrics.json") == read(DISTRACTORS / job / "metrics.json"), job
        assert read(sweep / job / "manifest.json")["status"] == "complete"
    assert array_ids(sweep / "baseline") and array_ids(sweep / "distracted")
    study()
    logs = job_logs(sweep / "baseline") + job_logs(sweep / "distracted")
    assert logs.count("complete already, skipped") == 2, logs[-3000:]
    out = tmp_path / "dose"
    compare(
        "--dose-response", str(sweep / "baseline"), str(sweep / "distracted"), "--out", str(out)
    )
    assert "kinds entity at doses 4" in (out / "distractors.md").read_text()
