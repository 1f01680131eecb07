"""A one-node SLURM cluster for the SLURM tests: real munged, slurmctld and slurmd.

Everything lives in one directory: a fresh munge key and socket, a generated `slurm.conf`
(one node with this machine's cores and memory, one partition, free ports on 127.0.0.1),
state, spool and logs. The packages come from `tests/slurm/install.sh` (`make test` runs
it); the packages' own services and files under /etc are not used. Commands reach the
cluster through `SLURM_CONF`, which `env` sets.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
COMMANDS = ("sbatch", "scontrol", "sinfo", "squeue", "scancel")


SBIN = ("/usr/sbin", "/sbin")
"""Where Debian puts the daemons, off a non-root PATH."""


def _find(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(Path(d, name)) for d in SBIN if Path(d, name).exists()), None
    )


def missing() -> list[str]:
    """The programs the cluster needs that this machine lacks."""
    return [name for name in (*DAEMONS, *COMMANDS) if _find(name) is None]


def _program(name: str) -> str:
    found = _find(name)
    if found is None:
        raise FileNotFoundError(name)
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


class Cluster:
    """`start()` the daemons and wait for the node to be idle; `stop()` them."""

    KILL_WAIT_S = 10
    """SIGTERM to SIGKILL (KillWait): long enough for a unit to end after `scontrol requeue`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.cpus = os.cpu_count() or 1
        self.conf = root / "slurm.conf"
        self.socket = root / "munge" / "munge.socket"
        self.logs = root / "log"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def env(self) -> dict[str, str]:
        """The environment for `sbatch`, `scontrol`, ... and for `place run` submitting."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def write_conf(self) -> None:
        for sub in ("munge", "state", "spool", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        # Memory SLURM may hand out: what the machine has, less 1 GiB for everything else.
        memory = max(1024, _memory_mb() - 1024)
        r = self.root
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=placetest",
                    f"SlurmctldHost={self.node}(127.0.0.1)",
                    f"SlurmctldPort={_free_port()}",
                    f"SlurmdPort={_free_port()}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    # A requeued job waits cred_expire seconds before it starts again (120
                    # by default; 5 is the least), and the schedulers look for work every 2 s
                    # instead of 30 and 60: both keep the requeue tests short.
                    f"AuthInfo=socket={self.socket},cred_expire=5",
                    f"StateSaveLocation={r / 'state'}",
                    f"SlurmdSpoolDir={r / 'spool'}",
                    f"SlurmctldPidFile={r / 'slurmctld.pid'}",
                    f"SlurmdPidFile={r / 'slurmd.pid'}",
                    f"SlurmctldLogFile={self.logs / 'slurmctld.log'}",
                    f"SlurmdLogFile={self.logs / 'slurmd.log'}",
                    # No cgroups in a container: processes are tracked by their parent ids.
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    # No slurmdbd: `sacct` says accounting is disabled, and submitit (which
                    # polls it) tells a job done by its result file (docs/sweeps.md).
                    "AccountingStorageType=accounting_storage/none",
                    "SchedulerType=sched/backfill",
                    "SchedulerParameters=bf_interval=2,sched_interval=2",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_CPU",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    "JobRequeue=1",
                    f"KillWait={self.KILL_WAIT_S}",
                    "MinJobAge=3600",
                    "InactiveLimit=0",
                    f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} "
                    f"RealMemory={memory} State=UNKNOWN",
                    f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)

    def _spawn(self, name: str, *args: str) -> None:
        log = (self.logs / f"{name}.out").open("wb")
        self.procs[name] = subprocess.Popen(
            [_program(name), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,
        )

    def start(self, timeout: float = 60) -> None:
        self.write_conf()
        m = self.root / "munge"
        self._spawn(
            "munged",
            "--foreground",
            "--force",  # as root, with the key in a directory of the test's own
            f"--key-file={m / 'munge.key'}",
            f"--socket={self.socket}",
            f"--pid-file={m / 'munged.pid'}",
            f"--log-file={self.logs / 'munged.log'}",
            f"--seed-file={m / 'munged.seed'}",
        )
        self._wait(lambda: self.socket.exists(), timeout, "munged's socket")
        self._spawn("slurmctld", "-D", "-i", "-f", str(self.conf))
        self._spawn("slurmd", "-D", "-N", self.node, "-f", str(self.conf))
        self._wait(lambda: self.node_state() == "idle", timeout, "the node to be idle")

    def node_state(self) -> str:
        out = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%T"], env=self.env, capture_output=True, text=True
        )
        return out.stdout.strip() if out.returncode == 0 else ""

    def _wait(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited ({proc.returncode}):\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"waited {timeout:g} s for {what}:\n{self.log_tail()}")
            time.sleep(0.2)

    def log_tail(self, lines: int = 15) -> str:
        out = []
        for path in sorted(self.logs.glob("*")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(out)

    def scontrol(self, *args: str) -> str:
        out = subprocess.run(
            ["scontrol", *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        if out.returncode != 0:
            raise RuntimeError(f"scontrol {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def jobs(self) -> str:
        """squeue's lines for the jobs still known (empty once none is pending or running)."""
        out = subprocess.run(
            ["squeue", "-h", "-o", "%i %T"], env=self.env, capture_output=True, text=True
        )
        return out.stdout.strip()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            subprocess.run(["scancel", "--full", "--user=root"], env=self.env, timeout=30)
            # Jobs' processes end within KillWait; then the daemons go.
            deadline = time.monotonic() + self.KILL_WAIT_S + 20
            while self.jobs() and time.monotonic() < deadline:
                time.sleep(0.5)
        with contextlib.suppress(Exception):
            subprocess.run(["scontrol", "shutdown"], env=self.env, timeout=30)
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            with contextlib.suppress(ProcessLookupError):
                if proc.poll() is None:
                    proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                proc.wait()
        self.procs.clear()
