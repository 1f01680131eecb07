"""A whole factorial in-process: the real runner, records and report on real Qdrant (local
mode) and MiniLM, with the FAKE models of tests/fakes/scripted_chat.py (no LLM server)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fakes.mem0_llm import FakeMem0LLM
from fakes.scripted_chat import ScriptedChat

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


def compose(design: Design, overrides: Sequence[str] = (), concurrency: int = 1) -> Any:
    """The real run configuration (configs/, the registered schema) for `design`, as
    `place run` composes it, with `overrides` on top."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from omegaconf import OmegaConf

    from place.runner.app import CONFIG_DIR, CONFIG_NAME
    from place.runner.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        cfg = hydra_compose(
            CONFIG_NAME,
            overrides=[
                f"design.name={design.name}",
                f"design.producers=[{','.join(design.producers)}]",
                f"design.policies=[{','.join(design.policies)}]",
                "experiment.k=5",
                f"answer.concurrency={concurrency}",
                "progress=false",
                *overrides,
            ],
        )
    OmegaConf.resolve(cfg)
    return cfg


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
    overrides: Sequence[str] = (),
) -> dict:
    """Run every condition of `design` on `trajectory` into `run_dir` and report it, wired
    exactly as `place run` wires it (place.runner.wiring) from the real configuration; the
    manifest is what `place run` writes minus versions and timings (status complete).
    `chat` replaces the scripted answer model (e.g. one behind an LLM call cache)."""
    from place.reference.replay import replay
    from place.report.report import write_report
    from place.runner.journal import Journal
    from place.runner.wiring import (
        answer_free,
        build_experiment,
        component_params,
        core_of,
        recorded_params,
        run_header,
    )

    cfg = compose(design, overrides, concurrency)
    run_dir.mkdir(parents=True, exist_ok=True)
    reference = replay(trajectory)
    answers = chat if chat is not None else ScriptedChat(table)
    with Journal(run_dir) as journal, backend(run_dir, FakeMem0LLM.scripted()) as store_backend:
        experiment = build_experiment(cfg, trajectory, reference, store_backend, answers, journal)
        try:
            experiment.run()
        finally:
            experiment.close()
    header = run_header(
        trajectory,
        reference,
        experiment.design,
        trajectory_header
        or {"id": trajectory.id, "sha256": trajectory.sha256, "path": "trajectory.yaml"},
        {"name": "scripted-fake", "runtime": "fake", "identity": "fake"},
        core_of(cfg, trajectory, experiment.design),
        answer_free(cfg),
    )
    manifest = {
        "status": "complete",
        "header": header,
        "seeds": {"bootstrap": seeds[0], "resamples": seeds[1]},
        "parameters": recorded_params(
            experiment.design, component_params(cfg, experiment.design)
        ),
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return write_report(run_dir, plots=plots).to_json()  # metrics.json as written
