"""The SLURM controller check before a sweep is submitted, against FAKE `scontrol` and
`sbatch` scripts on PATH (the real ones: tests/integration/test_slurm.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from place.errors import PlaceError
from place.runner.slurm_check import check_controller, uses_slurm


def fake_bin(tmp_path: Path, ping: str, code: int = 0) -> str:
    """A PATH with a fake `scontrol` printing `ping` and an `sbatch` that does nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("scontrol", f"echo '{ping}'; exit {code}"), ("sbatch", "exit 0")):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
    return f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"


def test_only_slurm_launchers_are_checked() -> None:
    assert uses_slurm(["-m", "hydra/launcher=place_slurm", "model=qwen2.5-3b"])
    assert uses_slurm(["-m", "hydra/launcher=submitit_slurm"])
    assert not uses_slurm(["-m", "hydra/launcher=place_joblib"])
    assert not uses_slurm(["-m", "model=qwen2.5-3b"])


def test_a_controller_that_is_up_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", fake_bin(tmp_path, "Slurmctld(primary) at vm is UP"))
    assert check_controller() == "Slurmctld(primary) at vm is UP"


def test_a_controller_that_is_down_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", fake_bin(tmp_path, "Slurmctld(primary) at vm is DOWN", 1))
    with pytest.raises(PlaceError, match=r"no SLURM controller answers .*is DOWN.*SLURM_CONF"):
        check_controller()


def test_no_slurm_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PlaceError, match="sbatch and scontrol not found on PATH"):
        check_controller()


def test_place_run_refuses_the_sweep_before_writing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from place.runner.app import EXIT_USAGE, run_main

    monkeypatch.setenv("PATH", fake_bin(tmp_path, "Slurmctld(primary) at vm is DOWN", 1))
    sweep = tmp_path / "sweep"
    argv = ["-m", "hydra/launcher=place_slurm", "trajectory=smoke", f"hydra.sweep.dir={sweep}"]
    assert run_main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("place run: error: hydra/launcher=place_slurm:")
    assert not sweep.exists()
