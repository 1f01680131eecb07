"""The notebooks: committed without outputs, and they execute against the recorded run."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
RUN = ROOT / "experiments" / "primary" / "smollm2-135m"
STUDY = ROOT / "experiments" / "replications" / "smollm2-135m"
CELL_TIMEOUT = 600


def test_notebooks_exist() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01-reproduce-tables.ipynb",
        "02-explore.ipynb",
        "03-replications.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {i} has outputs"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbclient import NotebookClient

    # The kernel inherits this environment; kernel "python3" with argv[0] "python" is started
    # with this interpreter (sys.executable), i.e. the venv that has `place` installed.
    monkeypatch.setenv("PLACE_RUN_DIR", str(RUN))
    monkeypatch.setenv("PLACE_STUDY_DIR", str(STUDY))  # the recorded replication study
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert not errors
    figures = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if "image/png" in out.get("data", {})
    ]
    assert figures, f"{path.name} drew no figure"
