"""A whole factorial in-process: the real runner, records and report on real Qdrant (local
mode) and MiniLM, with the FAKE models of tests/fakes/scripted_chat.py (no LLM server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fakes.scripted_chat import ScriptedChat, ScriptedMem0LLM

from place.design import Design
from place.trajectory.model import Trajectory

UNUSED_LLM: dict[str, Any] = {
    "provider": "openai",
    "config": {
        "model": "unused",
        "api_key": "sk-unused",
        "openai_base_url": "http://127.0.0.1:9/v1",
    },
}
"""Mem0 needs an LLM config to build; the FAKE replaces its LLM before any call."""


def backend(run_dir: Path, mem0_llm: Any = None) -> Any:
    from place.memory import Backend
    from place.runtime.embedder import MINILM_DIMS, minilm_mem0_embedder_config

    def on_memory(memory: Any) -> None:
        if mem0_llm is not None:
            memory.llm = mem0_llm

    return Backend(
        run_dir, UNUSED_LLM, minilm_mem0_embedder_config(), MINILM_DIMS, on_memory=on_memory
    )


def run_inprocess(
    run_dir: Path,
    trajectory: Trajectory,
    design: Design,
    *,
    table: dict[str, str] | None = None,
    trajectory_header: dict[str, Any] | None = None,
    seeds: tuple[int, int] = (7, 500),
    plots: bool = True,
    chat: Any = None,
    concurrency: int = 1,
) -> dict:
    """Run every condition of `design` on `trajectory` into `run_dir` and report it; the
    manifest is what `place run` writes minus versions and timings (status complete).
    `chat` replaces the scripted answer model (e.g. one behind an LLM call cache)."""
    from place.agent.answer import AnswerModel, AnswerPrompt
    from place.reference.replay import replay
    from place.report.report import write_report
    from place.runner.app import counts
    from place.runner.experiment import Experiment
    from place.runner.journal import Journal

    run_dir.mkdir(parents=True, exist_ok=True)
    reference = replay(trajectory)
    answers = AnswerModel(
        chat if chat is not None else ScriptedChat(table),
        AnswerPrompt("Answer from memory.", "{items}\nQuestion: {question}", "Earlier:\n{turns}"),
        32,
    )
    with Journal(run_dir) as journal, backend(run_dir, ScriptedMem0LLM()) as store_backend:
        experiment = Experiment(
            trajectory,
            reference,
            store_backend,
            answers,
            journal,
            k=5,
            progress=False,
            design=design,
            policy_params={"decay": {"eta": 30.0, "kappa": 1.5, "theta": 0.1}},
            concurrency=concurrency,
        )
        try:
            experiment.run()
        finally:
            experiment.close()
    manifest = {
        "status": "complete",
        "header": {
            "trajectory": trajectory_header
            or {"id": trajectory.id, "sha256": trajectory.sha256, "path": "trajectory.yaml"},
            "model": {"name": "scripted-fake", "runtime": "fake", "identity": "fake"},
            "counts": counts(trajectory, reference),
            "conversation_ids": [c.id for c in trajectory.conversations],
            "design": design.to_json(),
        },
        "seeds": {"bootstrap": seeds[0], "resamples": seeds[1]},
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return write_report(run_dir, plots=plots).to_json()  # metrics.json as written
