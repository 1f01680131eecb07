"""Closed Loop's dialogue context (docs/method.md §4): the conversation's earlier turns, each
earlier query answered by the condition's own generated answer (non-authoritative)."""

from __future__ import annotations

from collections.abc import Mapping

from place.agent.answer import DialogueTurn
from place.trajectory.model import Conversation, Turn


def dialogue(conv: Conversation, upto: Turn, own: Mapping[str, str]) -> list[DialogueTurn]:
    """Earlier turns of `conv` before `upto`; queries answered with `own[query id]`."""
    turns: list[DialogueTurn] = []
    answering = False
    for turn in conv.turns:
        if turn.id == upto.id:
            break
        if turn.query is not None:
            turns.append(DialogueTurn("user", turn.text))
            turns.append(DialogueTurn("assistant", own.get(turn.query.id, "unknown")))
            answering = True
            continue
        if turn.role == "assistant" and answering:
            continue  # replaced by the condition's own answer above
        answering = False
        role = f"tool ({turn.source})" if turn.role == "tool" else turn.role
        turns.append(DialogueTurn(role, turn.text))
    return turns
