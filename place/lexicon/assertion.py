"""Non-assertive clauses: the one place that decides when a value in text is not asserted.

β reads facts the speaker states. "If I ever moved my flight to 9:40", "my colleague thinks
my number is 555", "it's not true that my flight is at 9:40" and "my neighbour's flight
leaves at 10:05" all write a value without stating it as a current fact of a declared
person. This module makes the rule exact; `place.lexicon.readback` applies it to β only
(`Lexicon.read`, `read_as`), never to `Lexicon.values_in` (Ω and deletion-residue checks,
which keep reading every value that is not historical).

The rule
--------
A value occurrence is *non-assertive*, of the cue's kind, when a cue from `CUES` ends
before the occurrence starts and the occurrence ends within the cue's reach:

- reach ``sentence``: from the cue to the end of its sentence, *across commas* (so the
  consequent of "If I moved it, my flight would be at 9:40" and the complement of "according
  to my sister, ..." are covered). The sentence stops at ``. ! ? ; :`` (a period or colon
  between two digits, or inside a matched value such as "9 a.m.", does not count), a
  newline, a dash and the word "but": "If it rains we stay in, but my flight is at 9:40"
  reads 9:40.
- reach ``clause``: from the cue to the end of its clause (`place.lexicon.cues`: commas
  also end it), for negations and undeclared persons, whose reach is local.

A value *before* a cue is never covered: "my flight is at 9:40 if you need it", "..., in
case it comes up" and "..., according to the latest note" read normally. The only cue that
looks at the rest of its sentence is `would`/`could`/`might`/"'d", which counts only when
its sentence (as bounded above) also holds a conditional word (`CONDITIONAL`): "My flight
would be at 9:40 if I moved it" is hypothetical, "I'd like you to note my flight is at
9:40" is not.

A cue does not count when it overlaps a matched value or a keyword of the predicate being
read (a value or keyword that happens to contain the cue's words: "my boss is Maya" for a
predicate whose keyword is "boss").

Kinds
-----
``hypothetical``: a condition or wish ("if", "what if", "suppose", "imagine", "I wish",
"in case", "hypothetically", and a conditional sentence's "would").

``reported``: another person's belief or speech: a third-person subject (a pronoun such as
"he", "she", "they", "people", "everyone"; a relation phrase such as "my colleague"; or a
capitalised name, declared or not) directly followed by a verb of belief or speech
("thinks", "reckons", "says", "said", "claims", "told me", ...), "according to ..." (not
"according to me / my notes / my records ..."), and "I heard" / "I've heard". First and
second person ("I think", "I said", "you said") are not reported.

``negated``: "not", "never", "cannot" or an "n't" form anywhere earlier in the value's
clause ("my flight isn't leaving at 9:40", "I never said my hotel was Casa Azul"); the
historical cue of `place.lexicon.cues` already covers a negation one word before the value.
"not only", "don't forget", "don't worry" and "can't wait" are not negations of what follows.
Bare "no" is not a cue here (it stays a historical cue with gap 1).

``undeclared``: a person the schema does not declare, so that β's "else the principal"
default must not apply: a relation phrase ("my neighbour", "a friend of mine", "his
cousin", ...; `RELATIONS`) or a possessive of a capitalised name ("Marta's") earlier in
the value's clause. The relation phrase does not count when it overlaps a declared entity's
name or alias ("my brother" as Jonas's alias), a scope alias, or is directly followed by
an entity's name ("my friend Theo"). The possessive counts only for a word written with a
capital followed by lower-case letters (so all-caps or all-lower-case text never triggers
it) that is neither in `ORDINARY` (sentence-initial words such as "It's", "Today's",
weekday and month names) nor a word of any declared surface form (an entity's name or
alias, a scope alias, a keyword, an enum value or alias of any predicate). A capitalised
name in subject position without a possessive ("Marta leaves at 10:05") is not caught;
followed by a verb of speech it is ``reported``.

When several cues cover an occurrence its kind is the first in `KINDS` order (the order
of `CUES`). An occurrence can be both historical and non-assertive; β skips either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from place.lexicon.cues import Span, clause_boundaries

Kind = Literal["hypothetical", "reported", "negated", "undeclared"]
Reach = Literal["sentence", "clause"]

KINDS: tuple[Kind, ...] = ("hypothetical", "reported", "negated", "undeclared")


@dataclass(frozen=True)
class AssertionCue:
    pattern: str
    """Regex, matched case-insensitively as whole words. A group ``name`` must be a
    capitalised name (see the module rule); the rest of the match is the cue proper."""
    kind: Kind
    reach: Reach
    """How far after the cue values are covered (see the module rule)."""
    reason: str
    """Why this phrase marks what follows it as not asserted."""
    requires: str | None = None
    """A regex that must also occur in the cue's sentence (as whole words) for it to count."""


RELATIONS = (
    r"neighbou?rs?|colleagues?|co-?workers?|friends?|cousins?|boss|aunt|uncle|niece|nephew"
    r"|grand(?:ma|pa|mother|father|parents?)|granny|mum|mom|mother|dad|father|brother|sister"
    r"|wife|husband|partner|son|daughter|flatmate|roommate|housemate|landlord|landlady"
    r"|girlfriend|boyfriend|fianc[eé]e?|parents|kids|children|in-laws|(?:mother|father|sister"
    r"|brother)-in-law|step(?:mother|father|sister|brother|mum|dad)|manager|teammate|classmate"
    r"|hairdresser|barber"
)

_SUBJECT = (
    rf"(?:he|she|they|people|everyone|everybody|someone|somebody|others"
    rf"|(?:my|our|his|her|their|a)\s+(?:{RELATIONS})|(?P<name>\w+))"
)
_SPEECH = (
    r"(?:thinks?|thought|reckons?|reckoned|believes?|believed|says|say|said|claims?|claimed"
    r"|insists?|insisted|swears?|swore|suspects?|suspected|assumes?|assumed|guess(?:es|ed)?"
    r"|figures|mentioned|tells?\s+(?:me|us)|told\s+(?:me|us)|wrote|texted|is\s+convinced)"
)
_ADVERB = r"(?:\s+(?:also|still|really|apparently|always|even))?"

CONDITIONAL = r"if|suppos(?:e|ing)|imagine|in\s+case|hypothetically|unless|wish(?:e[sd])?"

CUES: tuple[AssertionCue, ...] = (
    # hypothetical
    AssertionCue(r"if", "hypothetical", "sentence", "a condition: 'if I ever moved my flight'"),
    AssertionCue(
        r"suppos(?:e|ing)", "hypothetical", "sentence", "a supposition: 'suppose my plan were'"
    ),
    AssertionCue(r"imagine", "hypothetical", "sentence", "a supposition: 'imagine it were 9:40'"),
    AssertionCue(r"wish(?:e[sd])?", "hypothetical", "sentence", "a wish: 'I wish it were at 2 pm'"),
    AssertionCue(r"in\s+case", "hypothetical", "sentence", "a condition: 'in case it's 9:40'"),
    AssertionCue(r"hypothetically", "hypothetical", "sentence", "says so: 'hypothetically, 9:40'"),
    AssertionCue(
        r"would|could|might|\w+['’]d",
        "hypothetical",
        "sentence",
        "a conditional's consequent: 'if I moved it, it would be 9:40'",
        requires=CONDITIONAL,
    ),
    # reported
    AssertionCue(
        rf"{_SUBJECT}{_ADVERB}\s+{_SPEECH}",
        "reported",
        "sentence",
        "another person's belief or speech: 'my colleague thinks', 'Jonas reckons', 'she told me'",
    ),
    AssertionCue(
        r"according\s+to(?!\s+(?:me|my\s+(?:own\s+)?(?:notes|records|calendar|diary|booking"
        r"|confirmation|ticket|itinerary))(?!\w))",
        "reported",
        "sentence",
        "someone else's account: 'according to my sister'",
    ),
    AssertionCue(
        r"(?:I|we)(?:\s+have|['’]ve)?\s+heard",
        "reported",
        "sentence",
        "hearsay: 'I heard my flight was moved'",
    ),
    # negated
    AssertionCue(
        r"(?:not|never|cannot|\w+n['’]t)(?!\s+(?:only|forget|worry|wait)(?!\w))",
        "negated",
        "clause",
        "negates what follows in its clause: 'isn't leaving at 9:40', 'never said'",
    ),
    AssertionCue(
        r"(?:wrong|untrue|false|a\s+mistake|incorrect)\s+to\s+(?:say|think|write|note)"
        r"|(?:untrue|false|incorrect)\s+that|nobody|no\s+one|there['’]s\s+no\s+way",
        "negated",
        "clause",
        "denies what follows: 'it would be wrong to say my flight is 9:40', 'nobody said'",
    ),
    # undeclared person
    AssertionCue(
        rf"(?:my|our|his|her|their|a)\s+(?:{RELATIONS})|a\s+friend\s+of\s+(?:mine|ours)",
        "undeclared",
        "clause",
        "a person the schema may not declare: 'my neighbour's flight'",
    ),
    AssertionCue(
        r"(?P<name>\w+)['’]s",
        "undeclared",
        "clause",
        "a named person's possession: 'Marta's dentist'",
    ),
)

# Capitalised words that are not names of people (mostly sentence-initial function words).
_ORDINARY_WORDS = """
    i it its that this these those what who whom whose where when why how which here there
    he she we you they me us him her them let lets everyone everybody everything nothing
    nobody someone somebody something anyone anybody anything one today tomorrow tonight
    yesterday now as having to so then well yes no ok okay oh and or but if in on at my the
    a an our your their his mine yours ours theirs year years new valentine world week
    weekend month day morning evening night summer winter spring autumn fall
    monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december
"""
ORDINARY = frozenset(_ORDINARY_WORDS.split())

SENTENCE_BOUNDARY = re.compile(
    r"[;!?\n\r—–]|\s-\s|(?<!\w)but(?!\w)|(?<!\d)[.:]|[.:](?!\d)", re.IGNORECASE
)


@dataclass(frozen=True)
class Hit:
    """One occurrence of a cue in a text."""

    cue: int
    """Index into `CUES`."""
    start: int
    end: int
    name: Span | None
    """The span of the ``name`` group, when the cue has one."""


@dataclass(frozen=True)
class Region:
    """The stretch a cue covers: values starting at or after `start` and ending by `end`."""

    kind: Kind
    start: int
    end: int


def _compile(cue: AssertionCue) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{cue.pattern})(?!\w)", re.IGNORECASE)


COMPILED: tuple[re.Pattern[str], ...] = tuple(_compile(cue) for cue in CUES)
REQUIRES: tuple[re.Pattern[str] | None, ...] = tuple(
    None if cue.requires is None else re.compile(rf"(?<!\w)(?:{cue.requires})(?!\w)", re.I)
    for cue in CUES
)


def is_capitalised_name(word: str) -> bool:
    """A word written like a name ("Marta", "McAllister"), not an ordinary word."""
    return (
        len(word) >= 2
        and word[0].isupper()
        and any(c.islower() for c in word[1:])
        and word.lower() not in ORDINARY
    )


def find_hits(text: str) -> tuple[Hit, ...]:
    """Every cue occurrence in `text` whose ``name`` group (if any) is a capitalised name.
    Depends on the text only; what the lexicon declares is checked by the caller."""
    hits = []
    for index, pattern in enumerate(COMPILED):
        for m in pattern.finditer(text):
            name: Span | None = None
            if "name" in pattern.groupindex and m.group("name") is not None:
                if not is_capitalised_name(m.group("name")):
                    continue
                name = m.span("name")
            hits.append(Hit(index, m.start(), m.end(), name))
    return tuple(hits)


def regions(
    text: str, hits: Iterable[Hit], protected: list[Span], counts: Callable[[Hit], bool]
) -> list[Region]:
    """The regions the `hits` cover, given the spans whose punctuation ends nothing
    (`protected`: the predicate's matched values) and the caller's test of whether a hit
    counts for what is being read (`counts`: declared names, keywords, values)."""
    sentence = [
        m.span()
        for m in SENTENCE_BOUNDARY.finditer(text)
        if not any(s <= m.start() < e for s, e in protected)
    ]
    clause: list[Span] | None = None
    out = []
    for hit in hits:
        cue = CUES[hit.cue]
        if not counts(hit):
            continue
        if cue.reach == "sentence":
            bounds = sentence
        else:
            if clause is None:
                clause = clause_boundaries(text, protected)
            bounds = clause
        required = REQUIRES[hit.cue]
        if required is not None:
            begin = max((e for _s, e in sentence if e <= hit.start), default=0)
            if not required.search(text, begin, _next_start(sentence, hit.end, len(text))):
                continue
        out.append(Region(cue.kind, hit.end, _next_start(bounds, hit.end, len(text))))
    return out


def _next_start(bounds: list[Span], at: int, default: int) -> int:
    return next((s for s, _e in bounds if s >= at), default)


def kind_of(span: Span, covering: list[Region]) -> Kind | None:
    """The kind of the first region (in `CUES` order) that covers `span`, else None."""
    found = [r.kind for r in covering if r.start <= span[0] and span[1] <= r.end]
    return min(found, key=KINDS.index) if found else None
