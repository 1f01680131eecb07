"""`place distract`: on-topic distractor turns added to a valid trajectory (docs/method.md §16).

A distractor is a user turn aimed at a slot that a later query or probe reads, followed by an
assistant reply. It carries no event, so S*, Q* and every gold answer stay as they were; what
it changes is what retrieval can rank and what β can read. The kinds (`DistractorKind`) and
how each is phrased are in `place/data/distractors.yaml`.

How distractors are drawn (docs/decisions.md, "Distractors"):

- **Candidates, then a prefix.** Candidate i of a kind is drawn from its own generator
  `Random(f"{seed}:{kind}:{i}")`: a gap before a user turn (or at a conversation's end, never
  before its first turn), one of the reads after that gap (its slot is the target), then a
  value, a person and a template. A candidate whose rendered text does not read as intended
  is skipped. Dose N keeps the first N accepted candidates of each kind, so the distractors
  of dose n are those of dose m > n minus the last m - n: a dose-response is paired.
- **Values.** `hypothetical`, `reported` and `negated` use a value of the predicate that the
  slot holds neither at the gap nor at the targeted read (a wrong value). `restate` uses the
  slot's value at the gap when the next read of the slot still has it as gold and no event
  touches the slot in between, written through an alias when the value has one. `entity`
  uses any value, for another declared entity that holds no fact of the predicate anywhere
  in the trajectory, or for a person the schema does not declare.
- **Checked as text.** Every rendered turn is read with the trajectory's lexicon: it must
  name the target predicate, the intended value (or none), the target scope and no value of
  any other predicate; a `restate` must read, by β, as exactly the slot's current fact; a
  `neutral` line must mention nothing of the schema.
- **Proved.** The output is loaded and validated like any trajectory and its reference is
  compared with the input's, checkpoint by checkpoint, query by query, probe by probe and
  task by task (`same_reference`); nothing is written unless they are equal.

The output keeps the input's data (its comments are not kept), adds the distractor turns
with ids `<conversation>-d<kind[:3]><n>` (replies `…r`) and a `distractor: KIND` key on
both, and takes the id `<input id>.distract-<kinds>-<dose>-s<seed>`.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import AfterValidator, Field, StringConstraints

from place.errors import PlaceError
from place.generate.datafile import Check, DataModel, Placeholders, parse
from place.generate.emission import to_json, to_yaml
from place.generate.phrasing import capitalize, chatter_lines
from place.generate.world import mention_pattern
from place.lexicon import Lexicon
from place.reference.replay import Reference, replay
from place.trajectory.model import (
    DISTRACTOR_KINDS,
    GLOBAL_SCOPE,
    DistractorKind,
    Fact,
    Slot,
    Trajectory,
)
from place.trajectory.yaml_source import NULL

DATA_FILE = "distractors.yaml"
MIN_TEMPLATES = 12
"""Templates per kind at least (issue: varied phrasing, not one frame)."""

# What each kind's templates may and must name (docs/method.md §16).
_SLOT = ("owner_s", "topic", "where")
_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "entity": (("person_s", "topic", "where", "value"), ("person_s", "topic", "value")),
    "topic": (_SLOT, _SLOT),
    "hypothetical": ((*_SLOT, "value"), (*_SLOT, "value")),
    "reported": (("reporter", *_SLOT, "value"), ("reporter", *_SLOT, "value")),
    "negated": ((*_SLOT, "value"), (*_SLOT, "value")),
    "restate": ((*_SLOT, "value"), (*_SLOT, "value")),
    "neutral": ((), ()),
}

Plain = Annotated[str, StringConstraints(min_length=1), AfterValidator(Placeholders())]
Phrase = Annotated[str, StringConstraints(min_length=1, pattern=r"^[^{}]+$")]


class KindPhrasing(DataModel):
    """One kind's user templates and the assistant's replies to them."""

    templates: tuple[str, ...] = Field(min_length=MIN_TEMPLATES)
    """`str.format` templates; the placeholders each kind takes are in `_FIELDS`."""
    replies: tuple[Plain, ...] = Field(min_length=4)
    """Replies that repeat nothing: no placeholder, no value, no name."""


class People(DataModel):
    """Persons the schema does not declare (filtered against each trajectory's schema)."""

    relations: tuple[Phrase, ...] = Field(min_length=4)
    """Relation phrases ("my neighbour"); "'s" is appended for a possessive."""
    names: tuple[Phrase, ...] = Field(min_length=4)
    """First names."""


class Phrasing(DataModel):
    """place/data/distractors.yaml."""

    kinds: dict[DistractorKind, KindPhrasing]
    people: People


def _check(data: Phrasing) -> Iterable[Check]:
    for kind in DISTRACTOR_KINDS:
        if kind not in data.kinds:
            yield ("kinds",), f"kind {kind!r} is missing; every kind needs templates and replies"
    for kind, phrasing in data.kinds.items():
        allowed, needs = _FIELDS[kind]
        for i, template in enumerate(phrasing.templates):
            try:
                Placeholders(allowed, needs)(template)
            except ValueError as exc:
                yield ("kinds", kind, "templates", i), f"{exc} (kind {kind})"


@cache
def phrasing() -> Phrasing:
    text = resources.files("place.data").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse(f"place/data/{DATA_FILE}", text, Phrasing, _check)


# ---------------------------------------------------------------- the trajectory's reads


Position = tuple[int, int]
"""(conversation index, turn index): a gap before that turn (index len(turns): the end)."""


@dataclass(frozen=True)
class Read:
    """A later read a distractor can aim at: a query (before its turn) or a probe (after its
    `after` turn)."""

    at: Position
    """The first gap after the read: gaps strictly before it precede the read."""
    slot: Slot
    gold: frozenset[str]


@dataclass(frozen=True)
class Drawn:
    kind: DistractorKind
    index: int
    gap: Position
    text: str
    reply: str


class _Plan:
    """What the draws need to know of one trajectory, computed once."""

    def __init__(self, trajectory: Trajectory, reference: Reference) -> None:
        self.t = trajectory
        self.lexicon = Lexicon(trajectory.schema, trajectory.principal)
        self.clean = mention_pattern(trajectory.schema)
        convs = trajectory.conversations
        self.gaps: list[Position] = [
            (ci, ti)
            for ci, conv in enumerate(convs)
            for ti in range(1, len(conv.turns) + 1)
            if ti == len(conv.turns) or conv.turns[ti].role == "user"
        ]
        self.reads = self._reads(reference)
        # Only a gap some read follows can hold a distractor (computed once, not per draw).
        self.gaps = [g for g in self.gaps if self.later(g)]
        # Event positions per slot, and S* just before each gap.
        self.events: dict[Slot, list[Position]] = {}
        for ci, conv in enumerate(convs):
            for ti, turn in enumerate(conv.turns):
                for e in turn.events:
                    self.events.setdefault(e.slot, []).append((ci, ti))
        self.holders = {(e.entity, e.predicate) for _, t in trajectory.turns() for e in t.events}
        points = [
            (trajectory.position(c.turn), c.state)
            for c in reference.checkpoints
            if c.kind == "post-update"
        ]
        self._states = sorted(points, key=lambda p: p[0])
        self._keys = [p[0] for p in self._states]

    def _reads(self, reference: Reference) -> list[Read]:
        t = self.t
        reads = []
        for q in reference.queries:
            ci, ti = t.position(q.turn)
            slot = Slot(q.tau.entity, q.tau.predicate, q.tau.scope)
            reads.append(Read((ci, ti + 1), slot, frozenset(q.support.values)))
        for p in reference.probes:
            ci, ti = t.position(p.after)
            slot = Slot(p.tau.entity, p.tau.predicate, p.tau.scope)
            reads.append(Read((ci, ti + 1), slot, frozenset(p.support.values)))
        return sorted(reads, key=lambda r: (r.at, r.slot))

    def state_at(self, gap: Position) -> frozenset[Fact]:
        """S* after the last update before the gap."""
        i = bisect.bisect_left(self._keys, gap)
        return self._states[i - 1][1] if i else frozenset()

    def values_at(self, gap: Position, slot: Slot) -> set[str]:
        return {f.value for f in self.state_at(gap) if (f.entity, f.predicate, f.scope) == slot}

    def later(self, gap: Position) -> list[Read]:
        return [r for r in self.reads if r.at > gap]

    def untouched(self, slot: Slot, start: Position, end: Position) -> bool:
        return not any(start <= p < end for p in self.events.get(slot, ()))


# ---------------------------------------------------------------- rendering


def _where(t: Trajectory, slot: Slot) -> str | None:
    """The scope phrase after the keyword ('' when β infers the scope unnamed); None when
    the slot's scope cannot be written (a global slot of a predicate with a default scope)."""
    predicate = t.schema.predicates[slot.predicate]
    implied = predicate.default_scope or GLOBAL_SCOPE
    if slot.scope == implied:
        return ""
    scope = t.schema.scopes.get(slot.scope)
    if scope is None or not scope.aliases:
        return None
    alias = scope.aliases[0]
    first = alias.split()[0].lower()
    return f" {alias}" if first in ("at", "in", "on", "for", "from") else f" for {alias}"


def _possessive(t: Trajectory, entity: str) -> str:
    return "my" if entity == t.principal else f"{t.schema.entities[entity].name}'s"


def _surface(t: Trajectory, predicate: str, value: str, rng: random.Random, alias: bool) -> str:
    forms = t.schema.predicates[predicate].values.get(value, ())
    return rng.choice(forms) if alias and forms else value


class _Drawer:
    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        t = plan.t
        people = phrasing().people
        clean = plan.clean
        self.relations = [r for r in people.relations if not clean.search(r)]
        self.names = [n for n in people.names if not clean.search(n)]
        if not self.relations or not self.names:
            raise PlaceError(
                f"{t.source_path}: every undeclared person of place/data/{DATA_FILE} is also a "
                "name, alias, keyword, value or place of this trajectory's schema; rename them"
            )
        self.neutral = [
            line
            for line in (*phrasing().kinds["neutral"].templates, *chatter_lines())
            if not clean.search(line)
        ]

    def draw(self, kind: DistractorKind, index: int, seed: int) -> Drawn | None:
        plan, t = self.plan, self.plan.t
        rng = random.Random(f"{seed}:{kind}:{index}")
        if not plan.gaps:
            return None
        gap = rng.choice(plan.gaps)
        reply = rng.choice(phrasing().kinds[kind].replies)
        if kind == "neutral":
            return (
                Drawn(kind, index, gap, rng.choice(self.neutral), reply) if self.neutral else None
            )
        read = rng.choice(plan.later(gap))
        slot = read.slot
        where = _where(t, slot)
        if where is None:
            return None
        topic = self._topic(slot.predicate)
        if topic is None:
            return None
        fields: dict[str, str] = {
            "owner_s": _possessive(t, slot.entity),
            "topic": topic,
            "where": where,
        }
        expected: Fact | None = None
        value: str | None = None
        domain = sorted(t.schema.predicates[slot.predicate].values)
        if kind in ("hypothetical", "reported", "negated"):
            held = plan.values_at(gap, slot) | read.gold
            wrong = [v for v in domain if v not in held]
            if not wrong:
                return None
            value = rng.choice(wrong)
            if kind == "reported":
                fields["reporter"] = self._undeclared(rng)
        elif kind == "restate":
            value = self._restated(gap, slot, rng)
            if value is None:
                return None
            expected = Fact(slot.entity, slot.predicate, value, slot.scope)
        elif kind == "entity":
            value = rng.choice(domain)
            person = self._person(slot, rng)
            fields["person_s"] = (
                f"{t.schema.entities[person].name}'s"
                if person in t.schema.entities
                else f"{person}'s"
            )
        if value is not None:
            # restate says the value "in other words"; the others write either form.
            alias = kind == "restate" or rng.random() < 0.5
            fields["value"] = _surface(t, slot.predicate, value, rng, alias=alias)
        templates = list(phrasing().kinds[kind].templates)
        rng.shuffle(templates)
        for template in templates:
            text = capitalize(template.format(**fields))
            if self._reads_as(text, kind, slot, value, fields, expected):
                return Drawn(kind, index, gap, text, reply)
        return None

    def _topic(self, predicate: str) -> str | None:
        """The predicate's first keyword that is no written value of it (a diet predicate
        whose keyword is also its value "vegetarian" is named by another keyword)."""
        lex = self.plan.lexicon
        keywords = self.plan.t.schema.predicates[predicate].keywords
        return next((k for k in keywords if not lex.matches(k, predicate)), None)

    def _undeclared(self, rng: random.Random) -> str:
        return rng.choice(self.relations if rng.random() < 0.5 else self.names)

    def _person(self, slot: Slot, rng: random.Random) -> str:
        """Another declared entity without a fact of the predicate, or an undeclared person."""
        t = self.plan.t
        declared = [
            e
            for e in sorted(t.schema.entities)
            if e != slot.entity and (e, slot.predicate) not in self.plan.holders
        ]
        if declared and rng.random() < 0.5:
            return rng.choice(declared)
        return self._undeclared(rng)

    def _restated(self, gap: Position, slot: Slot, rng: random.Random) -> str | None:
        """The slot's value at the gap that the next read of the slot still has as gold."""
        plan = self.plan
        current = plan.values_at(gap, slot)
        nxt = next((r for r in plan.later(gap) if r.slot == slot), None)
        if nxt is None or not plan.untouched(slot, gap, nxt.at):
            return None
        kept = sorted(current & nxt.gold)
        return rng.choice(kept) if kept else None

    def _reads_as(
        self,
        text: str,
        kind: str,
        slot: Slot,
        value: str | None,
        fields: dict[str, str],
        expected: Fact | None,
    ) -> bool:
        lex, t = self.plan.lexicon, self.plan.t
        others = (p for p in t.schema.predicates if p != slot.predicate)
        if any(lex.mentions(text, p) and lex.matches(text, p) for p in others):
            return False
        if not lex.mentions(text, slot.predicate):
            return False
        found = {m.value for m in lex.matches(text, slot.predicate)}
        if found != ({value} if value is not None else set()):
            return False
        if lex.scopes_in(text, slot.predicate) != [slot.scope]:
            return False
        named = lex.entities_in(text)
        if kind == "entity":
            person = fields["person_s"][:-2]
            declared = [e for e, ent in t.schema.entities.items() if ent.name == person]
            return named == (declared or [t.principal])
        if named != [slot.entity]:
            return False
        return expected is None or lex.read(text) == {expected}


# ---------------------------------------------------------------- the document


def draw_all(
    trajectory: Trajectory, kinds: Sequence[DistractorKind], dose: int, seed: int
) -> list[Drawn]:
    """The first `dose` accepted candidates of each kind (nested in the dose)."""
    plan = _Plan(trajectory, replay(trajectory))
    drawer = _Drawer(plan)
    drawn: list[Drawn] = []
    for kind in kinds:
        accepted, index = 0, 0
        limit = 50 * dose + 200
        while accepted < dose:
            if index >= limit:
                raise PlaceError(
                    f"{trajectory.source_path}: only {accepted} of {dose} '{kind}' distractors "
                    f"could be placed in {limit} draws; the trajectory has too few reads, "
                    "values or writable scopes for this kind (try another kind or a lower dose)"
                )
            d = drawer.draw(kind, index, seed)
            index += 1
            if d is not None:
                drawn.append(d)
                accepted += 1
    return drawn


def _plain(value: Any) -> Any:
    if value is NULL:
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def distracted_document(
    data: dict[str, Any],
    trajectory: Trajectory,
    kinds: Sequence[DistractorKind],
    dose: int,
    seed: int,
) -> dict[str, Any]:
    """The input document (plain data) with the distractors inserted."""
    drawn = draw_all(trajectory, kinds, dose, seed)
    doc = cast(dict[str, Any], _plain(data))
    ids = {turn.id for _, turn in trajectory.turns()}
    order = {k: i for i, k in enumerate(kinds)}
    by_gap: dict[Position, list[Drawn]] = {}
    for d in sorted(drawn, key=lambda d: (order[d.kind], d.index)):
        by_gap.setdefault(d.gap, []).append(d)
    for ci, conv in enumerate(doc["conversations"]):
        cid = trajectory.conversations[ci].id
        turns = conv["turns"]
        out: list[dict[str, Any]] = []
        for ti in range(len(turns) + 1):
            for d in by_gap.get((ci, ti), ()):
                tid = f"{cid}-d{d.kind[:3]}{d.index + 1:03d}"
                for new in (tid, f"{tid}r"):
                    if new in ids:
                        raise PlaceError(
                            f"{trajectory.source_path}: turn id {new!r} exists already; "
                            "`place distract` names its turns <conversation>-d<kind><n>, so "
                            "rename that turn or distract another copy"
                        )
                out.append({"id": tid, "role": "user", "text": d.text, "distractor": d.kind})
                out.append(
                    {"id": f"{tid}r", "role": "assistant", "text": d.reply, "distractor": d.kind}
                )
            if ti < len(turns):
                out.append(turns[ti])
        conv["turns"] = out
    if dose:
        doc["id"] = f"{trajectory.id}.distract-{'-'.join(kinds)}-{dose}-s{seed}"
    return doc


def same_reference(a: Reference, b: Reference) -> str | None:
    """None when the references agree; else where they first differ (docs/method.md §16's
    proof that distractors change no reference)."""
    if len(a.checkpoints) != len(b.checkpoints):
        return f"{len(a.checkpoints)} checkpoints before, {len(b.checkpoints)} after"
    for x, y in zip(a.checkpoints, b.checkpoints, strict=True):
        if x != y:
            return f"checkpoint {x.kind} at turn {x.turn}"
    reads: tuple[tuple[str, Sequence[Any], Sequence[Any]], ...] = (
        ("query", a.queries, b.queries),
        ("probe", a.probes, b.probes),
        ("task", a.tasks, b.tasks),
    )
    for what, xs, ys in reads:
        if len(xs) != len(ys):
            return f"{len(xs)} {what}s before, {len(ys)} after"
        for item, other in zip(xs, ys, strict=True):
            if item != other:
                return f"{what} {item.id}"
    if b.problems:
        return f"the replay found problems: {b.problems[0]}"
    return None


@dataclass(frozen=True)
class Distracted:
    text: str
    trajectory: Trajectory
    added: int


def _reload(text: str, suffix: str, source: str) -> Trajectory:
    """The output as `place validate` reads it; a failure is a bug, named as one."""
    from place.errors import InputError
    from place.reference.validate import load_trajectory_text

    try:
        return load_trajectory_text(text, suffix)
    except InputError as exc:
        shown = "; ".join(f"{p.location}: {p.message}" for p in exc.problems[:3])
        raise PlaceError(
            f"{source}: the distracted trajectory fails validation ({shown}); this is a bug "
            "of `place distract` (please report it)"
        ) from None


def check_kinds(kinds: Sequence[str], dose: int, seed: int) -> list[DistractorKind]:
    """The requested kinds, or PlaceError naming what is wrong and what is allowed."""
    allowed = ", ".join(DISTRACTOR_KINDS)
    bad = [k for k in kinds if k not in DISTRACTOR_KINDS]
    if bad or not kinds:
        what = f"unknown kind {bad[0]!r}" if bad else "no kind given"
        raise PlaceError(f"--kinds: {what}; allowed: {allowed} (comma-separated)")
    if len(set(kinds)) != len(kinds):
        raise PlaceError(f"--kinds: a kind is named twice ({','.join(kinds)}); name each once")
    if dose < 0 or seed < 0:
        raise PlaceError(f"--dose and --seed are non-negative integers; got {dose} and {seed}")
    return [cast(DistractorKind, k) for k in kinds]


def distract_loaded(
    trajectory: Trajectory,
    data: dict[str, Any],
    kinds: Sequence[str],
    dose: int,
    seed: int,
    suffix: str = ".yaml",
    command: str | None = None,
) -> Distracted:
    """Distract a loaded trajectory (its plain data `data`), reload and prove the result;
    nothing is written."""
    wanted = check_kinds(kinds, dose, seed)
    doc = distracted_document(data, trajectory, wanted, dose, seed)
    header = [
        f"Made by `{command or 'place distract'}` from {trajectory.id} (sha256 "
        f"{trajectory.sha256[:12] or 'of the generated text'}).",
        "Distractor turns carry `distractor: KIND`; the reference equals the input's "
        "(docs/method.md §16). Comments of the input are not kept.",
    ]
    text = to_json(doc) if suffix == ".json" else to_yaml(doc, header)
    out = _reload(text, suffix, trajectory.source_path)
    differs = same_reference(replay(trajectory), replay(out))
    if differs is not None:
        raise PlaceError(
            f"{trajectory.source_path}: the distracted trajectory's reference differs from the "
            f"input's at {differs}; this is a bug of `place distract` (please report it)"
        )
    return Distracted(text, out, len(out.distractors))


def distract(
    path: str | Path, kinds: Sequence[str], dose: int, seed: int, suffix: str = ".yaml"
) -> Distracted:
    """Load, distract, reload and prove the trajectory at `path`; nothing is written."""
    from place.reference.validate import load_trajectory
    from place.trajectory.loader import read_source

    check_kinds(kinds, dose, seed)
    trajectory = load_trajectory(path)
    made_by = f"place distract {Path(path).name}"
    return distract_loaded(trajectory, read_source(path).data, kinds, dose, seed, suffix, made_by)


__all__ = [
    "Distracted",
    "check_kinds",
    "distract",
    "distract_loaded",
    "draw_all",
    "phrasing",
    "same_reference",
]
