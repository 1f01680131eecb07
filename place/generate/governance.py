"""The governance story of every `small` trajectory (docs/generator.md, "The governance story
of `small`").

A built base trajectory gets, on top of its counts, one story that uses every governance
construct of trajectories/FORMAT.md ("Principals, permissions and tasks"): the principal A
states a fact X on a fresh slot, shares it with a second principal B and grants B a
permission it owns; B asks for a task at once (allowed, later rolled back) and for a deferred
one, which runs after a revoke (blocked, stale epoch) or before it (allowed); B proposes
another value for X (a pending conflict: X's owner is A, so S* keeps A's value); A stops sharing
X, after which B asks for a task that needs X (blocked: out of scope, and stale unless
the permission was granted again). One earlier turn is
delivered again, producers restart before one turn, a compaction summarizes A's facts in X's
scope, and B asks two probes about X, one while X is shared and one after.

Why the base trajectory cannot change: every event of the story is A's or B's act on X, on
the permission or on the tasks, and X is a slot no episode or background story uses, so no
query's or probe's authorized support moves, and A (who says every other turn) still owns and
sees every other fact. The story's turns get ids `c<k>-g<n>` (like filler's `c<k>-f<n>`) and
its probes `pg<n>`, so the design counts are checked on the rest (`verification.verify`).

Every decision (a task's `expect`, `reasons`, `args`; a probe's gold) is written as the story
builds it; `load_trajectory` recomputes them and refuses the file on any difference. The
draws come from `random.Random(f"{seed}:{design}:governance")`, only after the base
trajectory is built, so a small file's base part is drawn exactly as without the story.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from place.generate import phrasing as ph
from place.generate.drafts import Block, EventDraft, TurnDraft
from place.generate.governance_text import GOVERNANCE, Action, Permission
from place.generate.library import PredicateSpec
from place.generate.turns import Writer
from place.trajectory.model import Fact, Trajectory

TURN_MARK = "-g"
"""In the ids of the story's turns (`c1-g001`)."""
PROBE_PREFIX = "pg"
"""Of the ids of the story's probes (`pg01`); the base probes are `p01`, `p02`, ..."""


@dataclass(eq=False)
class TaskDraft:
    id: str
    action: str
    need: tuple[str, str, str]
    """The one slot (entity, predicate, scope) the task reads."""
    expect: str
    permission: str | None = None
    deferred: bool = False
    reasons: list[str] | None = None
    args: list[list[str]] | None = None


@dataclass(eq=False)
class Act:
    """A governance event: its op and its keys, in the order they are written."""

    op: str
    keys: dict[str, str]


@dataclass(eq=False)
class GovernedTurn(TurnDraft):
    """A turn with the keys only governance turns have."""

    speaker: str | None = None
    acts: list[Act] = field(default_factory=list)
    task: TaskDraft | None = None
    run: TaskDraft | None = None
    redelivers: TurnDraft | None = None
    restart: bool = False


@dataclass(eq=False)
class GovernedProbe:
    id: str
    anchor: TurnDraft
    text: str
    entity: str
    predicate: str
    scope: str
    gold: tuple[str, ...]
    asker: str


@dataclass(eq=False)
class Compaction:
    anchor: TurnDraft
    entity: str
    scope: str


@dataclass
class Governed:
    """What the story adds outside the conversations."""

    principals: list[str]
    permissions: dict[str, str]
    """Permission id -> its owner."""
    probes: list[GovernedProbe]
    compactions: list[Compaction]


@dataclass(eq=False)
class _Step:
    kind: str
    turn: TurnDraft | None = None
    reply: TurnDraft | None = None
    original: int | None = None
    """A redelivery: the index of the step it delivers again."""


_REDELIVERABLE = ("assert", "share", "grant", "request")
_RESTARTABLE = ("revoke", "run", "redeliver")


def govern(
    w: Writer, conversations: list[list[TurnDraft]]
) -> tuple[list[list[TurnDraft]], Governed]:
    """The conversations with the story's turns inserted, and what else the story adds."""
    # A generator of its own: the base trajectory's draws are all done and stay untouched.
    w.rng = random.Random(f"{w.seed}:{w.design_name}:governance")
    story = _Story(w, conversations)
    steps = story.plan()
    ks = _sessions(w.rng, len(steps), len(conversations))
    for step, k in zip(steps, ks, strict=True):
        story.write(step, steps, k)
    turns = [s.turn for s in steps if s.turn is not None]
    restartable = [s.turn for s in steps if s.kind in _RESTARTABLE and s.turn is not None]
    restart = w.rng.choice(restartable)
    assert isinstance(restart, GovernedTurn)  # every restartable step writes one
    restart.restart = True
    shared_from = next(i for i, s in enumerate(steps) if s.kind == "share")
    shared_until = next(i for i, s in enumerate(steps) if s.kind == "unshare")
    during = [s.turn for s in steps[shared_from:shared_until] if s.turn is not None]
    after = [s.turn for s in steps[shared_until:] if s.turn is not None]
    probes = [
        story.probe(1, w.rng.choice(during), (story.value,)),
        story.probe(2, w.rng.choice(after), ()),
    ]
    compaction = Compaction(w.rng.choice(turns), story.a, story.scope)
    blocks: list[list[Block]] = [[] for _ in conversations]
    for step, k in zip(steps, ks, strict=True):
        assert step.turn is not None  # written above
        blocks[k].append([step.turn, *([step.reply] if step.reply is not None else [])])
    governed = Governed([story.a, story.b], {story.permission.id: story.a}, probes, [compaction])
    return _insert(w.rng, conversations, blocks), governed


class _Story:
    """The drawn cast and slot of the story, and the turns of each step."""

    def __init__(self, w: Writer, conversations: list[list[TurnDraft]]) -> None:
        self.w = w
        rng = w.rng
        self.a = w.principal
        self.b = rng.choice(w.others)
        self.spec, self.scope = self._slot(conversations)
        self.value = w.values(self.spec, 1)[0]
        self.noun = self.spec.noun.format(where=w.where(self.spec, self.scope))
        self.permission: Permission = rng.choice(GOVERNANCE.permissions)
        pool = list(self.permission.actions)
        rng.shuffle(pool)
        self.actions: list[Action] = [pool[i % len(pool)] for i in range(3)]
        """The actions of t1, t2 and t3 (distinct while the permission has enough)."""
        self.stale = rng.random() < 0.5
        """The deferred task runs after the revoke (blocked) rather than before it."""
        self.regrant = self.stale and rng.random() < 0.4
        """A stale story grants the permission again before the run: still blocked."""
        self.tasks: dict[str, TaskDraft] = {}

    def _slot(self, conversations: list[list[TurnDraft]]) -> tuple[PredicateSpec, str]:
        """A one-valued predicate and a scope where A's slot is free. The predicate is one no
        world-a tool turn mentions: then none of its values is untrusted (FORMAT.md, Tasks),
        and the task blocked after the unshare is blocked for being out of scope alone."""
        w = self.w
        tools = [t.text for conv in conversations for t in conv if t.role == "tool"]
        candidates = [
            (spec, s)
            for spec in w.specs
            if spec.cardinality == "one"
            and not any(w.lexicon.mentions(text, spec.id) for text in tools)
            for s in w.scope_options(spec)
            if w.free(self.a, spec.id, s)
        ]
        if not candidates:
            raise w.fail("no free slot of the principal for the governance story")
        spec, scope = w.rng.choice(candidates)
        w.take(self.a, spec.id, scope)
        return spec, scope

    # ------------------------------------------------------------ the plan

    def plan(self) -> list[_Step]:
        """The steps in story order (see the module docstring); a rollback of the immediate
        task and one redelivery are put at random places after what they refer to."""
        rng = self.w.rng
        opening = ["share", "grant"]
        rng.shuffle(opening)
        kinds = ["assert", *opening, "request", "defer"]
        if self.stale:
            kinds += ["revoke", *(["regrant"] if self.regrant else []), "run"]
        else:
            kinds += ["run", "revoke"]
        # The out-of-scope request is in every story, so that every small file has a task the
        # gate must block (the `block` items of docs/method.md §11.3) whether or not the
        # deferred task went stale.
        kinds += ["unshare", "out-of-scope"]
        steps = [_Step(kind) for kind in kinds]
        # B's proposal comes anywhere after A's assert (docs/method.md §11: an assert on an
        # owned slot by another speaker opens a pending conflict and leaves S* unchanged).
        steps.insert(rng.randint(1, len(steps)), _Step("propose"))
        request = next(i for i, s in enumerate(steps) if s.kind == "request")
        steps.insert(rng.randint(request + 1, len(steps)), _Step("rollback"))
        chosen = rng.choice([i for i, s in enumerate(steps) if s.kind in _REDELIVERABLE])
        steps.insert(rng.randint(chosen + 1, len(steps)), _Step("redeliver", original=chosen))
        return steps

    # ------------------------------------------------------------ the turns

    def write(self, step: _Step, steps: list[_Step], k: int) -> None:
        """Write the step's turn (and the assistant's reply) for conversation `k`."""
        w, rng, g = self.w, self.w.rng, GOVERNANCE
        a, b, perm = self.a, self.b, self.permission.id
        slot = {"entity": a, "predicate": self.spec.id, "scope": self.scope}
        kind = step.kind
        if kind == "assert":
            step.turn = w.t_assert(k, self.spec, a, self.scope, [self.value])
        elif kind in ("share", "unshare"):
            templates = g.share if kind == "share" else g.unshare
            act = Act(kind, {**slot, "with": b})
            step.turn = self._said(templates, f"a {kind}", [act], noun=self.noun, name=self._who())
        elif kind in ("grant", "regrant", "revoke"):
            op = "revoke" if kind == "revoke" else "grant"
            templates = g.revoke if kind == "revoke" else g.grant
            act = Act(op, {"permission": perm, "to": b})
            name, permission = self._who(), self.permission.name
            step.turn = self._said(templates, f"a {op}", [act], name=name, permission=permission)
        elif kind in ("request", "defer", "out-of-scope"):
            step.turn = self._request(kind)
            replies = g.replies.defer if kind == "defer" else g.replies.request
            step.reply = TurnDraft("assistant", rng.choice(replies))
            return
        elif kind == "run":
            text = self._text(g.run, "a run", name=w.names[b])
            step.turn = GovernedTurn("user", text, speaker=b, run=self.tasks["t2"])
            step.reply = TurnDraft("assistant", rng.choice(g.replies.run))
            return
        elif kind == "propose":
            step.turn = self._propose(k)
        elif kind == "rollback":
            act = Act("rollback", {"task": "t1"})
            undo = self.actions[0].undo
            if rng.random() < 0.5:
                text = self._text(g.rollback_by_asker, "a rollback", name=w.names[b], undo=undo)
                step.turn = GovernedTurn("user", text, acts=[act], speaker=b)
            else:
                step.turn = self._said(g.rollback, "a rollback", [act], undo=undo)
        else:  # redeliver: the original's text again, nothing of its own
            assert step.original is not None
            original = steps[step.original].turn
            assert original is not None  # the original comes first in the story
            step.turn = GovernedTurn("user", original.text, redelivers=original)
        if rng.random() < 0.5:
            step.reply = TurnDraft("assistant", rng.choice(ph.ACK))

    def _request(self, kind: str) -> GovernedTurn:
        """B asks for a task that reads X with the permission: at once (t1, allowed), for
        later (t2, decided at its run) or at once after the unshare (t3, out of scope, and
        stale too unless the permission was granted again)."""
        g, v = GOVERNANCE, self.value
        index = {"request": 0, "defer": 1, "out-of-scope": 2}[kind]
        ident = f"t{index + 1}"
        action = self.actions[index]
        need = (self.a, self.spec.id, self.scope)
        if kind == "request":
            task = TaskDraft(ident, action.id, need, "allow", self.permission.id, args=[[v]])
        elif kind == "defer":
            task = TaskDraft(ident, action.id, need, "allow", self.permission.id, deferred=True)
            if self.stale:
                task.expect, task.reasons = "block", ["stale-epoch"]
            else:
                task.args = [[v]]
        else:
            stale = [] if self.regrant else ["stale-epoch"]
            task = TaskDraft(ident, action.id, need, "block", self.permission.id)
            task.reasons = [*stale, "out-of-scope"]
        self.tasks[ident] = task
        asked = action.request.format(poss=self.w.poss(self.a, named=True), noun=self.noun)
        templates = g.defer if kind == "defer" else g.request
        text = self._text(templates, f"task {ident}", name=self.w.names[self.b], action=asked)
        return GovernedTurn("user", text, speaker=self.b, task=task)

    def _propose(self, k: int) -> GovernedTurn:
        """B asserts another value of X, naming A (a text naming no one would be read as about
        B, not as a proposal on A's slot)."""
        w, spec = self.w, self.spec
        (other,) = w.values(spec, 1, exclude=(self.value,))
        event = EventDraft("assert", self.a, spec.id, self.scope, other)

        def make() -> str:
            body = w.rng.choice(spec.clauses()).format(
                poss=w.poss(self.a, named=True),
                where=w.where(spec, self.scope),
                value=w.sf(spec, other, k),
            )
            return ph.fill(w.rng.choice(ph.ASSERT), body)

        expect = {Fact(self.a, spec.id, other, self.scope)}
        text = w.attempt(make, expect, "the proposal of the governance story")
        return GovernedTurn("user", text, events=[event], speaker=self.b)

    def _who(self) -> str:
        """B as A calls them: by name, or sometimes by relation ("my wife")."""
        alias = self.w.alias[self.b]
        return alias if alias and self.w.rng.random() < 0.4 else self.w.names[self.b]

    def _text(self, templates: tuple[str, ...], what: str, **values: str) -> str:
        """A new sentence from which β reads nothing (FORMAT.md's lexicon self-check)."""
        rng = self.w.rng

        def make() -> str:
            return ph.capitalize(rng.choice(templates).format(**values))

        return self.w.attempt(make, set(), f"{what} of the governance story")

    def _said(
        self, templates: tuple[str, ...], what: str, acts: list[Act], **values: str
    ) -> GovernedTurn:
        """A's turn carrying governance events."""
        return GovernedTurn("user", self._text(templates, what, **values), acts=acts)

    def probe(self, n: int, anchor: TurnDraft, gold: tuple[str, ...]) -> GovernedProbe:
        """B asks about X after `anchor`: it sees X's value while X is shared with it."""
        template = self.w.rng.choice(self.spec.asks)
        where = self.w.where(self.spec, self.scope)
        text = ph.capitalize(template.format(poss=self.w.poss(self.a, named=True), where=where))
        return GovernedProbe(
            f"{PROBE_PREFIX}{n:02d}", anchor, text, self.a, self.spec.id, self.scope, gold, self.b
        )


def _sessions(rng: random.Random, n_steps: int, n_conversations: int) -> list[int]:
    """The conversation of each step: the story starts in one conversation and may go on
    in a later one (a deferred task that waits across sessions), never backwards."""
    first = rng.randrange(n_conversations)
    last = rng.randint(first, n_conversations - 1)
    cut = rng.randint(1, n_steps - 1)
    return [first if i < cut else last for i in range(n_steps)]


def _insert(
    rng: random.Random, conversations: list[list[TurnDraft]], blocks: list[list[Block]]
) -> list[list[TurnDraft]]:
    """Each conversation's story blocks, in order, before user turns drawn at random (never
    first, before the greeting, and never between a turn and the reply that follows it), or
    at the end; the story's turns get the ids `c<k>-g001`, ..."""
    result = []
    for k, conv in enumerate(conversations):
        slots = [i for i, t in enumerate(conv) if i > 0 and t.role == "user"] + [len(conv)]
        gaps = sorted(rng.choice(slots) for _ in blocks[k])
        out: list[TurnDraft] = []
        bi = 0
        for i, turn in enumerate(conv):
            while bi < len(gaps) and gaps[bi] == i:
                out.extend(blocks[k][bi])
                bi += 1
            out.append(turn)
        for block in blocks[k][bi:]:
            out.extend(block)
        for j, turn in enumerate((t for block in blocks[k] for t in block), 1):
            turn.id = f"c{k + 1}{TURN_MARK}{j:03d}"
        result.append(out)
    return result


def is_story_turn(turn_id: str) -> bool:
    return TURN_MARK in turn_id


def missing_constructs(traj: Trajectory) -> list[str]:
    """The governance constructs `small`'s story guarantees that `traj` lacks."""
    principal = traj.principal
    turns = [t for _c, t in traj.turns()]
    ops = {e.op for t in turns if t.redelivers is None for e in t.events}
    tasks = [task for _c, _t, task in traj.tasks()]
    ran = {t.run for t in turns if t.run is not None}
    askers = [traj.asker_of(p) for p in traj.probes]
    askers += [traj.speaker_of(t) for _c, t, _q in traj.queries()]
    have = {
        "a second principal": len(traj.all_principals()) > 1,
        "a proposal": any(
            e.op in ("assert", "correct")
            and e.entity == principal
            and traj.speaker_of(t) != principal
            for t in turns
            for e in t.events
        ),
        "a turn of another principal": any(traj.speaker_of(t) != principal for t in turns),
        **{f"a {op}": op in ops for op in ("share", "unshare", "grant", "revoke", "rollback")},
        "an immediate task": any(not task.deferred for task in tasks),
        "a task to block": any(task.expect == "block" for task in tasks),
        "a deferred task and its run": any(task.deferred and task.id in ran for task in tasks),
        "a redelivery": any(t.redelivers is not None for t in turns),
        "a restart": any(t.restart for t in turns),
        "a compaction": bool(traj.compactions),
        "a question asked by another principal": any(a != principal for a in askers),
    }
    return [name for name, ok in have.items() if not ok]
