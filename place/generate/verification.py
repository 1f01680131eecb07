"""Verification: what every generated trajectory must pass before it is written.

`load` reads the text back with the project's loader, `verify` compares the result with what
the builder intended (golds, design counts) and runs `self_check`, the strict lexicon
self-check. Any failure is a `PlaceError` naming the seed and the unmet constraint.
"""

from __future__ import annotations

from collections import Counter

from place.errors import InputError
from place.generate.design import fail
from place.generate.drafts import Episode, ProbeDraft
from place.generate.forgery import PROBE_PREFIX as FORGED_PREFIX
from place.generate.governance import PROBE_PREFIX, is_story_turn, missing_constructs
from place.generate.world import World
from place.lexicon import Lexicon
from place.trajectory.model import FACT_OPS, FAMILIES, FORGED_KINDS, Fact, Trajectory


def self_check(traj: Trajectory) -> list[str]:
    """The lexicon self-check, strict: β on each world-a event turn reads exactly the facts
    its assert/correct events state (nothing for retract/forget turns); β reads nothing from
    other world-a user turns (questions, greetings, chatter, filler); inserted user turns with
    events read as their facts; conflict texts read as the injected fact; no user text twice
    (a redelivery repeats its original's text by definition, FORMAT.md, and is not counted)."""
    lexicon = Lexicon(traj.schema, traj.principal)
    problems: list[str] = []

    def expect(turn_id: str, text: str, facts: set[Fact]) -> None:
        read = lexicon.read(text)
        if read != facts:
            problems.append(
                f"turn {turn_id}: β reads {sorted(read)} from {text!r}; expected {sorted(facts)}"
            )

    texts: list[str] = []
    for _conv, turn in traj.turns():
        if turn.role != "user":
            continue
        if turn.redelivers is None:
            texts.append(turn.text)
        stated = {
            Fact(e.entity, e.predicate, e.value, e.scope)
            for e in turn.events
            if e.op in ("assert", "correct") and e.value is not None
        }
        expect(turn.id, turn.text, stated)
        if turn.query is not None:
            for inserted in turn.query.pair_insert or ():
                if inserted.role == "user":
                    texts.append(inserted.text)
                if inserted.events:
                    facts = {
                        Fact(e.entity, e.predicate, e.value, e.scope)
                        for e in inserted.events
                        if e.value is not None
                    }
                    expect(inserted.id, inserted.text, facts)
    for probe in traj.probes:
        if probe.conflict is not None:
            fact = Fact(probe.entity, probe.predicate, probe.conflict.value, probe.scope)
            if lexicon.read(probe.conflict.text) != {fact}:
                problems.append(f"probe {probe.id}: conflict text is not read as {fact}")
    dupes = sorted(t for t, n in Counter(texts).items() if n > 1)
    if dupes:
        problems.append(f"user texts used twice: {dupes[:3]}")
    return problems


def load(text: str, suffix: str, seed: int, design: str) -> Trajectory:
    """The generated text as the project's loader reads it (structure and the semantic
    validation of `place validate`); a failure names the seed."""
    from place.reference.validate import load_trajectory_text

    try:
        return load_trajectory_text(text, suffix)
    except InputError as exc:
        shown = "; ".join(p.message for p in exc.problems[:5])
        raise fail(seed, design, f"the generated trajectory fails validation: {shown}") from None


def verify(
    traj: Trajectory,
    w: World,
    episodes: list[Episode],
    probes: list[ProbeDraft],
    filler: int,
) -> None:
    """Check the loaded trajectory against what was built: the intended golds equal the
    reference replay's supports, every design count holds, the lexicon self-check passes."""
    from place.reference.replay import replay

    seed, design, d = w.seed, w.design_name, w.d
    ref = replay(traj)
    # The counts below are the base design's: the governance story's turns (ids `c1-g001`)
    # and probes (`pg01`) and the forged probes (`pf01`) come on top of them
    # (docs/generator.md, "The governance story of `small`", "The forged probes of `small`").
    base_probes = [p for p in traj.probes if not p.id.startswith((PROBE_PREFIX, FORGED_PREFIX))]

    def need(ok: bool, constraint: str, got: object) -> None:
        if not ok:
            raise fail(seed, design, f"constraint '{constraint}' unmet (got {got})")

    # intended golds = the reference replay's authorized supports
    for ep in episodes:
        qref = ref.query(ep.query.id)
        need(
            qref.support.values == ep.query.gold,
            f"query {ep.query.id} gold equals the replayed support",
            qref.support.values,
        )
        need(
            qref.support_b == qref.support,
            f"pair of {ep.query.id} leaves the support unchanged",
            qref.support_b,
        )
    refs = {p.id: p for p in ref.probes}
    for probe in probes:
        need(
            refs[probe.id].support.values == probe.point.gold,
            f"probe {probe.id} gold equals the replayed support",
            refs[probe.id].support.values,
        )
    # design counts
    n = d.conversations
    need(len(traj.conversations) == n, f"{n} conversations", len(traj.conversations))
    lo, hi = d.turns
    base_turns = sum(1 for _c, t in traj.turns() if "-f" not in t.id and not is_story_turn(t.id))
    need(lo <= base_turns <= hi, f"{lo}-{hi} turns", base_turns)
    for conv in traj.conversations:
        fill = sum(1 for t in conv.turns if "-f" in t.id)
        need(fill == filler, f"{filler} filler turns in {conv.id}", fill)
    kinds = Counter(c.kind for c in ref.checkpoints if not is_story_turn(c.turn))
    need(
        kinds["post-update"] == d.event_turns,
        f"{d.event_turns} post-update checkpoints",
        kinds["post-update"],
    )
    queries = traj.queries()
    families: Counter[str] = Counter(q.family for _c, _t, q in queries)
    need(len(queries) == d.queries, f"{d.queries} queries", len(queries))
    need(
        all(families[f] == d.queries_per_family for f in FAMILIES),
        f"{d.queries_per_family} queries per family",
        dict(families),
    )
    pairs = sum(1 for _c, _t, q in queries if q.pair_insert)
    need(pairs == d.queries, f"{d.queries} causal pairs", pairs)
    pfam: Counter[str] = Counter(p.family for p in base_probes)
    need(len(base_probes) == d.probes, f"{d.probes} probes", len(base_probes))
    need(
        all(pfam[f] == d.probes_per_family for f in FAMILIES),
        f"{d.probes_per_family} probes per family",
        dict(pfam),
    )
    conflicts = sum(1 for p in base_probes if p.conflict is not None)
    need(conflicts >= d.min_conflicts, f"at least {d.min_conflicts} conflict probes", conflicts)
    events = [(conv, e) for conv in traj.conversations for t in conv.turns for e in t.events]
    ops = {e.op for _c, e in events}
    if d.governance:
        # every lifecycle op, besides the story's governance ops (checked below)
        ops &= set(FACT_OPS)
    need(ops == {"assert", "correct", "retract", "forget"}, "every event op", sorted(ops))
    need(
        any(e.valid_from is not None and e.valid_from > c.date for c, e in events),
        "a scheduled change",
        "none",
    )
    need(any(e.valid_until is not None for _c, e in events), "a temporary value", "none")
    if d.governance:
        missing = missing_constructs(traj)
        need(not missing, "every governance construct", f"none of {missing}")
    # The forged probes: pf01-pf04, one of each kind, in the order of FORGED_KINDS, for a
    # design that has them, none otherwise; each rule of its kind (pointer, value, S*, the
    # support bound) was checked by the loader.
    forged = [(p.id, p.forged.kind) for p in traj.probes if p.forged is not None]
    want = [(f"{FORGED_PREFIX}{i:02d}", kind) for i, kind in enumerate(FORGED_KINDS, 1)]
    need(
        forged == (want if d.forged else []),
        "four forged probes, one of each kind" if d.forged else "no forged probe",
        forged,
    )
    problems = self_check(traj)
    need(not problems, "lexicon self-check", "; ".join(problems[:3]))
    for conv in traj.conversations:
        for turn in conv.turns:
            if "-f" in turn.id and turn.role == "user":
                need(w.clean(turn.text), f"filler turn {turn.id} mentions nothing", turn.text)
