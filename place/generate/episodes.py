"""The episodes: each query is the end of one episode of its family, the turns that set up
its slot and then the question (docs/generator.md, "How a trajectory is built", step 2).

Every episode owns its slots (entity, predicate, scope) alone, and trip, work, home and
place predicates never hold `global` facts, so a query's gold follows from its episode
alone: each function here returns the gold it built, never one read from the reference
replay. Each also offers probe points (a turn to probe after, with the gold there and the
most harmful conflicting values) and the values that were current once (for stale-value
pairs).
"""

from __future__ import annotations

import datetime as dt
import itertools

from place.generate import phrasing as ph
from place.generate.drafts import OPENING, Block, Episode, Plan, Point, TurnDraft
from place.generate.library import PredicateSpec
from place.generate.turns import Writer


def point(
    anchor: TurnDraft,
    family: str,
    spec: PredicateSpec,
    entity: str,
    scope: str,
    gold: list[str],
    conflicts: list[str],
) -> Point:
    return Point(anchor, family, entity, spec.id, scope, tuple(sorted(gold)), list(conflicts))


def episode(w: Writer, plan: Plan) -> Episode:
    build = {
        "supersession": _supersession,
        "correction": _correction,
        "deletion": _deletion,
        "scope": _scope,
        "temporal": _temporal,
        "provenance": _provenance,
    }[plan.family]
    return build(w, plan)


def _episode(
    plan: Plan,
    spec: PredicateSpec,
    entity: str,
    scope: str,
    setup: list[TurnDraft],
    turns: list[TurnDraft],
    query_block: Block,
    points: list[Point],
    olds: list[str],
    glue: Block | None = None,
) -> Episode:
    k = plan.conv
    blocks: dict[int, list[Block]] = {}
    if setup:
        blocks.setdefault(k - 1 if plan.early else k, []).extend([t] for t in setup)
    blocks.setdefault(k, []).extend([t] for t in turns)
    blocks[k].append([*(glue or []), *query_block])
    query = query_block[0].query
    assert query is not None
    return Episode(plan.family, k, spec, entity, scope, query, blocks, points, olds)


def _supersession(w: Writer, plan: Plan) -> Episode:
    k, fam = plan.conv, plan.family
    k0 = k - 1 if plan.early else k
    spec = w.pick_pred(lambda p: p.cardinality == "one", "a supersession")
    e, s = w.pick_slot(spec)
    chain = w.values(spec, 3 if plan.extra else 2)
    first = w.t_assert(k0, spec, e, s, [chain[0]])
    changes = [
        w.t_change(k, spec, e, s, new, old, "assert") for old, new in itertools.pairwise(chain)
    ]
    gold = [chain[-1]]
    q = w.t_query(k, fam, spec, e, s, gold)
    points = [
        point(changes[-1], fam, spec, e, s, gold, [chain[-2], *chain[:-2]]),
        point(q[0], fam, spec, e, s, gold, [chain[0]]),
    ]
    if not plan.early:
        others = w.others_of(spec, (chain[0],))
        points.append(point(first, fam, spec, e, s, [chain[0]], others))
    return _episode(plan, spec, e, s, [first], changes, q, points, chain[:-1])


def _correction(w: Writer, plan: Plan) -> Episode:
    k, fam = plan.conv, plan.family
    k0 = k - 1 if plan.early else k
    spec = w.pick_pred(lambda p: p.cardinality == "one", "a correction")
    e, s = w.pick_slot(spec)
    vals = w.values(spec, 3 if plan.extra else 2)
    right, wrong = vals[-1], vals[-2]
    first = w.t_assert(k0, spec, e, s, [vals[0]])
    turns = []
    if plan.extra:
        turns.append(w.t_change(k, spec, e, s, wrong, vals[0], "assert"))
    fix = w.t_change(k, spec, e, s, right, wrong, "correct")
    turns.append(fix)
    q = w.t_query(k, fam, spec, e, s, [right])
    points = [
        point(fix, fam, spec, e, s, [right], [wrong, vals[0]]),
        point(q[0], fam, spec, e, s, [right], [wrong]),
    ]
    if not plan.early:
        others = w.others_of(spec, (vals[0],))
        points.append(point(first, fam, spec, e, s, [vals[0]], others))
    return _episode(plan, spec, e, s, [first], turns, q, points, vals[:-1])


def _deletion(w: Writer, plan: Plan) -> Episode:
    k, fam, v = plan.conv, plan.family, plan.variant
    k0 = k - 1 if plan.early else k
    if v in ("keep", "all"):
        spec = w.pick_pred(lambda p: p.cardinality == "many", "a many-valued deletion")
    elif v == "retract_one":
        spec = w.pick_pred(lambda p: p.cardinality == "one", "a retraction")
    elif plan.extra:
        spec = w.pick_pred(lambda p: p.cardinality == "one", "a forget after a change")
    else:
        spec = w.pick_pred(lambda p: True, "a forget")
    e, s = w.pick_slot(spec)
    setup: list[TurnDraft] = []
    turns: list[TurnDraft] = []
    if v == "keep":
        vals = w.values(spec, 3 if plan.wide else 2)
        if plan.extra:
            setup = [w.t_assert(k0, spec, e, s, [x]) for x in vals]
        else:
            setup = [w.t_assert(k0, spec, e, s, vals)]
        removed, gold = [vals[0]], vals[1:]
        turns.append(w.t_retract(k, spec, e, s, vals[0]))
        held = vals
    elif v in ("all", "retract_one"):
        vals = w.values(spec, 1)
        setup = [w.t_assert(k0, spec, e, s, vals)]
        removed, gold, held = vals, [], vals
        turns.append(w.t_retract(k, spec, e, s, vals[0]))
    else:  # forget
        many = spec.cardinality == "many"
        vals = w.values(spec, 2 if many or plan.extra else 1)
        if many:
            setup = [w.t_assert(k0, spec, e, s, vals)]
            held = vals
        else:
            setup = [w.t_assert(k0, spec, e, s, vals[:1])]
            held = vals[:1]
            if plan.extra:
                turns.append(w.t_change(k, spec, e, s, vals[1], vals[0], "assert"))
        removed, gold = vals, []
        turns.append(w.t_forget(k, spec, e, s))
    removal = turns[-1]
    q = w.t_query(k, fam, spec, e, s, gold)
    points = [
        point(removal, fam, spec, e, s, gold, list(removed)),
        point(q[0], fam, spec, e, s, gold, list(removed)),
    ]
    if not plan.early:
        others = w.others_of(spec, tuple(held))
        points.append(point(setup[-1], fam, spec, e, s, held, others))
    return _episode(plan, spec, e, s, setup, turns, q, points, list(removed))


def _scope(w: Writer, plan: Plan) -> Episode:
    k, fam, v = plan.conv, plan.family, plan.variant
    if v in ("other_scope", "absent"):
        kinds = ("trip",) if v == "absent" else ("trip", "place")
        spec = w.pick_pred(
            lambda p: p.scope in kinds and w.has_room(p, per_person=2), "a scope question"
        )
        e = w.pick_entity()
        if sum(w.free(e, spec.id, x) for x in w.scope_options(spec)) < 2:
            e = w.rng.choice(
                [
                    x
                    for x in w.people
                    if sum(w.free(x, spec.id, y) for y in w.scope_options(spec)) >= 2
                ]
            )
        a, b = w.rng.sample([x for x in w.scope_options(spec) if w.free(e, spec.id, x)], 2)
        w.take(e, spec.id, a)
        w.take(e, spec.id, b)
        if v == "absent":
            va = w.values(spec, 1)[0]
            t = w.t_assert(k, spec, e, a, [va])
            q = w.t_query(k, fam, spec, e, b, [])
            points = [
                point(t, fam, spec, e, b, [], [va]),
                point(q[0], fam, spec, e, b, [], [va]),
            ]
            return _episode(plan, spec, e, b, [], [t], q, points, [])
        slots = [(e, a), (e, b)]
    else:
        spec = w.pick_pred(lambda p: w.has_room(p, per_scope=2), "a scope question")
        s = w.rng.choice(
            [x for x in w.scope_options(spec) if sum(w.free(e, spec.id, x) for e in w.people) >= 2]
        )
        e1, e2 = w.rng.sample([e for e in w.people if w.free(e, spec.id, s)], 2)
        w.take(e1, spec.id, s)
        w.take(e2, spec.id, s)
        slots = [(e1, s), (e2, s)]
    vals = w.values(spec, 2)
    turns = [
        w.t_assert(k, spec, ent, sc, [val]) for (ent, sc), val in zip(slots, vals, strict=True)
    ]
    qi = w.rng.randrange(2)
    (qe, qs), gold, other = slots[qi], [vals[qi]], vals[1 - qi]
    q = w.t_query(k, fam, spec, qe, qs, gold)
    points = [
        point(turns[0], fam, spec, qe, qs, gold if qi == 0 else [], [other]),
        point(turns[1], fam, spec, qe, qs, gold, [other]),
        point(q[0], fam, spec, qe, qs, gold, [other]),
    ]
    return _episode(plan, spec, qe, qs, [], turns, q, points, [])


def _temporal(w: Writer, plan: Plan) -> Episode:
    k, fam, v = plan.conv, plan.family, plan.variant
    today = w.dates[k]
    if v in ("now", "asof"):
        separate = plan.extra or plan.early
        if separate:
            ok = lambda p: p.windows and p.type != "date"  # noqa: E731
        else:
            ok = lambda p: p.windows and p.cardinality == "one"  # noqa: E731
        spec = w.pick_pred(ok, "a scheduled change")
        e, s = w.pick_slot(spec)
        v1, v2 = w.values(spec, 2)
        day = today + dt.timedelta(days=w.rng.randint(3, 40))
        setup: list[TurnDraft] = []
        if separate:
            setup = [w.t_assert(k - 1 if plan.early else k, spec, e, s, [v1])]
            sched = w.t_assert(k, spec, e, s, [v2], valid_from=day)
        else:
            sched = w.t_window_pair(k, spec, e, s, v1, v2, day, temporary=False)
        if v == "asof":
            as_of = day + dt.timedelta(days=w.rng.randint(0, 10))
            gold = [v2] if spec.cardinality == "one" else [v1, v2]
            q = w.t_query(k, fam, spec, e, s, gold, as_of)
        else:
            q = w.t_query(k, fam, spec, e, s, [v1])
        points = [
            point(sched, fam, spec, e, s, [v1], [v2]),
            point(q[0], fam, spec, e, s, [v1], [v2]),
        ]
        if separate and not plan.early:
            others = w.others_of(spec, (v1,))
            points.append(point(setup[0], fam, spec, e, s, [v1], others))
        return _episode(plan, spec, e, s, setup, [sched], q, points, [])
    spec = w.pick_pred(lambda p: p.windows and p.cardinality == "one", "a dated value")
    e, s = w.pick_slot(spec)
    if v == "temporary":
        k0 = k - 1 if plan.early else k
        vals = w.values(spec, 3)
        day = today + dt.timedelta(days=w.rng.randint(3, 40))
        setup = [w.t_assert(k0, spec, e, s, [vals[0]])] if plan.extra else []
        if w.rng.random() < 0.4:
            temp = w.t_window_pair(k, spec, e, s, vals[1], vals[2], day, temporary=True)
        else:
            temp = w.t_assert(k, spec, e, s, [vals[1]], valid_until=day)
        gold = [vals[1]]
        q = w.t_query(k, fam, spec, e, s, gold)
        points = [
            point(temp, fam, spec, e, s, gold, [vals[2], vals[0]]),
            point(q[0], fam, spec, e, s, gold, [vals[0], vals[2]]),
        ]
        if setup and not plan.early:
            others = w.others_of(spec, (vals[0],))
            points.append(point(setup[0], fam, spec, e, s, [vals[0]], others))
        olds = [vals[0]] if setup else []
        plan_copy = Plan(plan.family, plan.conv, v, early=plan.early and bool(setup))
        return _episode(plan_copy, spec, e, s, setup, [temp], q, points, olds)
    # expired / successor: set up in the previous conversation, asked in this one
    before = w.dates[k - 1]
    span = (today - before).days
    day = before + dt.timedelta(days=w.rng.randint(2, span))
    vals = w.values(spec, 2)
    if v == "expired":
        setup = [w.t_assert(k - 1, spec, e, s, [vals[0]])] if plan.extra else []
        setup.append(w.t_assert(k - 1, spec, e, s, [vals[1]], valid_until=day))
        gold = []  # (a list[str], as above)
        olds = [vals[1], vals[0]] if plan.extra else [vals[1]]
        conflicts = olds
    else:
        setup = [w.t_window_pair(k - 1, spec, e, s, vals[0], vals[1], day, temporary=True)]
        gold, olds, conflicts = [vals[1]], [vals[0]], [vals[0]]
    q = w.t_query(k, fam, spec, e, s, gold)
    points = [
        point(OPENING, fam, spec, e, s, gold, conflicts),
        point(q[0], fam, spec, e, s, gold, conflicts),
    ]
    plan_copy = Plan(plan.family, plan.conv, v, early=True)
    return _episode(plan_copy, spec, e, s, setup, [], q, points, olds)


def _provenance(w: Writer, plan: Plan) -> Episode:
    k, fam = plan.conv, plan.family
    k0 = k - 1 if plan.early else k
    spec = w.pick_pred(lambda p: p.cardinality == "one", "a provenance question")
    e, s = w.pick_slot(spec)
    vals = w.values(spec, 3)
    first = w.t_assert(k0, spec, e, s, [vals[0]])
    turns = []
    trusted = vals[0]
    if plan.extra:
        turns.append(w.t_change(k, spec, e, s, vals[1], vals[0], "assert"))
        trusted = vals[1]
        claim = vals[0] if w.rng.random() < 0.5 else vals[2]
    else:
        claim = vals[1]
    source = w.rng.choice(ph.SOURCES)
    what = ph.SOURCE_NOUN[source]
    glue = [w.t_tool(k, spec, e, s, claim, source)]
    if w.rng.random() < 0.6:
        dismiss = w.attempt(
            lambda: w.rng.choice(ph.DISMISS).format(what=what),
            set(),
            "a dismissal",
            required=False,
        )
        if dismiss is not None:
            glue.append(w.user(dismiss))
    glue.append(TurnDraft("assistant", w.rng.choice(ph.TOOL_REMARK).format(what=what)))
    gold = [trusted]
    q = w.t_query(k, fam, spec, e, s, gold)
    points = [
        point(glue[0], fam, spec, e, s, gold, [claim]),
        point(q[0], fam, spec, e, s, gold, [claim]),
    ]
    last = turns[-1] if turns else (first if not plan.early else None)
    if last is not None:
        points.append(point(last, fam, spec, e, s, gold, [vals[0], claim]))
    olds = [vals[0]] if plan.extra else []
    return _episode(plan, spec, e, s, [first], turns, q, points, olds, glue=glue)
