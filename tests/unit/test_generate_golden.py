"""`place generate` is byte-stable: seeds 0-19 of every design (`paper` and `small`)
hash to the values recorded in tests/data/generate_golden.json.

A seed's file depends only on the seed, the design, `--filler` and the package version
(docs/generator.md), so a refactoring of the generator must leave every byte alone. The 40
generations take about 20 s on a 2-core machine, so all of them are checked.

The version is part of every file (header and title). A change that is meant to change what
seeds produce (library, templates, construction) bumps the version and then records new
hashes with `python tests/unit/test_generate_golden.py`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from place import __version__
from place.generate import generate
from place.generate.design import design_names

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "generate_golden.json"
SEEDS = range(20)


def _sha256(design: str, seed: int) -> str:
    return hashlib.sha256(generate(seed, design).text.encode("utf-8")).hexdigest()


def _recorded() -> dict[str, object]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_the_record_covers_every_seed_of_every_design() -> None:
    files = _recorded()["files"]
    assert isinstance(files, dict)
    assert sorted(files) == sorted(f"{d}-{s}.yaml" for d in design_names() for s in SEEDS)


@pytest.mark.parametrize("design", design_names())
def test_seeds_reproduce_the_recorded_bytes(design: str) -> None:
    recorded = _recorded()
    assert recorded["place_version"] == __version__, (
        "the package version changed, and with it every generated file's header: record new "
        "hashes with `python tests/unit/test_generate_golden.py`"
    )
    files = recorded["files"]
    assert isinstance(files, dict)
    changed = [s for s in SEEDS if _sha256(design, s) != files[f"{design}-{s}.yaml"]]
    assert not changed, f"design {design}: seeds {changed} no longer produce the recorded bytes"


if __name__ == "__main__":
    record = _recorded()
    record["place_version"] = __version__
    record["files"] = {f"{d}-{s}.yaml": _sha256(d, s) for d in design_names() for s in SEEDS}
    GOLDEN.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"recorded {len(SEEDS) * len(design_names())} hashes for place {__version__} in {GOLDEN}")
