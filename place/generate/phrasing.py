"""Surface forms: how values, dates and every kind of turn are written.

The templates are data: `place/data/generator/phrasing.yaml` (sentences around a predicate's
clause: assertions, changes, windows, removals, questions, tool turns, the assistant's
turns) and `chatter.yaml` (greetings, domain small talk, distractor and filler lines). This
module states which placeholders each kind of template takes (a template with any other is a
load error naming the file and key), loads both files once, and renders values and dates.

Dates of validity windows and `as_of` questions are written as ordinals ("the 2nd of March",
"March 2nd"): an ordinal never contains a bare number that a number predicate could read.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from place.generate.datafile import Check, DataModel, Placeholders, load
from place.generate.design import DESIGNS
from place.generate.library import DOMAINS, MONEY_FORMS, MONTHS, ordinal
from place.trajectory.model import FAMILIES

_SENTENCE = ("s", "S")
"""A sentence template's clause: as is ({s}) or capitalised where it starts the sentence ({S})."""


def _template(*allowed: str, needs: tuple[str | tuple[str, ...], ...] = ()) -> AfterValidator:
    return AfterValidator(Placeholders(allowed, needs))


Plain = Annotated[str, StringConstraints(min_length=1), _template()]
Piece = Annotated[str, _template()]
"""Plain text that may be empty or carry its surrounding spaces (openers, closers)."""
Sentence = Annotated[str, _template(*_SENTENCE, needs=(_SENTENCE,))]
Change = Annotated[str, _template(*_SENTENCE, "old", needs=(_SENTENCE, "old"))]
Dated = Annotated[str, _template(*_SENTENCE, "date", needs=(_SENTENCE, "date"))]
DatedPair = Annotated[str, _template(*_SENTENCE, "date", "new", needs=(_SENTENCE, "date", "new"))]
RetractOne = Annotated[
    str,
    _template("subject", "Subject", "complement", needs=(("subject", "Subject"), "complement")),
]
RetractMany = Annotated[str, _template("d", "D", needs=(("d", "D"),))]
Forget = Annotated[str, _template("poss", "noun", needs=("poss", "noun"))]
Wrapper = Annotated[str, _template("q", "Q", needs=(("q", "Q"),))]
AsOf = Annotated[str, _template("date", "q", needs=("date", "q"))]
Claim = Annotated[str, _template("claim", "Claim", "sender", needs=(("claim", "Claim"),))]
AboutSource = Annotated[str, _template("what", needs=("what",))]
WithValue = Annotated[str, _template("v", needs=("v",))]
Stale = Annotated[str, _template("old", "poss", "noun", needs=("old", "poss", "noun"))]
SourceName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]*$")]


class ToolSource(DataModel):
    """One kind of tool turn."""

    noun: Plain
    """What the user calls it ("email"): the {what} of dismissals and remarks."""
    claims: tuple[Claim, ...] = Field(min_length=1)
    """Templates of a claim: {claim}/{Claim}, a clause about the slot with another value
    ("your flight to Porto leaves at 6:45"); {sender}, a made-up sender."""


class Phrasing(DataModel):
    """phrasing.yaml: the sentence templates."""

    assert_: tuple[Sentence, ...] = Field(alias="assert", min_length=1)
    """A plain assertion ({s}, {S})."""
    supersede: tuple[Change, ...] = Field(min_length=1)
    """A supersession; {old}, the value that stops being current, right after a cue."""
    correct: tuple[Change, ...] = Field(min_length=1)
    """A correction; {old}, the wrong value, right after "not" or "never"."""
    scheduled: tuple[Dated, ...] = Field(min_length=1)
    """One scheduled value; {date}, when it takes effect."""
    scheduled_with_current: tuple[DatedPair, ...] = Field(min_length=1)
    """The current value ({s}) and the scheduled one ({new}, from {date}) in one turn."""
    temporary: tuple[Dated, ...] = Field(min_length=1)
    """A temporary value; {date}, when it ends."""
    temporary_with_successor: tuple[DatedPair, ...] = Field(min_length=1)
    """A temporary value ({s}, until {date}) and its successor ({new})."""
    retract_one: tuple[RetractOne, ...] = Field(min_length=1)
    """Retracting a cardinality-one value: the predicate's {subject}/{Subject}, {complement}."""
    retract_many: tuple[RetractMany, ...] = Field(min_length=1)
    """Retracting one value of a many-valued slot: {d}/{D}, one of the predicate's drops."""
    forget: tuple[Forget, ...] = Field(min_length=1)
    """Forgetting a slot: {poss} and the predicate's {noun}."""
    conflict: tuple[Sentence, ...] = Field(min_length=1)
    """A probe's conflicting evidence, a plain record about a named person."""
    question: dict[str, tuple[Wrapper, ...]]
    """Question wrappers ({q}, {Q}): `any` for every family, and each family's own."""
    as_of: tuple[AsOf, ...] = Field(min_length=1)
    """`as_of` questions about a later {date}."""
    tool: dict[SourceName, ToolSource] = Field(min_length=1)
    """Tool turns by source (`forwarded-email`, `sms`, ...)."""
    senders: tuple[Plain, ...] = Field(min_length=1)
    """Made-up senders of tool turns."""
    spam: tuple[Plain, ...] = Field(min_length=1)
    """Tool turns with no claim at all."""
    dismiss: tuple[AboutSource, ...] = Field(min_length=1)
    """The user dismissing a tool turn ({what})."""
    tool_remark: tuple[AboutSource, ...] = Field(min_length=1)
    """The assistant refusing a tool turn's claim ({what})."""
    ack: tuple[Plain, ...] = Field(min_length=1)
    """The assistant acknowledging an event turn."""
    ack_value: tuple[WithValue, ...] = Field(min_length=1)
    """Acknowledgements naming the value ({v})."""
    answer: tuple[WithValue, ...] = Field(min_length=1)
    """Answers to a question ({v}: the gold values)."""
    abstain: tuple[Plain, ...] = Field(min_length=1)
    """Answers when nothing is on record."""
    stale: tuple[Stale, ...] = Field(min_length=1)
    """A stale-value pair insert: an old value ({old}) after a cue, {poss}, {noun}; no event."""


class Chatter(DataModel):
    """chatter.yaml: lines that state nothing the readback could read."""

    greetings: tuple[Plain, ...]
    """Conversation openers, at least one per conversation of the largest design."""
    chit_chat: dict[str, tuple[Plain, ...]]
    """Small talk of each life domain of the library (the chit-chat pair insert)."""
    openers: tuple[Piece, ...] = Field(min_length=1)
    """Starts of a distractor line ("Side note: "), spaces kept; "" for none."""
    topics: tuple[Plain, ...] = Field(min_length=1)
    """Neutral topics ("I saw a heron by the canal this morning")."""
    closers: tuple[Piece, ...] = Field(min_length=1)
    """Ends of a distractor line (" Anyway."), spaces kept; "" for none."""
    filler_replies: tuple[Plain, ...] = Field(min_length=1)
    """Assistant replies to filler lines."""


def check_phrasing(phrasing: Phrasing) -> Iterator[Check]:
    want = ("any", *FAMILIES)
    for key in phrasing.question:
        if key not in want:
            yield ("question", key), f"{key!r} is not a family; allowed: {', '.join(want)}"
    for key in want:
        if not phrasing.question.get(key):
            yield ("question",), f"question needs at least one wrapper for {key!r}"


def check_chatter(chatter: Chatter) -> Iterator[Check]:
    most = max(d.conversations for d in DESIGNS.values())
    if len(chatter.greetings) < most:
        yield ("greetings",), f"at least {most} greetings (one per conversation) are needed"
    for key in chatter.chit_chat:
        if key not in DOMAINS:
            yield ("chit_chat", key), f"{key!r} is not a domain; allowed: {', '.join(DOMAINS)}"
    for key in DOMAINS:
        if not chatter.chit_chat.get(key):
            yield ("chit_chat",), f"chit_chat needs at least one line for domain {key!r}"


PHRASING: Phrasing = load("phrasing.yaml", Phrasing, check_phrasing)
CHATTER: Chatter = load("chatter.yaml", Chatter, check_chatter)

ASSERT = PHRASING.assert_
SUPERSEDE = PHRASING.supersede
CORRECT = PHRASING.correct
SCHEDULED = PHRASING.scheduled
SCHEDULED_WITH_CURRENT = PHRASING.scheduled_with_current
TEMPORARY = PHRASING.temporary
TEMPORARY_WITH_SUCCESSOR = PHRASING.temporary_with_successor
RETRACT_ONE = PHRASING.retract_one
RETRACT_MANY = PHRASING.retract_many
FORGET = PHRASING.forget
CONFLICT = PHRASING.conflict
QUESTION = PHRASING.question
AS_OF = PHRASING.as_of
SOURCES: tuple[str, ...] = tuple(PHRASING.tool)
SOURCE_NOUN: dict[str, str] = {name: source.noun for name, source in PHRASING.tool.items()}
TOOL: dict[str, tuple[str, ...]] = {name: src.claims for name, src in PHRASING.tool.items()}
SENDERS = PHRASING.senders
SPAM = PHRASING.spam
DISMISS = PHRASING.dismiss
TOOL_REMARK = PHRASING.tool_remark
ACK = PHRASING.ack
ACK_VALUE = PHRASING.ack_value
ANSWER = PHRASING.answer
ABSTAIN = PHRASING.abstain
STALE = PHRASING.stale
GREETINGS = CHATTER.greetings
CHIT_CHAT = CHATTER.chit_chat
FILLER_REPLIES = CHATTER.filler_replies

# ---------------------------------------------------------------- values


def surface(
    vtype: str,
    canonical: str,
    aliases: tuple[str, ...],
    rng: random.Random,
    *,
    currency: str,
    today: dt.date,
) -> str:
    """One written form of a canonical value, as a person would type it."""
    return rng.choice(surface_forms(vtype, canonical, aliases, currency=currency, today=today))


def surface_forms(
    vtype: str, canonical: str, aliases: tuple[str, ...], *, currency: str, today: dt.date
) -> list[str]:
    # Forms are listed with repeats on purpose: a repeated form is drawn more often.
    if vtype == "time":
        hour, minute = (int(p) for p in canonical.split(":"))
        if hour < 12:
            forms = [f"{hour}:{minute:02d}", f"{hour:02d}:{minute:02d}", f"{hour}:{minute:02d} am"]
            if minute == 0:
                forms.append(f"{hour} am")
        else:
            h12 = hour - 12 or 12
            forms = [canonical, f"{h12}:{minute:02d} pm", f"{h12}:{minute:02d}pm"]
        return forms + list(aliases)
    if vtype == "date":
        day = dt.date.fromisoformat(canonical)
        month = MONTHS[day.month - 1]
        if day.year != today.year:
            return [f"{day.day} {month} {day.year}", f"{month} {day.day}, {day.year}"]
        return [
            f"{day.day} {month}",
            f"{month} {day.day}",
            f"{ordinal(day.day)} {month}",
            f"{ordinal(day.day)} of {month}",
        ]
    if vtype == "number":
        number = int(canonical)
        digits = [canonical, f"{number:,}"] if number >= 1000 else [canonical, canonical]
        return digits + list(aliases)
    if vtype == "money":
        amount = int(canonical.split(" ")[0])
        return [f.format(a=amount, c=f"{amount:,}") for f in MONEY_FORMS[currency]]
    return [canonical, canonical, *aliases]


def date_phrase(day: dt.date, today: dt.date, rng: random.Random) -> str:
    """A window or `as_of` date, written with an ordinal ("the 2nd of March")."""
    month = MONTHS[day.month - 1]
    year = f" {day.year}" if day.year != today.year else ""
    return rng.choice(
        [
            f"the {ordinal(day.day)} of {month}{year}",
            f"{month} {ordinal(day.day)}{year}",
        ]
    )


def join_values(forms: list[str]) -> str:
    if len(forms) == 1:
        return forms[0]
    return ", ".join(forms[:-1]) + " and " + forms[-1]


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def fill(template: str, clause: str, **extra: str) -> str:
    """Put a clause into a sentence template ({s} as is, {S} capitalised)."""
    return template.format(s=clause, S=capitalize(clause), **extra)


def chatter_lines() -> list[str]:
    """Every distractor user line, in a fixed order (opener x topic x closer)."""
    lines = []
    for core in CHATTER.topics:
        for opener in CHATTER.openers:
            for closer in CHATTER.closers:
                body = capitalize(core) if not opener or opener.endswith(": ") else core
                lines.append(f"{opener}{body}.{closer}")
    return lines
