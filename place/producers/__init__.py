"""Write producers (docs/method.md §3, §8, §13, §14): native, append, css, none, extract, ssgm
and bounded. Importing this package registers them; `PRODUCERS` maps each name to its
declaration."""

from place.producers import append, bounded, css, extract, native, none, ssgm  # noqa: F401  (registers them)
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
