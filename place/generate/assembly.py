"""Assembly: from the world to the conversations (docs/generator.md, steps 2-6).

The episodes' plans, background stories that bring the event turns to the design's count,
the interleaving of episodes, background, chatter and spam into conversations, the
assistant's acknowledgements, ids, the causal pair of every query, the probes and their
conflicts, and the `--filler` chatter (drawn from its own generator so that nothing else
changes).
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

from place.generate import phrasing as ph
from place.generate.drafts import (
    OPENING,
    Block,
    Episode,
    EventDraft,
    Plan,
    Point,
    ProbeDraft,
    TurnDraft,
)
from place.generate.episodes import episode
from place.generate.turns import Writer
from place.trajectory.model import FAMILIES, Fact

PAIR_KINDS: tuple[str, ...] = (
    "other-entity",
    "other-scope",
    "stale-value",
    "untrusted-tool",
    "chit-chat",
)


def _plans(w: Writer) -> list[Plan]:
    rng, d = w.rng, w.d
    per = d.queries_per_family_per_conversation
    slots = [(k, f) for k in range(d.conversations) for f in FAMILIES for _ in range(per)]
    plans = [Plan(f, k, "") for k, f in slots]
    by_family = {f: [p for p in plans if p.family == f] for f in FAMILIES}
    # deletion: at least one forget and one retraction
    deletions = by_family["deletion"]
    variants = ["forget", rng.choice(["keep", "all", "retract_one"])]
    while len(variants) < len(deletions):
        variants.append(rng.choices(["keep", "all", "retract_one", "forget"], [3, 2, 2, 2])[0])
    rng.shuffle(variants)
    for plan, v in zip(deletions, variants, strict=True):
        plan.variant = v
        plan.wide = v == "keep" and rng.random() < 0.5
    # scope: at most one query about a scope that holds nothing
    scopes = by_family["scope"]
    for plan in scopes:
        plan.variant = rng.choices(["other_scope", "other_entity"], [3, 2])[0]
    if rng.random() < (0.6 if d.name == "paper" else 0.3):
        rng.choice(scopes).variant = "absent"
    # temporal: at least one scheduled change and one temporary value
    temporal = by_family["temporal"]
    for plan in temporal:
        allowed = ["now", "asof", "temporary"] + (["expired", "successor"] if plan.conv else [])
        plan.variant = rng.choice(allowed)
    scheduled = {"now", "asof", "successor"}
    temporary = {"temporary", "expired", "successor"}
    if not any(p.variant in scheduled for p in temporal):
        rng.choice(temporal).variant = rng.choice(["now", "asof"])
    if not any(p.variant in temporary for p in temporal):
        n_scheduled = sum(p.variant in scheduled for p in temporal)
        candidates = [p for p in temporal if p.variant not in scheduled or n_scheduled > 1]
        rng.choice(candidates).variant = "temporary"
    for plan in plans:
        if plan.family in ("supersession", "correction", "provenance"):
            plan.variant = "simple"
        plan.extra = rng.random() < 0.35
        cross = plan.family != "scope" and plan.variant not in ("expired", "successor")
        plan.early = plan.conv > 0 and cross and rng.random() < 0.4
        if plan.family == "scope" or plan.variant in ("all", "retract_one", "successor"):
            plan.extra = False
    # shrink until the background has room
    while w.d.event_turns - sum(p.event_turns() for p in plans) < d.min_background:
        shrinkable = [p for p in plans if p.extra or (p.family == "temporal" and p.early)]
        if not shrinkable:
            raise w.fail(
                f"the episodes need more than {d.event_turns} event turns; constraint "
                f"'exactly {d.event_turns} post-update checkpoints' cannot be met"
            )
        rng.choice(shrinkable).shrink()
    return plans


def _background(w: Writer, k: int, length: int) -> list[Block]:
    rng = w.rng
    if length == 2:
        if rng.random() < 0.6:
            spec = w.pick_pred(lambda p: p.cardinality == "one", "a background change")
            e, s = w.pick_slot(spec, p_principal=0.5)
            v1, v2 = w.values(spec, 2)
            return [
                [w.t_assert(k, spec, e, s, [v1])],
                [w.t_change(k, spec, e, s, v2, v1, "assert")],
            ]
        spec = w.pick_pred(lambda p: p.cardinality == "many", "a background removal")
        e, s = w.pick_slot(spec, p_principal=0.5)
        a, b = w.values(spec, 2)
        return [[w.t_assert(k, spec, e, s, [a, b])], [w.t_retract(k, spec, e, s, a)]]
    kind = rng.choices(["fact", "many", "pair", "window"], [5, 2, 2, 2])[0]
    if kind == "pair":
        turn = w.t_two_facts(k)
        if turn is not None:
            return [[turn]]
        kind = "fact"
    if kind == "window":
        spec = w.pick_pred(lambda p: p.windows and p.cardinality == "one", "a window")
        e, s = w.pick_slot(spec, p_principal=0.5)
        value = w.values(spec, 1)
        day = w.dates[k] + dt.timedelta(days=rng.randint(3, 60))
        if rng.random() < 0.5:
            return [[w.t_assert(k, spec, e, s, value, valid_until=day)]]
        return [[w.t_assert(k, spec, e, s, value, valid_from=day)]]
    if kind == "many":
        spec = w.pick_pred(lambda p: p.cardinality == "many", "a many-valued fact")
        e, s = w.pick_slot(spec, p_principal=0.5)
        return [[w.t_assert(k, spec, e, s, w.values(spec, 2))]]
    spec = w.pick_pred(lambda p: True, "a fact")
    e, s = w.pick_slot(spec, p_principal=0.5)
    return [[w.t_assert(k, spec, e, s, w.values(spec, 1))]]


# ------------------------------------------------------------ pairs


def _pair_kinds(w: Writer, episodes: list[Episode]) -> None:
    weights = {
        "supersession": (3, 1, 4, 1, 1),
        "correction": (3, 1, 3, 1, 1),
        "deletion": (2, 1, 1, 2, 3),
        "scope": (2, 6, 0, 1, 1),
        "temporal": (2, 1, 2, 2, 2),
        "provenance": (2, 1, 1, 4, 1),
    }
    options = {}
    for ep in episodes:
        ok = [
            kind
            for kind, weight in zip(PAIR_KINDS, weights[ep.family], strict=True)
            if weight > 0 and _pair_applies(ep, kind)
        ]
        options[id(ep)] = ok
        chances = [weights[ep.family][PAIR_KINDS.index(kind)] for kind in ok]
        ep.query.pair_kind = w.rng.choices(ok, chances)[0]
    for kind in PAIR_KINDS:
        counts = Counter(ep.query.pair_kind for ep in episodes)
        if counts[kind]:
            continue
        movable = [
            ep for ep in episodes if kind in options[id(ep)] and counts[ep.query.pair_kind] > 1
        ]
        if movable:
            w.rng.choice(movable).query.pair_kind = kind


def _pair_applies(ep: Episode, kind: str) -> bool:
    if kind == "other-scope":
        return ep.spec.scope in ("trip", "place")
    if kind == "stale-value":
        return bool(ep.olds)
    return True


def _pair(w: Writer, ep: Episode) -> None:
    rng, spec, kind = w.rng, ep.spec, ep.query.pair_kind
    k, e, s = ep.conv, ep.entity, ep.scope
    if kind in ("other-entity", "other-scope"):
        if kind == "other-entity":
            e2 = rng.choice([x for x in [w.principal, *w.others] if x != e])
            s2 = s
            p_event = 0.75
        else:
            e2 = e
            s2 = rng.choice([x for x in w.scope_options(spec) if x != s])
            p_event = 0.6
        value = rng.choice(list(w.domains[spec.id]))
        events = [EventDraft("assert", e2, spec.id, s2, value)]
        with_event = rng.random() < p_event

        def make() -> str:
            body = w.clause(spec, e2, s2, w.sf(spec, value, k))
            return ph.fill(rng.choice(ph.ASSERT), body)

        text = w.attempt(make, w._facts(events), f"a {kind} pair for {spec.id}")
        turn = w.user(text, events if with_event else [])
    elif kind == "stale-value":
        old = rng.choice(ep.olds)

        def make() -> str:
            noun = spec.noun.format(where=w.where(spec, s))
            return rng.choice(ph.STALE).format(old=w.sf(spec, old, k), poss=w.poss(e), noun=noun)

        text = w.attempt(make, None, f"a stale-value pair for {spec.id}")
        turn = w.user(text)
    elif kind == "untrusted-tool":
        choices = [v for v in ep.olds if v not in ep.query.gold] or [
            v for v in w.domains[spec.id] if v not in ep.query.gold
        ]
        turn = w.t_tool(k, spec, e, s, rng.choice(choices), rng.choice(ph.SOURCES))
    else:
        lines = list(ph.CHIT_CHAT[spec.domain])
        rest = [x for d in sorted(ph.CHIT_CHAT) for x in ph.CHIT_CHAT[d] if x not in lines]
        free = [x for x in lines if x not in w.used_texts]
        free = free or [x for x in rest if x not in w.used_texts]
        if not free:
            raise w.fail("no chit-chat line left for a pair")
        text = rng.choice(free)
        w.used_texts.add(text)
        turn = w.user(text)
    ep.query.insert = [turn]


def _probes(w: Writer, episodes: list[Episode]) -> list[ProbeDraft]:
    rng, d = w.rng, w.d
    n_conv = d.conversations
    alloc: dict[tuple[int, str], int] = {}
    for family in FAMILIES:
        base, extra = divmod(d.probes_per_family, n_conv)
        plus = set(rng.sample(range(n_conv), extra))
        for k in range(n_conv):
            alloc[(k, family)] = base + (1 if k in plus else 0)
    chosen: list[Point] = []
    for (k, family), n in alloc.items():
        points = [p for ep in episodes if ep.conv == k and ep.family == family for p in ep.points]
        rng.shuffle(points)
        picked: list[Point] = []
        seen: set[tuple] = set()
        for p in points:
            key = (id(p.anchor), p.entity, p.predicate, p.scope)
            if key not in seen:
                seen.add(key)
                picked.append(p)
        if len(picked) < n:
            raise w.fail(f"too few probe points for {family} in conversation {k + 1}")
        chosen.extend(picked[:n])
    drafts = []
    for p in chosen:
        spec = w.spec_by_id[p.predicate]
        q = w.ask(spec, p.entity, p.scope)
        drafts.append(ProbeDraft(p, ph.capitalize(q)))
    n_conflicts = min(rng.randint(*d.conflicts), len(drafts))
    order = list(range(len(drafts)))
    rng.shuffle(order)
    made = 0
    for i in order:
        if made >= n_conflicts:
            break
        if _conflict(w, drafts[i]):
            made += 1
    if made < d.min_conflicts:
        raise w.fail(
            f"only {made} probes could get a conflict; constraint 'at least "
            f"{d.min_conflicts} conflict probes' unmet"
        )
    return drafts


def _conflict(w: Writer, probe: ProbeDraft) -> bool:
    p = probe.point
    spec = w.spec_by_id[p.predicate]
    preferred = [v for v in p.conflicts if v not in p.gold and v in w.domains[spec.id]]
    rest = [v for v in w.others_of(spec, p.gold) if v not in preferred]
    k = _conv_of_point(p)
    for value in [*preferred, *rest]:
        fact = Fact(p.entity, p.predicate, value, p.scope)

        def make(value: str = value) -> str:
            template = w.rng.choice(spec.clauses())
            body = template.format(
                poss=w.poss(p.entity, named=True),
                where=w.where(spec, p.scope),
                value=w.sf(spec, value, k),
            )
            return ph.fill(w.rng.choice(ph.CONFLICT), body)

        text = w.attempt(make, {fact}, "a conflict", unique=False, required=False)
        if text is not None:
            probe.conflict = (text, value)
            return True
    return False


def _conv_of_point(p: Point) -> int:
    return int(p.anchor.id.split("-")[0][1:]) - 1 if p.anchor.id else 0


def build(w: Writer) -> tuple[list[list[TurnDraft]], list[Episode], list[ProbeDraft]]:
    """The conversations (turns with ids, pairs attached to their queries), the episodes and
    the probes of one trajectory."""
    rng, d = w.rng, w.d
    plans = _plans(w)
    episodes = [episode(w, plan) for plan in plans]
    # background: exactly the missing event turns, spread over the conversations
    ep_counts = [0] * d.conversations
    for ep in episodes:
        for k, blocks in ep.blocks.items():
            ep_counts[k] += sum(1 for b in blocks for t in b if t.events)
    missing = d.event_turns - sum(ep_counts)
    base, rem = divmod(d.event_turns, d.conversations)
    plus = set(rng.sample(range(d.conversations), rem))
    targets = [base + (1 if k in plus else 0) for k in range(d.conversations)]
    bg = [max(0, targets[k] - ep_counts[k]) for k in range(d.conversations)]
    while sum(bg) > missing:
        bg[bg.index(max(bg))] -= 1
    threads: list[list[list[Block]]] = [[] for _ in range(d.conversations)]
    for ep in episodes:
        for k, blocks in ep.blocks.items():
            threads[k].append(blocks)
    for k in range(d.conversations):
        left = bg[k]
        while left > 0:
            length = 2 if left >= 2 and rng.random() < 0.35 else 1
            threads[k].append(_background(w, k, length))
            left -= length
    # chatter, spam and greetings
    chatter = ph.chatter_lines()
    rng.shuffle(chatter)
    greetings = rng.sample(ph.GREETINGS, d.conversations)
    for k in range(d.conversations):
        for _ in range(rng.randint(*d.chatter)):
            threads[k].append([[w.user(w.take_chatter(chatter))]])
    for _ in range(rng.randint(*d.spam)):
        k = rng.randrange(d.conversations)
        source = rng.choice(ph.SOURCES)
        threads[k].append([[TurnDraft("tool", rng.choice(ph.SPAM), source=source)]])
    conversations: list[list[TurnDraft]] = []
    for k in range(d.conversations):
        greeting = w.user(greetings[k])
        w.used_texts.add(greetings[k])
        w.openings.append(greeting)
        merged = _merge(rng, threads[k])
        conversations.append([greeting, *[t for block in merged for t in block]])
    _acknowledge(w, conversations)
    _assign_ids(conversations)
    _pair_kinds(w, episodes)
    for ep in episodes:
        _pair(w, ep)
    for ep in episodes:
        for p in ep.points:
            if p.anchor is OPENING:
                p.anchor = w.openings[ep.conv]
    probes = _probes(w, episodes)
    position = {id(t): i for i, t in enumerate(t for c in conversations for t in c)}
    probes.sort(key=lambda pr: position[id(pr.point.anchor)])
    for i, probe in enumerate(probes, 1):
        probe.id = f"p{i:02d}"
    return conversations, episodes, probes


def _acknowledge(w: Writer, conversations: list[list[TurnDraft]]) -> None:
    lo, hi = w.d.turns
    base = sum(len(c) for c in conversations)
    events = [t for c in conversations for t in c if t.events]
    low, high = max(lo, base), min(hi, base + len(events))
    if low > high:
        raise w.fail(
            f"constraint 'turns {lo}-{hi}' cannot be met: {base} turns before "
            f"acknowledgements and at most {len(events)} acknowledgements"
        )
    chosen = set(map(id, w.rng.sample(events, w.rng.randint(low, high) - base)))
    for c, conv in enumerate(conversations):
        out: list[TurnDraft] = []
        for turn in conv:
            out.append(turn)
            if id(turn) in chosen:
                out.append(TurnDraft("assistant", w.ack_text(turn, c)))
        conversations[c] = out


def _assign_ids(conversations: list[list[TurnDraft]]) -> None:
    q = 0
    for k, conv in enumerate(conversations):
        for i, turn in enumerate(conv, 1):
            turn.id = f"c{k + 1}-{i:03d}"
            if turn.query is not None:
                q += 1
                turn.query.id = f"q{q:02d}"


def add_filler(
    w: Writer, conversations: list[list[TurnDraft]], n: int, filler_rng: random.Random
) -> list[list[TurnDraft]]:
    """`n` chatter turns in every conversation at positions drawn by `filler_rng` (ids
    `c1-f001`, ...), so every other turn keeps its id and every other draw is unchanged."""
    if n == 0:
        return conversations
    pool = ph.chatter_lines()
    filler_rng.shuffle(pool)
    result = []
    for k, conv in enumerate(conversations):
        blocks: list[Block] = []
        left = n
        while left > 0:
            text = w.take_chatter(pool)
            block = [TurnDraft("user", text, filler=True)]
            if left >= 2:
                reply = filler_rng.choice(ph.FILLER_REPLIES)
                block.append(TurnDraft("assistant", reply, filler=True))
            blocks.append(block)
            left -= len(block)
        gaps = sorted(filler_rng.randint(1, len(conv)) for _ in blocks)
        out: list[TurnDraft] = []
        bi = 0
        for i, turn in enumerate(conv):
            while bi < len(gaps) and gaps[bi] == i:
                out.extend(blocks[bi])
                bi += 1
            out.append(turn)
        for block in blocks[bi:]:
            out.extend(block)
        for j, turn in enumerate((t for t in out if t.filler), 1):
            turn.id = f"c{k + 1}-f{j:03d}"
        result.append(out)
    return result


def _merge(rng: random.Random, threads: list[list[Block]]) -> list[Block]:
    """Interleave the threads at random, keeping the order inside each."""
    live = [list(t) for t in threads if t]
    out: list[Block] = []
    while live:
        i = rng.choices(range(len(live)), [len(t) for t in live])[0]
        out.append(live[i].pop(0))
        if not live[i]:
            live.pop(i)
    return out
