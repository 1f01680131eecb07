"""The factorial design: which write producers are crossed with which read policies.

A condition is (producer, read policy). This module is the one place that maps conditions to
producers and policies; the runner, the records, the metrics, the tables, the plots and the
results loader all take a `Design`. The paper's 2 × 2 is `PAPER` (conditions Native, CSS,
QASC, PLACE); `EXTENDED` crosses native, append and css with native, posthoc, decay and qasc
(docs/method.md §8). Any subset of registered producers and policies is a design.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from place.errors import PlaceError

PAPER_NAMES: dict[tuple[str, str], str] = {
    ("native", "native"): "Native",
    ("css", "native"): "CSS",
    ("native", "qasc"): "QASC",
    ("css", "qasc"): "PLACE",
}
"""The paper's four conditions keep their names; every other one is `<Producer>/<Policy>`."""


def producer_display(name: str) -> str:
    """How condition names spell a producer: its declared display name (the registered name
    by default; the name itself for a producer not registered in this process)."""
    from place.producers import PRODUCERS

    spec = PRODUCERS.get(name)
    return name if spec is None else spec.display


def policy_display(name: str) -> str:
    """How condition names spell a read policy (as `producer_display`)."""
    from place.policies import POLICIES

    spec = POLICIES.get(name)
    return name if spec is None else spec.display


def condition_name(producer: str, policy: str) -> str:
    paper = PAPER_NAMES.get((producer, policy))
    if paper is not None:
        return paper
    return f"{producer_display(producer)}/{policy_display(policy)}"


@dataclass(frozen=True)
class Condition:
    name: str
    producer: str
    policy: str


@dataclass(frozen=True)
class Design:
    """Producers × read policies. Conditions are ordered policy-major (all producers under
    the first policy, then the next), which for the paper gives Native, CSS, QASC, PLACE."""

    name: str
    producers: tuple[str, ...]
    policies: tuple[str, ...]

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return tuple(
            Condition(condition_name(p, r), p, r) for r in self.policies for p in self.producers
        )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.conditions)

    def condition(self, name: str) -> Condition:
        for c in self.conditions:
            if c.name == name:
                return c
        raise KeyError(name)

    def producer_of(self, name: str) -> str:
        return self.condition(name).producer

    def policy_of(self, name: str) -> str:
        return self.condition(name).policy

    def row(self, producer: str) -> tuple[str, ...]:
        """The conditions that read `producer`'s store, in design order."""
        return tuple(c.name for c in self.conditions if c.producer == producer)

    @property
    def rows(self) -> dict[str, tuple[str, ...]]:
        return {p: self.row(p) for p in self.producers}

    @property
    def is_paper(self) -> bool:
        return self.producers == PAPER.producers and self.policies == PAPER.policies

    @staticmethod
    def condition_name(producer: str, policy: str) -> str:
        return condition_name(producer, policy)

    def has(self, *names: str) -> bool:
        return all(n in self.names for n in names)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "producers": list(self.producers),
            "policies": list(self.policies),
            "conditions": [[c.name, c.producer, c.policy] for c in self.conditions],
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> Design:
        """The design a run recorded (its manifest header); runs without one are the paper's."""
        if not doc:
            return PAPER
        return cls(str(doc["name"]), tuple(doc["producers"]), tuple(doc["policies"]))


PAPER = Design("paper", ("native", "css"), ("native", "qasc"))
EXTENDED = Design("extended", ("native", "append", "css"), ("native", "posthoc", "decay", "qasc"))
DESIGNS: dict[str, Design] = {"paper": PAPER, "extended": EXTENDED}


def make_design(name: str, producers: Iterable[str], policies: Iterable[str]) -> Design:
    """A design from config: its producers and policies, checked against the registries."""
    from place.policies import POLICIES
    from place.producers import PRODUCERS

    producers, policies = tuple(producers), tuple(policies)
    problems = [
        f"design.producers: unknown producer {p!r}; registered: {', '.join(PRODUCERS)}"
        for p in producers
        if p not in PRODUCERS
    ] + [
        f"design.policies: unknown read policy {r!r}; registered: {', '.join(POLICIES)}"
        for r in policies
        if r not in POLICIES
    ]
    for key, values in (("producers", producers), ("policies", policies)):
        if not values:
            problems.append(f"design.{key}: empty; a design needs at least one")
        if len(set(values)) != len(values):
            problems.append(f"design.{key}: {list(values)} names one twice")
    if problems:
        raise PlaceError("; ".join(problems))
    return Design(name, producers, policies)


def ordered(design: Design, names: Sequence[str]) -> list[str]:
    """`names` in design order (for tables and plots)."""
    return [n for n in design.names if n in set(names)]
