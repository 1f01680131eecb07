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
# Telling: what a user does with information, so its absence is a statement that nothing was
# given ("you never told me", "it hasn't come up"). "Told me to ..." is an instruction, not
# information, and is left out where it can follow (`_NOT_ORDER`).
_V_TELL = (
    r"(?:tell|told|mention|mentioned|say|said|share|shared|give|gave|given|specify|specified"
    r"|indicate|indicated|state|stated|provide|provided|inform|informed|let\s+me\s+know"
    r"|(?:bring|brought)\s+(?:it\s+|that\s+|this\s+)?up)"
)
_PART_TELL = (
    r"(?:told|mentioned|said|shared|given|specified|indicated|stated|provided|discussed|established"
    r"|recorded|stored|saved|noted|logged|listed|documented|captured|entered|known"
    r"|(?:brought|come)\s+up)"
)
"""Participles of telling and recording: what a passive absence is about ("No flight time
was given", "It was never mentioned", "That hasn't come up")."""
_NOT_ORDER = r"(?!\s+(?:me|us|you)\s+to\s)"
_SEEM = r"(?:\s+(?:seem|appear)\s+to)?"
"""'I don't seem to have it', 'I can't seem to find it': the hedge leaves the negation."""
_NEG = rf"(?:{N_T}|\s+never)(?:\s+(?:yet|ever|actually|really|once|even))?"
"""A negated auxiliary or "never" ("haven't", "did not", "have never", "hasn't yet")."""
# Objects a speaker may lack that are not information ("I don't have time", "any problem").
_NOT_INFO_OBJECT = (
    r"(?!(?:a\s+|any\s+|the\s+)?(?:time|problem|problems|issue|issues|preference|opinion"
    r"|complaint|complaints|objection|objections|choice|doubt|doubts|reason|way)(?!\w))"
)

# Someone else's uncertainty is no statement that the information is missing.
_NOT_OTHERS = (
    r"(?<!you['’]re\s)(?<!you\sare\s)(?<!they['’]re\s)(?<!they\sare\s)(?<!he['’]s\s)"
    r"(?<!she['’]s\s)(?<!he\sis\s)(?<!she\sis\s)"
)
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
    (r"no\s+idea|dunno|idk", "'no idea', 'dunno', 'idk'"),
    (
        rf"{_NOT_OTHERS}(?:not(?:\s+(?:\w+ly|quite|really|too|so|100\s*%))?\s+(?:sure|certain)"
        r"|unsure|uncertain)",
        "'I'm not sure', 'not entirely certain', 'unsure', 'uncertain'; not someone else's"
        " uncertainty ('You're not sure where you are staying')",
    ),
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
        rf"{_I}\s+have\s+no\s+(?:\w+\s+)?"
        + _INFO
        + rf"|{_I}\s+have\s+no\s+(?:[\w'’-]+\s+){{0,3}}?(?:{_PART_TELL}|{_LOC})(?!\w)"
        + rf"|{_I}(?:\s+(?:lack|miss)|['’]m\s+missing|\s+am\s+missing)\s+(?:any\s+|the\s+)?"
        + rf"(?:\w+\s+)?{_INFO}",
        "the speaker has none of it: 'I have no information about that', 'I have no stored"
        " record', 'I have no arrival date saved', 'I lack any information', 'I'm missing the"
        " details'",
    ),
    (
        r"(?<!you\s)(?<!they\s)(?<!he\s)(?<!she\s)"
        r"(?:can(?:\s+not|not)|can['’]t|could\s*n(?:o|['’])t|unable\s+to)"
        rf"{_SEEM}\s+(?:find|tell|say|determine|recall|remember|answer|know|see|locate)",
        "cannot find or tell: 'I can't find that', 'unable to determine'; not another person's"
        " inability ('You can't answer the question')",
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
        rf"{_Q}{_WINDOW}{_SP}{_AUX}(?:(?:{_V_RECORD}|{_V_AVAIL})\s+)?{_LOC}{_MAIN}"
        rf"|no\s+(?!new(?:er)?(?!\w))(?:[\w'’-]+\s+){{0,3}}?(?:appears?|shows?\s+up|exists?"
        rf"|is\s+listed|comes?\s+up)\s+{_LOC}",
        "a negative quantifier, then a place in memory: 'There's nothing on Theo's dietary"
        " needs in my memory', 'No, nothing on record for Theo', 'Nothing was found in my"
        " notes', 'No check-in date appears in the notes'; not 'Nothing in my notes is out of"
        " date'",
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
    # --- second person and impersonal: nothing was given --------------------------------
    (
        rf"you(?:['’](?:ve|d)|\s+(?:have|had|did|do))?{_NEG}\s+{_V_TELL}(?!\w){_NOT_ORDER}",
        "second person never told it: 'you never told me', 'You haven't mentioned a hotel',"
        " 'you didn't say when you arrive', 'you've not shared that'; not 'you never told me"
        " to change it'",
    ),
    (
        rf"(?:nobody|no\s+one|no-one)(?:\s+(?:has|had|ever))?\s+{_V_TELL}(?!\w){_NOT_ORDER}"
        r"(?!\s+so(?!\w))(?<!said)(?<!say)"
        rf"|(?:nobody|no\s+one|no-one)(?:\s+(?:has|had|ever))?\s+(?:said|say)"
        rf"(?:{_CLAUSE_END}|\s+(?:anything|a\s+(?:word|thing))(?!\w))",
        "nobody told it: 'Nobody mentioned a check-in date', 'no one has told me'; not"
        " 'Nobody told me to change it', 'Nobody said so', 'Nobody said the budget was"
        " unknown' (denials of a claim: 'said' counts only alone or with 'anything')",
    ),
    (
        rf"(?:is|are|was|were|has|have|had){_NEG}(?:\s+been)?\s+{_PART_TELL}(?!\w)"
        rf"|(?:do|does|did){N_T}\s+(?:come\s+up|get\s+{_PART_TELL})(?!\w)"
        rf"|never\s+(?:came|come|got)\s+(?:up|{_PART_TELL})(?!\w)",
        "impersonal, never given or recorded: 'It was never mentioned', 'That hasn't come up',"
        " 'it has not been shared', 'it didn't come up', 'that never came up'",
    ),
    (
        rf"no\s+(?!(?:new|newer|other|more|further|else)(?!\w))(?:[\w'’-]+\s+){{0,3}}?"
        r"(?:was|were|has\s+been|have\s+been"
        r"|had\s+been|is|are)"
        rf"(?:\s+(?:ever|yet|actually))?\s+{_PART_TELL}(?!\w)",
        "'no' + a noun, then a participle of telling as its predicate: 'No flight time was"
        " given', 'no hotel has been mentioned'; not 'No hotel was booked', 'No new information"
        " was saved' (nothing new), 'No other items are provided' (nothing else)",
    ),
    (
        rf"{_I}\s+(?:do|did){N_T}\s+(?:think|believe)\s+(?:that\s+)?(?:you(?:['’](?:ve|d)|\s+(?:have"
        rf"|had|did|ever))?(?:\s+ever)?\s+{_V_TELL}(?!\w){_NOT_ORDER}"
        rf"|(?:[\w'’-]+\s+){{0,4}}?(?:has|have|had|was|were)(?:\s+(?:ever|been|yet))*\s+"
        rf"{_PART_TELL}(?!\w))",
        "a negated belief that it was told: 'I don't think you've said which city', 'I don't"
        " believe you ever mentioned it', 'I don't think a hotel has been mentioned'",
    ),
    # --- first person: not told, not aware, not something I have ------------------------
    (
        rf"{_I}(?:['’]ve|['’]m|\s+have|\s+had|\s+was|\s+were|\s+am)?{_NEG}(?:\s+been)?\s+"
        r"(?:told|given|informed|aware|advised)(?!\w)",
        "the speaker was never told: 'I wasn't told', 'I haven't been given that', 'I'm not"
        " aware of a check-in date', 'I've never been informed'",
    ),
    (
        rf"not\s+(?:that\s+)?{_I}(?:['’]m|\s+am)?\s+(?:know|aware|recall|remember)(?!\w)"
        r"|not\s+as\s+far\s+as\s+(?:i|we)\s+(?:know|can\s+tell|recall)",
        "'not that I know of', 'not that I'm aware', 'not as far as I know'",
    ),
    (
        rf"{_I}\s+(?:do|did){N_T}{_SEEM}\s+have\s+{_NOT_INFO_OBJECT}"
        r"(?:any|that|this|it|your|the|a|an|such|one|anything)(?!\w)(?!\s+(?:else|to)(?!\w))"
        rf"|{_I}(?:\s+have|['’]ve){N_T}\s+(?:got\s+)?{_NOT_INFO_OBJECT}"
        r"(?:any|that|this|it|your|the|a|an|one|anything)(?!\w)(?!\s+(?:else|to)(?!\w))",
        "first person lacks it: 'I don't have that', 'I don't have your hotel', 'I haven't got"
        " a check-in date'; not 'I don't have time', 'I don't have any problem'",
    ),
    (
        r"(?:not|(?:is|was|are|were)n['’]t)\s+(?:something|anything|one|a\s+detail|information)"
        r"\s+(?:that\s+)?"
        rf"{_I}(?:['’]ve|\s+have|\s+can)?\s+(?:have|know|keep|hold|store|stored|got|saved|see"
        r"|find|access|been\s+told)(?!\w)",
        "not something the assistant has: 'that's not something I have on file', 'not"
        " anything I know'",
    ),
    (
        r"(?:is|are|was|were)" + N_T + r"\s+(?:available|accessible)\s+(?:to\s+me|here"
        rf"|{_LOC})|not\s+(?:on\s+file|in\s+(?:my|the)\s+(?:files?|system|memory|notes))",
        "not available to the assistant: 'That information isn't available to me', 'it's not"
        " on file'; not 'The Lumen isn't available on Tuesday'",
    ),
    # --- everyday idioms of not knowing --------------------------------------------------
    (
        r"no\s+clue|not\s+a\s+clue|(?:the\s+)?(?:faintest|foggiest)(?:\s+(?:idea|clue))?"
        r"|the\s+slightest\s+(?:idea|clue)"
        r"|beats\s+me|search\s+me|who\s+knows|(?:your|ur)\s+guess\s+is\s+as\s+good\s+as"
        r"\s+mine|news\s+to\s+me|(?:have|need)\s+to\s+remind\s+me|dr[ae]w(?:ing)?\s+a\s+blank"
        rf"|{_I}\s+(?:could|can){N_T}\s+(?:tell|say)|no\s+way\s+(?:for\s+me\s+)?to"
        r"\s+(?:know|tell|say)",
        "everyday idioms of not knowing: 'No clue', 'Beats me', 'Search me', 'That's news to"
        " me', 'You'll have to remind me', 'I couldn't tell you', 'haven't the foggiest idea';"
        " not a question echoed back ('Remind me, how many guests?')",
    ),
)
"""(regular expression, what it covers) for every phrase or construction that states that the
information is missing (module docstring); matched as whole words, case-insensitively,
anywhere in the answer."""

_ABSTENTION_RE = re.compile(
    r"(?<!\w)(?:" + "|".join(f"(?:{p})" for p, _ in ABSTENTION_PHRASES) + r")(?!\w)",
    re.IGNORECASE,
)


# A statement of absence that is itself negated is its opposite: "It's not that I don't
# know", "not unknown", "I never said I didn't know". The negator must stand right before
# the match, in its clause.
_NEGATED_BEFORE = re.compile(
    rf"(?:(?<!\w)(?:not|never|n['’]t)(?:{_SP}(?:true|the\s+case|correct))?(?:{_SP}"
    rf"(?:that|say|said|saying|because|as\s+if|as\s+though))?(?:{_SP}(?:i|we|you|it))?"
    r"|(?<!\w)un)[^\S\n]*$"
    r"|(?<!\w)(?:nobody|no\s+one|never|(?:did|does|do)n['’]t|(?:did|does|do)\s+not)\s+"
    r"(?:say|said|claim|claimed)(?!\w)",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(rf"[{_STOP}](?![^{_STOP}]*[{_STOP}])")


def _negated(answer: str, start: int) -> bool:
    """Whether the abstention found at `start` is negated within its clause."""
    before = answer[:start]
    cut = _CLAUSE_START.search(before)
    clause = before[cut.end() :] if cut else before
    return _NEGATED_BEFORE.search(clause) is not None


def abstains(answer: str) -> bool:
    """Whether the answer says that the answer is not known or not recorded: some
    construction of `ABSTENTION_PHRASES` holds and is not itself negated."""
    return any(not _negated(answer, m.start()) for m in _ABSTENTION_RE.finditer(answer))


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
