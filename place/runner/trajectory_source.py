"""The trajectory a run's config names: a file, a generated one, and either with on-topic
distractors added (`trajectory.distract`, docs/method.md §16).

A file without distractors is read where it is; anything else is made in memory, the same
bytes for the same config and package version, and written into the run directory as
`trajectory.yaml` (again on a resume: the bytes are the same, so the run's trajectory hash
still matches).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from place.trajectory.model import Trajectory


@dataclass(frozen=True)
class Made:
    """A trajectory made from the config: its text, the loaded model, how it was made."""

    text: str
    trajectory: Trajectory
    info: dict[str, Any]
    """The manifest's `generated` entry: seed, design, filler, and the distractors if any."""


def is_made(t: Any) -> bool:
    """Whether the config's trajectory is made in memory rather than read from `path`."""
    return t.seed is not None or t.distract is not None


@functools.lru_cache(maxsize=8)
def made_from(
    seed: int | None,
    design: str,
    filler: int,
    path: str | None,
    kind: str | None,
    dose: int,
    distract_seed: int,
) -> Made:
    """The trajectory of generator `seed` (or the file at `path` when `seed` is None) with
    `dose` distractors of `kind` drawn with `distract_seed` (none when `kind` is None), as
    a run makes it: the recorded studies' tests remake their jobs' trajectories with it."""
    from place.generate import generate
    from place.generate.distract import distract_loaded
    from place.reference.validate import load_trajectory
    from place.trajectory.loader import read_source
    from place.trajectory.yaml_source import parse_yaml

    info: dict[str, Any] = {}
    if seed is not None:
        made = generate(seed, design, filler)
        text, trajectory = made.text, made.trajectory
        info = {"seed": seed, "design": design, "filler": filler}
        source = parse_yaml(text)
        assert source is not None  # the generator's own YAML
        data = source.data
    else:
        assert path is not None
        trajectory = load_trajectory(path)
        text, data = "", read_source(path).data
        info = {"path": path}
    if kind is None:
        return Made(text, trajectory, info)
    command = f"place run trajectory.distract={kind} trajectory.dose={dose}"
    result = distract_loaded(trajectory, data, [kind], dose, distract_seed, ".yaml", command)
    info = {**info, "distract": kind, "dose": dose, "distract_seed": distract_seed}
    return Made(result.text, result.trajectory, info)


def made(t: Any, path: str | None = None) -> Made:
    """The config's trajectory made in memory (`is_made`); `path` is the resolved file of a
    distracted file trajectory."""
    kind = None if t.distract is None else str(t.distract)
    seed = None if t.seed is None else int(t.seed)
    distract_seed = int(t.distract_seed) if t.distract_seed is not None else (seed or 0)
    return made_from(seed, str(t.design), int(t.filler), path, kind, int(t.dose), distract_seed)
