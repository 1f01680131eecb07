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

ABSTAIN = "ABSTAIN"

# Patterns that mean "the memory does not hold an answer", matched anywhere in the answer
# as whole words, case-insensitively. `N_T` accepts "not", "n't" and "n’t" after an
# auxiliary ("don't", "do not", "isn’t", "cannot").
N_T = r"(?:\s+not|not|n['’]t)"
ABSTENTION_PATTERNS: tuple[str, ...] = (
    r"unknown",
    r"unsure",
    r"unclear",
    r"no\s+idea",
    rf"(?:do|does|did){N_T}\s+(?:know|have|say|mention|remember|recall)",
    rf"(?:can(?:\s+not|not)|can['’]t|could{N_T})\s+(?:find|tell|say|determine|recall|remember|answer|know|see)",
    rf"(?:is|are|was|were|has|have){N_T}(?:\s+been)?\s+(?:known|recorded|mentioned|specified"
    r"|provided|available|stored|saved|given)",
    r"not\s+(?:sure|known|recorded|mentioned|specified|provided|available|stored|saved"
    r"|on\s+record|in\s+(?:my\s+)?memory)",
    r"no\s+(?:record|records|information|info|data|details|mention|memory|memories|entry"
    r"|entries)",
    r"nothing",
    r"none",
    r"n/a",
    r"unable\s+to",
    r"(?:asked|told)\s+me\s+to\s+forget",
    r"forgotten|forgot",
    r"(?:has|have|was|were)\s+been\s+(?:removed|deleted|forgotten)",
)

# Whole answers (after trimming punctuation) that abstain although they are too short or
# too common to look for inside longer text ("No." to "Do I have any restrictions?").
ABSTENTION_ANSWERS: frozenset[str] = frozenset({"", "no", "nope", "-", "?", "not applicable"})

_ABSTENTION_RE = re.compile(
    r"(?<!\w)(?:" + "|".join(ABSTENTION_PATTERNS) + r")(?!\w)"
    # An answer opening with a bare "No," declines ("No, you asked me to forget that").
    r"|^\s*no\s*[,.!;:—-]",
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
