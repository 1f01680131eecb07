"""A run's records as `records.tar.xz` (place/archive.py): deterministic, read in place."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from place.archive import ARCHIVE, archive_records, load_run_records
from place.errors import PlaceError
from place.records import RunRecords
from place.report.report import recompute

SMOKE = Path(__file__).parents[2] / "experiments" / "smoke" / "smollm2-135m"


def _run_copy(tmp_path: Path, name: str) -> Path:
    run = tmp_path / name
    run.mkdir()
    shutil.copytree(SMOKE / "records", run / "records")
    shutil.copy(SMOKE / "manifest.json", run / "manifest.json")
    return run


def test_an_archived_run_reads_as_its_records(tmp_path: Path) -> None:
    run = _run_copy(tmp_path, "run")
    before = RunRecords.load(run / "records")
    archive_records(run)
    assert not (run / "records").exists()
    after = load_run_records(run)
    assert after.checkpoints == before.checkpoints
    assert after.queries == before.queries
    assert after.probes == before.probes
    # Metrics recomputed from the archive are the committed ones, byte for byte.
    from place.report.metrics import dump_metrics

    assert dump_metrics(recompute(run)) == (SMOKE / "metrics.json").read_text(encoding="utf-8")


def test_the_archive_is_deterministic(tmp_path: Path) -> None:
    a, b = _run_copy(tmp_path, "a"), _run_copy(tmp_path, "b")
    assert archive_records(a).read_bytes() == archive_records(b).read_bytes()


def test_keep_the_records_when_asked(tmp_path: Path) -> None:
    run = _run_copy(tmp_path, "run")
    archive_records(run, remove=False)
    assert (run / "records").is_dir() and (run / ARCHIVE).is_file()


def test_a_damaged_archive_is_a_clear_error(tmp_path: Path) -> None:
    run = _run_copy(tmp_path, "run")
    archive_records(run)
    (run / ARCHIVE).write_bytes((run / ARCHIVE).read_bytes()[:100])
    with pytest.raises(PlaceError, match="not a readable records archive"):
        load_run_records(run)


def test_nothing_to_archive(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    with pytest.raises(PlaceError, match="no records to archive"):
        archive_records(tmp_path)
