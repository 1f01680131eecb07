"""The extended design (docs/method.md §8) on the real stack: `place run design=extended
trajectory=smoke` with SmolLM2 behind llama.cpp, Mem0 on Qdrant local mode and MiniLM.

The run starts from a copy of the paper run's LLM cache (the `cold_run` fixture), so the
paper's conditions replay their calls and only the new conditions' answers go to the model;
the paper's four conditions must then come out exactly as in the paper run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from smoke_runs import finish, metrics, place_run

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PAPER_CONDITIONS = ("Native", "CSS", "QASC", "PLACE")


@pytest.fixture(scope="module")
def extended_real(cold_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("extended-real")
    cache = base / "llm_cache.sqlite"
    shutil.copyfile(cold_run / "llm_cache.sqlite", cache)
    run_dir = base / "run"
    finish(place_run(run_dir, "design=extended", f"cache.path={cache}"))
    return run_dir


def test_twelve_conditions_factorize_over_every_checkpoint(
    extended_real: Path, cold_run: Path
) -> None:
    m, paper = metrics(extended_real), metrics(cold_run)
    assert len(m["conditions"]) == 12
    assert m["design"]["name"] == "extended"
    assert m["factorization"] == paper["factorization"]  # ok, same checkpoints, no mismatch
    assert m["factorization"]["ok"]
    rows = json.loads((extended_real / "manifest.json").read_text())["header"]["design"]
    assert rows["producers"] == ["native", "append", "css"]
    assert rows["policies"] == ["native", "posthoc", "decay", "qasc"]


def test_the_paper_conditions_are_the_paper_runs(extended_real: Path, cold_run: Path) -> None:
    m, paper = metrics(extended_real), metrics(cold_run)
    for condition in PAPER_CONDITIONS:
        assert m["conditions"][condition] == paper["conditions"][condition], condition
        assert m["aoep"][condition] == paper["aoep"][condition], condition
    for effect in ("StateGain", "LeakageDrop", "JointGain", "InteractionGain"):
        assert m["effects"][effect] == paper["effects"][effect], effect


def test_raw_history_memory_shows_the_write_side_failure(extended_real: Path) -> None:
    c = metrics(extended_real)["conditions"]
    # Append keeps every user and tool message verbatim: partly right, partly stale.
    append_state = c["Append/Native"]["state_correctness"]
    assert 0.0 < append_state < 1.0
    assert c["CSS"]["state_correctness"] == 1.0
    assert metrics(extended_real)["effects"]["StateGain_Append"]["estimate"] == pytest.approx(
        1.0 - append_state, abs=1e-6
    )
    # Every read policy of a row reads the same store.
    for policy in ("Posthoc", "Decay", "QASC"):
        assert c[f"Append/{policy}"]["state_correctness"] == append_state
    # Lifecycle-aware reads never expose an ineligible item, whatever the producer wrote.
    for condition in ("Append/QASC", "PLACE", "Append/Posthoc", "CSS/Posthoc"):
        assert c[condition]["exposure_rate"] == 0.0, condition


def test_extended_tables_and_plots_are_written(extended_real: Path) -> None:
    tables = (extended_real / "tables" / "tables.md").read_text()
    for name in ("Append/Native", "CSS/Decay", "Append/QASC", "StateGain_Append"):
        assert name in tables
    for plot in ("state_correctness", "effects", "families", "aoep"):
        assert (extended_real / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"


# -- the answer-free run (experiment=state, docs/method.md §15) ------------------------------


def _model_servers(pid: int) -> list[str]:
    """The command lines of llama.cpp servers among `pid`'s descendants."""
    import psutil

    found = []
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    for child in children:
        try:
            line = " ".join(child.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if "llama_cpp" in line:
            found.append(line)
    return found


@pytest.fixture(scope="module")
def state_real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """`place run experiment=state design=extended trajectory=smoke`, its process tree
    watched the whole time for a model server."""
    import time

    run_dir = tmp_path_factory.mktemp("state-real") / "run"
    proc = place_run(run_dir, "experiment=state", "design=extended")
    servers: list[str] = []
    while proc.poll() is None:
        servers += _model_servers(proc.pid)
        time.sleep(0.05)
    finish(proc)
    return run_dir, servers


def test_an_answer_free_run_starts_no_model_and_calls_none(
    state_real: tuple[Path, list[str]],
) -> None:
    run_dir, servers = state_real
    assert servers == []
    assert not list((run_dir / "logs").glob("llamacpp-server-*.log"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["header"]["model"] == {"name": "none", "runtime": "none", "identity": "none"}
    assert manifest["header"]["answers"] is False
    assert manifest["header"]["skipped_producers"] == ["native"]
    assert manifest["cache"]["entries"] == 0 and manifest["cache"]["misses"] == 0
    assert manifest["timings"]["llm"] == 0.0


def test_an_answer_free_run_measures_what_the_full_run_measures(
    state_real: tuple[Path, list[str]], extended_real: Path
) -> None:
    state, full = metrics(state_real[0]), metrics(extended_real)
    unmeasured = set(state["not_measured"])
    # The native producer writes through the model: left out, its conditions with it.
    kept = [
        name for name, producer, _policy in full["design"]["conditions"] if producer != "native"
    ]
    assert list(state["conditions"]) == kept and len(kept) == 8
    for condition, values in state["conditions"].items():
        for key, value in values.items():
            if key in unmeasured or isinstance(value, dict):
                continue
            assert value == full["conditions"][condition][key], (condition, key)
        assert (
            state["aoep"][condition]["model_independent"]
            == full["aoep"][condition]["model_independent"]
        ), condition
    for name, effect in state["effects"].items():
        if name not in unmeasured:
            assert effect == full["effects"][name], name
