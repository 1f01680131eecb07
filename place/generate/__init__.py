"""`place generate`: replicated trajectories drawn from a domain library (docs/method.md §9).

`generate(seed, design, filler)` builds one `place-trajectory/1`, loads it with the project's
loader, replays it and checks the design counts; `write(seed, out, ...)` writes it atomically
only after that. See docs/generator.md.
"""

from place.generate.builder import Generated, generate, write
from place.generate.design import DESIGNS, MAX_FILLER, Design, check_request
from place.generate.verification import self_check

__all__ = [
    "DESIGNS",
    "MAX_FILLER",
    "Design",
    "Generated",
    "check_request",
    "generate",
    "self_check",
    "write",
]
