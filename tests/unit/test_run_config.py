"""`place run` refuses bad configuration and bad input before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from place.cli import main

ROOT = Path(__file__).parents[2]


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize(
    ("override", "phrase"),
    [
        ("experiment.kk=3", "did you mean experiment.k?"),  # misspelled key
        ("+experiment.kk=3", "unknown key experiment.kk"),  # Hydra's hint followed
        ("+foo=1", "unknown key foo; allowed top-level keys: model, design"),
        ("experiment.k=three", "experiment.k"),  # wrong type
        ("model=qwen9", "unknown model option qwen9"),  # no such group option
        ("cache.modes=replay-only", "modes"),
        ("hydra.launcher._target_=os.system", "_target_"),
        ("+answer._target_=subprocess.run", "_target_"),
    ],
)
def test_bad_overrides_exit_2_and_write_nothing(override, phrase, tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    code = main(["run", override, f"hydra.run.dir={run_dir}"])
    err = capsys.readouterr().err
    assert code == 2
    assert phrase in err
    assert "Traceback" not in err
    assert "_schema" not in err  # ConfigStore schema entries are never offered as options
    assert not run_dir.exists()


def test_invalid_trajectory_exits_2_naming_the_file(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: place-trajectory/1\nid: x\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    code = main(["run", f"trajectory.path={bad}", f"hydra.run.dir={run_dir}"])
    err = capsys.readouterr().err
    assert code == 2
    assert str(bad) in err and "principal" in err
    assert not run_dir.exists()


def test_the_aoep_pilot_trajectory_passes_every_check(capsys) -> None:
    """The governance constructs of docs/method.md §11 run: `place run --check` accepts the
    pilot trajectory with the paper's design and with `design=aoep`."""
    assert main(["run", "--check", "trajectory=aoep-pilot"]) == 0
    assert main(["run", "--check", "trajectory=aoep-pilot", "design=aoep"]) == 0
    assert "config ok" in capsys.readouterr().out


def test_configs_compose_for_every_model_and_experiment() -> None:
    from place.runner.app import precheck

    for model in ("smollm2-135m", "qwen2.5-3b", "qwen2.5-7b"):
        for experiment in ("all", "primary", "utility", "closed_loop"):
            argv = [f"model={model}", f"experiment={experiment}", "trajectory=smoke"]
            cfg = precheck(argv, preflight=False)
            assert cfg.model.name == model and cfg.experiment.name == experiment


def test_ollama_model_not_pulled_fails_before_anything_is_written(tmp_path, capsys) -> None:
    from fakes.ollama_server import FakeOllamaServer

    run_dir = tmp_path / "run"
    with FakeOllamaServer(models={"nomic-embed-text:latest": "sha256-fake"}) as server:
        code = main(
            [
                "run",
                "model=qwen2.5-7b",
                f"model.base_url={server.url}",
                "trajectory=smoke",
                f"hydra.run.dir={run_dir}",
            ]
        )
    err = capsys.readouterr().err
    assert code == 2
    assert "ollama pull qwen2.5:7b" in err
    assert not run_dir.exists()


def test_ollama_unreachable_fails_before_anything_is_written(tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    code = main(
        [
            "run",
            "model=qwen2.5-3b",
            "model.base_url=http://127.0.0.1:9",
            "model.retries=1",
            "trajectory=smoke",
            f"hydra.run.dir={run_dir}",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "http://127.0.0.1:9" in err and "unreachable" in err
    assert not run_dir.exists()
