"""The answer model: sees only the items a read policy exposed, plus the question."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from place.runtime.base import ChatModel, Message


@dataclass(frozen=True)
class AnswerPrompt:
    """The configurable prompt (configs/answer/*.yaml). `{items}` and `{question}` are filled."""

    system: str
    user: str
    dialogue: str
    """Header of the closed-loop dialogue block; `{turns}` is filled."""
    empty_memory: str = "(no memory items)"

    def messages(
        self, question: str, items: Sequence[str], dialogue: Sequence[DialogueTurn] = ()
    ) -> list[Message]:
        """The answer call's messages: system prompt, then dialogue, items and question."""
        listed = "\n".join(f"- {t}" for t in items) or self.empty_memory
        user = self.user.format(items=listed, question=question)
        if dialogue:
            turns = "\n".join(f"{t.role}: {t.text}" for t in dialogue)
            user = self.dialogue.format(turns=turns) + "\n\n" + user
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": user},
        ]


@dataclass(frozen=True)
class DialogueTurn:
    role: str
    text: str


@dataclass(frozen=True)
class Answer:
    raw: str
    shown: tuple[str, ...]
    """The exact item texts shown to the model, in order."""


class AnswerModel:
    def __init__(self, chat: ChatModel, prompt: AnswerPrompt, max_tokens: int) -> None:
        self.chat = chat
        self.prompt = prompt
        self.max_tokens = max_tokens

    def messages(
        self, question: str, items: Sequence[str], dialogue: Sequence[DialogueTurn] = ()
    ) -> list[Message]:
        return self.prompt.messages(question, items, dialogue)

    def answer(
        self, question: str, items: Sequence[str], dialogue: Sequence[DialogueTurn] = ()
    ) -> Answer:
        raw = self.chat.complete(
            self.messages(question, items, dialogue), max_tokens=self.max_tokens
        )
        return Answer(raw.strip(), tuple(items))


AnswerCall = tuple[str, Sequence[str], Sequence[DialogueTurn]]
"""(question, shown item texts, closed-loop dialogue) of one answer."""


def answer_all(model: AnswerModel, calls: Sequence[AnswerCall], pool: Executor | None) -> list[str]:
    """The raw answers to `calls`, in their order; with a pool the calls run concurrently
    (records are then written in call order, so nothing downstream depends on it).

    Conditions that expose the same items send the same prompt, which the LLM call cache
    answers once. So that the pool's workers are not all held by copies of one prompt
    (waiting for the first copy's answer), the first copy of every distinct prompt is sent
    first and the repeats after them; each repeat is then a cache hit, as in a sequential run."""

    def one(call: AnswerCall) -> str:
        return model.answer(*call).raw

    if pool is None or len(calls) < 2:
        return [one(c) for c in calls]
    seen: set[str] = set()
    firsts: list[int] = []
    repeats: list[int] = []
    for i, call in enumerate(calls):
        key = repr(model.messages(*call))
        (repeats if key in seen else firsts).append(i)
        seen.add(key)
    order = firsts + repeats
    out: list[str] = [""] * len(calls)
    for i, raw in zip(order, pool.map(one, [calls[i] for i in order]), strict=True):
        out[i] = raw
    return out
