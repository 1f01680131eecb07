"""β over text: the facts a plain-text memory record states, read with the trajectory's lexicon.

docs/method.md §2: a predicate matches when one of its keywords occurs; the entity is each entity
whose name or alias occurs, else the principal; the scope is each scope whose alias occurs,
else the predicate's `default_scope`, else `global`; every domain value that occurs yields a
fact, except an occurrence that is historical (`place.lexicon.cues`).

Choices the spec leaves open, made here:

- Values are found by span matching only (`place.lexicon.surface`), so β can never produce
  a value that is not written in the record.
- When one value's match lies inside a longer match of another value of the same predicate
  ("Lumen" inside "Lumen Spa"), only the longer one counts: the text names that value.
- A scope alias or entity name that is itself part of a matched value of the predicate
  being read (the city value "Lisbon" vs the scope alias "Lisbon") names the value, not
  the scope or entity, and is ignored for that predicate.
- Scope and entity mentions are read from the whole record, not per clause: a record that
  names two scopes yields each value in both (β is deliberately coarse; records written by
  the certifier carry metadata and are never read this way).

A `Lexicon` compiles every regex once and memoises per (text, predicate): the same stored
records are read back at every checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

from place.lexicon.cues import Span, clause_boundaries, clause_of, is_historical
from place.lexicon.forget import request_sentences
from place.lexicon.surface import LEFT, RIGHT, literal, value_pattern
from place.trajectory.model import GLOBAL_SCOPE, Fact, Predicate, Schema, Slot

_CACHE_SIZE = 1 << 16


@dataclass(frozen=True)
class ValueMatch:
    """One occurrence of a canonical value in a text."""

    value: str
    start: int
    end: int
    historical: bool


def _phrases_pattern(phrases: Iterable[str]) -> re.Pattern[str] | None:
    forms = sorted({literal(p) for p in phrases if p.strip()}, key=len, reverse=True)
    if not forms:
        return None
    return re.compile(LEFT + "(?:" + "|".join(forms) + ")" + RIGHT, re.IGNORECASE)


class Lexicon:
    """The trajectory's lexicon, compiled once: β over text and value extraction for Ω."""

    def __init__(self, schema: Schema, principal: str) -> None:
        if principal not in schema.entities:
            raise ValueError(f"principal {principal!r} is not an entity of the schema")
        self.schema = schema
        self.principal = principal
        self._values: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
            pid: tuple(
                (value, re.compile(value_pattern(pred.type, value, aliases), re.IGNORECASE))
                for value, aliases in pred.values.items()
            )
            for pid, pred in schema.predicates.items()
        }
        self._keywords = {
            pid: _phrases_pattern(pred.keywords) for pid, pred in schema.predicates.items()
        }
        self._entities = _named_patterns(
            (eid, entity.surface_forms) for eid, entity in schema.entities.items()
        )
        self._scopes = _named_patterns((sid, scope.aliases) for sid, scope in schema.scopes.items())
        self._read_cached = lru_cache(maxsize=_CACHE_SIZE)(self._read_uncached)
        self._matches_cached = lru_cache(maxsize=_CACHE_SIZE)(self._matches_uncached)

    # -- public API ---------------------------------------------------------------------

    def read(self, text: str, predicate: str | None = None) -> set[Fact]:
        """β for one plain-text record: every fact it states (all predicates, or one)."""
        pids: Iterable[str] = (
            self.schema.predicates if predicate is None else (self._check(predicate),)
        )
        facts: set[Fact] = set()
        for pid in pids:
            facts |= self._read_cached(text, pid)
        return facts

    def read_as(self, text: str, speaker: str | None, predicate: str | None = None) -> set[Fact]:
        """β for a plain record said by `speaker` (docs/method.md §11): a text
        that names no entity is about its speaker, not the principal. With the principal
        as speaker (or none) this is `read`."""
        facts = self.read(text, predicate)
        if speaker is None or speaker == self.principal:
            return facts
        if _found(self._entities, text, []):
            return facts  # someone is named: the reading already says whose fact it is
        return {f._replace(entity=speaker) if f.entity == self.principal else f for f in facts}

    def clear_memo(self) -> None:
        """Forget memoized readings (for cost measurements that must not depend on hits)."""
        self._read_cached.cache_clear()
        self._matches_cached.cache_clear()

    def forget_requests(self, text: str) -> set[Slot]:
        """The slots `text` asks to forget (`place.lexicon.forget`): for each predicate whose
        keyword shares a sentence with a forget verb that is not negated, every entity named
        (else the principal) × every scope named (else the default scope, else global)."""
        sentences = request_sentences(text)
        slots: set[Slot] = set()
        for pid in self.schema.predicates:
            pattern = self._keywords[pid]
            if pattern is None or not any(pattern.search(s) for s in sentences):
                continue
            for entity, scope in product(self.entities_in(text), self.scopes_in(text, pid)):
                slots.add(Slot(entity, pid, scope))
        return slots

    def values_in(self, text: str, predicate: str) -> set[str]:
        """Canonical values of `predicate` written in `text` and not historical. No keyword
        is needed: this is the reading of an answer to a question about the predicate."""
        return {m.value for m in self.matches(text, predicate) if not m.historical}

    def matches(self, text: str, predicate: str) -> tuple[ValueMatch, ...]:
        """Every counted occurrence of a value of `predicate`, in text order."""
        return self._matches_cached(text, self._check(predicate))

    def mentions(self, text: str, predicate: str) -> bool:
        """Whether one of the predicate's keywords occurs in `text`."""
        pattern = self._keywords[self._check(predicate)]
        return pattern is not None and pattern.search(text) is not None

    def entities_in(self, text: str, ignore: Iterable[Span] = ()) -> list[str]:
        """Entities named in `text` (outside `ignore` spans), else the principal alone."""
        named = _found(self._entities, text, list(ignore))
        return named or [self.principal]

    def scopes_in(self, text: str, predicate: str, ignore: Iterable[Span] = ()) -> list[str]:
        """Scopes named in `text` (outside `ignore`), else the predicate's default scope,
        else `global`."""
        named = _found(self._scopes, text, list(ignore))
        if named:
            return named
        return [self._predicate(predicate).default_scope or GLOBAL_SCOPE]

    # -- internals ----------------------------------------------------------------------

    def _check(self, predicate: str) -> str:
        if predicate not in self.schema.predicates:
            raise KeyError(f"unknown predicate {predicate!r}")
        return predicate

    def _predicate(self, predicate: str) -> Predicate:
        return self.schema.predicates[self._check(predicate)]

    def _read_uncached(self, text: str, predicate: str) -> frozenset[Fact]:
        if not self.mentions(text, predicate):
            return frozenset()
        found = self.matches(text, predicate)
        values = {m.value for m in found if not m.historical}
        if not values:
            return frozenset()
        spans = [(m.start, m.end) for m in found]
        entities = self.entities_in(text, spans)
        scopes = self.scopes_in(text, predicate, spans)
        return frozenset(
            Fact(entity, predicate, value, scope)
            for entity, value, scope in product(entities, sorted(values), scopes)
        )

    def _matches_uncached(self, text: str, predicate: str) -> tuple[ValueMatch, ...]:
        raw = [
            (m.start(), m.end(), value)
            for value, pattern in self._values[predicate]
            for m in pattern.finditer(text)
        ]
        kept = _drop_contained(raw)
        spans = [(s, e) for s, e, _ in kept]
        boundaries = clause_boundaries(text, spans)
        result = []
        for start, end, value in kept:
            span = (start, end)
            clause = clause_of(span, boundaries, len(text))
            others = [o for o in spans if o != span]
            result.append(ValueMatch(value, start, end, is_historical(text, span, clause, others)))
        return tuple(result)


def _drop_contained(raw: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Drop occurrences lying inside a strictly longer occurrence of another value."""
    kept = [
        (s, e, v)
        for s, e, v in raw
        if not any(v2 != v and s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, v2 in raw)
    ]
    return sorted(kept)


def _named_patterns(
    items: Iterable[tuple[str, Iterable[str]]],
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    compiled = ((key, _phrases_pattern(phrases)) for key, phrases in items)
    return tuple((key, pattern) for key, pattern in compiled if pattern is not None)


def _found(
    patterns: tuple[tuple[str, re.Pattern[str]], ...], text: str, ignore: list[Span]
) -> list[str]:
    """Keys whose pattern occurs in `text` at least once outside the `ignore` spans."""
    return [
        key
        for key, pattern in patterns
        if any(
            not any(s <= m.start() and m.end() <= e for s, e in ignore)
            for m in pattern.finditer(text)
        )
    ]
