"""The command that replays a recorded run from its LLM cache alone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def replay_argv(manifest: dict[str, Any], run_dir: Path, cache: Path) -> list[str]:
    """`place run` for the recorded run's trajectory, experiment and model, into `run_dir`,
    answering every LLM call from `cache` (a copy: the run opens it for writing); a call the
    cache cannot answer fails the run instead of reaching a model."""
    from place.runner.config import design_params

    config = manifest["config"]
    design = []
    if "design" in config:  # runs before designs existed are the paper's (the default)
        d = config["design"]
        declared = design_params()  # the parameter sections producers and policies declare
        design = [
            f"design.name={d['name']}",
            f"design.producers=[{','.join(d['producers'])}]",
            f"design.policies=[{','.join(d['policies'])}]",
            *(
                f"design.{name}.{key}={value}"
                for name, section in d.items()
                if name in declared and isinstance(section, dict)
                for key, value in _overrides(section)
            ),
        ]
    t = config["trajectory"]
    if t.get("seed") is not None:  # a generated trajectory: generate it again, same bytes
        trajectory = [
            "trajectory=generated",
            f"trajectory.seed={t['seed']}",
            f"trajectory.design={t['design']}",
            f"trajectory.filler={t['filler']}",
        ]
    else:
        trajectory = [f"trajectory={t['name']}"]
    if t.get("distract") is not None:  # on-topic distractors (docs/method.md §16): same bytes
        trajectory += [
            f"trajectory.distract={t['distract']}",
            f"trajectory.dose={t['dose']}",
            f"trajectory.distract_seed={_value(t.get('distract_seed'))}",
        ]
    # The experiment's switches and k as recorded (a run made with experiment.closed_loop=false
    # replays without its closed loop), and the seeds.
    experiment = [
        f"experiment.{k}={str(v).lower() if isinstance(v, bool) else v}"
        for k, v in config["experiment"].items()
        if k != "name"
    ]
    seeds = [f"seeds.{k}={v}" for k, v in (config.get("seeds") or {}).items()]
    return [
        sys.executable,
        "-m",
        "place.cli",
        "run",
        *trajectory,
        f"experiment={config['experiment']['name']}",
        *experiment,
        *seeds,
        f"model={config['model']['name']}",
        f"hydra.run.dir={run_dir}",
        *design,
        "cache.mode=replay-only",
        f"cache.path={cache}",
        "progress=false",
    ]


def _overrides(section: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """A parameter section as Hydra override pairs: nested sections flattened into dotted
    keys (`budget.state`), values written as Hydra reads them back (`true`, `null`,
    `[a,b]`)."""
    out: list[tuple[str, str]] = []
    for key, value in section.items():
        if isinstance(value, dict):
            out += _overrides(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", _value(value)))
    return out


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    return str(value)
