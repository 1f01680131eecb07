"""MiniLM vectors do not depend on which CPU kernels torch, MKL and oneDNN pick.

An Intel and an AMD processor take different MKL code paths even under `MKL_CBWR=AVX2`;
that once moved recorded similarity scores in their sixth decimal between two machines.
The backend therefore computes MiniLM in float64 and stores float32 (place/determinism.py,
MINILM_DTYPE). Here the real embedder runs in two processes forced onto different kernels,
as two processors would choose them, and must give the same bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

TEXTS = [
    "What should I avoid eating?",
    "Sam's dietary requirement: nut allergy",
    "My flight to Lisbon now leaves at 09:40, not 06:05.",
    "I sit at desk 14 until the end of May.",
]

SCRIPT = """
import json, sys
import place
from place.memory.backend import build_embedder
from place.runtime.embedder import MINILM_DIMS, minilm_mem0_embedder_config
embedder = build_embedder(minilm_mem0_embedder_config(), MINILM_DIMS)
print(json.dumps([embedder.embed(t, "search") for t in json.loads(sys.argv[1])]))
"""

# Two kernel choices as different processors would make them (and as a user's environment
# may force them): place only sets these when they are unset.
KERNELS = {
    "avx2": {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "compatible": {
        "MKL_CBWR": "COMPATIBLE",
        "ATEN_CPU_CAPABILITY": "default",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
    },
}


def embed_with(kernels: dict[str, str]) -> list[list[float]]:
    env = {**os.environ, **kernels, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(TEXTS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_same_vectors_under_different_cpu_kernels() -> None:
    first, second = (embed_with(k) for k in KERNELS.values())
    assert len(first) == len(TEXTS) and all(len(v) == 384 for v in first)
    differing = [t for t, a, b in zip(TEXTS, first, second, strict=True) if a != b]
    assert differing == [], f"vectors differ between kernel choices for: {differing}"
