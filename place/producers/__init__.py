"""Write producers (docs/method.md §3, §8): native, append, css. Importing this package
registers them; `PRODUCERS` maps each name to its declaration."""

from place.producers import append, css, native  # noqa: F401  (registers the producers)
from place.producers.registry import (
    PRODUCERS,
    ProducerContext,
    ProducerSpec,
    StepOutcome,
    Writer,
    build_writer,
    register_producer,
)

__all__ = [
    "PRODUCERS",
    "ProducerContext",
    "ProducerSpec",
    "StepOutcome",
    "Writer",
    "build_writer",
    "register_producer",
]
