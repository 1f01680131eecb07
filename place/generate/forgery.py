"""The forged-provenance probes of every `small` trajectory (docs/generator.md, "The forged
probes of `small`"; docs/method.md §12.2; trajectories/FORMAT.md, `forged`).

On top of the design's probes and the governance story's, a `small` file gets four forged
probes, one of each kind, with the ids `pf01` (missing), `pf02` (tool), `pf03`
(unsupported) and `pf04` (stale). Each is a clone of a base probe (`p01`, ...): the same
`after`, family, slot and gold, a question of its own about the slot, and a `forged` record
instead of a conflict:

- `missing`: a value of the slot's domain that is not gold, no pointer;
- `tool`: a tool turn at or before the probe; the value is one the tool turn claims for the
  slot when β reads such a claim from it (the injected value, as in the pilot's p2), else
  any value that is not gold;
- `unsupported`: a user turn of the base trajectory at or before the probe from which β, as
  its speaker, does not read the forged fact; preferably a turn whose events touch the
  probe's slot (it looks relevant, and says another value);
- `stale`: a user turn at or before the probe whose events asserted or corrected a value of
  the slot that the reference state S* no longer holds after the probe's turn (a superseded,
  corrected, retracted or expired value); the value is that old value.

Every probe cloned has fewer than `FORGED_K_BOUND` facts in its authorized support, and
every pointer is a world-a turn that is not a redelivery and not one of the story's turns.
The rules are checked here, as the probes are drawn, on the base trajectory as the loader
reads it (so that S* is the reference replay's); `load_trajectory` checks them again on the
written file.

Why nothing else changes: a probe reads the state, it changes none, and the draws come from
`random.Random(f"{seed}:{design}:forged")` only after the base trajectory and the story are
built, so removing the `pf` probes gives back exactly the file without them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from place.generate.design import fail
from place.generate.governance import is_story_turn
from place.generate.turns import Writer
from place.lexicon import Lexicon
from place.reference.replay import Reference, replay
from place.reference.validate import FORGED_K_BOUND, state_at_probe
from place.trajectory.model import FORGED_KINDS, Fact, ForgedKind, Probe, Trajectory, Turn

PROBE_PREFIX = "pf"
"""Of the ids of the forged probes (`pf01`); the base probes are `p01`, ..., the story's `pg01`."""


@dataclass(frozen=True)
class ForgedProbe:
    """A forged probe: the base probe it clones, its own id and text, and its record."""

    id: str
    base: Probe
    text: str
    kind: ForgedKind
    value: str
    pointer: str | None


@dataclass(frozen=True)
class _Candidate:
    probe: Probe
    pointer: str | None
    values: tuple[str, ...]
    """The values this pointer may carry for this probe (never empty)."""
    telling: bool
    """A preferred candidate (see the module docstring)."""


def forge(w: Writer, base: Trajectory) -> list[ForgedProbe]:
    """The four forged probes of `base` (the loaded trajectory without them), one per kind in
    the order of `FORGED_KINDS`; a seed without a host for a kind fails."""
    # A generator of its own: the base trajectory's and the story's draws are all done.
    w.rng = random.Random(f"{w.seed}:{w.design_name}:forged")
    ref = replay(base)
    forging = _Forging(base, ref)
    made: list[ForgedProbe] = []
    for n, kind in enumerate(FORGED_KINDS, 1):
        candidates = forging.candidates(kind)
        if not candidates:
            raise fail(
                w.seed,
                w.design_name,
                f"constraint 'a forged probe of kind {kind}' unmet (got no base probe that "
                "can host one)",
            )
        pool = [c for c in candidates if c.telling] or candidates
        used = {f.base.id for f in made}
        pool = [c for c in pool if c.probe.id not in used] or pool
        chosen = w.rng.choice(pool)
        value = w.rng.choice(chosen.values)
        text = _question(w, chosen.probe, base.probes, made)
        made.append(
            ForgedProbe(f"{PROBE_PREFIX}{n:02d}", chosen.probe, text, kind, value, chosen.pointer)
        )
    return made


class _Forging:
    """The base probes that can host a forgery, and the turns each may cite."""

    def __init__(self, base: Trajectory, ref: Reference) -> None:
        self.traj = base
        self.ref = ref
        supports = {p.id: p.support for p in ref.probes}
        # Base probes only (not the story's), with fewer than k facts at the read.
        self.hosts = [
            p
            for p in base.probes
            if p.id.startswith("p")
            and p.id[1:].isdigit()
            and p.forged is None
            and len(supports[p.id].facts) < FORGED_K_BOUND
        ]
        # Turns a pointer may cite: world-a turns of the base trajectory, never a redelivery,
        # never a story turn.
        self.citable = [
            t for _c, t in base.turns() if t.redelivers is None and not is_story_turn(t.id)
        ]
        self._lexicons: dict[str, Lexicon] = {}
        self._states: dict[str, frozenset[Fact]] = {}

    def candidates(self, kind: ForgedKind) -> list[_Candidate]:
        out: list[_Candidate] = []
        for probe in self.hosts:
            others = self._not_gold(probe)
            if kind == "missing":
                out.append(_Candidate(probe, None, others, True))
                continue
            for turn in self._before(probe):
                candidate = self._candidate(kind, probe, turn, others)
                if candidate is not None:
                    out.append(candidate)
        return out

    def _candidate(
        self, kind: ForgedKind, probe: Probe, turn: Turn, others: tuple[str, ...]
    ) -> _Candidate | None:
        lexicon = self._lexicon(self.traj.speaker_of(turn))
        slot = (probe.entity, probe.predicate, probe.scope)
        if kind == "tool":
            if turn.role != "tool":
                return None
            claimed = tuple(
                v
                for v in others
                if Fact(*slot[:2], v, slot[2]) in lexicon.read(turn.text, probe.predicate)
            )
            return _Candidate(probe, turn.id, claimed or others, bool(claimed))
        if turn.role != "user":
            return None
        if kind == "unsupported":
            read = lexicon.read(turn.text, probe.predicate)
            values = tuple(v for v in others if Fact(*slot[:2], v, slot[2]) not in read)
            if not values:
                return None
            touches = any((e.entity, e.predicate, e.scope) == slot for e in turn.events)
            return _Candidate(probe, turn.id, values, touches)
        # stale: the turn asserted or corrected a value of the slot that S* no longer holds
        state = self._state_after(probe)
        olds = tuple(
            dict.fromkeys(
                e.value
                for e in turn.events
                if e.op in ("assert", "correct")
                and e.value is not None
                and (e.entity, e.predicate, e.scope) == slot
                and e.value in others
                and Fact(*slot[:2], e.value, slot[2]) not in state
            )
        )
        return _Candidate(probe, turn.id, olds, True) if olds else None

    def _lexicon(self, speaker: str) -> Lexicon:
        """β reading a turn as said by `speaker` (as the validator reads a pointer)."""
        if speaker not in self._lexicons:
            self._lexicons[speaker] = Lexicon(self.traj.schema, speaker)
        return self._lexicons[speaker]

    def _not_gold(self, probe: Probe) -> tuple[str, ...]:
        domain = self.traj.schema.predicates[probe.predicate].values
        return tuple(v for v in domain if v not in probe.gold)

    def _before(self, probe: Probe) -> list[Turn]:
        at = self.traj.position(probe.after)
        return [t for t in self.citable if self.traj.position(t.id) <= at]

    def _state_after(self, probe: Probe) -> frozenset[Fact]:
        """S* after the probe's turn at its conversation's date, as the validator reads it
        (`place.reference.validate`): the live records of the last checkpoint at or before
        the turn whose window has not ended by that date."""
        if probe.id not in self._states:
            self._states[probe.id] = state_at_probe(self.traj, self.ref, probe)
        return self._states[probe.id]


def _question(w: Writer, probe: Probe, probes: Iterable[Probe], made: list[ForgedProbe]) -> str:
    """A question about the probe's slot that no probe of the file asks yet (else one that at
    least differs from the cloned probe's; the cloned text only if the slot has no other)."""
    spec = w.spec_by_id[probe.predicate]
    texts = w.asks(spec, probe.entity, probe.scope)
    taken = {p.text for p in probes} | {f.text for f in made}
    fresh = [t for t in texts if t not in taken] or [t for t in texts if t != probe.text]
    return w.rng.choice(fresh) if fresh else probe.text
