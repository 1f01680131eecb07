"""The run directory's journal: lock, per-unit progress, append-only records.

A unit's records are appended, fsynced, and only then is `progress.json` replaced
atomically with the new unit count and the record files' line counts. On resume, record
files are cut back to the counts of the last completed unit, so a kill at any point leaves
neither duplicated nor half-written records.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from place import atomic, faults
from place.errors import PlaceError
from place.records import RECORD_FILES, RunRecord

PROGRESS_SCHEMA = "place-progress/1"


class RunLocked(PlaceError):
    """Another process holds this run directory."""


class Journal:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.records_dir = run_dir / "records"
        self.progress_path = run_dir / "progress.json"
        self._flock: TextIO | None = None
        self._files: dict[str, TextIO] = {}
        self.units_done = 0
        self.counts: dict[str, int] = {name: 0 for name, _ in RECORD_FILES.values()}
        self.state: dict[str, Any] = {}
        """Small resumable state that units leave for later units (e.g. closed-loop answers)."""
        self._committed: dict[str, int] = dict(self.counts)
        self.cut_lines = 0
        """Record lines an interrupted unit had appended, cut when this journal opened."""
        self.on_commit: list[Callable[[int], None]] = []
        """Called with `units_done` after each unit is durable (a SLURM job stops there:
        place.runner.preemption)."""

    def __enter__(self) -> Journal:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.records_dir.mkdir(exist_ok=True)
        lock = (self.run_dir / ".lock").open("a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise RunLocked(
                f"{self.run_dir} is in use by another place run (lock {self.run_dir / '.lock'}); "
                "wait for it to finish or choose another hydra.run.dir"
            ) from None
        self._flock = lock
        self._load()
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        for fh in self._files.values():
            with contextlib.suppress(OSError):  # a full disk may refuse the flush too
                fh.close()
        self._files.clear()
        if exc_type is not None:
            # A failed unit's records are not part of the run: cut them now, not at resume,
            # so nobody reading the directory meanwhile sees records progress.json disowns.
            for name, lines in self._committed.items():
                self._truncate(self.records_dir / name, lines)
        if self._flock is not None:
            fcntl.flock(self._flock, fcntl.LOCK_UN)
            self._flock.close()
            self._flock = None

    def _load(self) -> None:
        if self.progress_path.exists():
            doc = json.loads(self.progress_path.read_text(encoding="utf-8"))
            self.units_done = int(doc["units_done"])
            self.counts.update(doc["record_counts"])
            self.state = doc.get("state", {})
        for name in self.counts:
            self.cut_lines += self._truncate(self.records_dir / name, self.counts[name])
        self._committed = dict(self.counts)

    @staticmethod
    def _truncate(path: Path, lines: int) -> int:
        """Keep the first `lines` complete lines (drop what a killed unit appended); returns
        how many lines, complete or not, were dropped."""
        if not path.exists():
            return 0
        with path.open("rb+") as fh:
            offset = 0
            for kept, line in enumerate(fh):
                if kept == lines or not line.endswith(b"\n"):
                    break
                offset += len(line)
            fh.seek(offset)
            dropped = sum(1 for _ in fh)
            fh.truncate(offset)
        return dropped

    def append(self, record: RunRecord) -> None:
        kind = record.kind
        name = RECORD_FILES[kind][0]
        fh = self._files.get(name)
        if fh is None:
            fh = self._files[name] = (self.records_dir / name).open("a", encoding="utf-8")
        line = record.model_dump_json(by_alias=True) + "\n"
        if faults.write_fails(self.records_dir / name):
            fh.write(line[: len(line) // 2])
            fh.flush()
            raise faults.disk_full(self.records_dir / name)
        fh.write(line)
        self.counts[name] += 1

    def commit_unit(self, unit_index: int) -> None:
        """The unit's records are durable; then, atomically, the unit counts as done."""
        for fh in self._files.values():
            fh.flush()
            os.fsync(fh.fileno())
        self.units_done = unit_index + 1
        self.save()
        self._committed = dict(self.counts)
        for hook in self.on_commit:
            hook(self.units_done)

    def save(self) -> None:
        doc = {
            "schema": PROGRESS_SCHEMA,
            "units_done": self.units_done,
            "record_counts": self.counts,
            "state": self.state,
        }
        atomic.write_text(self.progress_path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
