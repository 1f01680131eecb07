"""`place run [overrides] [-m]`: the Hydra app around the factorial experiment.

Configuration and input are checked before Hydra creates a run directory: a typo in an
override, a wrong type or an invalid trajectory exits 2 with a message and writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from hydra.errors import CompactHydraException

from place.errors import PlaceError
from place.runner.config import CONFIG_DIR, CONFIG_NAME  # re-exported: the CLI and tests use them

EXIT_USAGE = 2
EXIT_INVALID = 3
"""The run finished and its records are kept, but it is invalid (factorization check failed)."""


class Reported(Protocol):
    """What the runner reads back from a run's report: the factorization check."""

    @property
    def factorization(self) -> Any: ...


class Reporter(Protocol):
    """(run directory, show the paper's values: None = by the run's own rule, draw the
    plots) -> the metrics document, once written. The runner sits below the report layer,
    so `place.cli` passes `place.report.report.write_report` in rather than the runner
    importing it."""

    def __call__(
        self, run_dir: Path, paper: bool | None = None, plots: bool = True
    ) -> Reported: ...


class SweepJobFailed(CompactHydraException):
    """A multirun job failed; raised so Hydra reports it from any launcher's worker process."""


def _is_hydra_flag(arg: str) -> bool:
    return arg.startswith("-") or arg.startswith("hydra.") or arg.startswith("hydra/")


def precheck(argv: Sequence[str], preflight: bool = True) -> Any:
    """Check the configuration of every job `argv` runs, and for an Ollama model (single
    runs only) the server; raise PlaceError (`ConfigProblems`: one line per problem) if
    anything is wrong. Returns the first job's composed config."""
    return check_jobs(argv, preflight=preflight)[0]


def check_jobs(argv: Sequence[str], preflight: bool = True) -> list[Any]:
    """Compose and check every job's config (each job of a multirun: the cartesian product of
    its sweeps), load its trajectory and check its values against place.runner.config's
    rules, all before anything is written; returns the composed configs in job order."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from place.runner.checks import ConfigProblems, check_config, composition_problem
    from place.runner.config import register_configs
    from place.runner.overrides import override_problems

    register_configs()
    check_targets(argv)
    # The Mem0 / qdrant-client releases the memory layer was checked against: refused here,
    # before Hydra makes a run directory, not when the first store opens.
    from place.memory.mem0_compat import check_versions

    check_versions()
    sweeping = "-m" in argv or "--multirun" in argv
    jobs = _job_overrides(argv, sweeping)
    configs: list[Any] = []
    found: dict[str, list[int]] = {}  # problem -> the jobs that have it
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        # Hydra's own keys (hydra.run.dir=..., hydra/launcher=...) are not part of a job's
        # config: composed with Hydra's config here, so a bad one is refused like any other
        # value instead of ending in Hydra's traceback after the checks.
        own = [a for a in argv if a.lstrip("+~").startswith(("hydra.", "hydra/"))]
        if own:
            try:
                compose(CONFIG_NAME, overrides=own, return_hydra_config=True)
            except (HydraException, OmegaConfBaseException, ValueError) as exc:
                raise ConfigProblems([composition_problem(exc)[0]]) from None
        for num, overrides in enumerate(jobs):
            # Keys the schema lacks (Hydra adds a `+key` silently) and group options with no
            # file under configs/: refused with the allowed ones, and left out of the
            # composition, so the job's other problems are reported with them.
            refused = override_problems(overrides)
            problems: list[str] = list(refused.values())
            remaining = [o for o in overrides if o not in refused]
            while True:
                try:
                    cfg = compose(CONFIG_NAME, overrides=remaining)
                    OmegaConf.resolve(cfg)
                    problems += check_config(cfg)[1]
                except (HydraException, OmegaConfBaseException, ValueError) as exc:
                    problem, key = composition_problem(exc)
                    problems.append(problem)
                    # An override an enum-typed key refused: drop it and compose again, so
                    # the job's other problems are reported with it (not one per attempt).
                    kept = [o for o in remaining if key is None or o.split("=", 1)[0] != key]
                    if len(kept) < len(remaining):
                        remaining = kept
                        continue
                    cfg = None
                break
            configs.append(cfg)
            for problem in problems:
                found.setdefault(problem, []).append(num)
    if found:
        raise ConfigProblems(
            [
                _in_jobs(problem, nums, jobs) if sweeping else problem
                for problem, nums in found.items()
            ]
        )
    if preflight and not sweeping:
        # What the runtime can check (an Ollama server and its models) is checked before
        # Hydra creates the run directory.
        preflight_note(configs, sweeping)
    return configs


def preflight_note(configs: Sequence[Any], sweeping: bool) -> str | None:
    """Run the runtime's preflight (`LLMRuntime.preflight`; raises `PlaceError` naming what
    is missing) and return its note for `place run --check` ("Ollama ready"), if any.

    Single runs only: in a multirun nothing is asked, and the note says what was skipped
    when some job's runtime has a preflight ("Ollama preflight skipped in a multirun")."""
    from place.runtime.registry import configured_runtime

    if not sweeping:
        return configured_runtime(configs[0].model).preflight()
    skipped = sorted(
        {label for cfg in configs if (label := configured_runtime(cfg.model).preflight_label)}
    )
    return f"{' and '.join(skipped)} preflight skipped in a multirun" if skipped else None


_FLAGS_WITH_VALUE = frozenset(
    {"--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name", "-cn"}
    | {"--config-dir", "-cd", "--experimental-rerun"}
)
"""Hydra's command-line flags that take a separate value."""


def _job_overrides(argv: Sequence[str], sweeping: bool) -> list[list[str]]:
    """The overrides of each job, as Hydra's basic sweeper expands them (`a=1,2 b=x,y` is four
    jobs; `range(...)` and `choice(...)` sweeps too; `glob(...)` is refused)."""
    overrides: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg in _FLAGS_WITH_VALUE:
            next(args, None)  # e.g. `--cfg job`: the value is not an override
        elif not _is_hydra_flag(arg):
            overrides.append(arg)
    if not sweeping:
        return [overrides]
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ValueType
    from hydra.errors import HydraException

    from place.runner.overrides import config_groups

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise PlaceError(f"bad configuration: {exc}") from None
    groups = config_groups()
    for o in parsed:
        if o.value_type == ValueType.GLOB_CHOICE_SWEEP:
            # Hydra's glob reads a group's options from every provider, so it would also
            # sweep the group's `<group>_schema` entry (not an option, docs/configuration.md).
            group = o.key_or_group.lstrip("+~")
            options = groups.get(group)
            listed = f"; list the options instead: {group}={','.join(options)}" if options else ""
            raise PlaceError(
                f"{o.input_line}: glob() sweeps are not supported (Hydra's glob would also "
                f"match configuration schemas){listed}"
            )
    try:
        return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
    except HydraException as exc:
        raise PlaceError(f"bad configuration: {exc}") from None


def _in_jobs(problem: str, nums: list[int], jobs: list[list[str]]) -> str:
    """`problem` with the sweep jobs that have it, numbered from 0 as Hydra numbers them
    (`hydra.job.num`, its `#N : ...` launch lines, the `N_<model>` job directories):
    `(sweep job #1 of jobs #0-#1: experiment.k=0 trajectory=smoke)`, or for several
    `(sweep jobs #2, #5 of jobs #0-#17)`."""
    first, rest = problem.split("\n", 1) if "\n" in problem else (problem, "")
    which = ", ".join(f"#{n}" for n in nums)
    span = f"jobs #0-#{len(jobs) - 1}" if len(jobs) > 1 else "job #0"
    where = (
        f"sweep job {which} of {span}: {' '.join(jobs[nums[0]])}"
        if len(nums) == 1
        else f"sweep jobs {which} of {span}"
    )
    return f"{first} ({where})" + (f"\n{rest}" if rest else "")


ALLOWED_TARGET_PREFIXES = ("hydra_plugins.",)
"""The only `_target_`s a run may name: Hydra's launcher plugins. `place` itself never calls
`hydra.utils.instantiate`, so an override cannot make a run construct arbitrary objects."""


def check_targets(argv: Sequence[str]) -> None:
    for arg in argv:
        key, sep, value = arg.partition("=")
        if (
            sep
            and key.rsplit(".", 1)[-1].lstrip("+~") == "_target_"
            and not value.startswith(ALLOWED_TARGET_PREFIXES)
        ):
            raise PlaceError(
                f"override {arg!r} names a _target_ outside Hydra's launcher plugins; "
                f"allowed prefixes: {', '.join(ALLOWED_TARGET_PREFIXES)}"
            )


def resolve_path(path: str) -> str:
    return path if os.path.isabs(path) else str(Path(os.getcwd(), path))


def run_main(argv: Sequence[str], report: Reporter | None = None) -> int:
    """Entry point of `place run`; returns the process exit code. With `--check`: run the
    checks (and the runtime's preflight), print one summary line and exit, creating nothing.
    With `-h`/`--help` (or `--hydra-help`): help, exit 0; nothing is checked, run or created."""
    if {"-h", "--help", "--hydra-help"} & set(argv):
        import hydra
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        from place.runner.checks import composition_problem
        from place.runner.config import register_configs

        if "--hydra-help" not in argv:
            print(
                "usage: place run [--check] [-m | --multirun] [key=value ...] [Hydra flags]\n\n"
                "Run the factorial experiment (a Hydra app). Every job's configuration and input\n"
                "are checked before anything is created.\n\n"
                "  key=value       override a configuration value (docs/configuration.md)\n"
                "  -m, --multirun  one job per combination of swept values (docs/sweeps.md)\n"
                "  --check         only check every job (and the Ollama server), create nothing\n"
                "  --cfg job       print the composed configuration instead of running\n"
                "  -h, --help      this help, then the config groups and the composed config\n"
                "  --hydra-help    Hydra's own flags\n\n"
                "exit status: 0 done; 1 a sweep job failed; 2 bad configuration or input, nothing\n"
                "created; 3 the run finished but its factorization check failed (records kept,\n"
                "manifest and tables marked invalid)\n"
            )
        register_configs()

        @hydra.main(config_path=str(CONFIG_DIR), config_name=CONFIG_NAME, version_base=None)
        def _help(cfg: Any) -> None:  # never called: Hydra prints its help and exits
            raise AssertionError("Hydra ran a job instead of printing its help")

        saved, sys.argv = sys.argv, ["place run", *argv, "hydra.help.app_name=place run"]
        try:
            _help()
        except SystemExit as exc:  # Hydra exits 0 after its help
            return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except (HydraException, OmegaConfBaseException, ValueError) as exc:  # a bad override
            print(f"place run: error: {composition_problem(exc)[0]}", file=sys.stderr)
            return EXIT_USAGE
        finally:
            sys.argv = saved
        return 0
    checking = "--check" in argv
    argv = [a for a in argv if a != "--check"]
    sweeping = "-m" in argv or "--multirun" in argv
    try:
        # `--check` runs the preflight itself, for its note.
        jobs = check_jobs(argv, preflight=not checking)
        note = preflight_note(jobs, sweeping) if checking else None
        from place.runner.slurm_check import check_controller, uses_slurm

        if sweeping and uses_slurm(argv):
            check_controller()
        # Before Hydra writes anything into a job's directory: resume only the same run.
        from place.runner.resume import guard_jobs

        guard_jobs(argv, _job_overrides(argv, sweeping), jobs)
    except PlaceError as exc:
        for problem in getattr(exc, "problems", None) or [str(exc)]:
            print(f"place run: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if checking:
        print(f"config ok: {len(jobs)} job(s) checked{f'; {note}' if note else ''}")
        return 0
    import hydra

    from place.runner.config import register_configs

    register_configs()
    outcome: dict[str, int] = {"code": 0}

    @hydra.main(config_path=str(CONFIG_DIR), config_name=CONFIG_NAME, version_base=None)
    def _task(cfg: Any) -> None:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        run_dir = Path(HydraConfig.get().runtime.output_dir)
        sweep = HydraConfig.get().mode == RunMode.MULTIRUN
        try:
            if sweep and finished_job(cfg, run_dir):
                print(f"place run: {run_dir}: complete already, skipped (a resumed sweep)")
                return
            metrics = run_experiment(cfg, run_dir, report)
            print(where_it_is(run_dir))
            fact = metrics.factorization
            if not fact.ok:
                print(
                    f"place run: INVALID: factorization check failed in {run_dir} (first "
                    f"mismatch: {fact.first_mismatch}); records kept, manifest and tables "
                    "marked invalid",
                    file=sys.stderr,
                )
                outcome["code"] = EXIT_INVALID
                if HydraConfig.get().mode == RunMode.MULTIRUN:
                    raise SweepJobFailed(f"place run: sweep job {run_dir} is invalid")
        except PlaceError as exc:
            print(f"place run: error: {exc}", file=sys.stderr)
            outcome["code"] = EXIT_USAGE
            if HydraConfig.get().mode == RunMode.MULTIRUN:  # the job may run in another process
                raise SweepJobFailed(f"place run: error: sweep job {run_dir} failed") from None

    saved = sys.argv
    sys.argv = ["place run", *argv]
    try:
        _task()
    finally:
        sys.argv = saved
    return outcome["code"]


def finished_job(cfg: Any, run_dir: Path) -> bool:
    """This sweep job's directory holds it, complete (`place.runner.resume.finished_same`)."""
    from omegaconf import OmegaConf

    from place.reference.validate import load_trajectory
    from place.runner.resume import finished_same

    if not (run_dir / "manifest.json").is_file():
        return False
    path = run_dir / "trajectory.yaml" if cfg.trajectory.seed is not None else None
    if path is None:
        path = Path(resolve_path(cfg.trajectory.path))
    if not path.is_file():
        return False
    config = cast(dict[str, Any], OmegaConf.to_container(cfg, resolve=True))
    return finished_same(run_dir, config, load_trajectory(path).sha256)


def where_it_is(run_dir: Path) -> str:
    """What `place run` prints at the end: where the run's outputs are."""
    return "\n".join(
        [
            f"place run: done: {run_dir}",
            f"  tables   {run_dir / 'tables' / 'tables.md'} (and .csv, .tex per table)",
            f"  plots    {run_dir / 'plots'}/",
            f"  metrics  {run_dir / 'metrics.json'}",
            f"  records  {run_dir / 'records'}/ (`place report {run_dir}` recomputes the above "
            "from them)",
        ]
    )


def run_experiment(cfg: Any, run_dir: Path, report: Reporter | None) -> Reported:
    """Run (or resume) one job into `run_dir`, then hand it to `report` (metrics, tables,
    plots); returns what `report` returned."""
    if report is None:
        raise PlaceError("place run: no reporter given (the CLI passes place.report's)")
    import json

    from omegaconf import OmegaConf

    from place.atomic import write_text
    from place.records import RunRecords, truncated_calls
    from place.reference.replay import replay
    from place.reference.validate import load_trajectory
    from place.runner.journal import Journal
    from place.runner.manifest import base_manifest
    from place.runner.resume import ResumeRefused, guard
    from place.runner.stack import open_stack
    from place.runner.wiring import (
        answer_free,
        build_experiment,
        component_params,
        core_of,
        design_of,
        model_doc,
        recorded_params,
        run_header,
    )

    started = time.perf_counter()
    traj_path, generated = trajectory_file(cfg.trajectory, run_dir)
    trajectory = load_trajectory(traj_path)
    reference = replay(trajectory)
    design = design_of(cfg)
    config = cast(dict[str, Any], OmegaConf.to_container(cfg, resolve=True))  # a mapping
    # `run_main` checked the directory before Hydra wrote into it; checked again here, before
    # the runner writes, for any way in that did not pass there.
    guard(run_dir, config, trajectory.sha256)
    with Journal(run_dir) as journal, open_stack(cfg, run_dir) as stack:
        if journal.units_done:
            # Said on every resume, so a requeued SLURM job's log shows where it went on.
            print(
                f"place run: resuming {run_dir}: {journal.units_done} units journaled, "
                f"{journal.cut_lines} record lines of an unfinished unit cut",
                file=sys.stderr,
                flush=True,
            )
        header = run_header(
            trajectory,
            reference,
            design,
            {
                "id": trajectory.id,
                "sha256": trajectory.sha256,
                "path": cfg.trajectory.path if generated is None else "trajectory.yaml",
                **({"generated": generated} if generated is not None else {}),
            },
            model_doc(cfg, stack.identity),
            core_of(cfg, trajectory, design),
            answer_free(cfg),
        )
        seeds = {
            "bootstrap": int(cfg.seeds.bootstrap),
            "resamples": int(cfg.seeds.resamples),
            "model": int(cfg.model.seed),
        }
        manifest = base_manifest(config, header, seeds, Path(__file__).resolve().parents[2])
        manifest["model_identity"] = stack.identity.model_dump()
        # Each parameterised producer and policy with the values it is built with.
        manifest["parameters"] = recorded_params(design, component_params(cfg, design))
        previous = run_dir / "manifest.json"
        if previous.exists():  # a resumed run keeps when it began, and says when it resumed
            before = json.loads(previous.read_text(encoding="utf-8"))
            if before.get("model_identity") not in (None, manifest["model_identity"]):
                raise ResumeRefused(
                    f"{run_dir}: holds an interrupted run of another model identity "
                    f"({before['model_identity'].get('identity')} in the directory, "
                    f"{stack.identity.identity} for this run: the weights changed); it is "
                    "resumed only by the same model: choose another hydra.run.dir"
                )
            manifest["resumed"] = [*before.get("resumed", []), manifest["created"]]
            manifest["created"] = before.get("created", manifest["created"])
        write_text(run_dir / "manifest.json", json.dumps(manifest, indent=2) + "\n")
        experiment = build_experiment(
            cfg, trajectory, reference, stack.backend, stack.chat, journal, on_phase=stack.set_phase
        )
        # Only the units wait for their boundary: a stop signal before them (start-up) or
        # after them (the report) takes effect at once, and the requeued job does that part
        # again from the journal.
        with stop_at_boundaries(journal):
            try:
                experiment.run()
            finally:
                experiment.close()
        metrics_started = time.perf_counter()
        stack.set_phase("the report (metrics, tables, plots)")
        # The paper's rows follow one rule in `place run` and `place report` (the trajectory
        # is the paper's and paper_values is on): the reporter reads both from the run.
        metrics = report(run_dir, None, plots=bool(cfg.plots))
        timings = stack.timings()
        timings["governance"] = round(experiment.governance_seconds, 3)
        timings["metrics"] = round(time.perf_counter() - metrics_started, 3)
        timings["wall"] = round(time.perf_counter() - started, 3)
        manifest.update(
            status="complete",
            timings=timings,
            cache=stack.cache.stats(),
            mem0_failures=stack.backend.mem0_error_count,
            # From the step records, so a resumed run counts the steps of every session.
            truncated_calls=truncated_calls(
                RunRecords.load(run_dir / "records", only=("step",)).steps
            ),
        )
        fact = metrics.factorization
        if not fact.ok:
            manifest["invalid"] = "factorization"
            manifest["first_mismatch"] = fact.first_mismatch
        write_text(run_dir / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return metrics


@contextlib.contextmanager
def stop_at_boundaries(journal: Any) -> Iterator[None]:
    """In a SLURM sweep job, SLURM's stop signals wait for the end of the unit in flight
    (`place.runner.preemption`); elsewhere nothing changes."""
    from place.runner.preemption import for_job

    launcher = None
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except ValueError:  # not inside a Hydra job (tests call run_experiment directly)
        pass
    stop = for_job(launcher)
    if stop is None:
        yield
        return
    with stop:
        journal.on_commit.append(stop.boundary)
        stop.units_done = journal.units_done
        try:
            yield
        finally:
            journal.on_commit.remove(stop.boundary)


def trajectory_file(t: Any, run_dir: Path) -> tuple[Path, dict[str, Any] | None]:
    """The trajectory file of a job: `trajectory.path`, or, when `trajectory.seed` is set, the
    generated trajectory written into the run directory (again on a resume: the generator
    depends only on seed, design, filler and the package version, so the bytes are the same)."""
    from place.runner.trajectory_source import is_made, made

    if not is_made(t):
        return Path(resolve_path(t.path)), None
    from place.atomic import write_text

    path = run_dir / "trajectory.yaml"
    result = made(t, None if t.path is None else str(resolve_path(t.path)))
    write_text(path, result.text)
    return path, result.info
