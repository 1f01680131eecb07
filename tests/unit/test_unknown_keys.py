"""Every key of an override is checked, with or without `+`, `++` or `~` (issue 26).

Hydra adds a `+key` silently and suggests `+` for a misspelled key; `place run` refuses both
before anything is written, with the keys allowed at that level and a did-you-mean. A group
option is a YAML file under configs/<group>/, never a ConfigStore `*_schema` entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from place.runner import app
from place.runner.app import run_main
from place.runner.overrides import override_problems

ROOT = Path(__file__).parents[2]
EXPERIMENT_KEYS = (
    "allowed keys of experiment: name, primary, utility, closed_loop, answers, llm_producers, k"
)
TOP_KEYS = (
    "allowed top-level keys: model, design, backend, trajectory, experiment, answer, cache, "
    "seeds, paper_values, progress, plots"
)
MODELS = "allowed: qwen2.5-3b, qwen2.5-7b, smollm2-135m"
KK = f"unknown key experiment.kk; {EXPERIMENT_KEYS} (did you mean experiment.k?)"


@pytest.fixture(autouse=True)
def _in_repo_and_no_real_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Run from the repo; a job that got past the checks fails the test instead of starting
    the real model."""
    started: list[str] = []

    def fake_run(cfg, run_dir, report):  # pragma: no cover - only reached when a check is missing
        started.append(str(run_dir))
        raise AssertionError(f"a job started: {run_dir}")

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(app, "run_experiment", fake_run)
    return started


def _hydra_outputs() -> list[str]:
    """Everything under the directories a Hydra run or sweep writes to by default."""
    return sorted(str(p) for d in ("runs", "multirun", "outputs") for p in (ROOT / d).glob("**/*"))


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The problems `place run argv` prints; it must exit 2 and create nothing."""
    before = _hydra_outputs()
    code = run_main(argv)
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert "Traceback" not in err
    assert _hydra_outputs() == before
    assert err.startswith("place run: error: "), err
    # one problem each (Hydra's own messages may take several lines)
    return [problem.rstrip("\n") for problem in err.split("place run: error: ")[1:]]


def _passes(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = run_main(["--check", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("config ok: ")


UNKNOWN = [
    ("+experiment.kk=3", f"+experiment.kk=3: {KK}"),
    ("+foo=1", f"+foo=1: unknown key foo; {TOP_KEYS}"),
    ("experiment.kk=3", f"experiment.kk=3: {KK}"),
    ("++foo=1", f"++foo=1: unknown key foo; {TOP_KEYS}"),
    ("~experiment.kk", f"~experiment.kk: {KK}"),
    (
        "+design.decay.foo=1",
        "+design.decay.foo=1: unknown key design.decay.foo; allowed keys of design.decay: "
        "eta, kappa, theta",
    ),
    ("model=qwen9", f"model=qwen9: unknown model option qwen9; {MODELS}"),
    ("model=model_schema", f"model=model_schema: unknown model option model_schema; {MODELS}"),
]


@pytest.mark.parametrize("check", [True, False], ids=["check", "run"])
@pytest.mark.parametrize(("override", "message"), UNKNOWN, ids=[o for o, _ in UNKNOWN])
def test_unknown_keys_and_options_exit_2_and_create_nothing(
    override, message, check, tmp_path, capsys
) -> None:
    run_dir = tmp_path / "run"
    argv = [override, "trajectory=smoke", f"hydra.run.dir={run_dir}"]
    assert _refused(["--check", *argv] if check else argv, capsys) == [message]
    assert not run_dir.exists()


def test_schema_entries_are_never_offered(capsys) -> None:
    for group in ("model", "backend", "trajectory", "experiment", "design", "answer"):
        [problem] = _refused([f"{group}=nope"], capsys)
        assert problem.startswith(f"{group}=nope: unknown {group} option nope; allowed: ")
        assert "_schema" not in problem


@pytest.mark.parametrize(
    ("override", "suggestion"),
    [
        ("model=smollm2", "(did you mean smollm2-135m?)"),
        ("design=extnded", "(did you mean extended?)"),
        ("experiment.kk=3", "(did you mean experiment.k?)"),
        ("design.decay.etta=1", "(did you mean design.decay.eta?)"),
        ("desing.decay.eta=1", "(did you mean design.decay.eta?)"),
        ("n_ctx=8192", "(did you mean model.n_ctx?)"),  # the name is a key elsewhere
        ("+seed=1", "(did you mean model.seed or trajectory.seed?)"),
    ],
)
def test_a_close_key_or_option_is_suggested(override, suggestion, capsys) -> None:
    [problem] = _refused(["--check", override], capsys)
    assert problem.endswith(suggestion)


def test_nothing_close_suggests_nothing(capsys) -> None:
    [problem] = _refused(["--check", "+foo=1"], capsys)
    assert "did you mean" not in problem


def test_a_key_under_a_value_is_unknown(capsys) -> None:
    assert _refused(["--check", "paper_values.x=1"], capsys) == [
        "paper_values.x=1: unknown key paper_values.x; paper_values is a value (true or false), "
        "not a section"
    ]


def test_an_unknown_group_path_is_refused(capsys) -> None:
    assert _refused(["--check", "+model/x=y"], capsys) == [
        "+model/x=y: unknown config group model/x; allowed groups: model, design, backend, "
        "trajectory, experiment, answer"
    ]


def test_every_problem_of_the_job_is_reported_together(capsys) -> None:
    assert _refused(
        ["--check", "experiment.kk=3", "model=qwen9", "experiment.k=0", "trajectory=smoke"],
        capsys,
    ) == [
        f"experiment.kk=3: {KK}",
        f"model=qwen9: unknown model option qwen9; {MODELS}",
        "experiment.k=0: must be an integer >= 1",
    ]


# --- multiruns: every job ---------------------------------------------------------------------


@pytest.mark.parametrize("check", [True, False], ids=["check", "run"])
def test_a_sweep_reports_the_jobs_with_an_unknown_key(
    check, tmp_path, capsys, _in_repo_and_no_real_run
) -> None:
    sweep_dir = tmp_path / "sweep"
    argv = ["-m", "experiment.k=3,4", "+foo=1", "trajectory=smoke", f"hydra.sweep.dir={sweep_dir}"]
    # both jobs have it: one line, naming the jobs (as `_in_jobs` words them)
    [problem] = _refused(["--check", *argv] if check else argv, capsys)
    assert problem.startswith(f"+foo=1: unknown key foo; {TOP_KEYS} (sweep jobs ")
    assert not sweep_dir.exists()
    assert _in_repo_and_no_real_run == []


def test_a_sweep_reports_the_job_with_an_unknown_option(tmp_path, capsys) -> None:
    sweep_dir = tmp_path / "sweep"
    problems = _refused(
        [
            "--check",
            "-m",
            "model=smollm2-135m,qwen9",
            "trajectory=smoke",
            f"hydra.sweep.dir={sweep_dir}",
        ],
        capsys,
    )
    [problem] = problems
    assert problem.startswith(f"model=qwen9: unknown model option qwen9; {MODELS} (sweep job ")
    assert problem.endswith(": model=qwen9 trajectory=smoke)")  # the job's overrides
    assert not sweep_dir.exists()


def test_a_swept_unknown_key_is_refused_in_every_job(capsys) -> None:
    problems = _refused(["--check", "-m", "experiment.kk=range(1,3)"], capsys)
    assert [p.split(":", 1)[0] for p in problems] == ["experiment.kk=1", "experiment.kk=2"]
    assert all("unknown key experiment.kk" in p for p in problems)


# --- + and ~ of keys that exist -----------------------------------------------------------------


def test_plus_on_an_existing_key_is_refused_with_what_to_write(capsys) -> None:
    assert _refused(["--check", "+experiment.k=3"], capsys) == [
        "+experiment.k=3: + only adds new keys, and experiment.k exists; write experiment.k=3 "
        "(or ++experiment.k=3)"
    ]


def test_plus_on_a_group_is_refused_with_what_to_write(capsys) -> None:
    for prefix in ("+", "++"):
        assert _refused(["--check", f"{prefix}model=qwen2.5-7b"], capsys) == [
            f"{prefix}model=qwen2.5-7b: {prefix} does not choose a group's option "
            "(configs/config.yaml chooses one already); write model=qwen2.5-7b"
        ]


def test_double_plus_on_an_existing_key_sets_it(capsys) -> None:
    _passes(["++experiment.k=3", "++design.decay.eta=2", "trajectory=smoke"], capsys)


def test_deleting_an_existing_key_is_judged_by_its_value(capsys) -> None:
    # `~experiment.k` removes the value, which the schema then refuses like any other.
    assert _refused(["--check", "~experiment.k", "trajectory=smoke"], capsys) == [
        "experiment.k=null: must be an integer >= 1"
    ]


# --- what is left alone ----------------------------------------------------------------------


def test_known_keys_and_declared_parameters_pass(capsys) -> None:
    _passes(["design.decay.eta=1", "trajectory=smoke"], capsys)
    _passes(["design=extended", "design.decay.eta=1", "trajectory=smoke"], capsys)


@pytest.mark.parametrize(
    "override",
    [
        "experiment.k=3",
        "design.decay.eta=1",
        "trajectory=smoke",
        "hydra/launcher=place_joblib",
        "+hydra/launcher=place_joblib",
        "hydra.run.dir=x",
        "+hydra.job.env_set.X=1",
        "experiment.k=1,2",
        "experiment.k=range(1,4)",
        "experiment.k=choice(1,2)",
        "model=glob(*)",
        "++experiment.k=3",
        "~experiment.k",
        "~experiment",
        "~model=qwen9",  # a group's deletion: Hydra's to judge
        "design.producers.0=append",  # an item of a list
        "model@pkg=x",  # package overrides: Hydra refuses them itself
        "experiment.k",  # does not parse: Hydra says so while composing
    ],
)
def test_left_to_hydra_or_allowed(override) -> None:
    assert override_problems([override]) == {}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("cache=x", "bad configuration: Error merging override cache=x"),
        ("experiment.k", "bad configuration: Error parsing override 'experiment.k'"),
        ("~model=qwen9", "bad configuration: Could not delete 'model=qwen9'."),
    ],
)
def test_other_composition_errors_are_hydras(override, message, capsys) -> None:
    problems = _refused(["--check", override], capsys)
    assert problems[0].startswith(message)


@pytest.mark.parametrize("check", [True, False], ids=["check", "run"])
@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("hydra.foo=1", "Could not override 'hydra.foo'"),
        ("hydra.job.chdir=maybe", "Error merging override hydra.job.chdir=maybe"),
        ("hydra/launcher=nope", "Could not find 'hydra/launcher/nope'"),
    ],
)
def test_a_bad_hydra_override_exits_2_without_a_traceback(
    override, message, check, tmp_path, capsys
) -> None:
    """Hydra's own keys are composed with Hydra's config during the checks; a bad one used
    to pass them and end in Hydra's traceback when the job started."""
    run_dir = tmp_path / "run"
    argv = [override, "trajectory=smoke", f"hydra.run.dir={run_dir}"]
    (problem,) = _refused(["--check", *argv] if check else argv, capsys)
    assert message in problem
    assert not run_dir.exists()


def test_good_hydra_overrides_pass(tmp_path, capsys) -> None:
    _passes(
        ["trajectory=smoke", f"hydra.run.dir={tmp_path / 'run'}", "hydra.job.chdir=false"], capsys
    )


def test_a_glob_sweep_is_refused_with_the_options_to_list(tmp_path, capsys) -> None:
    """Hydra's glob() also matches a group's `<group>_schema` entry, which is not an option:
    refused with the options to write instead, nothing created."""
    argv = ["-m", "model=glob(*)", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    (problem,) = _refused(argv, capsys)
    assert problem == (
        "model=glob(*): glob() sweeps are not supported (Hydra's glob would also match "
        f"configuration schemas); list the options instead: model={MODELS[len('allowed: ') :]}"
    ).replace(", ", ",")
    assert not (tmp_path / "sweep").exists()
