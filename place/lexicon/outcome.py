"""Ω: the semantic outcome of an answer, and the F1 that scores it (method.md §4).

Ω(answer) is the set of canonical values of the queried predicate found in the answer, read
with the same lexicon and historical-cue rule as β. When the answer names none, it is
{ABSTAIN} if the answer abstains, else the empty set (an answer that is neither a value nor
an abstention is simply wrong).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set

from place.lexicon.readback import Lexicon
from place.lexicon.surface import literal

ABSTAIN = "ABSTAIN"

# Phrases that mean "the memory does not hold an answer", matched anywhere in the answer as
# whole words, case-insensitively, straight or curly apostrophes alike.
ABSTENTION_PHRASES: tuple[str, ...] = (
    "unknown",
    "I don't know",
    "I do not know",
    "don't know",
    "do not know",
    "not known",
    "no idea",
    "not sure",
    "unsure",
    "unclear",
    "no record",
    "no records",
    "not recorded",
    "don't have",
    "do not have",
    "doesn't have",
    "does not have",
    "no information",
    "no info",
    "no data",
    "no details",
    "not mentioned",
    "no mention",
    "not specified",
    "not provided",
    "not available",
    "not stored",
    "isn't stored",
    "can't find",
    "cannot find",
    "can not find",
    "couldn't find",
    "could not find",
    "can't tell",
    "cannot tell",
    "cannot determine",
    "can't determine",
    "unable to",
    "no memory of",
    "no memories",
    "not in memory",
    "not in my memory",
    "none",
    "nothing",
    "n/a",
)

# Whole answers (after trimming punctuation) that abstain although they are too short or
# too common to look for inside longer text ("No." to "Do I have any restrictions?").
ABSTENTION_ANSWERS: frozenset[str] = frozenset({"", "no", "nope", "-", "?", "not applicable"})

_ABSTENTION_RE = re.compile(
    r"(?<!\w)(?:"
    + "|".join(sorted((literal(p) for p in ABSTENTION_PHRASES), key=len, reverse=True))
    + r")(?!\w)",
    re.IGNORECASE,
)
_TRIM = " \t\r\n.,;:!?\"'`*()[]"


def abstains(answer: str) -> bool:
    """Whether the answer says the memory holds no answer."""
    if answer.strip(_TRIM).lower() in ABSTENTION_ANSWERS:
        return True
    return _ABSTENTION_RE.search(answer) is not None


def outcome(lexicon: Lexicon, answer_text: str, predicate: str) -> frozenset[str]:
    """Ω(answer) for a question about `predicate`."""
    values = lexicon.values_in(answer_text, predicate)
    if values:
        return frozenset(values)
    if abstains(answer_text):
        return frozenset({ABSTAIN})
    return frozenset()


def gold_outcome(gold_values: Iterable[str]) -> frozenset[str]:
    """A query's gold answer as an outcome: `[]` means the correct answer is to abstain."""
    gold = frozenset(gold_values)
    return gold or frozenset({ABSTAIN})


def f1(predicted: Set[object], gold: Set[object]) -> float:
    """Set F1. Two empty sets agree perfectly (1.0); one empty set scores 0.0."""
    if not predicted and not gold:
        return 1.0
    overlap = len(predicted & gold)
    if overlap == 0:
        return 0.0
    return 2 * overlap / (len(predicted) + len(gold))
