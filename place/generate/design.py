"""The designs of `place generate`: the counts each guarantees and the ranges it draws from,
and the check of a request before anything is built (docs/generator.md, "The designs")."""

from __future__ import annotations

from dataclasses import dataclass

from place.errors import PlaceError
from place.trajectory.model import FAMILIES

SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILLER = 500


@dataclass(frozen=True)
class Design:
    """The counts a design guarantees (checked on every generated trajectory) and the
    ranges the construction draws from."""

    name: str
    conversations: int
    turns: tuple[int, int]
    """Inclusive range of world-a turns (without filler)."""
    event_turns: int
    """Exactly this many post-update checkpoints (user turns that carry events)."""
    queries_per_family_per_conversation: int
    probes_per_family: int
    min_conflicts: int
    conflicts: tuple[int, int]
    others: tuple[int, int]
    """People besides the principal."""
    trips: tuple[int, int]
    predicates: tuple[int, int]
    """Predicates in the schema."""
    domain_size: tuple[int, int]
    """Values in each predicate's closed domain."""
    min_background: int
    """Fewest background event turns (the rest of the event turns come from episodes)."""
    chatter: tuple[int, int]
    """Distractor user turns per conversation, besides the greeting."""
    spam: tuple[int, int]
    """Tool turns without a claim, per trajectory."""
    gap_days: tuple[int, int]
    """Days between consecutive conversations."""
    governance: bool = False
    """Add the governance story (docs/generator.md, "The governance story of `small`"): a second
    principal, shares, permissions, tasks, a rollback, a redelivery, a restart, a compaction
    and probes asked by the second principal, on top of the counts above."""
    forged: bool = False
    """Add four forged-provenance probes, one of each kind (docs/generator.md, "The forged
    probes of `small`"), on top of the counts above and the story."""

    @property
    def queries(self) -> int:
        return self.conversations * len(FAMILIES) * self.queries_per_family_per_conversation

    @property
    def queries_per_family(self) -> int:
        return self.conversations * self.queries_per_family_per_conversation

    @property
    def probes(self) -> int:
        return self.probes_per_family * len(FAMILIES)


DESIGNS: dict[str, Design] = {
    "paper": Design(
        name="paper",
        conversations=4,
        turns=(280, 320),
        event_turns=105,
        queries_per_family_per_conversation=2,
        probes_per_family=12,
        min_conflicts=24,
        conflicts=(36, 54),
        others=(3, 5),
        trips=(2, 3),
        predicates=(26, 32),
        domain_size=(6, 8),
        min_background=8,
        chatter=(1, 3),
        spam=(0, 2),
        gap_days=(24, 45),
    ),
    "small": Design(
        name="small",
        conversations=2,
        turns=(70, 80),
        event_turns=26,
        queries_per_family_per_conversation=1,
        probes_per_family=3,
        min_conflicts=6,
        conflicts=(9, 14),
        others=(2, 3),
        trips=(2, 2),
        predicates=(14, 18),
        domain_size=(5, 7),
        min_background=2,
        chatter=(0, 1),
        spam=(0, 0),
        gap_days=(21, 35),
        # Every small trajectory carries the governance story, so that replication studies
        # score AOEP's governance items too (issue #27; docs/decisions.md).
        governance=True,
        # ... and four forged probes, one of each kind, so that they score the citation
        # lock's forged figures too (docs/method.md §12.2, §12.5).
        forged=True,
    ),
}


def design_names() -> list[str]:
    """Every design a request may name."""
    return list(DESIGNS)


def design_named(name: str) -> Design:
    """The design called `name` (looked up at each call, so a test may patch `DESIGNS`)."""
    return DESIGNS[name]


def check_request(seed: object, design: object, filler: object) -> None:
    """Refuse a bad request before anything is built or written."""
    if design not in design_names():
        raise PlaceError(
            f"--design {design!r} is not a design; allowed: {', '.join(design_names())} "
            "(see docs/generator.md)"
        )
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise PlaceError(f"--seed must be a non-negative integer; got {seed!r}")
    if not isinstance(filler, int) or isinstance(filler, bool) or not 0 <= filler <= MAX_FILLER:
        raise PlaceError(
            f"--filler must be an integer from 0 to {MAX_FILLER} (turns of chatter added to "
            f"each conversation); got {filler!r}"
        )


def fail(seed: int, design: str, message: str) -> PlaceError:
    """The error for a seed that cannot meet its design: it names the seed and the design."""
    return PlaceError(f"seed {seed} (design {design}): {message}")
