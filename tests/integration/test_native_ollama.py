"""Issue 19's acceptance: the paper's model config (Ollama runtime) runs Mem0's whole Native
pipeline against the FAKE Ollama server, with a FAKE rule-based memory manager answering
Mem0's extraction and update calls (tests/fakes/scripted_memory.py). Checked: every chat
request carries the run's num_ctx, seed and temperature (Mem0's calls included, which
Mem0's own Ollama provider would send without num_ctx and seed); the Native store went
through ADD, UPDATE and DELETE (and promoted an untrusted tool message, as a model
following Mem0's prompt may); a reply the server reports as cut (done_reason "length")
shows in its step record and in the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllamaServer
from fakes.scripted_memory import ScriptedMemoryManager
from smoke_runs import finish, place_run

pytestmark = [pytest.mark.slow, pytest.mark.integration]

CUT = "Dentist is on 12 May"
"""The extraction reply for the step with this user line is reported as cut off."""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict], ScriptedMemoryManager]:
    run_dir = tmp_path_factory.mktemp("native-ollama") / "run"
    manager = ScriptedMemoryManager(truncate=[CUT])
    with FakeOllamaServer(script=manager) as server:
        finish(place_run(run_dir, "model=qwen2.5-7b", f"model.base_url={server.url}"))
        bodies = server.bodies("/api/chat")
    return run_dir, bodies, manager


def _steps(run_dir: Path) -> list[dict]:
    lines = (run_dir / "records" / "steps.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_every_request_carries_the_configured_options(run) -> None:
    run_dir, bodies, manager = run
    manifest = json.loads((run_dir / "manifest.json").read_text())
    params = manifest["model_identity"]["parameters"]
    answer_budget = manifest["config"]["answer"]["max_tokens"]
    assert params["context_size"] == 8192  # configs/model/qwen2.5-7b.yaml n_ctx
    assert manager.extractions > 0 and manager.decisions > 0
    mem0_calls = 0
    for body in bodies:
        options = body["options"]
        assert (options["num_ctx"], options["seed"], options["temperature"]) == (
            params["context_size"],
            params["seed"],
            0.0,
        ), options
        if body.get("format") == "json":  # Mem0's calls: the model's own token budget
            mem0_calls += 1
            assert options["num_predict"] == params["max_tokens"]
        else:
            assert options["num_predict"] == answer_budget
    assert mem0_calls == manager.extractions + manager.decisions


def test_the_native_store_went_through_add_update_and_delete(run) -> None:
    run_dir, _, _ = run
    native = [s for s in _steps(run_dir) if s["producer"] == "native" and s["world"] == "a"]
    events = [op for step in native for op in step["operations"]]
    kinds = {op["event"] for op in events}
    assert {"ADD", "UPDATE", "DELETE"} <= kinds, kinds
    assert any(op["event"] == "UPDATE" and "9:40" in op["memory"] for op in events)
    assert any(op["event"] == "DELETE" and "Dentist" in op["memory"] for op in events)
    # What Native stores is what the manager decided. It takes every line Mem0 passes it
    # as a fact, the forwarded tool message too, so the untrusted 06:05 replaced the
    # corrected 9:40 (the write-side failure CSS exists for); the dentist was forgotten.
    checkpoints = [
        json.loads(line)
        for line in (run_dir / "records" / "checkpoints.jsonl").read_text().splitlines()
    ]

    def final(condition: str) -> set[tuple]:
        rows = [c for c in checkpoints if c["condition"] == condition and c["world"] == "a"]
        return {tuple(f[:4]) for f in rows[-1]["observed"]}

    native_state, css_state = final("Native"), final("CSS")
    flight = {f[2] for f in native_state if f[1] == "flight_time" and f[0] == "sam"}
    assert flight == {"06:05"}, native_state
    assert not any(f[1] == "dentist_date" for f in native_state), native_state
    assert {f[2] for f in css_state if f[1] == "flight_time" and f[0] == "sam"} == {"09:40"}


def test_a_cut_reply_shows_in_its_step_and_the_manifest(run) -> None:
    run_dir, _, _ = run
    steps = _steps(run_dir)
    native = [s for s in steps if s["producer"] == "native"]
    assert all(c["finish"] in ("stop", "length") for s in native for c in s["llm_calls"])
    cut = [s for s in native if any(c["finish"] == "length" for c in s["llm_calls"])]
    assert cut, "no step recorded the cut reply"
    for step in cut:
        assert step["llm_calls"][0]["finish"] == "length"  # the extraction call
        assert step["llm_calls"][0]["completion_tokens"] > 0
    manifest = json.loads((run_dir / "manifest.json").read_text())
    calls = sum(len(s["llm_calls"]) for s in native)
    assert manifest["truncated_calls"] == {
        "mem0_calls": calls,
        "truncated": len(cut),
        "context_full": 0,
        "unrecorded": 0,
    }
    # CSS and the other producers call no model.
    assert all(s["llm_calls"] == [] for s in steps if s["producer"] != "native")
