"""LLM runtimes by name: one decorated builder registers a runtime (docs/extending.md).

`RUNTIMES` is a `place.registry.Registry`: `model.runtime` in the run configuration must be
one of its names (checked with every other key), and another package registers a runtime
through the `place.runtimes` entry-point group. Nothing outside `place/runtime/` branches on
a runtime's name: what differs between runtimes (preflight, `place doctor`, token counting
for the prompt check, configuration problems only the runtime can tell) are methods of
`LLMRuntime`, called on the runtime the registry builds (`configured_runtime`).

A builder takes (the `model` config section, the run directory, the retry policy) and
returns an `LLMRuntime` that is configured but not started: building must be cheap, start no
server and touch no network. Builders import their runtime module lazily, so importing this
registry (the run configuration does) loads neither llama.cpp's nor Ollama's code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from place.errors import PlaceError
from place.registry import Registry
from place.runtime.base import LLMRuntime, RetryPolicy

RuntimeBuilder = Callable[[Any, Path, RetryPolicy], LLMRuntime]
"""(the `model` config section, the run directory, the retry policy) -> a runtime."""

RUNTIMES: Registry[RuntimeBuilder] = Registry("LLM runtime", "place.runtimes")
"""Registered runtime builders by name (`model.runtime`)."""


def register_runtime(name: str) -> Callable[[RuntimeBuilder], RuntimeBuilder]:
    """Decorator: register a builder as the runtime `name` (`model.runtime=name`)."""
    return RUNTIMES.register(name)


@register_runtime("llamacpp")
def _llamacpp(model: Any, run_dir: Path, retry: RetryPolicy) -> LLMRuntime:
    from place.runtime.llamacpp import LlamaCppRuntime, default_gguf_path

    if not model.gguf:
        try:
            default_gguf_path()  # the runtime's default; say which key is at fault if absent
        except PlaceError as exc:
            raise PlaceError(f"model.gguf=null: {exc}") from None
    return LlamaCppRuntime(
        model.gguf or None,
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
    return OllamaRuntime(
        model.ollama_model or "",  # required: OllamaRuntime.config_problems says so
        model.ollama_embedder,
        model.base_url,
        max_tokens=int(model.max_tokens),
        seed=int(model.seed),
        num_ctx=int(model.n_ctx),
        timeout=float(model.timeout_s),
        retry=retry,
    )


def build_runtime(model: Any, run_dir: Path) -> LLMRuntime:
    """The runtime `model.runtime` names, configured from the `model` section (not started).

    Raises `PlaceError` for a runtime that is not registered, or (phrased as a configuration
    problem) when the section names something the runtime cannot be built from."""
    builder = RUNTIMES.get(str(model.runtime))
    if builder is None:  # the configuration check refuses it first; kept for other callers
        raise PlaceError(
            f"model {model.name}: unknown runtime {str(model.runtime)!r}; "
            f"registered: {', '.join(RUNTIMES) or 'none'}"
        )
    return builder(model, run_dir, RetryPolicy(attempts=int(model.retries)))


def configured_runtime(model: Any) -> LLMRuntime:
    """The runtime of a `model` section for what is asked before a run (its configuration
    problems, token counter, preflight, `place doctor`): built, never started, with no run
    directory (logs would go under os.devnull, which nothing creates before `start`)."""
    return build_runtime(model, Path(os.devnull))
