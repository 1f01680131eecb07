"""Historical cues: the one place that decides when a value in text is no longer current.

β (and Ω, which uses the same reading) must not turn "I'm at Hotel Lumen instead of
Avenida" into a fact about Avenida. docs/method.md §2 skips a value that a historical cue
introduces within its clause; this module makes that rule exact.

The rule
--------
A value occurrence is *historical* when, within its clause,

1. a preceding cue from `CUES` ends at most `max_gap` words before the occurrence (not
   counting determiners such as "the", "a", "my"), and no other value occurrence of the
   same predicate lies between the cue and it (so "changed from 7:15 to 9:40" marks only
   7:15: the cue governs the value it introduces); or
2. it is enclosed by a negation before it and "anymore" / "any more" / "any longer" after
   it ("I'm not vegetarian anymore").

Clauses end at ``. ; : ! ?``, commas, dashes, newlines and the word "but". A period, comma
or colon between two digits ("9.40", "1,200", "9:40") and any punctuation inside a
matched value ("Mar. 14", "9 a.m.") do not end a clause. A value that occurs several times
counts as current when at least one occurrence is not historical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Cue:
    pattern: str
    """Regex, matched case-insensitively as whole words."""
    max_gap: int
    """Words allowed between the end of the cue and the value ("instead of the old X": 2)."""
    reason: str
    """Why this phrase marks the value after it as not current."""


# The order does not matter; every cue is tried. Gaps are small on purpose: a cue far
# from a value in the same clause is more often about something else.
CUES: tuple[Cue, ...] = (
    Cue(r"instead\s+of", 2, "names the alternative not chosen: 'Lumen instead of Avenida'"),
    Cue(r"rather\s+than", 2, "names the alternative not chosen: 'Lumen rather than Avenida'"),
    Cue(r"no\s+longer", 3, "the state ended: 'I no longer eat vegetarian food'"),
    Cue(r"previously", 3, "past state: 'previously it was 7:15'"),
    Cue(r"used\s+to", 3, "past habit or state: 'I used to stay at the Marriott'"),
    Cue(r"formerly", 2, "past state: 'formerly Hotel Avenida'"),
    Cue(r"originally", 3, "superseded plan: 'originally at 7:15'"),
    Cue(
        r"(?:changed|moved|switched|updated|rescheduled|shifted|pushed|brought\s+forward)"
        r"(?:\s+\S+){0,3}?\s+from",
        2,
        "names the old value of a change: 'was changed from 7:15 to 9:40', 'moved my flight from'",
    ),
    Cue(r"cancell?ed", 2, "the thing named is off: 'I cancelled the Avenida booking'"),
    Cue(r"former|old", 1, "names a superseded value: 'the old 7:15 flight'"),
    Cue(
        r"not|no|never|cannot|\w+n['’]t",
        1,
        "negates the value right after it: 'it's Hotel Lumen, not Avenida', 'isn't at 7:15'",
    ),
)

# Rule 2: "not … anymore" encloses the value within one clause.
NEGATION = r"not|no|never|\w+n['’]t"
ENDED = r"any\s*more|any\s+longer"

# A clause boundary: . , : only when not between two digits (decimals, times, thousands).
CLAUSE_BOUNDARY = re.compile(
    r"[;!?\n\r—–]|\s-\s|(?<!\w)but(?!\w)|(?<!\d)[.,:]|[.,:](?!\d)",
    re.IGNORECASE,
)

_WORDS = re.compile(r"\S+")
# Determiners carry no meaning of their own between a cue and its value, so they do not
# count towards the gap: "instead of the Avenida", "don't have a nut allergy".
_NOT_COUNTED = frozenset({"a", "an", "the", "any", "my", "your", "his", "her", "their", "our"})


def _compile_cue(cue: Cue) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{cue.pattern})(?!\w)", re.IGNORECASE)


COMPILED_CUES: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (_compile_cue(cue), cue.max_gap) for cue in CUES
)
NEGATION_RE = re.compile(rf"(?<!\w)(?:{NEGATION})(?!\w)", re.IGNORECASE)
ENDED_RE = re.compile(rf"(?<!\w)(?:{ENDED})(?!\w)", re.IGNORECASE)

Span = tuple[int, int]


def clause_boundaries(text: str, protected: list[Span]) -> list[Span]:
    """Clause boundaries in `text` in order, skipping those inside a protected span (a
    matched value such as "Mar. 14" whose punctuation does not end a clause)."""
    return [
        m.span()
        for m in CLAUSE_BOUNDARY.finditer(text)
        if not any(s <= m.start() < e for s, e in protected)
    ]


def clause_of(span: Span, boundaries: list[Span], length: int) -> Span:
    """The clause (start, end) containing `span`, given the ordered boundaries."""
    start, end = 0, length
    for b_start, b_end in boundaries:
        if b_end <= span[0]:
            start = b_end
        elif b_start >= span[1]:
            end = b_start
            break
    return start, end


def is_historical(text: str, span: Span, clause: Span, others: list[Span]) -> bool:
    """Whether the value occurrence at `span` is historical (see the module rule).

    `others` are the spans of the predicate's other value occurrences: a cue only governs
    the first value after it.
    """
    return _follows_cue(text, span, clause, others) or _enclosed(text, span, clause)


def _follows_cue(text: str, span: Span, clause: Span, others: list[Span]) -> bool:
    before = (clause[0], span[0])
    for pattern, max_gap in COMPILED_CUES:
        for m in pattern.finditer(text, *before):
            if _inside_any(m.span(), others):
                continue
            if any(m.end() <= s and e <= span[0] for s, e in others):
                continue
            if _gap(text, m.end(), span[0]) <= max_gap:
                return True
    return False


def _gap(text: str, start: int, end: int) -> int:
    words = _WORDS.findall(text, start, end)
    return sum(1 for w in words if w.lower() not in _NOT_COUNTED)


def _enclosed(text: str, span: Span, clause: Span) -> bool:
    return bool(
        NEGATION_RE.search(text, clause[0], span[0]) and ENDED_RE.search(text, span[1], clause[1])
    )


def _inside_any(span: Span, others: list[Span]) -> bool:
    return any(s <= span[0] and span[1] <= e for s, e in others)
