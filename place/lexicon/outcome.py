"""Ω: the semantic outcome of an answer, and the F1 that scores it (docs/method.md §4).

Ω(answer) is the set of canonical values of the queried predicate found in the answer, read
with the same lexicon and historical-cue rule as β. When the answer names none, it is
{ABSTAIN} if the answer abstains, else the empty set (an answer that is neither a value nor
an abstention is simply wrong).

An answer abstains when it *says that the answer is not known or not recorded*. The phrases
that say so are the one list below (ABSTENTION_PHRASES), each with what it covers. A bare
negation or a word such as "no", "none", "nothing" or "forgot" on its own is not an
abstention: "No, Theo is still booked on a flight to Oslo" asserts something, and its Ω is
the empty set. An empty answer says nothing, so it is not an abstention either
(docs/decisions.md, "Ω").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set

from place.lexicon.readback import Lexicon

ABSTAIN = "ABSTAIN"

# `N_T` accepts "not", "n't" and "n’t" after an auxiliary ("don't", "do not", "isn’t").
N_T = r"(?:\s+not|not|n['’]t)"
_I = r"(?:i|we)"
_INFO = (
    r"(?:information|info|record|records|data|details|answer|memory|memories|entry|entries"
    r"|note|notes|mention)"
)
_MEMORY = r"(?:(?:my|the|your)\s+)?(?:memory|memories|records?|notes|stored\s+items?)"

ABSTENTION_PHRASES: tuple[tuple[str, str], ...] = (
    (r"unknown", "the instructed abstention word: 'unknown', 'Unknown.'"),
    (r"n/a|not\s+applicable", "'N/A', 'not applicable'"),
    (r"no\s+idea", "'no idea'"),
    (r"(?:not|un)\s*sure|uncertain", "'I'm not sure', 'unsure', 'uncertain'"),
    (r"unclear", "'it is unclear'"),
    (
        rf"{_I}(?:['’]m|\s+am)?\s+(?:do|does|did){N_T}\s+(?:know|remember|recall)",
        "first person does not know: 'I don't know', 'I do not remember'",
    ),
    (
        rf"{_I}\s+(?:do|did){N_T}\s+have\s+(?:any\s+|that\s+|this\s+|the\s+|enough\s+|such\s+)?"
        + _INFO,
        "first person lacks the information: 'I don't have that information'",
    ),
    (
        rf"{_I}\s+have\s+no\s+(?:\w+\s+)?" + _INFO,
        "'I have no information about that', 'I have no stored record'",
    ),
    (
        r"(?:can(?:\s+not|not)|can['’]t|could\s*n(?:o|['’])t|unable\s+to)\s+"
        r"(?:find|tell|say|determine|recall|remember|answer|know|see|locate)",
        "cannot find or tell: 'I can't find that', 'unable to determine'",
    ),
    (
        rf"(?:is|are|was|were|has|have){N_T}(?:\s+been)?\s+"
        r"(?:known|recorded|mentioned|specified|stored|saved|noted)",
        "not recorded: 'that isn't recorded', 'it hasn't been mentioned'",
    ),
    (
        r"not\s+(?:known|recorded|mentioned|specified|stored|saved|on\s+record"
        rf"|in\s+{_MEMORY}|found\s+in\s+{_MEMORY})",
        "not recorded: 'not mentioned', 'not in my memory', 'not on record'",
    ),
    (
        r"no\s+(?:such\s+|stored\s+|relevant\s+)?(?:record|records|information|info|data|details"
        r"|mention|memory|memories|entry|entries)",
        "nothing recorded: 'there is no record of that', 'no information'",
    ),
    (
        rf"nothing\s+(?:is\s+|was\s+)?(?:recorded|stored|saved|mentioned|noted|on\s+record"
        rf"|in\s+{_MEMORY}|about\s+(?:that|this|it))",
        "nothing recorded: 'nothing is recorded', 'nothing in memory' (not a bare 'nothing')",
    ),
    (
        rf"{_MEMORY}\s+(?:do|does|did){N_T}\s+(?:say|mention|contain|include|show|hold|have"
        r"|specify|tell)",
        "the memory lacks it: 'the memory doesn't mention it'",
    ),
)
"""(regular expression, what it covers) for every phrase that says the answer is not known
or not recorded; matched as whole words, case-insensitively, anywhere in the answer."""

_ABSTENTION_RE = re.compile(
    r"(?<!\w)(?:" + "|".join(f"(?:{p})" for p, _ in ABSTENTION_PHRASES) + r")(?!\w)",
    re.IGNORECASE,
)


def abstains(answer: str) -> bool:
    """Whether the answer says that the answer is not known or not recorded."""
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
