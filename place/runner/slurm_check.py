"""Before a sweep goes to SLURM: is there a controller to take it?

Without this, `place run -m hydra/launcher=place_slurm` on a machine with no SLURM, or with a
controller that is down, ends in submitit's traceback around `sbatch`'s one-line error. Asked
first, with `scontrol ping`, the answer is one line and exit 2, before anything is written.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from place.errors import PlaceError

SLURM_LAUNCHERS = ("place_slurm", "submitit_slurm")


def uses_slurm(argv: Sequence[str]) -> bool:
    """The command line picks a SLURM launcher (`hydra/launcher=place_slurm`)."""
    return any(
        a.lstrip("+~").startswith("hydra/launcher=") and a.split("=", 1)[1] in SLURM_LAUNCHERS
        for a in argv
    )


def check_controller(timeout_s: float = 30) -> str:
    """`scontrol ping`'s answer when a controller is up; PlaceError naming what is wrong."""
    missing = [cmd for cmd in ("sbatch", "scontrol") if shutil.which(cmd) is None]
    if missing:
        raise PlaceError(
            f"hydra/launcher=place_slurm: {' and '.join(missing)} not found on PATH; submit "
            "from a login node of the cluster (docs/sweeps.md, 'On a SLURM cluster')"
        )
    try:
        done = subprocess.run(
            ["scontrol", "ping"], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        raise PlaceError(
            f"hydra/launcher=place_slurm: `scontrol ping` did not answer in {timeout_s:g} s"
        ) from None
    answer = " ".join((done.stdout + done.stderr).split())
    if done.returncode != 0 or " is UP" not in answer:
        raise PlaceError(
            "hydra/launcher=place_slurm: no SLURM controller answers (`scontrol ping`: "
            f"{answer or f'exit {done.returncode}'}); check that slurmctld runs and that "
            "SLURM_CONF names its slurm.conf"
        )
    return answer
