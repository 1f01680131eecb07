"""Shared fixtures. `tests/` itself is on sys.path (pyproject `pythonpath`), so the helper
modules here (builders, fakes, inprocess, recompute, smoke_runs) import by name from
`tests/unit/` and `tests/integration/`."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def cold_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted real-stack run of the smoke trajectory, shared by the slow tests."""
    from smoke_runs import finish, place_run

    run_dir = tmp_path_factory.mktemp("e2e") / "cold"
    finish(place_run(run_dir))
    return run_dir


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A one-node SLURM cluster (real munged, slurmctld, slurmd; tests/slurm_cluster.py),
    started once for the session and stopped at its end. Without SLURM's programs the tests
    that use it skip, except in CI (CI=true), where they fail: CI must run them."""
    from slurm_cluster import Cluster, missing

    absent = missing()
    if absent:
        why = f"SLURM is not installed here ({', '.join(absent)} missing): see docs/sweeps.md"
        if os.environ.get("CI"):
            pytest.fail(why + "; CI installs it with `make test` (tests/slurm/install.sh)")
        pytest.skip(why)
    cluster = Cluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


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
