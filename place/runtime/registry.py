"""LLM runtimes by name: one decorated builder registers a runtime (docs/extending.md).

`model.runtime` in the run configuration is a `StrEnum` made from this registry's names
(`place.runner.config.Runtime`), so Hydra refuses an unknown runtime while composing and a
new runtime needs no if/elif anywhere: register a builder here and a `configs/model/` file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from place.errors import PlaceError
from place.runtime.base import LLMRuntime, RetryPolicy

RuntimeBuilder = Callable[[Any, Path, RetryPolicy], LLMRuntime]
"""(the `model` config section, the run directory, the retry policy) -> a runtime."""

RUNTIMES: dict[str, RuntimeBuilder] = {}


def register_runtime(name: str) -> Callable[[RuntimeBuilder], RuntimeBuilder]:
    def decorate(builder: RuntimeBuilder) -> RuntimeBuilder:
        if name in RUNTIMES:
            raise ValueError(f"runtime {name!r} is registered twice")
        RUNTIMES[name] = builder
        return builder

    return decorate


@register_runtime("llamacpp")
def _llamacpp(model: Any, run_dir: Path, retry: RetryPolicy) -> LLMRuntime:
    from place.runtime.llamacpp import LlamaCppRuntime

    return LlamaCppRuntime(
        model.gguf,
        n_ctx=int(model.n_ctx),
        max_tokens=int(model.max_tokens),
        seed=int(model.seed),
        timeout=float(model.timeout_s),
        n_threads=model.n_threads,
        log_dir=run_dir / "logs",
        retry=retry,
    )


@register_runtime("ollama")
def _ollama(model: Any, run_dir: Path, retry: RetryPolicy) -> LLMRuntime:
    from place.runtime.ollama import OllamaRuntime

    del run_dir  # the Ollama server keeps its own logs
    if not model.ollama_model:
        raise PlaceError(f"model {model.name}: runtime ollama needs ollama_model (e.g. qwen2.5:7b)")
    return OllamaRuntime(
        model.ollama_model,
        model.ollama_embedder,
        model.base_url,
        max_tokens=int(model.max_tokens),
        seed=int(model.seed),
        num_ctx=int(model.n_ctx),
        timeout=float(model.timeout_s),
        retry=retry,
    )


def build_runtime(model: Any, run_dir: Path) -> LLMRuntime:
    """The runtime `model.runtime` names, configured from the `model` section."""
    builder = RUNTIMES.get(str(model.runtime))
    if builder is None:  # unreachable through Hydra (the enum refuses it); kept for callers
        raise PlaceError(
            f"model {model.name}: unknown runtime {str(model.runtime)!r}; "
            f"allowed: {', '.join(RUNTIMES)}"
        )
    return builder(model, run_dir, RetryPolicy(attempts=int(model.retries)))
