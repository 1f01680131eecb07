"""The run plan: the trajectory cut into units that the runner executes in order.

An *update step* is what a producer writes at once: for Native, the messages of one
exchange (new user/tool turns and the assistant reply); for CSS, the trusted events of the
same turns. A step holds at most one event-carrying turn, so the post-update checkpoint
after the step is exactly the one after that turn. Query turns are reads: they form their
own unit, and the assistant reply that answers them is not written. Probes run after the
unit that holds their `after` turn; so does a compaction point (docs/method.md §11: every
producer writes its summaries), before the probes of the same turn.

With the governance constructs of docs/method.md §11: a turn that requests a task or runs a
deferred one is a read too (a `task` unit; the act gate decides it), a step closes when
the speaker changes (a step is one speaker's), and a turn with `restart: true` starts a new
unit whose `restart` flag tells the runner to restart every producer before it. A trajectory
without these constructs gives exactly the plan it always did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from place.trajectory.model import Compaction, Conversation, Probe, Trajectory, Turn

UnitKind = Literal["step", "query", "probes", "task", "compaction"]


@dataclass(frozen=True)
class Unit:
    index: int
    kind: UnitKind
    conversation: Conversation
    turns: tuple[Turn, ...] = ()
    """step: the turns written; query: the query turn."""
    probes: tuple[Probe, ...] = ()
    step: int | None = None
    """1-based update-step number (steps only)."""
    restart: bool = False
    """Every producer restarts before this unit (its first turn has `restart: true`)."""
    compaction: Compaction | None = None
    """compaction: the derived-summary point the producers write."""

    @property
    def writes(self) -> bool:
        """The unit writes the row stores: a step, a task turn (a ledger records the request
        before the act gate decides) or a compaction point (summaries)."""
        return self.kind in ("step", "task", "compaction")

    @property
    def event_turn(self) -> Turn | None:
        return next((t for t in self.turns if t.events), None)


@dataclass
class _Builder:
    trajectory: Trajectory
    units: list[Unit] = field(default_factory=list)
    pending: list[Turn] = field(default_factory=list)
    steps: int = 0
    probes_after: dict[str, list[Probe]] = field(default_factory=dict)
    waiting_probes: list[Probe] = field(default_factory=list)
    compactions_after: dict[str, list[Compaction]] = field(default_factory=dict)
    waiting_compactions: list[Compaction] = field(default_factory=list)
    restarting: bool = False
    """A `restart` turn was met: the next unit carries the flag."""

    def add(
        self,
        kind: UnitKind,
        conv: Conversation,
        *,
        turns: tuple[Turn, ...] = (),
        probes: tuple[Probe, ...] = (),
        step: int | None = None,
        compaction: Compaction | None = None,
    ) -> None:
        restart, self.restarting = self.restarting, False
        self.units.append(
            Unit(len(self.units), kind, conv, turns, probes, step, restart, compaction)
        )

    def flush(self, conv: Conversation) -> None:
        if self.pending:
            self.steps += 1
            self.add("step", conv, turns=tuple(self.pending), step=self.steps)
            self.pending = []
        self.flush_probes(conv)

    def flush_probes(self, conv: Conversation) -> None:
        for compaction in self.waiting_compactions:
            self.add("compaction", conv, compaction=compaction)
        self.waiting_compactions = []
        if self.waiting_probes:
            self.add("probes", conv, probes=tuple(self.waiting_probes))
            self.waiting_probes = []

    def distractor(self, turn: Turn) -> bool:
        return turn.id in self.trajectory.distractors

    def speaker(self, turn: Turn) -> str:
        return self.trajectory.speaker_of(turn)

    def build(self) -> list[Unit]:
        for probe in self.trajectory.probes:
            self.probes_after.setdefault(probe.after, []).append(probe)
        for compaction in self.trajectory.compactions:
            self.compactions_after.setdefault(compaction.after, []).append(compaction)
        for conv in self.trajectory.conversations:
            answering_query = False
            for turn in conv.turns:
                if turn.restart:
                    # Everything before the turn is written first; the restart comes between.
                    self.flush(conv)
                    self.restarting = True
                if turn.query is not None or turn.task is not None or turn.run is not None:
                    self.flush(conv)
                    self.add("query" if turn.query is not None else "task", conv, turns=(turn,))
                    answering_query = True
                elif turn.role == "assistant":
                    if not answering_query and self.pending:
                        self.pending.append(turn)
                else:
                    answering_query = False
                    # A step holds at most one event turn, ends with its assistant reply, and
                    # never outruns a probe waiting for the state after an earlier turn.
                    closed = (
                        any(t.events for t in self.pending)
                        or bool(self.pending and self.pending[-1].role == "assistant")
                        or bool(self.waiting_probes or self.waiting_compactions)
                        or bool(
                            self.pending and self.speaker(self.pending[-1]) != self.speaker(turn)
                        )
                        # A distractor and its reply are a step of their own (docs/method.md
                        # §16): DistractorWrites counts what such steps write.
                        or bool(
                            self.pending
                            and self.distractor(self.pending[-1]) != self.distractor(turn)
                        )
                    )
                    if closed:
                        self.flush(conv)
                    self.pending.append(turn)
                self.waiting_probes.extend(self.probes_after.get(turn.id, []))
                self.waiting_compactions.extend(self.compactions_after.get(turn.id, []))
                if (self.waiting_probes or self.waiting_compactions) and not self.pending:
                    self.flush_probes(conv)
            self.flush(conv)
        return self.units


def build_plan(trajectory: Trajectory) -> list[Unit]:
    return _Builder(trajectory).build()
