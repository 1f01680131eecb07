"""Shared fixtures. `tests/` itself is on sys.path (pyproject `pythonpath`), so the helper
modules here (builders, fakes, inprocess, recompute, smoke_runs) import by name from
`tests/unit/` and `tests/integration/`."""

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def cold_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted real-stack run of the smoke trajectory, shared by the slow tests."""
    from smoke_runs import finish, place_run

    run_dir = tmp_path_factory.mktemp("e2e") / "cold"
    finish(place_run(run_dir))
    return run_dir


SMALL_SEEDS = range(5)
"""The `small` generated seeds the generator's story and forgery tests share."""


@pytest.fixture(scope="session")
def small_texts() -> dict[int, str]:
    """`place generate --design small` for seeds 0-4, generated once per session."""
    from place.generate import generate

    return {seed: generate(seed, "small").text for seed in SMALL_SEEDS}


@pytest.fixture(scope="session")
def small_loaded(small_texts: dict[int, str], tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Those files loaded with the validating loader."""
    from place.reference.validate import load_trajectory

    directory = tmp_path_factory.mktemp("small")
    out = {}
    for seed, text in small_texts.items():
        path = directory / f"s{seed}.yaml"
        path.write_text(text, encoding="utf-8")
        out[seed] = load_trajectory(path)
    return out
