"""Write producers (method.md §3, §8): native, append, css. Importing this package registers
them; `PRODUCERS` maps each name to its factory."""

from place.producers import append, css, native  # noqa: F401  (registers the producers)
from place.producers.registry import (
    PRODUCERS,
    ProducerContext,
    StepOutcome,
    Writer,
    register_producer,
)

__all__ = ["PRODUCERS", "ProducerContext", "StepOutcome", "Writer", "register_producer"]
