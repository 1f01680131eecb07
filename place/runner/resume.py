"""Resume only what can be resumed: a run directory is reopened only by the run it holds.

`place run` writes into an existing run directory only to resume the same run after an
interruption. Before Hydra or the runner writes anything, every job's run directory is
compared with the job: a directory holding a finished run is never reopened for writing, and
one holding an interrupted run is resumed only when every setting that changes what the run
records is the same (the trajectory by content, the design and its parameters, the model,
the backend, the experiment's sections and budget, the answer prompt, the seeds). Anything
else is refused with exit 2, naming each differing setting with both values, and nothing in
the directory changes. Records without a manifest are refused too. A directory with no
record in it (new, a pre-placed LLM cache, what a failed start leaves) is used as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from place.errors import PlaceError
from place.mappings import flatten

RECORD_NEUTRAL = frozenset(
    {
        "cache.mode",
        "cache.path",
        "progress",
        "paper_values",
        "plots",
        "answer.concurrency",
        "model.timeout_s",
        "model.retries",
        "seeds.bootstrap",
        "seeds.resamples",
        "trajectory.name",
        "trajectory.path",
        "experiment.name",
    }
)
"""Settings a resume may change: they change neither what a run records nor its inputs.
Labels (`trajectory.name`, `experiment.name`), where the trajectory file lies (its content
is compared instead), how the cache is used (every answer it holds is the model's), how
many answer calls go at once (records do not depend on it), patience with the model
(timeouts, retries), what is shown (progress, the paper's values, plots) and the bootstrap, which
`place report` recomputes from the records. docs/decisions.md, "Resume only what can be
resumed"."""


class ResumeRefused(PlaceError):
    """The run directory holds a finished run, or another run, or records of no known run."""


def holds_records(run_dir: Path) -> bool:
    """A unit completed here (progress.json) or some record line was written."""
    if (run_dir / "progress.json").exists():
        return True
    records = run_dir / "records"
    return records.is_dir() and any(p.stat().st_size > 0 for p in records.glob("*.jsonl"))


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, str) and (len(value) > 60 or "\n" in value):
        return repr(value[:57] + "...")
    return json.dumps(value) if isinstance(value, bool) else str(value)


def differences(
    recorded: Mapping[str, Any], config: Mapping[str, Any], recorded_sha: Any, sha: str
) -> list[str]:
    """Every record-changing setting that differs between a directory's manifest (its
    `config` and trajectory sha256) and a new run's resolved config, as `key: recorded (in
    the directory) != new (this run)`, in key order."""
    old, new = flatten(recorded), flatten(config)
    out = []
    if recorded_sha != sha:
        out.append(f"trajectory (sha256): {recorded_sha} in the directory != {sha} for this run")
    for key in sorted(set(old) | set(new)):
        if key in RECORD_NEUTRAL:
            continue
        a, b = old.get(key, "(not set)"), new.get(key, "(not set)")
        if a != b:
            out.append(f"{key}: {_show(a)} in the directory != {_show(b)} for this run")
    return out


def guard(run_dir: Path, config: Mapping[str, Any], trajectory_sha: str) -> None:
    """Refuse (`ResumeRefused`) unless `run_dir` is new, empty, holds only what a failed start
    leaves, or holds an interrupted run with the same record-changing settings."""
    if not run_dir.exists():
        return
    if not run_dir.is_dir():
        raise ResumeRefused(
            f"{run_dir}: exists and is not a directory; choose another hydra.run.dir"
        )
    manifest_path = run_dir / "manifest.json"
    if not manifest_path.is_file():
        if holds_records(run_dir):
            raise ResumeRefused(
                f"{run_dir}: holds records but no manifest.json, so nobody can tell which run "
                "they belong to; it is not resumed: choose another hydra.run.dir"
            )
        return  # new, or what a run that failed before its first unit leaves (a cache, logs)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeRefused(
            f"{manifest_path}: cannot be read ({exc}); the directory is not resumed: choose "
            "another hydra.run.dir"
        ) from None
    status = manifest.get("status")
    if status != "running":
        raise ResumeRefused(
            f"{run_dir}: holds a finished run (manifest status {status!r}); a finished run is "
            "never reopened for writing: choose another hydra.run.dir (`place report "
            f"{run_dir}` recomputes its metrics, tables and plots from its records)"
        )
    recorded_sha = ((manifest.get("header") or {}).get("trajectory") or {}).get("sha256")
    found = differences(manifest.get("config") or {}, config, recorded_sha, trajectory_sha)
    if found:
        raise ResumeRefused(
            "\n".join(
                [
                    f"{run_dir}: holds an interrupted run of other settings; it is resumed "
                    "only with the same settings, and nothing in it was changed. Differences:",
                    *(f"  {line}" for line in found),
                    "Choose another hydra.run.dir, or resume it with its own settings "
                    f"({run_dir / '.hydra' / 'overrides.yaml'}).",
                ]
            )
        )


def finished_same(run_dir: Path, config: Mapping[str, Any], trajectory_sha: str) -> bool:
    """`run_dir` holds this very job, finished: a complete manifest with the same
    record-changing settings and trajectory. A resumed sweep (an interrupted study run again
    with the same `hydra.sweep.dir`) skips such a job instead of refusing the sweep."""
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if manifest.get("status") != "complete":
        return False
    recorded_sha = ((manifest.get("header") or {}).get("trajectory") or {}).get("sha256")
    return not differences(manifest.get("config") or {}, config, recorded_sha, trajectory_sha)


def run_dirs(argv: Sequence[str], jobs: Sequence[Sequence[str]], sweeping: bool) -> list[Path]:
    """The run directory Hydra will give each job (`hydra.run.dir`, or a multirun's
    `hydra.sweep.dir`/`hydra.sweep.subdir` with the job's number), relative paths against the
    current directory. Hydra's own overrides in `argv` (`hydra.run.dir=...`, `hydra/...`)
    take part; a directory named by the time (the default) is a new one."""
    import os

    from hydra import compose, initialize_config_dir

    from place.runner.config import CONFIG_DIR, CONFIG_NAME

    hydra_overrides = [a for a in argv if a.startswith(("hydra.", "hydra/"))]
    out = []
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        for num, overrides in enumerate(jobs):
            cfg = compose(
                CONFIG_NAME, overrides=[*overrides, *hydra_overrides], return_hydra_config=True
            )
            if sweeping:
                cfg.hydra.job.num = num
                where = Path(str(cfg.hydra.sweep.dir)) / str(cfg.hydra.sweep.subdir)
            else:
                where = Path(str(cfg.hydra.run.dir))
            out.append(where if where.is_absolute() else Path(os.getcwd(), where))
    return out


def guard_jobs(argv: Sequence[str], jobs: Sequence[Sequence[str]], configs: Iterable[Any]) -> None:
    """`guard` every job's run directory before anything is written; all refusals together."""
    from omegaconf import OmegaConf

    from place.runner.checks import trajectory_problems

    sweeping = "-m" in argv or "--multirun" in argv
    problems = []
    for run_dir, cfg in zip(run_dirs(argv, jobs, sweeping), configs, strict=True):
        if not run_dir.exists():
            continue
        trajectory, _ = trajectory_problems(cfg)  # checked already: it loads (cached)
        config = cast(dict[str, Any], OmegaConf.to_container(cfg, resolve=True))
        if sweeping and finished_same(run_dir, config, trajectory.sha256):
            continue  # done in an earlier, interrupted launch of this sweep: skipped
        try:
            guard(run_dir, config, trajectory.sha256)
        except ResumeRefused as exc:
            problems.append(str(exc))
    if problems:
        raise ResumeRefused("\n".join(problems))
