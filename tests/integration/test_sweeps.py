"""Model-scale sweeps: `place run -m ...` with the project's launcher configs.

Fast tests compose the sweep with Hydra's own machinery (the config loader, the basic sweeper's
expansion, `load_sweep_config` per job) and check types and that every job gets its own run
directory. The slow tests run real two-job multiruns through `python -m place.cli run -m` with
the joblib launcher: once against the fake Ollama server (the paper's `model=qwen2.5-3b,qwen2.5-7b`
command, no model runs) and once with the real embedded SmolLM2 (`experiment.k=3,5`).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllamaServer
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from place.runner.app import CONFIG_DIR, CONFIG_NAME, precheck
from place.runner.config import ModelConfig, register_configs, run_schema

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted(p.stem for p in (CONFIG_DIR / "model").glob("*.yaml"))
LAUNCHER_DIR = CONFIG_DIR / "hydra" / "launcher"
# Project launcher config -> the plugin schema it extends (hydra-joblib-launcher and
# hydra-submitit-launcher, both in the `sweep` extra).
LAUNCHERS = {"place_joblib": "JobLibLauncherConf", "place_slurm": "SlurmQueueConf"}


@pytest.fixture(autouse=True)
def _schemas() -> None:
    register_configs()


def _compose(overrides: list[str], hydra_config: bool = True):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(CONFIG_NAME, overrides=overrides, return_hydra_config=hydra_config)


# --- fast: composition ----------------------------------------------------------------------


def test_every_launcher_config_is_tested_and_models_exist() -> None:
    assert sorted(p.stem for p in LAUNCHER_DIR.glob("*.yaml")) == sorted(LAUNCHERS)
    assert {"smollm2-135m", "qwen2.5-3b", "qwen2.5-7b"} <= set(MODELS)


def test_launcher_configs_do_not_shadow_the_plugins() -> None:
    """A project file named like a plugin's ConfigStore entry (joblib, submitit_slurm) would
    replace it and fall back on Hydra's deprecated automatic schema matching; ours extend it."""
    _compose([])  # Hydra discovers the launcher plugins, which register their configs
    stored = {name.removesuffix(".yaml") for name in ConfigStore.instance().list("hydra/launcher")}
    assert {"joblib", "submitit_slurm"} <= stored
    assert not stored & {p.stem for p in LAUNCHER_DIR.glob("*.yaml")}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_sweep_config_composes_typed(launcher: str, model: str) -> None:
    cfg = _compose([f"hydra/launcher={launcher}", f"model={model}"])
    lc = cfg.hydra.launcher
    # Hydra's plugin discovery loads its own copy of the plugin modules: compare by name.
    assert OmegaConf.get_type(lc).__name__ == LAUNCHERS[launcher]
    assert OmegaConf.get_type(cfg.model) is ModelConfig
    assert cfg.model.name == model
    if launcher == "place_joblib":
        assert lc._target_ == "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"
        assert (lc.n_jobs, lc.backend, lc.prefer, lc.require) == (2, "loky", "processes", None)
    else:
        target = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
        assert lc._target_ == target
        assert isinstance(lc.timeout_min, int) and lc.timeout_min > 0
        assert isinstance(lc.cpus_per_task, int) and isinstance(lc.mem_gb, int)
        assert lc.partition is None and lc.setup is None  # placeholders, filled in per cluster
        assert str(lc.submitit_folder).startswith(str(cfg.hydra.sweep.dir))
    # The run part resolves fully and matches the structured schema.
    run = _compose([f"hydra/launcher={launcher}", f"model={model}"], hydra_config=False)
    container = OmegaConf.to_container(run, resolve=True, throw_on_missing=True)
    OmegaConf.merge(OmegaConf.structured(run_schema()), container)


@pytest.mark.parametrize(
    "override",
    [
        "hydra.launcher.n_jobz=2",  # misspelled key
        "hydra.launcher.n_jobs=two",  # wrong type
    ],
)
def test_joblib_launcher_rejects_bad_keys(override: str) -> None:
    with pytest.raises((HydraException, OmegaConfBaseException)):
        _compose(["hydra/launcher=place_joblib", override])


@pytest.mark.parametrize("override", ["hydra.launcher.mem_gb=lots", "hydra.launcher.partion=gpu"])
def test_slurm_launcher_rejects_bad_keys(override: str) -> None:
    with pytest.raises((HydraException, OmegaConfBaseException)):
        _compose(["hydra/launcher=place_slurm", override])


def _job_output_dirs(cli_overrides: list[str]) -> tuple[Path, list[tuple[Path, dict]]]:
    """What Hydra does in a multirun: the sweeper resolves hydra.sweep.dir once and expands the
    sweep; each job's config is loaded with `load_sweep_config` (which copies the resolver cache,
    so ${now:} keeps its value), gets hydra.job.num, and runs in sweep.dir/sweep.subdir."""
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        loader = GlobalHydra.instance().config_loader()
        master = loader.load_configuration(
            CONFIG_NAME, overrides=cli_overrides, run_mode=RunMode.MULTIRUN
        )
        sweep_dir = Path(str(master.hydra.sweep.dir))
        task = OmegaConf.to_container(master.hydra.overrides.task, resolve=False)
        parsed = OverridesParser.create(config_loader=loader).parse_overrides(task)
        jobs = [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
        out = []
        for num, job in enumerate(jobs):
            sweep = loader.load_sweep_config(master, list(job))
            sweep.hydra.job.num = num
            directory = Path(str(sweep.hydra.sweep.dir)) / str(sweep.hydra.sweep.subdir)
            out.append(
                (directory, {"model": sweep.model.name, "k": sweep.experiment.k, "num": num})
            )
        return sweep_dir, out


@pytest.mark.parametrize(
    "sweep",
    [
        ["model=qwen2.5-3b,qwen2.5-7b"],
        ["hydra/launcher=place_joblib", "model=smollm2-135m,qwen2.5-3b,qwen2.5-7b"],
        ["hydra/launcher=place_slurm", "model=qwen2.5-3b,qwen2.5-7b", "experiment=primary"],
        [
            "hydra/launcher=place_joblib",
            "trajectory=smoke",
            "experiment=primary",
            "experiment.k=3,5",
        ],
    ],
)
def test_each_sweep_job_gets_its_own_run_directory(sweep: list[str]) -> None:
    sweep_dir, jobs = _job_output_dirs(sweep)
    dirs = [d for d, _ in jobs]
    assert len(jobs) >= 2
    assert len(set(dirs)) == len(dirs)  # distinct run dirs: qdrant/, history/, cache, records
    assert {d.parent for d in dirs} == {sweep_dir}  # all under the one sweep dir
    experiment = "primary" if "experiment=primary" in sweep else "all"
    assert sweep_dir.parts[:2] == ("multirun", experiment)
    for directory, job in jobs:
        assert directory.name == f"{job['num']}_{job['model']}"
    if "model=qwen2.5-3b,qwen2.5-7b" in sweep:
        assert [j["model"] for _, j in jobs] == ["qwen2.5-3b", "qwen2.5-7b"]
    if "experiment.k=3,5" in sweep:
        assert [j["k"] for _, j in jobs] == [3, 5]


def test_precheck_composes_the_first_value_of_each_sweep() -> None:
    cfg = precheck(
        ["-m", "hydra/launcher=place_joblib", "model=qwen2.5-3b,qwen2.5-7b", "trajectory=smoke"]
    )
    assert cfg.model.name == "qwen2.5-3b"
    assert cfg.trajectory.name == "smoke"


# --- slow: real multiruns through `place run -m` --------------------------------------------


def _multirun(args: list[str], sweep_dir: Path, timeout: float) -> str:
    cmd = [sys.executable, "-m", "place.cli", "run", "-m", "hydra/launcher=place_joblib", *args]
    cmd += [f"hydra.sweep.dir={sweep_dir}", "progress=false"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "error" not in proc.stderr.lower(), out  # a failed job does not change the exit code
    return out


def _check_jobs(sweep_dir: Path, names: list[str], own_cache: bool = True) -> list[dict]:
    jobs = sorted(p for p in sweep_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert [p.name for p in jobs] == names
    manifests = []
    for job in jobs:
        metrics = json.loads((job / "metrics.json").read_text())
        assert metrics["factorization"]["ok"], job
        manifest = json.loads((job / "manifest.json").read_text())
        assert manifest["status"] == "complete"
        assert (job / "qdrant").is_dir() and any((job / "qdrant").iterdir())
        assert (job / "llm_cache.sqlite").is_file() or not own_cache
        assert (job / "records").is_dir() and (job / "history").is_dir()
        manifests.append(manifest)
    return manifests


def _compare(sweep_dir: Path, names: list[str]) -> dict[str, list[list[str]]]:
    out = sweep_dir / "cmp"
    cmd = [sys.executable, "-m", "place.cli", "compare", *[str(sweep_dir / n) for n in names]]
    proc = subprocess.run(
        [*cmd, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tables = {}
    for name in ("table1a", "table1b", "table2a", "table2b"):
        with (out / f"{name}.csv").open(newline="") as f:
            # `#` lines are the table's banner or note (pandas: comment="#"); then the header.
            tables[name] = [r for r in csv.reader(f) if not r[0].startswith("#")][1:]
    assert (out / "tables.md").is_file()
    return tables


@pytest.mark.slow
@pytest.mark.integration
def test_paper_sweep_against_fake_ollama(tmp_path: Path) -> None:
    """`place run -m model=qwen2.5-3b,qwen2.5-7b`, two jobs in parallel sharing one (fake)
    Ollama server. Nothing runs a model: this checks the sweep plumbing, not Qwen's results."""
    models = {
        "qwen2.5:3b": "sha256-fake-3b",
        "qwen2.5:7b": "sha256-fake-7b",
        "nomic-embed-text:latest": "sha256-fake-nomic",
    }
    sweep_dir = tmp_path / "sweep"
    with FakeOllamaServer(models=models) as fake:
        _multirun(
            [
                "model=qwen2.5-3b,qwen2.5-7b",
                f"model.base_url={fake.url}",
                "trajectory=smoke",
                "experiment=primary",
            ],
            sweep_dir,
            timeout=900,
        )
    names = ["0_qwen2.5-3b", "1_qwen2.5-7b"]
    manifests = _check_jobs(sweep_dir, names)
    assert [m["model_identity"]["identity"] for m in manifests] == [
        "sha256-fake-3b",
        "sha256-fake-7b",
    ]
    tables = _compare(sweep_dir, names)
    # Several runs: each row names its model and its trajectory.
    assert [r[0] for r in tables["table1b"]] == ["qwen2.5-3b on smoke", "qwen2.5-7b on smoke"]
    assert [r[0] for r in tables["table1a"]] == ["qwen2.5-3b on smoke"] * 4 + [
        "qwen2.5-7b on smoke"
    ] * 4


@pytest.mark.slow
@pytest.mark.integration
def test_embedded_k_sweep_with_joblib(tmp_path: Path, cold_run: Path) -> None:
    """Two embedded SmolLM2 jobs (k=3, k=5) in parallel, each with its own llama.cpp server.

    Each job starts from its own copy of the smoke run's cache (CI time): Native's writes and
    the k=5 answers replay, the k=3 answers go to the job's server."""
    sweep_dir = tmp_path / "sweep"
    caches = tmp_path / "caches"
    caches.mkdir()
    for k in (3, 5):
        shutil.copyfile(cold_run / "llm_cache.sqlite", caches / f"cache-{k}.sqlite")
    _multirun(
        # One llama.cpp thread per job: two jobs share two cores without oversubscription.
        [
            "trajectory=smoke",
            "experiment=primary",
            "experiment.k=3,5",
            "model.n_threads=1",
            f"cache.path={caches}/cache-${{experiment.k}}.sqlite",
        ],
        sweep_dir,
        timeout=3600,
    )
    names = ["0_smollm2-135m", "1_smollm2-135m"]
    manifests = _check_jobs(sweep_dir, names, own_cache=False)
    # The k=3 job asked its own server for the answers no earlier run had.
    assert manifests[0]["cache"]["misses"] > 0 and manifests[1]["cache"]["misses"] == 0
    assert [m["config"]["experiment"]["k"] for m in manifests] == [3, 5]
    assert len({m["config"]["model"]["name"] for m in manifests}) == 1
    tables = _compare(sweep_dir, names)
    # Rows name model and trajectory; both runs share them (they differ in k only).
    assert [r[0] for r in tables["table1b"]] == ["smollm2-135m on smoke"] * 2
    assert [r[0] for r in tables["table1a"]] == ["smollm2-135m on smoke"] * 8
