"""User-facing errors. The CLI turns these into a message and exit code 2, never a traceback."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where it is, what is wrong and what is allowed."""

    file: str
    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.location}: {self.message}"


class PlaceError(Exception):
    """Base class for errors that are the user's to fix (bad input, bad config)."""


@dataclass
class InputError(PlaceError):
    """A file failed validation. Carries every problem found, so the user sees all at once."""

    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)
