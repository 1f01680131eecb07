"""Embeddings as exact fixed points of Qdrant's cosine normalization, so a clone is a copy.

Qdrant (local mode, and the server) stores a cosine collection's vectors normalized:
v / ||v|| in float32. A clone (world b, a probe copy, a resume snapshot) re-upserts the stored
vectors, which normalizes them a second time, and float32 normalization is not idempotent:
about one vector in three moves in its last bits. Then world a and world b rank the same
records with scores that differ by ~1e-7, which can reorder a near tie and make the two
worlds expose different items for a reason that is neither state nor leakage.

So every embedding is mapped, before Mem0 or a read policy sees it, to a vector that the
normalization leaves exactly unchanged: normalize until it stops moving (almost always
within two steps); in the rare two-cycle, move one component by one ulp until a fixed point
is found. The result differs from the embedder's own unit vector by at most a few ulps, so
similarity is unchanged for every practical purpose.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_MAX_STEPS = 8


def _normalized(v: np.ndarray) -> np.ndarray:
    # The same arithmetic as qdrant-client's local mode (float32 array, numpy norm).
    norm = np.linalg.norm(v)
    return (v / norm).astype(np.float32) if norm > 0 else v


def fixed_unit(vector: Any) -> list[float]:
    v = np.asarray(vector, dtype=np.float32)
    if not np.linalg.norm(v) > 0:
        return v.tolist()
    for _ in range(_MAX_STEPS):
        w = _normalized(v)
        if np.array_equal(w, v):
            return v.tolist()
        v = w
    for j in range(v.size):
        for direction in (np.float32(np.inf), np.float32(-np.inf)):
            candidate = v.copy()
            candidate[j] = np.nextafter(candidate[j], direction)
            if np.array_equal(_normalized(candidate), candidate):
                return candidate.tolist()
    return v.tolist()  # no fixed point within one ulp (about 1 in 2,500): as close as it gets


class FixedUnitEmbedder:
    """Wraps a Mem0 embedder: `embed()` returns fixed-point unit vectors."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        return fixed_unit(self._inner.embed(text, memory_action))

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)
