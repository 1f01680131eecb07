"""Honest defaults on any trajectory (issue #26): the paper's rows only beside runs of the
paper's trajectory, one rule for `place run`, `place report` and `place compare`; a note when
an interval rests on too few blocks; several runs name their trajectory."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from place.cli import main
from place.report.metrics import MetricsDocument
from place.report.report import show_paper
from place.report.tables import all_tables, on_paper_trajectory, paper_values, to_markdown

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "experiments"


def test_the_paper_trajectory_is_pinned_by_content() -> None:
    sha = hashlib.sha256((ROOT / "trajectories" / "primary.yaml").read_bytes()).hexdigest()
    assert paper_values()["trajectory_sha256"] == sha


def recorded(name: str) -> MetricsDocument:
    path = RECORDED / name / "smollm2-135m" / "metrics.json"
    return MetricsDocument.model_validate_json(path.read_bytes())


def first_column(doc: MetricsDocument, paper: bool) -> list[str]:
    table = {t.name: t for t in all_tables([doc], paper=paper)}["table1a"]
    return [row[0] for row in table.rows]


def test_paper_rows_follow_the_trajectory() -> None:
    primary, smoke = recorded("primary"), recorded("smoke")
    assert on_paper_trajectory([primary]) and not on_paper_trajectory([smoke])
    assert not on_paper_trajectory([primary, smoke])
    # The default: shown for the paper's trajectory only.
    assert show_paper(None, [primary]) and not show_paper(None, [smoke])
    # Asked for on another trajectory: shown, and labelled as of another trajectory.
    labels = first_column(smoke, paper=True)
    paper_rows = [label for label in labels if label.startswith("paper")]
    assert paper_rows and all(
        label.startswith("paper (its own trajectory, not this one): ") for label in paper_rows
    )
    assert all(label.startswith("paper: ") for label in first_column(primary, True)[4:])
    # Refused explicitly, or turned off in the run's configuration.
    assert not show_paper(False, [primary])
    assert not show_paper(None, [primary], {"config": {"paper_values": False}})
    assert show_paper(None, [primary], {"config": {"paper_values": True}})


def copy_run(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    src = RECORDED / name / "smollm2-135m"
    shutil.copytree(src / "records", out / "records")
    shutil.copy(src / "manifest.json", out / "manifest.json")
    return out


def table_models(tables: Path) -> list[str]:
    text = (tables / "table1a.csv").read_text().splitlines()
    return [line.split(",")[0] for line in text if not line.startswith("#")][1:]


@pytest.mark.parametrize(("name", "shown"), [("primary", True), ("smoke", False)])
def test_place_report_applies_the_rule_place_run_applies(
    tmp_path: Path, name: str, shown: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run(tmp_path, name)
    assert main(["report", str(run_dir), "--no-plots"]) == 0
    capsys.readouterr()
    assert any(m.startswith("paper") for m in table_models(run_dir / "tables")) is shown
    assert main(["report", str(run_dir), "--no-plots", "--no-paper"]) == 0
    assert not any(m.startswith("paper") for m in table_models(run_dir / "tables"))
    manifest: dict[str, Any] = json.loads((run_dir / "manifest.json").read_text())
    manifest["config"]["paper_values"] = False
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", str(run_dir), "--no-plots"]) == 0
    assert not any(m.startswith("paper") for m in table_models(run_dir / "tables"))


def test_compare_names_each_runs_trajectory_and_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [str(RECORDED / n / "smollm2-135m") for n in ("primary", "smoke")]
    out = tmp_path / "cmp"
    assert main(["compare", *runs, "--out", str(out)]) == 0
    capsys.readouterr()
    models = table_models(out)
    assert "smollm2-135m on primary" in models and "smollm2-135m on smoke" in models
    assert not any(m.startswith("paper") for m in models)  # not every run is the paper's


def test_too_few_blocks_are_said_beside_the_intervals() -> None:
    smoke, primary = recorded("smoke"), recorded("primary")
    t1b = {t.name: t for t in all_tables([smoke])}["table1b"]
    assert t1b.note is not None and "rest on 2 conversation(s), fewer than 4" in t1b.note
    t1b = {t.name: t for t in all_tables([primary])}["table1b"]  # the paper's 4 conversations
    assert t1b.note is None or "conversation" not in t1b.note
    assert f"_Note: {all_tables([smoke])[1].note}._" in to_markdown(all_tables([smoke])[1])
