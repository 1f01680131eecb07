"""A run's records as one archive: `records.tar.xz` beside `manifest.json` (docs/records.md).

A population study keeps hundreds of runs, each with ~10 MB of JSON lines that compress
about a hundredfold; committed as archives, every figure stays recomputable from the
per-item records. The archive is deterministic (sorted members, no times, owners or
modes), so the same records give the same bytes, and it is read in place by every command
that reads records (`load_run_records`): `place report`, `place compare`, the notebooks.
"""

from __future__ import annotations

import io
import lzma
import shutil
import tarfile
import tempfile
from pathlib import Path

from place import atomic
from place.errors import PlaceError
from place.records import RunRecords

ARCHIVE = "records.tar.xz"
"""The archive's name in a run directory."""


def archive_records(run_dir: Path, *, remove: bool = True) -> Path:
    """Pack `run_dir/records/*.jsonl` into `run_dir/records.tar.xz` (deterministic bytes);
    with `remove`, delete `records/` once the archive is written and reads back the same."""
    records = run_dir / "records"
    files = sorted(p for p in records.glob("*.jsonl") if p.is_file())
    if not files:
        raise PlaceError(f"{records}: no records to archive")
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            data = path.read_bytes()
            info = tarfile.TarInfo(path.name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    packed = lzma.compress(raw.getvalue(), preset=9)
    target = run_dir / ARCHIVE
    atomic.write_bytes(target, packed)
    with tempfile.TemporaryDirectory() as tmp:
        _extract(target, Path(tmp))
        if any((Path(tmp) / p.name).read_bytes() != p.read_bytes() for p in files):
            raise PlaceError(f"{target}: does not read back as {records}; records kept")
    if remove:
        shutil.rmtree(records)
    return target


def _extract(archive: Path, into: Path) -> None:
    try:
        with tarfile.open(archive, mode="r:xz") as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as exc:
        raise PlaceError(f"{archive}: not a readable records archive: {exc}") from None


def load_run_records(run_dir: Path) -> RunRecords:
    """A run's records: `records/`, or when only the archive is kept, `records.tar.xz`."""
    records = run_dir / "records"
    archive = run_dir / ARCHIVE
    if records.is_dir() or not archive.is_file():
        return RunRecords.load(records)
    with tempfile.TemporaryDirectory() as tmp:
        _extract(archive, Path(tmp))
        return RunRecords.load(Path(tmp))
