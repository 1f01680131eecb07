"""The answer model: sees only the items a read policy exposed, plus the question."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class ChatModel(Protocol):
    def complete(
        self,
        messages: list[dict],
        *,
        response_format: dict | None = None,
        max_tokens: int | None = None,
    ) -> str: ...


@dataclass(frozen=True)
class AnswerPrompt:
    """The configurable prompt (configs/answer/*.yaml). `{items}` and `{question}` are filled."""

    system: str
    user: str
    dialogue: str
    """Header of the closed-loop dialogue block; `{turns}` is filled."""
    empty_memory: str = "(no memory items)"


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
    ) -> list[dict]:
        listed = "\n".join(f"- {t}" for t in items) or self.prompt.empty_memory
        user = self.prompt.user.format(items=listed, question=question)
        if dialogue:
            turns = "\n".join(f"{t.role}: {t.text}" for t in dialogue)
            user = self.prompt.dialogue.format(turns=turns) + "\n\n" + user
        return [
            {"role": "system", "content": self.prompt.system},
            {"role": "user", "content": user},
        ]

    def answer(
        self, question: str, items: Sequence[str], dialogue: Sequence[DialogueTurn] = ()
    ) -> Answer:
        raw = self.chat.complete(
            self.messages(question, items, dialogue), max_tokens=self.max_tokens
        )
        return Answer(raw.strip(), tuple(items))
