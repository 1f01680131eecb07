"""Per-item run records (records/*.jsonl). Every number in the tables is computed from these.

Each record carries the reference values it is scored against (S*, Q*, gold), so that
`place report RUN_DIR` recomputes the metrics from the run directory alone, without the
trajectory file or any model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RECORDS_SCHEMA = "place-records/1"

Condition = Literal["Native", "CSS", "QASC", "PLACE"]
CONDITIONS: tuple[Condition, ...] = ("Native", "CSS", "QASC", "PLACE")
Producer = Literal["native", "css"]
ReadPolicy = Literal["native", "qasc"]
PRODUCER_OF: dict[str, Producer] = {
    "Native": "native",
    "CSS": "css",
    "QASC": "native",
    "PLACE": "css",
}
POLICY_OF: dict[str, ReadPolicy] = {
    "Native": "native",
    "CSS": "native",
    "QASC": "qasc",
    "PLACE": "qasc",
}

FactList = list[tuple[str, str, str, str]]
"""Facts as sorted [entity, predicate, value, scope] lists."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_: str = Field(RECORDS_SCHEMA, alias="schema")
    """Version of the record layout."""


class CheckpointRecord(_Record):
    """The readback one condition observed at one checkpoint."""

    kind: Literal["checkpoint"] = "checkpoint"
    turn: str
    """Turn after which (post-update) or before which (pre-query) the state is read."""
    checkpoint: Literal["post-update", "pre-query"]
    conversation: str
    date: str
    condition: Condition
    observed: FactList
    """S^phys = β(X_t, date_t) of this condition's store, as this condition observed it."""
    reference: FactList
    """S* at this checkpoint."""


class ReadFactRecord(BaseModel):
    """A fact β read from an exposed item, with the lifecycle the item carries."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    entity: str
    predicate: str
    value: str
    scope: str
    status: str
    valid_from: str | None
    valid_until: str | None
    certified: bool
    """Read from lifecycle metadata (True) or from text (False)."""
    readable: bool
    """β yields this fact at the read's date (active and unexpired); a superseded or expired
    certified record still holds its fact, but nothing is readable from it."""
    eligible: bool
    """E(fact, τ) for the query or probe this item was exposed to."""


class ExposedRecord(BaseModel):
    """One memory item shown to the answer model."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    text: str
    score: float
    facts: list[ReadFactRecord]
    ineligible: bool
    """Holds a fact of the queried predicate that fails E."""


class QueryRecord(_Record):
    """One query answered by one condition in one world and mode."""

    kind: Literal["query"] = "query"
    query: str
    turn: str
    conversation: str
    family: str
    condition: Condition
    world: Literal["a", "b"]
    mode: Literal["primary", "closed_loop"]
    tau: tuple[str, str, str, str]
    """(entity, predicate, scope, as_of) of the query."""
    question: str
    exposed: list[ExposedRecord]
    admitted: int | None
    """QASC: records admitted before truncation; None for the Native read."""
    raw_answer: str
    outcome: list[str]
    """Ω(answer): canonical values, or ["ABSTAIN"], or []."""
    gold: list[str]
    """Gold outcome ([] in the trajectory is recorded as ["ABSTAIN"])."""
    authorized: FactList
    """Q*: the reference authorized support of this world."""
    evaluated: FactList
    """Q_eval: the eligible facts in β of this world's store before the query."""
    state_correct: bool
    """S^phys == S* at the pre-query checkpoint of this world."""


class ProbeRecord(_Record):
    """One utility probe evaluated by one condition."""

    kind: Literal["probe"] = "probe"
    probe: str
    after: str
    conversation: str
    family: str
    condition: Condition
    tau: tuple[str, str, str, str]
    question: str
    exposed: list[ExposedRecord]
    admitted: int | None
    raw_answer: str | None
    """Answered only for conflict probes (ConflictHarm needs an answer, the others do not)."""
    outcome: list[str] | None
    gold: list[str]
    authorized: FactList
    conflict_value: str | None


class StepRecord(_Record):
    """One update step written by one producer."""

    kind: Literal["step"] = "step"
    step: int
    producer: Producer
    world: Literal["a", "b"]
    turns: list[str]
    operations: list[dict]
    """Mem0 events (native) or certified record changes (css)."""
    failures: list[str]
    """Mem0 extraction/update failures seen in this step (e.g. unparsable JSON)."""
    seconds: float


class ForgetRecord(_Record):
    """Deletion residue for one `forget` event and one producer, at one check."""

    kind: Literal["forget"] = "forget"
    event: str
    producer: Producer
    check: Literal["after", "end"]
    """Right after the event's update step, or at the end of the run."""
    slot: tuple[str, str, str]
    values: list[str]
    """Values checked: those the slot held before the event (minus, at the end, values the
    user asserted again for the slot later)."""
    residue: list[str]
    """Stored strings (Qdrant payloads, Mem0 history) from which β reads a checked value."""
