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

USAGE = """\
usage: place doctor [-h] [key=value ...]

What a run's model configuration will get, asked of its runtime; runs nothing and creates
nothing. For an Ollama model the live server says the model's trained context length, the
Modelfile's num_ctx and whether (and with which context) the model is loaded, beside the
num_ctx, seed and token budget every request of a run sends. For the embedded model: what a
run starts llama.cpp with.

arguments:
  key=value   the same overrides as `place run`, e.g. model=qwen2.5-7b
              model.base_url=http://gpu-box:11434 (docs/configuration.md, docs/ollama.md)
  -h, --help  show this help and exit

models (configs/model/): {models}

exit status: 0 ok; 2 a bad configuration or a problem the runtime reports (on stderr)"""


def doctor_main(argv: Sequence[str]) -> int:
    if "-h" in argv or "--help" in argv:
        from place.runner.config import CONFIG_DIR

        models = ", ".join(sorted(p.stem for p in (CONFIG_DIR / "model").glob("*.yaml")))
        print(USAGE.format(models=models))
        return 0
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
