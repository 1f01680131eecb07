"""What every committed answer-free study job must be (docs/population.md), checked the same
way for the population study, its history sweep and the distractor study."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def check_answer_free_job(job: Path, manifest: dict[str, Any], conditions: int) -> str:
    """Assert that `job` is complete, valid, recorded on a clean commit, answer-free with no
    model call, of a design with `conditions` conditions, its records kept as the archive
    alone; return its commit."""
    m = manifest
    assert m["status"] == "complete" and "invalid" not in m, job
    assert m["git"]["dirty"] is False, job
    assert m["header"]["answers"] is False and m["header"]["model"]["name"] == "none", job
    assert m["cache"]["entries"] == 0, job  # no model call
    assert len(m["header"]["design"]["conditions"]) == conditions, job
    assert (job / "records.tar.xz").is_file() and not (job / "records").exists(), job
    return str(m["git"]["commit"])
