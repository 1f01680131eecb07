"""Seconds and call counts per phase (llm, cache, embedding, store), shared by all layers."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any


class PhaseTimer:
    """Thread-safe accumulator of seconds and counts per phase label."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._seconds: dict[str, float] = {}
        self._counts: dict[str, int] = {}

    def add(self, label: str, seconds: float) -> None:
        """Add one observation of `seconds` to `label`."""
        with self._mutex:
            self._seconds[label] = self._seconds.get(label, 0.0) + seconds
            self._counts[label] = self._counts.get(label, 0) + 1

    @contextlib.contextmanager
    def measure(self, label: str) -> Iterator[None]:
        """Time the `with` body into `label` (also when it raises)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(label, time.perf_counter() - start)

    phase = measure

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn`, timed under `label`."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.measure(label):
                return fn(*args, **kwargs)

        return timed

    def seconds(self, label: str) -> float:
        with self._mutex:
            return self._seconds.get(label, 0.0)

    def count(self, label: str) -> int:
        with self._mutex:
            return self._counts.get(label, 0)

    def totals(self) -> dict[str, float]:
        """{label: seconds}."""
        with self._mutex:
            return dict(self._seconds)

    def snapshot(self) -> dict[str, dict[str, float]]:
        """{label: {"seconds": s, "count": n}}."""
        with self._mutex:
            return {
                k: {"seconds": self._seconds[k], "count": self._counts[k]} for k in self._seconds
            }
