"""Faults a long run must survive, on the real stack: kill -9 in each phase, the llama.cpp
server dying, malformed and empty model output inside Mem0, a full disk, and two runs at
once. Each test checks what survived on disk, not merely that nothing crashed."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from smoke_runs import (
    assert_same_results,
    finish,
    kill_group,
    place_run,
    record_lines,
    units_done,
)

from place import faults
from place.errors import PlaceError


def with_cache_of(cold: Path, run_dir: Path) -> Path:
    """A fresh run directory holding a copy of the cold run's LLM cache (answers pinned)."""
    run_dir.mkdir(parents=True)
    shutil.copy(cold / "llm_cache.sqlite", run_dir / "llm_cache.sqlite")
    return run_dir


def assert_consistent_on_disk(run_dir: Path) -> None:
    """What a reader of an interrupted run may rely on: progress.json and manifest.json parse,
    and the records progress.json counts are complete JSON lines."""
    progress = json.loads((run_dir / "progress.json").read_text())
    json.loads((run_dir / "manifest.json").read_text())
    for name, lines in record_lines(run_dir).items():
        committed = progress["record_counts"].get(name, 0)
        assert len(lines) >= committed, name
        for line in lines[:committed]:
            json.loads(line)


def output(proc: subprocess.Popen[bytes]) -> str:
    out, _ = proc.communicate(timeout=1800)
    return out.decode(errors="replace")


# -- the fault-injection switch itself --------------------------------------------------


def test_fault_spec_is_parsed_and_bad_specs_are_refused() -> None:
    assert faults.parse("css-verify@3:kill, write:steps.jsonl@2:enospc") == {
        "css-verify": (3, "kill"),
        "write:steps.jsonl": (2, "enospc"),
    }
    assert faults.parse("") == {}
    for bad in (
        "css@1:kill",
        "report@0:kill",
        "report@x:kill",
        "report@1:explode",
        "report@1:enospc",
    ):
        with pytest.raises(PlaceError, match="PLACE_FAULT"):
            faults.parse(bad)


def test_write_fault_fires_on_the_nth_write_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from place import atomic

    monkeypatch.setenv(faults.ENV, "write:doc.json@2:enospc")
    target = tmp_path / "doc.json"
    atomic.write_text(target, "first\n")
    with pytest.raises(OSError, match="No space left on device"):
        atomic.write_text(target, "second, never complete\n")
    atomic.write_text(target, "third\n")
    assert target.read_text() == "third\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json"]  # no temp file left


def test_a_failed_unit_is_cut_from_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from place.records import StepRecord
    from place.runner.journal import Journal

    def step_record(step: int) -> StepRecord:
        return StepRecord(
            step=step, producer="css", world="a", turns=[], operations=[], failures=[], seconds=0
        )

    with Journal(tmp_path) as journal:
        journal.append(step_record(1))
        journal.commit_unit(0)
    monkeypatch.setenv(faults.ENV, "write:steps.jsonl@2:enospc")
    with pytest.raises(OSError), Journal(tmp_path) as journal:
        journal.append(step_record(2))
        journal.append(step_record(3))  # half written, then the disk is full
    lines = (tmp_path / "records" / "steps.jsonl").read_text().splitlines()
    assert [json.loads(x)["step"] for x in lines] == [1]
    assert json.loads((tmp_path / "progress.json").read_text())["units_done"] == 1


# -- kill -9 in each phase ----------------------------------------------------------------

# (point, n): the n-th time the resumed process reaches it. The order follows the smoke plan
# (steps, conflict probes, pairs in c1 and c2), so each point lies ahead of the previous one.
KILLS = [
    ("native-add", 3),
    ("css-verify", 4),
    ("probes", 2),
    ("pair-world-b", 3),
    ("report", 1),
]


@pytest.mark.slow
@pytest.mark.integration
def test_kill_9_in_each_phase_then_resume_gives_the_uninterrupted_results(
    cold_run: Path, tmp_path: Path
) -> None:
    run_dir = with_cache_of(cold_run, tmp_path / "killed")
    reached = []
    for point, n in KILLS:
        proc = place_run(run_dir, env={faults.ENV: f"{point}@{n}:kill"})
        text = output(proc)
        kill_group(proc)  # the run killed itself; its llama.cpp server goes too
        assert proc.returncode == -signal.SIGKILL, f"{point} was never reached:\n{text[-2000:]}"
        assert_consistent_on_disk(run_dir)
        reached.append(units_done(run_dir))
    assert reached == sorted(reached) and reached[0] < reached[-1]
    assert not (run_dir / "tables").exists()  # killed between metrics.json and the tables
    finish(place_run(run_dir))
    assert_same_results(run_dir, cold_run)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert len(manifest["resumed"]) == len(KILLS)
    assert manifest["cache"]["misses"] == 0  # nothing was asked twice of the model


# -- the model server dies ---------------------------------------------------------------


def _llama_server(proc: subprocess.Popen[bytes]) -> psutil.Process | None:
    for child in psutil.Process(proc.pid).children(recursive=True):
        if "llama_cpp.server" in " ".join(child.cmdline()):
            return child
    return None


@pytest.mark.slow
@pytest.mark.integration
def test_llama_server_death_names_the_phase_then_resumes_cleanly(
    cold_run: Path, tmp_path: Path
) -> None:
    run_dir = with_cache_of(cold_run, tmp_path / "server-died")
    # Drop the cold run's last answers: the calls for them must reach the server.
    with sqlite3.connect(run_dir / "llm_cache.sqlite") as db:
        (total,) = db.execute("SELECT count(*) FROM llm_calls").fetchone()
        db.execute(
            "DELETE FROM llm_calls WHERE key NOT IN "
            "(SELECT key FROM llm_calls ORDER BY created LIMIT ?)",
            (total * 9 // 10,),
        )
    proc = place_run(run_dir)
    try:
        deadline = time.monotonic() + 600
        while units_done(run_dir) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "run ended too early"
            time.sleep(0.05)
        server = _llama_server(proc)
        assert server is not None
        server.kill()
        text = output(proc)
    finally:
        kill_group(proc)
    assert proc.returncode == 2, text[-3000:]
    assert "the model runtime failed during " in text and "(unit " in text, text[-3000:]
    assert "run the same command again to resume" in text
    assert "Traceback" not in text
    assert_consistent_on_disk(run_dir)
    interrupted_at = units_done(run_dir)
    finish(place_run(run_dir))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and len(manifest["resumed"]) == 1
    assert units_done(run_dir) > interrupted_at
    assert {k: len(v) for k, v in record_lines(run_dir).items()} == {
        k: len(v) for k, v in record_lines(cold_run).items()
    }
    # The resumed run equals an uninterrupted run given the same model answers.
    replay = tmp_path / "uninterrupted"
    replay.mkdir()
    shutil.copy(run_dir / "llm_cache.sqlite", replay / "llm_cache.sqlite")
    finish(place_run(replay, "cache.mode=replay-only"))
    assert_same_results(replay, run_dir)


# -- malformed and empty JSON from the model inside Mem0 -----------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_malformed_and_empty_extraction_output_is_counted_and_the_run_goes_on(
    cold_run: Path, tmp_path: Path
) -> None:
    run_dir = with_cache_of(cold_run, tmp_path / "malformed")
    broken = 0
    with sqlite3.connect(run_dir / "llm_cache.sqlite") as db:
        rows = db.execute("SELECT key, response FROM llm_calls ORDER BY created").fetchall()
        for key, response in rows:
            try:  # Mem0's calls are stored as a JSON envelope; answer-model calls as text
                answer = json.loads(response)
            except json.JSONDecodeError:
                continue
            if isinstance(answer, str) and '"facts"' in answer:
                # Every other fact-extraction answer: empty, or JSON cut off mid-way.
                bad = "" if broken % 2 == 0 else '{"facts": ["Theo is lactose'
                db.execute(
                    "UPDATE llm_calls SET response = ? WHERE key = ?", (json.dumps(bad), key)
                )
                broken += 1
    assert broken >= 4
    finish(place_run(run_dir))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    steps = [json.loads(x) for x in record_lines(run_dir)["steps.jsonl"]]
    native = [s for s in steps if s["producer"] == "native"]
    failures = [f for s in native for f in s["failures"]]
    assert any("empty response" in f for f in failures), failures
    assert any("Error in new_retrieved_facts" in f for f in failures), failures
    assert manifest["mem0_failures"] == len(failures)
    assert len(native) == len(
        [s for s in record_lines(cold_run)["steps.jsonl"] if '"producer":"native"' in s]
    )


# -- a full disk ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_full_disk_gives_a_clear_error_and_no_corrupt_record(
    cold_run: Path, tmp_path: Path
) -> None:
    run_dir = with_cache_of(cold_run, tmp_path / "full")
    proc = place_run(run_dir, env={faults.ENV: "write:queries.jsonl@30:enospc"})
    text = output(proc)
    kill_group(proc)
    assert proc.returncode == 2, text[-3000:]
    assert "cannot write" in text and "queries.jsonl" in text and "during query" in text, text
    assert "No space left on device" in text and "Traceback" not in text
    progress = json.loads((run_dir / "progress.json").read_text())
    for name, lines in record_lines(run_dir).items():
        assert len(lines) == progress["record_counts"][name], name  # the failed unit is gone
        for line in lines:
            json.loads(line)
    assert json.loads((run_dir / "manifest.json").read_text())["status"] != "complete"
    assert not (run_dir / "metrics.json").exists()

    proc = place_run(run_dir, env={faults.ENV: "write:metrics.json@1:enospc"})
    text = output(proc)
    kill_group(proc)
    assert proc.returncode == 2, text[-3000:]
    assert "metrics.json" in text and "during the report" in text, text[-3000:]
    assert not (run_dir / "metrics.json").exists()
    assert not list(run_dir.glob(".metrics.json.*"))  # the half-written temp file is gone

    finish(place_run(run_dir))
    assert_same_results(run_dir, cold_run)


# -- two runs at once ----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_two_runs_at_once_on_different_directories_do_not_interfere(
    cold_run: Path, tmp_path: Path
) -> None:
    dirs = [with_cache_of(cold_run, tmp_path / name) for name in ("one", "two")]
    procs = [place_run(d) for d in dirs]
    try:
        for proc in procs:
            finish(proc)
    finally:
        for proc in procs:
            kill_group(proc)
    for run_dir in dirs:
        assert_same_results(run_dir, cold_run)
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["cache"]["misses"] == 0
    # Each run started its own model server (its own port, its own log in its own directory).
    logs = [{p.name for p in (d / "logs").glob("llamacpp-server-*.log")} for d in dirs]
    assert logs[0] and logs[1] and logs[0].isdisjoint(logs[1])
