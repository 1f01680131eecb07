"""Fault injection for the fault tests: a SIGKILL or a failed write at a named point.

Off unless the environment variable ``PLACE_FAULT`` is set, so a normal run pays one dict
lookup per point. The value is a comma-separated list of ``POINT@N:ACTION``: on the N-th
time this process reaches POINT, ACTION happens there.

- ``kill``: the process sends itself SIGKILL, which nothing can catch or clean up after, so
  the run directory is left exactly as a ``kill -9`` at that moment would leave it.
- ``enospc``: the write at a ``write:<file name>`` point fails with ``ENOSPC`` after writing
  part of its data, as a full disk would.
- ``perturb``: at ``checkpoint-read``, after the first read policy of a write row has read
  the row store at a checkpoint and before the others do, a plain-text record holding a
  fact the store does not hold is added to it, so the row's read policies observe different
  readbacks: the factorization check must catch it (exit 3, `invalid: factorization`).

Kill points name the phases of a run: ``native-add`` (inside Mem0's ``add()``, after an LLM
answer, before Mem0 acts on it), ``css-verify`` (certified writes landed, readback not yet
done), ``pair-world-b`` (world b written, before its reads), ``probes`` (a conflict copy
written, before its reads) and ``report`` (records complete, metrics written, tables not).
Example: ``PLACE_FAULT="css-verify@3:kill"``.

``PLACE_SLOW_UNIT_S`` (seconds) makes every unit that much slower, with a sleep just before it
is journaled, so the SLURM tests can land a time-limit or requeue signal inside a unit of a
run that otherwise takes seconds.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from collections import Counter
from pathlib import Path

from place.errors import PlaceError

ENV = "PLACE_FAULT"
SLOW_ENV = "PLACE_SLOW_UNIT_S"
KILL_POINTS = ("native-add", "css-verify", "pair-world-b", "probes", "report")
PERTURB_POINTS = ("checkpoint-read",)
WRITE_PREFIX = "write:"
ACTIONS = ("kill", "enospc", "perturb")

_hits: Counter[str] = Counter()
_parsed: tuple[str, dict[str, tuple[int, str]]] | None = None


def _plan() -> dict[str, tuple[int, str]]:
    """{point: (n, action)} from PLACE_FAULT, parsed once per distinct value."""
    global _parsed
    spec = os.environ.get(ENV, "")
    if _parsed is None or _parsed[0] != spec:
        _parsed = (spec, parse(spec))
        _hits.clear()
    return _parsed[1]


def parse(spec: str) -> dict[str, tuple[int, str]]:
    plan: dict[str, tuple[int, str]] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        point, _, rest = item.partition("@")
        count, _, action = rest.partition(":")
        valid_point = point in KILL_POINTS + PERTURB_POINTS or (
            point.startswith(WRITE_PREFIX) and len(point) > len(WRITE_PREFIX)
        )
        if not valid_point or not count.isdigit() or int(count) < 1 or action not in ACTIONS:
            raise PlaceError(
                f"{ENV}: bad fault {item!r}; expected POINT@N:ACTION with POINT one of "
                f"{', '.join(KILL_POINTS + PERTURB_POINTS)} or {WRITE_PREFIX}<file name>, N >= 1, "
                f"ACTION one of {', '.join(ACTIONS)}"
            )
        if action == "enospc" and not point.startswith(WRITE_PREFIX):
            raise PlaceError(f"{ENV}: {item!r}: enospc applies to {WRITE_PREFIX}<file> points")
        if (action == "perturb") != (point in PERTURB_POINTS):
            raise PlaceError(
                f"{ENV}: {item!r}: perturb applies to {', '.join(PERTURB_POINTS)} and only there"
            )
        plan[point] = (int(count), action)
    return plan


def _due(point: str) -> str | None:
    plan = _plan()
    if point not in plan:
        return None
    _hits[point] += 1
    n, action = plan[point]
    return action if _hits[point] == n else None


def kill_point(point: str) -> None:
    """A phase boundary where a fault test may kill this process."""
    if _due(point) == "kill":
        os.kill(os.getpid(), signal.SIGKILL)


def perturb_due(point: str) -> bool:
    """Whether the fault plan perturbs the store at this passage of `point`."""
    return _due(point) == "perturb"


def write_fails(path: Path) -> bool:
    """Whether this write of `path` is to fail as on a full disk (the caller simulates it)."""
    point = WRITE_PREFIX + path.name
    action = _due(point)
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    return action == "enospc"


def disk_full(path: Path) -> OSError:
    """The error a write to `path` on a full disk raises."""
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def slow_unit() -> None:
    """Sleep `PLACE_SLOW_UNIT_S` seconds (unset: nothing) at the end of a unit."""
    value = os.environ.get(SLOW_ENV)
    if not value:
        return
    try:
        delay = float(value)
    except ValueError:
        delay = -1.0
    if not 0 <= delay <= 3600:
        raise PlaceError(f"{SLOW_ENV}: {value!r} is not a number of seconds from 0 to 3600")
    time.sleep(delay)
