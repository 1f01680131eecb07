"""Requests to forget: the one reading of text as "forget this slot" (docs/method.md §8.7).

β reads facts, and a request to forget names no value, so β alone reads nothing from
"Please forget my dentist appointment." The `extract` producer (an ideal Mem0-style
extractor) needs to know that such a message asks it to delete a slot's records; this
module states when text is read that way, and `Lexicon.forget_requests` applies it.

The rule
--------
A sentence (text up to ``. ! ? ;`` or a newline; a period between two digits does not end
it) is a request to forget predicate p when

1. it holds a forget verb, ``forget``, ``delete``, ``erase`` or ``wipe``, as a whole word
   ("forgot", "forgotten", "deleted" report, they do not ask) and in the imperative: the
   verb opens its clause (clauses also end at commas, colons, dashes), or only words of
   `LEAD` come before it there ("please forget", "actually, delete", "could you please
   wipe"). "I can delete them now", "don't forget" and "never forget" are not requests;
2. one of p's keywords occurs in the same sentence.

The slot's entity and scope are read as β reads them, from the whole text: each entity
named, else the principal; each scope named, else p's `default_scope`, else `global`.
"""

from __future__ import annotations

import re

FORGET_VERB = re.compile(r"(?<!\w)(?:forget|delete|erase|wipe)(?!\w)", re.IGNORECASE)
"""A forget verb as a whole word (the base form: imperative or infinitive)."""

LEAD = frozenset(
    {"please", "kindly", "actually", "just", "so", "and", "but", "then", "now", "also"}
    | {"ok", "okay"}
    | {"can", "could", "would", "will", "you"}
)
"""Words that may precede an imperative forget verb in its clause ("so please forget",
"could you delete"). Anything else before it ("I can delete", "don't forget") makes the
verb a statement or a reminder, not a request."""

SENTENCE_END = re.compile(r"[!?;\n\r]|(?<!\d)\.|\.(?!\d)")
"""Sentence boundaries: a period between two digits ("9.40") continues the sentence."""

CLAUSE_START = re.compile(r"(?:[,:—–]|\s-\s)(?!\d)")
"""Clause boundaries inside a sentence (a comma or colon before a digit continues a
number or a time)."""

_WORD = re.compile(r"[\w'’]+")


def sentences(text: str) -> list[str]:
    bounds = [m.start() for m in SENTENCE_END.finditer(text)] + [len(text)]
    out, start = [], 0
    for end in bounds:
        out.append(text[start:end])
        start = end + 1
    return out


def is_request(sentence: str) -> bool:
    """Whether the sentence holds an imperative forget verb (rule 1)."""
    for verb in FORGET_VERB.finditer(sentence):
        before = sentence[: verb.start()]
        starts = [m.end() for m in CLAUSE_START.finditer(before)]
        lead = _WORD.findall(before[starts[-1] if starts else 0 :])
        if all(word.lower() in LEAD for word in lead):
            return True
    return False


def request_sentences(text: str) -> list[str]:
    """The sentences of `text` that ask to forget something."""
    return [s for s in sentences(text) if is_request(s)]
