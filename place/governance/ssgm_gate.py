"""SSGM's proposals and its write gate (docs/method.md §13), as pure functions.

SSGM learns from what it observes, not only from trusted events: a user turn proposes its
events (applied by CSS's transition rules), a tool turn proposes one untrusted `assert` per
fact β reads from it. The gate protects core memory: a proposal that asserts a value on a
one-valued slot of a core predicate, where core memory holds another value, contradicts it
and is rejected, unless it is the user's own correction. Retractions and forgets are never
gated. The `ssgm` producer and `place drift` use them through
place.governance.ssgm_memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from place.lexicon import Lexicon
from place.trajectory.model import Event, Fact, Schema, Slot

Source = Literal["user", "tool"]


@dataclass(frozen=True)
class Proposal:
    """One proposed change ΔM: an event, and whether it came from a user event (trusted) or
    from β's reading of a tool turn (untrusted)."""

    event: Event
    source: Source

    @property
    def trusted(self) -> bool:
        return self.source == "user"


class Said(Protocol):
    """A delivered turn as proposals read it: a trajectory `Turn`, or a V entry replayed
    (place.governance.ssgm_memory.Observed)."""

    @property
    def id(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def events(self) -> Sequence[Event]: ...


def proposals(turn: Said, lexicon: Lexicon, schema: Schema) -> list[Proposal]:
    """ΔM_t of one turn: a user turn's events; for a tool turn, one `assert` per fact β
    reads from it, except on a one-valued slot from which it reads two values (it proposes
    nothing there). Assistant turns propose nothing."""
    if turn.role == "user":
        return [Proposal(e, "user") for e in turn.events]
    if turn.role != "tool":
        return []
    read = sorted(lexicon.read(turn.text))
    by_slot: dict[Slot, list[Fact]] = {}
    for fact in read:
        by_slot.setdefault(Slot(fact.entity, fact.predicate, fact.scope), []).append(fact)
    out = []
    for n, (slot, facts) in enumerate(sorted(by_slot.items()), start=1):
        one = schema.predicates[slot.predicate].cardinality == "one"
        if one and len(facts) > 1:
            continue  # the tool turn contradicts itself on a one-valued slot
        out += [
            Proposal(
                Event(f"{turn.id}~tool#{n}.{k}", "assert", f.entity, f.predicate, f.scope, f.value),
                "tool",
            )
            for k, f in enumerate(facts, start=1)
        ]
    return out


def core_predicates(schema: Schema, core: Sequence[str] | str | None = None) -> frozenset[str]:
    """The predicates the gate protects: the schema's `core` ones, or `design.ssgm.core` (a
    list of predicate ids, or `all`)."""
    if core == "all":
        return frozenset(schema.predicates)
    if core is not None:
        return frozenset(core)
    return frozenset(pid for pid, p in schema.predicates.items() if p.core)


def contradicts(
    proposal: Proposal, core_facts: Iterable[Fact], schema: Schema, core: frozenset[str]
) -> bool:
    """ΔM ∧ M_core ⊨ ⊥: the proposal asserts v on a one-valued slot of a core predicate whose
    core memory holds some v' ≠ v, and it is not a trusted correction."""
    e = proposal.event
    if e.op not in ("assert", "correct") or e.predicate not in core:
        return False
    if schema.predicates[e.predicate].cardinality != "one":
        return False
    if e.op == "correct" and proposal.trusted:
        return False
    held = {f.value for f in core_facts if Slot(f.entity, f.predicate, f.scope) == e.slot}
    return bool(held - {e.value})
