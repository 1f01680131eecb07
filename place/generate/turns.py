"""Turns and their texts: every kind of event turn, questions and answers, tool turns and
acknowledgements, each written from the phrasing templates and checked as it is written.

`Writer.attempt` is the lexicon self-check at the source: a text is kept only if it is new
(no user text occurs twice) and the readback β reads from it exactly the facts its events
state; otherwise another template and written form are drawn.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Literal, overload

from place.generate import phrasing as ph
from place.generate.drafts import Block, EventDraft, QueryDraft, TurnDraft
from place.generate.library import PredicateSpec
from place.generate.world import World
from place.lexicon import Lexicon
from place.trajectory.model import GLOBAL_SCOPE, Fact

_ATTEMPTS = 80
"""Draws per text before a seed gives up (each draw re-picks template and written forms)."""


class Writer(World):
    """A world that writes turns: it remembers the texts used and reads each with β."""

    def __init__(self, seed: int, design: str) -> None:
        super().__init__(seed, design)
        self.used_texts: set[str] = set()
        self.openings: list[TurnDraft] = []
        self.lexicon = Lexicon(self.schema, self.principal)

    # ------------------------------------------------------------ text

    def sf(self, spec: PredicateSpec, value: str, k: int) -> str:
        aliases = self.domains[spec.id][value]
        return ph.surface(
            spec.type, value, aliases, self.rng, currency=self.currency, today=self.dates[k]
        )

    def clause(
        self, spec: PredicateSpec, entity: str, scope: str, value_text: str, *, tool: bool = False
    ) -> str:
        template = self.rng.choice(spec.clauses())
        return template.format(
            poss=self.poss(entity, tool=tool), where=self.where(spec, scope), value=value_text
        )

    @overload
    def attempt(
        self,
        make: Callable[[], str],
        expect: set[Fact] | None,
        what: str,
        *,
        unique: bool = True,
        required: Literal[True] = True,
    ) -> str: ...

    @overload
    def attempt(
        self,
        make: Callable[[], str],
        expect: set[Fact] | None,
        what: str,
        *,
        unique: bool = True,
        required: bool,
    ) -> str | None: ...

    def attempt(
        self,
        make: Callable[[], str],
        expect: set[Fact] | None,
        what: str,
        *,
        unique: bool = True,
        required: bool = True,
    ) -> str | None:
        """A text from `make` that is new (when `unique`) and that β reads as exactly
        `expect` (None: not checked)."""
        for _ in range(_ATTEMPTS):
            text = make()
            if unique and text in self.used_texts:
                continue
            if expect is not None and self.lexicon.read(text) != expect:
                continue
            if unique:
                self.used_texts.add(text)
            return text
        if required:
            raise self.fail(f"cannot phrase {what} so that the readback reads it as intended")
        return None

    def user(self, text: str, events: list[EventDraft] | None = None) -> TurnDraft:
        return TurnDraft("user", text, events=list(events or []))

    # ------------------------------------------------------------ event turns

    def _facts(self, events: list[EventDraft]) -> set[Fact]:
        return {e.fact for e in events if e.op in ("assert", "correct")}

    def t_assert(
        self,
        k: int,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        values: list[str],
        *,
        valid_from: dt.date | None = None,
        valid_until: dt.date | None = None,
    ) -> TurnDraft:
        events = [
            EventDraft("assert", entity, spec.id, scope, v, valid_from, valid_until) for v in values
        ]

        def make() -> str:
            text = ph.join_values([self.sf(spec, v, k) for v in values])
            body = self.clause(spec, entity, scope, text)
            if valid_from is not None:
                date = ph.date_phrase(valid_from, self.dates[k], self.rng)
                return ph.fill(self.rng.choice(ph.SCHEDULED), body, date=date)
            if valid_until is not None:
                date = ph.date_phrase(valid_until, self.dates[k], self.rng)
                return ph.fill(self.rng.choice(ph.TEMPORARY), body, date=date)
            return ph.fill(self.rng.choice(ph.ASSERT), body)

        text = self.attempt(make, self._facts(events), f"an assert of {spec.id}")
        return self.user(text, events)

    def t_change(
        self, k: int, spec: PredicateSpec, entity: str, scope: str, new: str, old: str, op: str
    ) -> TurnDraft:
        """A supersession (`assert`) or a correction (`correct`) naming the old value."""
        events = [EventDraft(op, entity, spec.id, scope, new)]
        templates = ph.SUPERSEDE if op == "assert" else ph.CORRECT

        def make() -> str:
            body = self.clause(spec, entity, scope, self.sf(spec, new, k))
            return ph.fill(self.rng.choice(templates), body, old=self.sf(spec, old, k))

        text = self.attempt(make, self._facts(events), f"a change of {spec.id}")
        return self.user(text, events)

    def t_window_pair(
        self,
        k: int,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        first: str,
        second: str,
        day: dt.date,
        *,
        temporary: bool,
    ) -> TurnDraft:
        """Two events in one turn: `first` now and `second` from `day` (scheduled change), or
        `first` until `day` and `second` from `day` (temporary value and its successor)."""
        events = [
            EventDraft("assert", entity, spec.id, scope, first, None, day if temporary else None),
            EventDraft("assert", entity, spec.id, scope, second, day, None),
        ]
        templates = ph.TEMPORARY_WITH_SUCCESSOR if temporary else ph.SCHEDULED_WITH_CURRENT

        def make() -> str:
            body = self.clause(spec, entity, scope, self.sf(spec, first, k))
            return ph.fill(
                self.rng.choice(templates),
                body,
                date=ph.date_phrase(day, self.dates[k], self.rng),
                new=self.sf(spec, second, k),
            )

        text = self.attempt(make, self._facts(events), f"a dated change of {spec.id}")
        return self.user(text, events)

    def t_retract(
        self, k: int, spec: PredicateSpec, entity: str, scope: str, value: str
    ) -> TurnDraft:
        events = [EventDraft("retract", entity, spec.id, scope, value)]

        def make() -> str:
            poss, where = self.poss(entity), self.where(spec, scope)
            shown = self.sf(spec, value, k)
            if spec.cardinality == "one":
                subject = spec.subject.format(poss=poss, where=where)
                complement = spec.complement.format(value=shown)
                return self.rng.choice(ph.RETRACT_ONE).format(
                    subject=subject, Subject=ph.capitalize(subject), complement=complement
                )
            drop = self.rng.choice(spec.drops).format(poss=poss, where=where, value=shown)
            return self.rng.choice(ph.RETRACT_MANY).format(d=drop, D=ph.capitalize(drop))

        text = self.attempt(make, set(), f"a retraction of {spec.id}")
        return self.user(text, events)

    def t_forget(self, k: int, spec: PredicateSpec, entity: str, scope: str) -> TurnDraft:
        events = [EventDraft("forget", entity, spec.id, scope)]

        def make() -> str:
            noun = spec.noun.format(where=self.where(spec, scope))
            return self.rng.choice(ph.FORGET).format(poss=self.poss(entity), noun=noun)

        text = self.attempt(make, set(), f"a forget of {spec.id}")
        return self.user(text, events)

    # ------------------------------------------------------------ questions and answers

    def ask(self, spec: PredicateSpec, entity: str, scope: str) -> str:
        template = self.rng.choice(spec.asks)
        return template.format(poss=self.poss(entity), where=self.where(spec, scope))

    def asks(self, spec: PredicateSpec, entity: str, scope: str) -> list[str]:
        """Every question `ask` can write about the slot (each template with each way `poss`
        names the entity), capitalized as a probe's text, in template order, without repeats.
        Draws nothing."""
        if entity == self.principal:
            owners = ["my"]
        else:
            owners = [f"{self.names[entity]}'s"]
            if self.alias[entity]:
                owners.append(f"{self.alias[entity]}'s")
        where = self.where(spec, scope)
        texts = [
            ph.capitalize(template.format(poss=poss, where=where))
            for template in spec.asks
            for poss in owners
        ]
        return list(dict.fromkeys(texts))

    def t_query(
        self,
        k: int,
        family: str,
        spec: PredicateSpec,
        entity: str,
        scope: str,
        gold: list[str],
        as_of: dt.date | None = None,
    ) -> Block:
        def make() -> str:
            q = self.ask(spec, entity, scope)
            if as_of is not None:
                date = ph.date_phrase(as_of, self.dates[k], self.rng)
                return self.rng.choice(ph.AS_OF).format(date=date, q=q)
            wrapper = self.rng.choice(ph.QUESTION["any"] + ph.QUESTION[family])
            return wrapper.format(q=q, Q=ph.capitalize(q))

        text = self.attempt(make, set(), f"a {family} question about {spec.id}")
        query = QueryDraft(family, entity, spec.id, scope, tuple(sorted(gold)), as_of)
        turn = TurnDraft("user", text, query=query)
        if gold:
            shown = ph.join_values([self.sf(spec, v, k) for v in sorted(gold)])
            answer = self.rng.choice(ph.ANSWER).format(v=shown)
        else:
            answer = self.rng.choice(ph.ABSTAIN)
        return [turn, TurnDraft("assistant", answer)]

    def t_tool(
        self, k: int, spec: PredicateSpec, entity: str, scope: str, value: str, source: str
    ) -> TurnDraft:
        claim = self.clause(spec, entity, scope, self.sf(spec, value, k), tool=True)
        text = self.rng.choice(ph.TOOL[source]).format(
            claim=claim, Claim=ph.capitalize(claim), sender=self.rng.choice(ph.SENDERS)
        )
        return TurnDraft("tool", text, source=source)

    # ------------------------------------------------------------ background and replies

    def t_two_facts(self, k: int) -> TurnDraft | None:
        """Two facts about one person in one turn (two global predicates of different types)."""
        candidates = [p for p in self.specs if p.scope == "global"]
        if len(candidates) < 2:
            return None
        a, b = self.rng.sample(candidates, 2)
        if a.type == b.type:
            return None
        e = self.pick_entity(0.5)
        if not (self.free(e, a.id, GLOBAL_SCOPE) and self.free(e, b.id, GLOBAL_SCOPE)):
            return None
        va, vb = self.values(a, 1)[0], self.values(b, 1)[0]
        events = [
            EventDraft("assert", e, a.id, GLOBAL_SCOPE, va),
            EventDraft("assert", e, b.id, GLOBAL_SCOPE, vb),
        ]

        def make() -> str:
            first = self.clause(a, e, GLOBAL_SCOPE, self.sf(a, va, k))
            second = self.clause(b, e, GLOBAL_SCOPE, self.sf(b, vb, k))
            return ph.fill(self.rng.choice(ph.ASSERT), f"{first}, and {second}")

        text = self.attempt(make, self._facts(events), "two facts", required=False)
        if text is None:
            return None
        self.take(e, a.id, GLOBAL_SCOPE)
        self.take(e, b.id, GLOBAL_SCOPE)
        self.uses.update([a.id, b.id])
        return self.user(text, events)

    def ack_text(self, turn: TurnDraft, k: int) -> str:
        stated = [e for e in turn.events if e.op in ("assert", "correct")]
        if stated and self.rng.random() < 0.5:
            spec = self.spec_by_id[stated[0].predicate]
            value = stated[0].value or ""
            return self.rng.choice(ph.ACK_VALUE).format(v=self.sf(spec, value, k))
        return self.rng.choice(ph.ACK)

    def take_chatter(self, pool: list[str]) -> str:
        """The next unused clean line of a shuffled chatter pool (consumed from the end)."""
        while pool:
            text = pool.pop()
            if text not in self.used_texts and self.clean(text):
                self.used_texts.add(text)
                return text
        raise self.fail("the chatter pool is exhausted; use a smaller --filler")
