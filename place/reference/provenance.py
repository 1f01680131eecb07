"""Where values came from, and which values the user asked to forget (docs/method.md §10).

Evaluator-side, like the rest of `place.reference`: the AOEP negative invariants need, at
every checkpoint, the values that so far occur only in untrusted (tool) turns, and, at every
read, the values the user has asked to forget and not stated again since. Both are written
into the run records, so the scorecard is recomputed from records alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from place.lexicon import Lexicon
from place.trajectory.model import Slot, Trajectory, Turn

Pair = tuple[str, str]
"""(predicate, canonical value)."""
ForgottenFact = tuple[str, str, str, str, str]
"""(forget event id, entity, predicate, value, scope)."""


@dataclass
class _History:
    """What the turns so far say about provenance and forgetting (one world, one point)."""

    told: set[Pair] = field(default_factory=set)
    """Values in a user turn (its text or its events): the user stated them."""
    tooled: set[Pair] = field(default_factory=set)
    """Values in a tool turn's text."""
    since_forget: dict[Slot, set[str]] = field(default_factory=dict)
    """Per slot, the values asserted or corrected since the slot was last forgotten."""
    forgotten: dict[str, tuple[Slot, set[str]]] = field(default_factory=dict)
    """Per forget event: its slot and the values it forgot that were not stated again."""

    def copy(self) -> _History:
        return _History(
            set(self.told),
            set(self.tooled),
            {k: set(v) for k, v in self.since_forget.items()},
            {k: (s, set(v)) for k, (s, v) in self.forgotten.items()},
        )

    def untrusted(self) -> list[Pair]:
        return sorted(self.tooled - self.told)

    def forgotten_facts(self) -> list[ForgottenFact]:
        return sorted(
            (event, slot.entity, slot.predicate, value, slot.scope)
            for event, (slot, values) in self.forgotten.items()
            for value in values
        )


class Provenance:
    """Snapshots of `_History` before and after every turn of world a.

    Values are found in text with the trajectory lexicon: a value of a predicate whose keyword
    the text names (as β reads text, so a time in "standup at 9:30" is not a flight time),
    historical mentions included: a value is *in* a turn however it is framed.
    The assistant's own turns count for neither side: only the user is a trusted source, and
    an assistant repeating a forwarded value does not make it the user's.
    """

    def __init__(self, trajectory: Trajectory, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.predicates = sorted(trajectory.schema.predicates)
        self._values: dict[str, set[Pair]] = {}
        self._before: dict[str, _History] = {}
        self._after: dict[str, _History] = {}
        history = _History()
        for _conv, turn in trajectory.turns():
            self._before[turn.id] = history.copy()
            if turn.id not in trajectory.distractors:
                # A distractor (docs/method.md §16) tells nothing: a value it mentions stays
                # as trusted or untrusted as it was, so the reference is the same without it.
                self._apply(history, turn)
            self._after[turn.id] = history.copy()

    def _pairs(self, text: str) -> set[Pair]:
        if text not in self._values:
            self._values[text] = {
                (p, m.value)
                for p in self.predicates
                if self.lexicon.mentions(text, p)
                for m in self.lexicon.matches(text, p)
            }
        return self._values[text]

    def _apply(self, history: _History, turn: Turn) -> None:
        if turn.redelivers is not None:
            # A duplicate delivery (docs/method.md §11) is not a statement: what it says was said
            # at its original turn, and a value forgotten since stays forgotten.
            return
        if turn.role == "tool":
            history.tooled |= self._pairs(turn.text)
        elif turn.role == "user":
            history.told |= self._pairs(turn.text)
        for event in turn.events:
            slot = event.slot
            if event.op == "forget":
                history.forgotten[event.id] = (slot, history.since_forget.pop(slot, set()))
            elif event.value is not None and event.op in ("assert", "correct"):
                history.told.add((event.predicate, event.value))
                history.since_forget.setdefault(slot, set()).add(event.value)
                for forgotten_slot, values in history.forgotten.values():
                    if forgotten_slot == slot:
                        values.discard(event.value)

    def at(self, turn_id: str, *, after: bool, inserted: Iterable[Turn] = ()) -> _History:
        """The history after (or before) world a's turn, then through `inserted` turns (a
        causal pair's world b inserts its turns just before the query)."""
        history = (self._after if after else self._before)[turn_id]
        extra = list(inserted)
        if not extra:
            return history
        history = history.copy()
        for turn in extra:
            self._apply(history, turn)
        return history
