"""From a composed run configuration to a runnable `Experiment`: the one wiring function.

`place run` (place/runner/app.py) and the in-process test harness (tests/inprocess.py) both
build their experiment here, so what a test runs is what a user runs: the same design, the
same declared parameters, the same answer prompt, the same manifest header. Only the stack
differs (a real runtime and backend, or fakes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from place.agent.answer import AnswerModel, AnswerPrompt
from place.design import Design, make_design
from place.params import params_dict
from place.reference.replay import Reference
from place.runner.experiment import Experiment, Sections
from place.runner.journal import Journal
from place.trajectory.model import Trajectory


def design_of(cfg: Any) -> Design:
    """The configured producers × read policies, checked against the registries."""
    return make_design(cfg.design.name, cfg.design.producers, cfg.design.policies)


def component_params(cfg: Any, design: Design) -> dict[str, dict[str, Any]]:
    """The `design.<name>` section of every producer and policy of the design that declares
    parameters (defaults already filled in by the declaration while composing)."""
    from omegaconf import OmegaConf

    from place.policies import POLICIES
    from place.producers import PRODUCERS

    out: dict[str, dict[str, Any]] = {}
    for names, registry in ((design.producers, PRODUCERS), (design.policies, POLICIES)):
        for name in names:
            spec = registry[name]
            if spec.params is not None and name in cfg.design:
                section = OmegaConf.to_container(cfg.design[name], resolve=True)
                out[name] = {str(k): v for k, v in cast(dict[Any, Any], section).items()}
    return out


def recorded_params(design: Design, params: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the manifest records: each parameterised component of the design with the
    values it was built with (`parameters` in manifest.json)."""
    from place.policies import POLICIES
    from place.producers import PRODUCERS

    out: dict[str, Any] = {}
    for names, registry in ((design.producers, PRODUCERS), (design.policies, POLICIES)):
        for name in names:
            spec = registry[name]
            if spec.params is not None:
                out[name] = params_dict(spec.make_params(params.get(name)))
    return out


def answer_model(cfg: Any, chat: Any) -> AnswerModel:
    a = cfg.answer
    return AnswerModel(
        chat, AnswerPrompt(a.system, a.user, a.dialogue, a.empty_memory), int(a.max_tokens)
    )


def build_experiment(
    cfg: Any,
    trajectory: Trajectory,
    reference: Reference,
    backend: Any,
    chat: Any,
    journal: Journal,
    *,
    on_phase: Callable[[str], None] | None = None,
) -> Experiment:
    """The experiment `cfg` describes, on the given backend and answer chat model."""
    design = design_of(cfg)
    return Experiment(
        trajectory,
        reference,
        backend,
        answer_model(cfg, chat),
        journal,
        int(cfg.experiment.k),
        Sections(
            bool(cfg.experiment.primary),
            bool(cfg.experiment.utility),
            bool(cfg.experiment.closed_loop),
        ),
        progress=bool(cfg.progress),
        on_phase=on_phase,
        design=design,
        params=component_params(cfg, design),
        concurrency=int(cfg.answer.concurrency),
    )


def counts(trajectory: Trajectory, reference: Reference) -> dict[str, int]:
    """The trajectory's design counts, as the manifest header and metrics.json carry them."""
    kinds = [c.kind for c in reference.checkpoints]
    return {
        "conversations": len(trajectory.conversations),
        "turns": len(trajectory.turns()),
        "post_update_checkpoints": kinds.count("post-update"),
        "pre_query_checkpoints": kinds.count("pre-query"),
        "queries": len(trajectory.queries()),
        "pairs": sum(1 for _, _, q in trajectory.queries() if q.pair_insert is not None),
        "probes": len(trajectory.probes),
    }


def core_of(cfg: Any, trajectory: Trajectory, design: Design) -> list[str] | None:
    """The predicates SSGM's write gate protects in this run (docs/method.md §13), for the
    `core` sub-tallies of the scorecard: only a design with the `ssgm` producer has them."""
    from place.governance.ssgm_gate import core_predicates

    if "ssgm" not in design.producers:
        return None
    core = str(component_params(cfg, design).get("ssgm", {}).get("core", "schema"))
    return sorted(core_predicates(trajectory.schema, "all" if core == "all" else None))


def run_header(
    trajectory: Trajectory,
    reference: Reference,
    design: Design,
    trajectory_doc: dict[str, Any],
    model_doc: dict[str, Any],
    core: list[str] | None = None,
) -> dict[str, Any]:
    """The manifest header every report reads: trajectory, model, counts, conversations and
    the design; with `ssgm` in the design, the core predicates (`core_of`)."""
    return {
        "trajectory": trajectory_doc,
        "model": model_doc,
        "counts": counts(trajectory, reference),
        "conversation_ids": [c.id for c in trajectory.conversations],
        "design": design.to_json(),
        **({} if core is None else {"core": core}),
    }
