"""β over text: the facts a plain-text memory record states, read with the trajectory's lexicon.

docs/method.md §2: a predicate matches when one of its keywords occurs; the entity is each entity
whose name or alias occurs, else the principal; the scope is each scope whose alias occurs,
else the predicate's `default_scope`, else `global`; every domain value that occurs yields a
fact, except an occurrence that is historical (`place.lexicon.cues`) or, for β only, stands
in a non-assertive clause (`place.lexicon.assertion`: hypothetical, reported, negated, or
about a person the schema does not declare). `Lexicon.values_in`, the reading of answers
(Ω) and of deletion residue, skips historical occurrences only: Ω is out of the
non-assertive rule's scope by decision.

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

from place.lexicon import assertion
from place.lexicon.assertion import Hit, Kind
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
    nonassertive: Kind | None = None
    """The kind of non-assertive clause the occurrence stands in (`place.lexicon.assertion`),
    else None. β skips such an occurrence; `values_in` (Ω) does not."""

    @property
    def asserted(self) -> bool:
        """Whether β reads this occurrence: neither historical nor non-assertive."""
        return not self.historical and self.nonassertive is None


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
        self._known_words = frozenset(
            word.lower()
            for phrase in _declared_phrases(schema)
            for word in re.findall(r"\w+", phrase)
        )
        self._hits_cached = lru_cache(maxsize=_CACHE_SIZE)(assertion.find_hits)
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
        self._hits_cached.cache_clear()

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
        is needed: this is the reading of an answer to a question about the predicate.
        Non-assertive occurrences count here (unlike in `read`): see the module docstring."""
        return {m.value for m in self.matches(text, predicate) if not m.historical}

    def matches(self, text: str, predicate: str) -> tuple[ValueMatch, ...]:
        """Every counted occurrence of a value of `predicate`, in text order, each marked
        historical and/or non-assertive."""
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
        values = {m.value for m in found if m.asserted}
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
        if not kept:
            return ()
        boundaries = clause_boundaries(text, spans)
        covering = self._nonassertive_regions(text, predicate, spans)
        result = []
        for start, end, value in kept:
            span = (start, end)
            clause = clause_of(span, boundaries, len(text))
            others = [o for o in spans if o != span]
            historical = is_historical(text, span, clause, others)
            kind = assertion.kind_of(span, covering)
            result.append(ValueMatch(value, start, end, historical, kind))
        return tuple(result)

    def _nonassertive_regions(
        self, text: str, predicate: str, values: list[Span]
    ) -> list[assertion.Region]:
        """The regions of `text` that non-assertive cues cover for `predicate`
        (`place.lexicon.assertion`); `values` are the predicate's matched values."""
        hits = self._hits_cached(text)
        if not hits:
            return []
        keyword = self._keywords[predicate]
        own = values + ([m.span() for m in keyword.finditer(text)] if keyword else [])
        declared: list[Span] | None = None

        def counts(hit: Hit) -> bool:
            nonlocal declared
            cue = (hit.start, hit.end)
            if _overlaps_any(cue, own):
                return False  # the cue's words belong to a value or keyword being read
            if assertion.CUES[hit.cue].kind != "undeclared":
                return True
            if declared is None:
                declared = _spans(self._entities, text) + _spans(self._scopes, text)
            if _overlaps_any(cue, declared):
                return False  # "my brother" as a declared alias
            if hit.name is not None:
                return text[hit.name[0] : hit.name[1]].lower() not in self._known_words
            # "my friend Theo": a relation phrase in apposition to a declared entity
            rest = text[hit.end :]
            gap = len(rest) - len(rest.lstrip())
            return not any(s == hit.end + gap for s, _e in _spans(self._entities, text))

        return assertion.regions(text, hits, values, counts)


def _drop_contained(raw: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Drop occurrences lying inside a strictly longer occurrence of another value."""
    kept = [
        (s, e, v)
        for s, e, v in raw
        if not any(v2 != v and s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, v2 in raw)
    ]
    return sorted(kept)


def _declared_phrases(schema: Schema) -> Iterable[str]:
    """Every surface the schema declares: entity names and aliases, scope aliases, keywords,
    enum values and value aliases."""
    for entity in schema.entities.values():
        yield from entity.surface_forms
    for scope in schema.scopes.values():
        yield from scope.aliases
    for pred in schema.predicates.values():
        yield from pred.keywords
        for value, aliases in pred.values.items():
            if pred.type == "enum":
                yield value
            yield from aliases


def _overlaps_any(span: Span, others: Iterable[Span]) -> bool:
    return any(s < span[1] and span[0] < e for s, e in others)


def _spans(patterns: tuple[tuple[str, re.Pattern[str]], ...], text: str) -> list[Span]:
    return [m.span() for _key, pattern in patterns for m in pattern.finditer(text)]


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
