"""Ω: the semantic outcome of an answer, and the F1 that scores it (docs/method.md §4).

Ω(answer) is the set of canonical values of the queried predicate found in the answer, read
with the same lexicon and historical-cue rule as β. When the answer names none, it is
{ABSTAIN} if the answer abstains, else the empty set (an answer that is neither a value nor
an abstention is simply wrong).

When an answer abstains
-----------------------
An answer abstains when it *states that the information is missing*: the speaker does not
know it, or the memory holds nothing about it. What matters is what the negation is about.
In a statement of absence the negated thing is information ("no record", "nothing
recorded", "I don't know"); in a negated assertion it is something in the world ("no
change", "nothing is wrong", "none of the bookings were cancelled"), and the speaker is
claiming to know how things stand. Only the first kind abstains. `ABSTENTION_PHRASES` is
the one list of what counts, each entry with what it covers; besides fixed phrases ("I
don't know", "not recorded", "no idea") it holds these constructions:

- *A negative quantifier over information as the subject of a recording predicate.* The
  quantifier is "nothing", "none", or "no" with an information noun ("no details", "no
  flight information"); the predicate is a recording verb ("recorded", "stored", "saved",
  "mentioned", "noted", "listed", "specified", "known", ...) or a place in the memory ("in
  my memory", "in the notes", "on record"). "Nothing" and "none" range over anything, so
  here it is the predicate that makes them about information. Up to 8 words may stand
  between quantifier and predicate, within one clause: "Nothing about Theo's flight is
  stored", "No details of the hotel were saved".
  Verbs that are as often about the world as about memory ("available", "found", "given",
  "provided", "kept") count only after "no" + information noun, or together with a place in
  memory: "No information is available", "Nothing was found in my notes", but not "Nothing
  is available on Tuesday".
- *A restricted quantifier on its own* ("No information about that.", "There is no record of
  it."): the information noun already says what is missing.
- *Existential absence* of something about the topic: "There's nothing about Theo's
  flight", "There isn't any information on it".
- *A holder that lacks it*: the speaker ("I have nothing stored about that", "I don't have
  anything on this", "I know nothing about it") or the memory itself ("my records show no
  booking", "the memory contains no entry", "none of my notes mention it").

Clauses end where β's do (`place.lexicon.cues`): at . ; : ! ?, commas, dashes and newlines
(a point, comma or colon between digits does not end one). A subject pronoun, a
conjunction such as "and", "but", "because", "when", or a finite verb ("is", "has",
"could") also stops the word window, because a new clause or another predicate starts
there; only the auxiliary of the recording verb itself may stand next to it ("is stored",
"has been recorded"). So "Nothing changed and it's recorded as before" and "Nothing has
changed since the booking was saved" do not abstain: the recording word is in another
clause.

The recording predicate has to be the *main* predicate of its clause: when a finite verb
follows it within 8 words, before any new clause starts, the recording word only describes
the subject, and the clause asserts something else about what is stored. "Nothing stored
there is out of date", "Nothing in my notes has changed", "No data was lost" and "Nothing
about it has changed" assert things about stored content, not its absence, so their Ω is
the empty set.

What does not abstain, and why:

- bare negations and negative quantifiers over anything but information: "No.", "None.",
  "Nothing.", "No, Theo is still booked on a flight to Oslo", "Nothing is wrong", "None of
  the bookings were cancelled", "No one else recorded the change", "There is no change to
  the budget". They assert a state of the world, which is wrong when it names no value.
- recording words that are not negated, or negated words that are not about recording:
  "I forgot to mention it's Oslo", "No problem, it's recorded".
- "nothing new" / "no new ..." and a memory that shows "no change" (or update, difference,
  problem): "Nothing new was stored because the budget is unchanged" says that the stored
  value still stands, which presupposes the speaker has it, so it is an assertion without
  a value, not an abstention.
- an empty answer (or one of only punctuation) says nothing at all.

This is a rule over surface patterns, not a parser, and it knows verbs only from closed
lists. Known limits: a main predicate that is a lexical verb without an auxiliary is not
seen as one, so "No details changed" and "Nothing in my records changed" still abstain;
and a clause joined without punctuation, pronoun or conjunction ("Nothing changed the
recorded time") can lend its recording word to the quantifier. Keeping the window to one
clause and 8 words makes both rare. (docs/decisions.md, "Outcomes and records".)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set

from place.lexicon.readback import Lexicon

ABSTAIN = "ABSTAIN"

# --- building blocks ---------------------------------------------------------------------

# `N_T` accepts "not", "n't" and "n’t" after an auxiliary ("don't", "do not", "isn’t").
N_T = r"(?:\s+not|not|n['’]t)"
_I = r"(?:i|we)"
# What a speaker may lack ("I don't have that information", "I have no record").
_INFO = (
    r"(?:information|info|record|records|data|details|answer|memory|memories|entry|entries"
    r"|note|notes|mention)"
)
# What a negative quantifier may range over for it to be about information ("no details").
_INFO_NOUN = (
    r"(?:information|info|data|details?|records?|entry|entries|mentions?|notes?|memory|memories)"
)
_MEMORY = (
    r"(?:(?:my|the|your|our)\s+)?"
    r"(?:memory\s+items?|stored\s+items?|memory|memories|records?|notes|files?)"
)
_LOC = rf"(?:(?:in|inside|within)\s+{_MEMORY}|on\s+(?:record|file))"
"""A place in the memory: 'in my memory', 'in the notes', 'on record'."""

# Predicates that are about recording whatever their subject, and those that are about
# memory only when the subject is information or a place in memory is named.
_V_RECORD = (
    r"(?:recorded|stored|saved|mentioned|noted|logged|documented|listed|specified|known|said)"
)
_V_AVAIL = r"(?:available|found|given|provided|kept)"

# Horizontal space: a newline ends a clause, as in β (place.lexicon.cues).
_SP = r"[^\S\n]+"
_STOP = r".!?;:,\n—–"
# A word inside one clause; a point, comma or colon between digits ("9.40", "€1,200") stays.
_WORD = rf"(?:[^\s{_STOP}]|(?<=\d)[.,:](?=\d))+"
_CLAUSE_END = rf"(?=[^\S\n]*(?:[{_STOP})\"”]|$))"

_FINITE = (
    r"(?:(?:is|are|am|was|were|has|have|had|do|does|did|will|would|can|could|may|might|must"
    r"|shall|should)(?:n['’]t)?|(?:ca|wo)n['’]t)"
)
# Words that start a new clause: a subject pronoun (also contracted) or a conjunction.
# "it" and "you" are left out: they are as often objects ("nothing about it is recorded").
_NEW_CLAUSE = (
    r"(?:i|he|she|we|they|and|but|so|because|since|although|though|while|whereas|unless|if"
    r"|when|whenever|where|then|yet"
    r"|(?:it|that|there|here|he|she|what|who|which)['’]s|(?:you|we|they)['’]re|i['’]m"
    r"|(?:i|you|we|they|he|she|it)['’](?:ve|ll|d))"
)
_WINDOW = rf"(?:{_SP}(?!(?:{_NEW_CLAUSE}|{_FINITE})(?!\w)){_WORD}){{0,8}}?"
"""Up to 8 words between a quantifier and its predicate, within one clause."""
_AUX = (
    r"(?:(?:is|are|was|were|has|have|had|will|would|could|can|may|might|must|should)\s+)?"
    r"(?:(?:been|be|being|ever|yet|currently|actually|really|even|previously|explicitly)\s+)"
    r"{0,3}"
)
_MAIN = rf"(?!(?:{_SP}(?!{_NEW_CLAUSE}(?!\w)){_WORD}){{0,8}}?{_SP}{_FINITE}(?!\w))"
"""The predicate just matched is the main one: no finite verb follows within 8 words of its
clause before a new clause starts ("nothing stored there *is* out of date" fails here). The
bound keeps the look-ahead short on long answers."""

# "Nothing new", "no change": about the state of the world, not about missing information.
_NOT_CHANGE = (
    r"(?!\s+(?:new|newer|change|changes|update|updates|difference|differences|problem"
    r"|problems|issue|issues)(?!\w))"
)
_Q_NOTHING = rf"(?:nothing(?:['’]s)?{_NOT_CHANGE}|none)"
_Q_NO_INFO = rf"no\s+(?:(?!new(?!\w))\w+\s+)?{_INFO_NOUN}(?!\w)"
_Q = rf"(?:{_Q_NOTHING}|{_Q_NO_INFO})"
_ABOUT = r"(?:about|regarding|concerning)"
_THERE_IS = r"there(?:\s+(?:is|are|was|were)|['’]s|['’]re)"

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
        rf"{_MEMORY}\s+(?:do|does|did){N_T}\s+(?:say|mention|contain|include|show|hold|have"
        r"|specify|tell)",
        "the memory lacks it: 'the memory doesn't mention it'",
    ),
    (
        rf"{_Q}{_WINDOW}{_SP}{_AUX}{_V_RECORD}(?!\w){_MAIN}",
        "a negative quantifier over information, then within 8 words of its clause a recording"
        " verb as the main predicate: 'Nothing about Theo's flight is stored', 'Nothing"
        " regarding the Porto budget has been recorded', 'No details of the hotel were saved',"
        " 'nothing's been noted', 'None recorded'; not 'Nothing stored there is out of date',"
        " 'Nothing new was stored', 'No one else recorded it'",
    ),
    (
        rf"{_Q_NO_INFO}{_WINDOW}{_SP}{_AUX}{_V_AVAIL}(?!\w){_MAIN}",
        "'no' + information noun, then an availability verb: 'No information is available',"
        " 'No details about the door code were given'; not 'Nothing is available on Tuesday'",
    ),
    (
        rf"{_Q}{_WINDOW}{_SP}{_AUX}(?:(?:{_V_RECORD}|{_V_AVAIL})\s+)?{_LOC}{_MAIN}",
        "a negative quantifier, then a place in memory: 'There's nothing on Theo's dietary"
        " needs in my memory', 'No, nothing on record for Theo', 'Nothing was found in my"
        " notes'; not 'Nothing in my notes is out of date'",
    ),
    (
        rf"{_Q_NO_INFO}{_MAIN}",
        "'no' + information noun with no other main predicate: 'No information about that.',"
        " 'There is no record of that', 'no memory items', 'I have no flight details'; not"
        " 'No data was lost', 'No details of the booking have changed'",
    ),
    (
        rf"nothing\s+(?:{_ABOUT}|on|of)\s+(?:that|this|it|him|her|them){_CLAUSE_END}",
        "an elliptical 'nothing about it': 'Nothing about that.', 'I know nothing of it',"
        " 'you told me nothing about that'; not 'Nothing about it has changed'",
    ),
    (
        rf"{_THERE_IS}\s+nothing\s+{_ABOUT}(?!\w){_MAIN}"
        rf"|{_THERE_IS}(?:{N_T}|\s+not)\s+(?:any\s+(?:\w+\s+)?{_INFO_NOUN}(?!\w)"
        rf"|anything\s+(?:{_ABOUT}|{_V_RECORD}|{_V_AVAIL}|{_LOC})(?!\w))",
        "existential absence: 'There's nothing about Theo's flight', 'There isn't any"
        " information on it', 'there's not anything recorded'; not 'There is nothing wrong',"
        " 'There is no change to the budget', 'There isn't anything else to do'",
    ),
    (
        rf"{_I}(?:\s+have|['’]ve)(?:\s+got)?\s+nothing\s+"
        rf"(?:{_V_RECORD}|{_V_AVAIL}|{_ABOUT}|on|{_LOC})(?!\w)"
        rf"|{_I}\s+(?:(?:do|did){N_T}\s+have|have{N_T}\s+got|['’]ve\s+not\s+got)\s+anything\s+"
        rf"(?:{_V_RECORD}|{_V_AVAIL}|{_ABOUT}|on|{_LOC})(?!\w)"
        rf"|{_I}\s+know\s+nothing\s+(?:{_ABOUT}|of|on)(?!\w)",
        "the speaker holds nothing on it: 'I have nothing stored about that', 'I've got"
        " nothing on Theo', 'I don't have anything on this', 'I know nothing about it'; not"
        " 'I have nothing to add', 'I don't have anything else to say'",
    ),
    (
        rf"{_MEMORY}\s+(?:has|have|contains?|holds?|shows?|includes?|lists?|mentions?|says?"
        rf"|gives?)\s+(?:no|nothing){_NOT_CHANGE}(?!\w)"
        rf"|none\s+of\s+{_MEMORY}\s+(?:mentions?|says?|specif(?:y|ies)|includes?|contains?"
        r"|shows?|lists?|records?|gives?)",
        "the memory holds nothing on it: 'my records show no booking', 'the memory contains no"
        " entry for it', 'my memory has nothing on Theo', 'none of my notes mention it'; not"
        " 'my notes show no change'",
    ),
)
"""(regular expression, what it covers) for every phrase or construction that states that the
information is missing (module docstring); matched as whole words, case-insensitively,
anywhere in the answer."""

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
