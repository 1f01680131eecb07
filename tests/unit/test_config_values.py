"""Every configuration value is checked before anything runs (issue 18).

A refused value exits 2 with `key=value: must be ...`, no traceback, and no run or sweep
directory; `place run --check` runs the same checks and creates nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from place.runner import app
from place.runner.app import check_jobs, run_main
from place.runner.checks import (
    DOC_BEGIN,
    DOC_END,
    SchemaField,
    configuration_markdown,
    dialogue_before,
    schema_fields,
)

ROOT = Path(__file__).parents[2]
FIELDS = schema_fields()
NUMERIC = [f for f in FIELDS if f.numeric]


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


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = run_main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("place run: error: ")
    return err


def _bad_values(f: SchemaField) -> list[object]:
    """Values just outside the field's bounds (below the lower, above the upper)."""
    out: list[object] = []
    if f.lower is not None:
        bound, inclusive = f.lower
        out.append(bound - 1 if inclusive else bound)
    if f.upper is not None:
        bound, inclusive = f.upper
        out.append(bound + 1 if inclusive else bound)
    return [int(v) if f.type is int else float(v) for v in out]


# --- the schema states every rule once --------------------------------------------------------


def test_every_key_is_documented_and_every_number_bounded() -> None:
    assert {f.key for f in FIELDS} >= {"experiment.k", "model.n_ctx", "cache.mode"}
    for f in FIELDS:
        assert f.doc, f"{f.key} has no Doc"
        if f.numeric:
            assert f.lower is not None, f"{f.key} has no lower bound"
        if f.type is str:
            assert f.rules or f.key == "answer.empty_memory", f"{f.key} has no rule"


def test_docs_list_every_key_and_match_the_schema() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for f in FIELDS:
        assert f"| `{f.key}` |" in doc, f"docs/configuration.md lacks {f.key}"
    generated = doc[doc.index(DOC_BEGIN) : doc.index(DOC_END) + len(DOC_END)] + "\n"
    assert generated == configuration_markdown(), (
        "docs/configuration.md is stale: run .venv/bin/python -m place.runner.checks"
    )


# --- refused values ---------------------------------------------------------------------------

LISTED = [
    ("experiment.k=0", "experiment.k=0: must be an integer >= 1"),
    ("experiment.k=-3", "experiment.k=-3: must be an integer >= 1"),
    ("model.n_ctx=10", "model.n_ctx=10: must be an integer from 256"),
    ("answer.max_tokens=-1", "answer.max_tokens=-1: must be an integer >= 1"),
    ("model.timeout_s=0", "model.timeout_s=0.0: must be a number > 0"),
    ("model.n_threads=0", "model.n_threads=0: must be null or an integer from 1"),
    ("model.seed=-1", "model.seed=-1: must be an integer from 0 to 4294967294"),
    ("cache.mode=bogus", "cache.mode=bogus: must be one of: read-write, replay-only"),
]


@pytest.mark.parametrize(("override", "message"), LISTED)
def test_listed_values_exit_2_before_anything_is_written(
    override, message, tmp_path, capsys
) -> None:
    run_dir = tmp_path / "run"
    err = _refused([override, "trajectory=smoke", f"hydra.run.dir={run_dir}"], capsys)
    assert err.startswith(f"place run: error: {message}")
    assert err.count("\n") == 1  # one line: one problem
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("key", "value"),
    [(f.key, v) for f in NUMERIC for v in _bad_values(f)],
    ids=lambda x: str(x),
)
def test_every_numeric_key_refuses_out_of_range_values(key, value, tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    err = _refused([f"{key}={value}", "trajectory=smoke", f"hydra.run.dir={run_dir}"], capsys)
    assert f"{key}=" in err and "must be" in err
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (["model.runtime=vllm"], "model.runtime"),
        (["backend.kind=qdrant-cloud"], "backend.kind"),
        (["model.gguf=/nonexistent/model.gguf"], "model.gguf"),
        (["model.gguf=README.md"], "model.gguf"),  # exists, but is not a GGUF
        (["trajectory.path=/nonexistent/traj.yaml"], "trajectory.path"),
        (["cache.path=/nonexistent/dir/cache.sqlite"], "cache.path"),
        (["model.name=a/b"], "model.name"),
        (["model.base_url=ftp://host"], "model.base_url"),
        (["answer.user='{items} only'"], "answer.user"),
        (["answer.dialogue='{turns} {extra}'"], "answer.dialogue"),
        (["backend=qdrant-server", "backend.url=null"], "backend.url"),
        (["model=qwen2.5-3b", "model.ollama_model=null"], "model.ollama_model"),
        (["model.max_tokens=5000"], "model.max_tokens"),
        (["answer.max_tokens=4096"], "answer.max_tokens"),
        (["model.n_ctx=1024"], "model.n_ctx"),  # Mem0's prompts do not fit
        (["experiment.k=400"], "model.n_ctx"),  # the answer prompt does not fit
        (["model=qwen2.5-7b", "model.n_ctx=2048"], "model.n_ctx"),
    ],
)
def test_other_rules_exit_2_naming_the_key(overrides, key, tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    err = _refused([*overrides, "trajectory=smoke", f"hydra.run.dir={run_dir}"], capsys)
    assert f"{key}=" in err and "must be" in err
    assert not run_dir.exists()


def test_all_problems_are_reported_one_line_each(tmp_path, capsys) -> None:
    err = _refused(
        ["experiment.k=0", "model.seed=-1", "cache.mode=x", f"hydra.run.dir={tmp_path}/r"], capsys
    )
    lines = err.splitlines()
    assert len(lines) == 3
    assert {line.split("=", 1)[0] for line in lines} == {
        "place run: error: experiment.k",
        "place run: error: model.seed",
        "place run: error: cache.mode",
    }


def test_prompt_rule_names_what_does_not_fit(tmp_path, capsys) -> None:
    err = _refused(["experiment.k=400", "trajectory=smoke", f"hydra.run.dir={tmp_path}/r"], capsys)
    assert "model.n_ctx=4096: must be >=" in err
    assert "experiment.k=400" in err and "answer.max_tokens=32" in err


def test_the_command_exits_2_without_a_traceback(tmp_path) -> None:
    run_dir = tmp_path / "run"
    place = Path(sys.executable).parent / "place"
    proc = subprocess.run(
        [str(place), "run", "experiment.k=0", "trajectory=smoke", f"hydra.run.dir={run_dir}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "experiment.k=0: must be an integer >= 1" in proc.stderr
    assert not run_dir.exists()


def test_the_checks_keep_mem0_telemetry_off() -> None:
    """The prompt check imports mem0 (for its prompts) before place.memory would."""
    code = (
        "import sys\n"
        "from place.runner.app import check_jobs\n"
        "check_jobs(['trajectory=smoke'], preflight=False)\n"
        "tele = sys.modules['mem0.memory.telemetry']\n"
        "assert tele.MEM0_TELEMETRY is False, 'telemetry on'\n"
        "assert getattr(tele.client_telemetry, 'posthog', None) is None, 'PostHog client'\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MEM0_TELEMETRY"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


# --- multiruns: every job is checked before the first starts ----------------------------------


def test_one_bad_job_in_a_sweep_starts_nothing(tmp_path, capsys, _in_repo_and_no_real_run):
    sweep_dir = tmp_path / "sweep"
    err = _refused(
        ["-m", "experiment.k=5,0", "trajectory=smoke", f"hydra.sweep.dir={sweep_dir}"], capsys
    )
    # Numbered from 0, as Hydra numbers the jobs (hydra.job.num, the `1_<model>` directory).
    assert "experiment.k=0: must be an integer >= 1 (sweep job #1 of jobs #0-#1:" in err
    assert not sweep_dir.exists()
    assert _in_repo_and_no_real_run == []


def test_a_bad_job_deep_in_a_product_is_found(tmp_path, capsys) -> None:
    sweep_dir = tmp_path / "sweep"
    err = _refused(
        [
            "--multirun",
            "model=smollm2-135m,qwen2.5-3b",
            "experiment.k=range(1,4)",
            "model.seed=1,2,-5",
            "trajectory=smoke",
            f"hydra.sweep.dir={sweep_dir}",
        ],
        capsys,
    )
    # 2 x 3 x 3 jobs; the six with seed -5 share one line
    assert err.count("\n") == 1
    # jobs in Hydra's order (the last key varies fastest): seed -5 is every third job from #2
    assert (
        "model.seed=-5: must be an integer from 0 to 4294967294 (sweep jobs "
        "#2, #5, #8, #11, #14, #17 of jobs #0-#17)"
    ) in err
    assert not sweep_dir.exists()


def test_sweeps_expand_to_every_job() -> None:
    jobs = check_jobs(
        ["-m", "model=smollm2-135m,qwen2.5-7b", "experiment.k=range(2,5)", "trajectory=smoke"],
        preflight=False,
    )
    got = [(cfg.model.name, cfg.experiment.k) for cfg in jobs]
    assert got == [(m, k) for m in ("smollm2-135m", "qwen2.5-7b") for k in (2, 3, 4)]


# --- place run --check -------------------------------------------------------------------------


def _hydra_outputs() -> list[str]:
    """Everything under the directories a Hydra run or sweep writes to by default."""
    return sorted(str(p) for d in ("runs", "multirun", "outputs") for p in (ROOT / d).glob("**/*"))


def test_check_passes_and_creates_nothing(tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    before = _hydra_outputs()
    code = run_main(["--check", "trajectory=smoke", f"hydra.run.dir={run_dir}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "config ok: 1 job(s) checked\n"
    assert not run_dir.exists()
    assert _hydra_outputs() == before


def test_check_refuses_a_bad_value(tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    err = _refused(
        ["--check", "trajectory=smoke", "model.n_ctx=10", f"hydra.run.dir={run_dir}"], capsys
    )
    assert "model.n_ctx=10" in err
    assert not run_dir.exists()


def test_check_counts_sweep_jobs(tmp_path, capsys) -> None:
    code = run_main(
        ["--check", "-m", "experiment.k=3,5", "trajectory=smoke", f"hydra.sweep.dir={tmp_path}/s"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out == "config ok: 2 job(s) checked\n"
    assert not (tmp_path / "s").exists()


def test_check_passes_the_default_configuration(capsys) -> None:
    before = _hydra_outputs()
    assert run_main(["--check"]) == 0
    assert capsys.readouterr().out == "config ok: 1 job(s) checked\n"
    assert _hydra_outputs() == before


@pytest.mark.parametrize("model", ["qwen2.5-3b", "qwen2.5-7b"])
def test_check_runs_the_ollama_preflight(model, tmp_path, capsys) -> None:
    from fakes.ollama_server import FakeOllamaServer

    tag = model.replace("-", ":")
    with FakeOllamaServer(
        models={tag: "sha256-fake-qwen", "nomic-embed-text:latest": "sha256-fake-nomic"}
    ) as server:
        code = run_main(["--check", f"model={model}", f"model.base_url={server.url}"])
        asked = [r.path for r in server.requests]
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "config ok: 1 job(s) checked; Ollama ready\n"
    assert "/api/tags" in asked

    with FakeOllamaServer(models={"nomic-embed-text:latest": "sha256-fake"}) as server:
        err = _refused(["--check", f"model={model}", f"model.base_url={server.url}"], capsys)
    assert f"ollama pull {tag}" in err


@pytest.mark.parametrize("model", ["smollm2-135m", "qwen2.5-3b", "qwen2.5-7b"])
@pytest.mark.parametrize("trajectory", ["primary", "smoke"])
@pytest.mark.parametrize("experiment", ["all", "primary", "utility", "closed_loop"])
def test_shipped_configs_pass(model, trajectory, experiment) -> None:
    [cfg] = check_jobs(
        [f"model={model}", f"trajectory={trajectory}", f"experiment={experiment}"],
        preflight=False,
    )
    assert cfg.model.name == model


# --- the prompt estimate follows the experiment ------------------------------------------------


@pytest.mark.parametrize("name", ["smoke", "primary"])
def test_dialogue_estimate_is_the_experiments_dialogue(name) -> None:
    from place.reference.validate import load_trajectory
    from place.runner.experiment import Experiment

    traj = load_trajectory(ROOT / "trajectories" / f"{name}.yaml")
    answers = {q.id: "" for _, _, q in traj.queries()}
    stub = SimpleNamespace(journal=SimpleNamespace(state={"closed_loop": {"css": answers}}))
    for conv, turn, _ in traj.queries():
        expected = Experiment._dialogue(stub, conv, turn, "css")  # type: ignore[arg-type]  # reason: a stub with only the journal state
        assert dialogue_before(conv, turn)[0] == expected


def test_hydra_app_composes_the_annotated_schema(tmp_path, capsys) -> None:
    """The real entry point (@hydra.main) reads the same schema; `--cfg job` prints the
    composed config without running or creating anything."""
    run_dir = tmp_path / "run"
    code = run_main(
        ["--cfg", "job", "trajectory=smoke", "experiment.k=3", f"hydra.run.dir={run_dir}"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "  k: 3\n" in out and "  mode: read-write\n" in out
    assert not run_dir.exists()


def test_the_filler_bound_is_the_generators() -> None:
    import typing

    from annotated_types import Le

    from place.generate import MAX_FILLER
    from place.runner.config import TrajectoryConfig

    meta = typing.get_type_hints(TrajectoryConfig, include_extras=True)["filler"].__metadata__
    assert [m.le for m in meta if isinstance(m, Le)] == [MAX_FILLER]


def test_doctor_reports_what_an_ollama_run_gets(capsys) -> None:
    from fakes.ollama_server import FakeOllamaServer

    from place.runner.doctor import doctor_main

    with FakeOllamaServer() as server:
        code = doctor_main(["model=qwen2.5-7b", f"model.base_url={server.url}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = dict(line.split(None, 1) for line in out.splitlines())
    assert report["model_context_length"] == "32768"
    assert report["modelfile_num_ctx"] == "2048"
    assert report["run_num_ctx"] == "8192"  # configs/model/qwen2.5-7b.yaml
    assert report["loaded"] == "False"

    with FakeOllamaServer(context_length=4096) as server:
        code = doctor_main(["model=qwen2.5-7b", f"model.base_url={server.url}"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "n_ctx=8192 exceeds the context length of qwen2.5:7b" in err


def test_doctor_on_the_embedded_model_prints_its_settings(capsys) -> None:
    from place.runner.doctor import doctor_main

    assert doctor_main(["model.n_ctx=8192"]) == 0
    out = capsys.readouterr().out
    assert "run_n_ctx       8192" in out and "llamacpp" in out
