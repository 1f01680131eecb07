import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest


@pytest.fixture(scope="session")
def cold_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted real-stack run of the smoke trajectory, shared by the slow tests."""
    from smoke_runs import finish, place_run

    run_dir = tmp_path_factory.mktemp("e2e") / "cold"
    finish(place_run(run_dir))
    return run_dir
