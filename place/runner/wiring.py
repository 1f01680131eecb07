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
    """The configured producers × read policies, checked against the registries; in an
    answer-free run with `experiment.llm_producers=skip`, without the LLM producers
    (`skipped_producers`), so no model server is needed (docs/method.md §15)."""
    skipped = set(skipped_producers(cfg))
    producers = [p for p in cfg.design.producers if p not in skipped]
    return make_design(cfg.design.name, producers, cfg.design.policies)


def skipped_producers(cfg: Any) -> list[str]:
    """The design's LLM producers an answer-free run leaves out (none in any other run)."""
    from place.producers import PRODUCERS

    if bool(cfg.experiment.answers) or str(cfg.experiment.llm_producers) != "skip":
        return []
    return [p for p in cfg.design.producers if p in PRODUCERS and PRODUCERS[p].llm]


def uses_model(cfg: Any) -> bool:
    """Whether the run calls the LLM at all: it asks answers, or keeps an LLM producer."""
    from place.producers import PRODUCERS

    if bool(cfg.experiment.answers):
        return True
    return any(PRODUCERS[p].llm for p in design_of(cfg).producers)


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
        answer_model(cfg, chat) if bool(cfg.experiment.answers) else None,
        journal,
        int(cfg.experiment.k),
        Sections(
            bool(cfg.experiment.primary),
            bool(cfg.experiment.utility),
            bool(cfg.experiment.closed_loop),
            bool(cfg.experiment.answers),
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


def model_doc(cfg: Any, identity: Any) -> dict[str, Any]:
    """The header's model: the configured one, or `none` when the run used no model (an
    answer-free run without LLM producers: its runtime records no weights)."""
    if not uses_model(cfg):
        return {"name": identity.name, "runtime": identity.runtime, "identity": identity.identity}
    return {"name": cfg.model.name, "runtime": cfg.model.runtime, "identity": identity.identity}


def answer_free(cfg: Any) -> dict[str, Any] | None:
    """The header's record of an answer-free run (docs/method.md §15): `answers: false` and
    the LLM producers it left out; None for a run that asked answers (its header is as it
    always was)."""
    if bool(cfg.experiment.answers):
        return None
    return {"answers": False, "skipped_producers": skipped_producers(cfg)}


def run_header(
    trajectory: Trajectory,
    reference: Reference,
    design: Design,
    trajectory_doc: dict[str, Any],
    model_doc: dict[str, Any],
    core: list[str] | None = None,
    answer_free: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest header every report reads: trajectory, model, counts, conversations and
    the design; with `ssgm` in the design, the core predicates (`core_of`); for an
    answer-free run, `answers: false` and the producers it skipped (`answer_free`)."""
    return {
        "trajectory": trajectory_doc,
        "model": model_doc,
        "counts": counts(trajectory, reference),
        "conversation_ids": [c.id for c in trajectory.conversations],
        "design": design.to_json(),
        **({} if core is None else {"core": core}),
        **(answer_free or {}),
    }
