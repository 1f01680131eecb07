"""`place doctor [overrides]`: what a run's model configuration will get, asked of its runtime.

The runtime the configuration names reports (`LLMRuntime.doctor`), built but not started. An
Ollama model asks the live server (/api/version, /api/tags, /api/show, /api/ps): the model's
trained context length, the Modelfile's num_ctx, whether the model is loaded and with which
context, beside what every request of a run sends (num_ctx, seed, token budget). The
embedded model has no server to ask before a run: it prints what the run will start
llama.cpp with.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from place.errors import PlaceError
from place.runner.app import EXIT_USAGE


def doctor_main(argv: Sequence[str]) -> int:
    from place.runner.app import check_jobs
    from place.runtime.registry import configured_runtime

    try:
        cfg = check_jobs(list(argv), preflight=False)[0]
        report: dict[str, Any] = configured_runtime(cfg.model).doctor()
    except PlaceError as exc:
        for problem in getattr(exc, "problems", None) or [str(exc)]:
            print(f"place doctor: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    problems = report.get("problems") or []
    shown = {k: v for k, v in report.items() if k != "problems"}
    width = max((len(k) for k in shown), default=0)
    for key, value in shown.items():
        print(f"{key:<{width}}  {value}")
    for problem in problems:
        print(f"place doctor: problem: {problem}", file=sys.stderr)
    return EXIT_USAGE if problems else 0
