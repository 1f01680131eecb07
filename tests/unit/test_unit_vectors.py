"""Embeddings are fixed points of Qdrant's cosine normalization (place/memory/unit_vectors.py)."""

from __future__ import annotations

import numpy as np

from place.memory.unit_vectors import FixedUnitEmbedder, fixed_unit


def _normalized(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_fixed_units_survive_renormalization_and_barely_move() -> None:
    rng = np.random.default_rng(7)
    fixed = 0
    for _ in range(500):
        raw = rng.standard_normal(384).astype(np.float32)
        out = np.asarray(fixed_unit(raw), dtype=np.float32)
        fixed += np.array_equal(_normalized(out), out)
        assert np.max(np.abs(out - _normalized(raw))) < 1e-6
    assert fixed >= 498  # a fixed point within one ulp exists for almost every vector


def test_zero_vector_is_left_alone() -> None:
    assert fixed_unit([0.0, 0.0]) == [0.0, 0.0]


def test_wrapper_maps_embed_and_passes_the_rest() -> None:
    class FakeEmbedder:
        dims = 3

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            return [3.0, 4.0, 0.0]

    wrapped = FixedUnitEmbedder(FakeEmbedder())
    assert wrapped.dims == 3
    out = np.asarray(wrapped.embed("x", "search"), dtype=np.float32)
    assert np.array_equal(_normalized(out), out)
