"""`place report` refuses records that do not belong to one run (issue #26): another run's
records appended, a unit recorded twice, a condition outside the design. Exit 2, one line
per problem naming the file and line, no traceback, nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from place.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"


def run_copy(tmp_path: Path, name: str) -> Path:
    """A recorded run's manifest and records only (what `place report` reads)."""
    src = EXPERIMENTS / name / "smollm2-135m"
    out = tmp_path / name
    shutil.copytree(src / "records", out / "records")
    shutil.copy(src / "manifest.json", out / "manifest.json")
    return out


def files(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}


def refused(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = files(run_dir)
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "do not belong to one run" in err, err
    assert files(run_dir) == before  # no metrics.json, no tables, no plots
    return err


def test_a_recorded_run_is_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = run_copy(tmp_path, "smoke")
    assert main(["report", str(run_dir)]) == 0, capsys.readouterr().err
    assert (run_dir / "metrics.json").read_bytes() == (
        EXPERIMENTS / "smoke" / "smollm2-135m" / "metrics.json"
    ).read_bytes()


def test_records_of_another_trajectory_appended_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What resuming a primary run with `trajectory=smoke` used to leave behind."""
    run_dir = run_copy(tmp_path, "primary")
    smoke = EXPERIMENTS / "smoke" / "smollm2-135m" / "records"
    for path in smoke.glob("*.jsonl"):
        with (run_dir / "records" / path.name).open("ab") as fh:
            fh.write(path.read_bytes())
    err = refused(run_dir, capsys)
    assert "records/checkpoints.jsonl: line " in err
    assert "is not one of the trajectory's" in err or "records the same" in err


def test_a_unit_recorded_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = run_copy(tmp_path, "smoke")
    queries = run_dir / "records" / "queries.jsonl"
    first = queries.read_bytes().splitlines(keepends=True)[0]
    with queries.open("ab") as fh:
        fh.write(first)
    lines = len(queries.read_bytes().splitlines())
    err = refused(run_dir, capsys)
    assert f"records/queries.jsonl: line {lines}: records the same query as line 1" in err


def test_conditions_outside_the_design_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Extended-design records under the paper design's manifest."""
    run_dir = run_copy(tmp_path, "primary")
    shutil.rmtree(run_dir / "records")
    shutil.copytree(
        EXPERIMENTS / "primary-extended" / "smollm2-135m" / "records", run_dir / "records"
    )
    err = refused(run_dir, capsys)
    assert "condition 'Append/Native' is not in the run's design" in err
    assert "producer 'append' is not in the run's design" in err


def test_a_compaction_recorded_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A compaction point's summary is one unit per producer: a second record of it (an
    interrupted run's duplicate, another run's append) is refused."""
    run_dir = run_copy(tmp_path, "aoep-pilot")
    path = run_dir / "records" / "compactions.jsonl"
    first = path.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    with path.open("a", encoding="utf-8") as fh:
        fh.write(first)
    err = refused(run_dir, capsys)
    assert "records/compactions.jsonl: line " in err and "records the same compaction" in err


def test_a_world_b_step_recorded_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """World-b steps count from 1 for every causal pair and name its query: a pair's step
    recorded twice is a duplicate, as a world-a step is."""
    run_dir = run_copy(tmp_path, "smoke")
    path = run_dir / "records" / "steps.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    world_b = next(line for line in lines if '"world":"b"' in line.replace(" ", ""))
    with path.open("a", encoding="utf-8") as fh:
        fh.write(world_b)
    err = refused(run_dir, capsys)
    assert "records/steps.jsonl: line " in err and "records the same step" in err


def test_a_store_audit_recorded_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store audit is one record per producer, written at the end of the run."""
    run_dir = run_copy(tmp_path, "smoke")
    path = run_dir / "records" / "audits.jsonl"
    first = path.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    with path.open("a", encoding="utf-8") as fh:
        fh.write(first)
    err = refused(run_dir, capsys)
    assert "records/audits.jsonl: line " in err and "records the same audit" in err
