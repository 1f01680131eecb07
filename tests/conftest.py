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
