"""Per-item run records (records/*.jsonl). Every number in the tables is computed from these.

Each record carries the reference values it is scored against (S*, Q*, gold), so that
`place report RUN_DIR` recomputes the metrics from the run directory alone, without the
trajectory file or any model. `docs/records.md` documents every file and field, and says how
each figure of metrics.json is recomputed from them (docs/method.md §7).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from place.errors import PlaceError

RECORDS_SCHEMA = "place-records/7"
"""Version of the record layout. /2: checkpoint facts carry windows, world-b pre-query
checkpoints, raw lifecycle metadata on exposed items, Q* of both worlds on query records,
clean and injected reads of conflict probes, golds as written in the trajectory. /3: what
the AOEP scorecard needs (docs/method.md §10): per-event transitions and the previous checkpoint
on post-update checkpoints, untrusted values on every checkpoint, forgotten values on every
query and probe record. /4: every Native step records how each of its Mem0 LLM calls
ended (`llm_calls`: finish reason and token counts). /5: the governance half of AOEP-v0
(docs/method.md §11): Γ^phys beside Γ* on world-a post-update and pre-task checkpoints,
governance transitions, askers and foreign facts on reads, visibility of exposed facts, the
act gate's decisions (`tasks.jsonl`), where a residue was found; and what an independent
recomputation needs: the checkpoint a probe follows, the date of every read, the causal
pair of a world-b step. /6: answer-free runs (null answers and outcomes). /7: on-topic
distractors (docs/method.md §16): each exposed item's source turns and distractor kind, each
step's distractor kind. A /6 record reads as a /7 one without distractors (`READABLE`)."""

READABLE = ("place-records/6", RECORDS_SCHEMA)
"""Layouts this version reads: /7 only adds fields whose defaults say "no distractor", so
a /6 run (every recording made before distractors) is read without re-running it."""

Condition = str
"""A condition name of the run's design (place/design.py): the paper's Native, CSS, QASC,
PLACE, or `<Producer>/<Policy>` such as `Append/QASC`. The manifest header says which."""
Producer = str
"""A registered producer name (native, append, css, ...)."""

FactList = list[tuple[str, str, str, str]]
"""Facts as sorted [entity, predicate, value, scope] lists."""

WindowedFactList = list[tuple[str, str, str, str, str | None, str | None]]
"""Facts with their validity windows, as sorted [entity, predicate, value, scope, valid_from,
valid_until] lists (ISO dates; null = open end). The same fact may appear with two windows
when two records hold it; state correctness compares the distinct first four fields."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_: str = Field(RECORDS_SCHEMA, alias="schema")
    """Version of the record layout."""


ForgottenList = list[tuple[str, str, str, str, str]]
"""Forgotten values in force at a read, as sorted [forget event id, entity, predicate, value,
scope] lists: the slot's values before the `forget`, minus those the user stated again since."""


class TransitionRecord(BaseModel):
    """What one trusted event did to its slot in S* (reference side)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    event: str
    kind: Literal["assert", "supersede", "correct", "retract", "forget"]
    """`supersede`: an assert on a one-valued slot that held another value; `assert`: a
    first value, or a value joining a many-valued set."""
    slot: tuple[str, str, str]
    """[entity, predicate, scope]."""
    removed: list[str]
    """Values of the slot live in S* just before the event and not after it."""
    added: list[str]
    """The event's own value, when it is live in S* after the event (assert, correct)."""


class GovernanceRows(BaseModel):
    """Γ (docs/method.md §11) as rows: the reference's Γ* or a condition's Γ^phys, read from
    its ledger (empty for a producer without one). Same row order as
    `place.reference.governance.Governance`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    epochs: list[tuple[str, str, int, bool]] = []
    """[permission, principal, n, held]."""
    shares: list[tuple[str, str, str, str]] = []
    """[entity, predicate, scope, principal shared with]."""
    conflicts: list[tuple[str, str, str, str, str, str, list[str], str]] = []
    """[k, entity, predicate, scope, proposer, value, active values, pending|resolved]."""
    requests: list[tuple[str, str, str, str | None, int | None, list[str], str]] = []
    """[task, handle, asker, permission, n, links, requested|reverted]."""
    quarantine: list[tuple[str, str, str, str, str]] = []
    """[turn, entity, predicate, value, scope]."""
    deletions: list[tuple[str, str, str, str, str]] = []
    """[forget event, entity, predicate, scope, done|retained|pending]."""


class GovernanceRecord(BaseModel):
    """Γ^phys as the condition's producer holds it, beside Γ* at the same checkpoint."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    observed: GovernanceRows
    reference: GovernanceRows


class GovernanceTransitionRecord(BaseModel):
    """What one governance event, request or redelivery did to Γ* (reference side)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    event: str
    """The event id; the task id for `request` and for a task delivered again."""
    kind: Literal[
        "share", "unshare", "grant", "revoke", "propose", "request", "rollback", "duplicate"
    ]
    slot: tuple[str, str, str] | None = None
    principal: str | None = None
    """share/unshare: shared with; grant/revoke: the grantee; propose: the proposer;
    request: the asker."""
    permission: str | None = None
    """grant/revoke: the permission."""
    task: str | None = None
    """request, rollback, and the duplicate of a task or run delivered again."""
    value: str | None = None
    """propose: the proposed value."""


class CheckpointRecord(_Record):
    """The readback one condition observed at one checkpoint of one world."""

    kind: Literal["checkpoint"] = "checkpoint"
    turn: str
    """Turn after which (post-update) or before which (pre-query) the state is read."""
    checkpoint: Literal["post-update", "pre-query", "pre-task"]
    """`pre-task`: before a task or run turn is decided (world a; not in StateCorrectness)."""
    conversation: str
    date: str
    condition: Condition
    world: Literal["a", "b"] = "a"
    """World a is the trajectory; world b a query's causal-pair world (pre-query only)."""
    query: str | None = None
    """The query whose pre-query checkpoint this is (None for post-update checkpoints)."""
    observed: WindowedFactList
    """S^phys = β(X_t, date_t) of this condition's store, as this condition observed it,
    with the window β read (text records: open windows)."""
    reference: WindowedFactList
    """S* of this world at this checkpoint, with the windows the reference replay holds."""
    transitions: list[TransitionRecord] = []
    """Post-update: what each event of the turn did to its slot (empty for pre-query)."""
    previous: tuple[str, str] | None = None
    """Post-update: [turn, checkpoint] of the world-a checkpoint just before this one (None
    for the first): the state a condition held before the events."""
    untrusted: list[tuple[str, str]] = []
    """[predicate, value] pairs that, up to this checkpoint in this world, occur in tool
    turns and in no user turn (text or event): values only an untrusted source stated."""
    governance: GovernanceRecord | None = None
    """World-a post-update and pre-task checkpoints: Γ^phys beside Γ* (None elsewhere)."""
    governance_transitions: list[GovernanceTransitionRecord] = []
    """Post-update: what the turn's governance events did to Γ*."""


ProvenanceClass = Literal["openable", "pointer_only", "orphaned"]
"""The provenance audit's classes (docs/method.md §12.4), in the order they are reported."""
PROVENANCE_CLASSES: tuple[ProvenanceClass, ...] = ("openable", "pointer_only", "orphaned")


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
    visible: bool = True
    """The read's asker may see the fact (its record's `visible_to`, or a plain record's
    `speaker`; docs/method.md §11)."""


class ExposedRecord(BaseModel):
    """One memory item shown to the answer model."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    text: str
    score: float
    facts: list[ReadFactRecord]
    lifecycle: dict[str, str | None] | None
    """The certified record's raw lifecycle metadata as stored (entity, predicate, value,
    scope, status, valid_from, valid_until); None for a record without it (read from text)."""
    ineligible: bool
    """Holds a fact of the queried predicate that fails E."""
    pointer: str | None = None
    """Its evidence pointer (docs/method.md §12): a certified record's `source_turn`, a
    derived summary's sources joined by commas; None for a plain record."""
    provenance: ProvenanceClass = "orphaned"
    """The provenance audit's class: the pointer opens to a V entry that supports the record
    (openable), a pointer that does not (pointer_only), no pointer (orphaned)."""
    sources: list[str] = []
    """The turns the stored record was written from (its `source_turns` metadata, else its
    evidence pointer's turns); [] when it says nothing of its origin (a /6 record, an
    injected conflict or forged record)."""
    distractor: str | None = None
    """The distractor kind of its first source turn that is a distractor (docs/method.md
    §16: DistractorShare); None when no source is one."""


class ForgedRecord(BaseModel):
    """The forged record a forged-provenance probe injected (docs/method.md §12.2)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["missing", "tool", "unsupported", "stale"]
    value: str
    pointer: str
    """The record's `source_turn`: the probe's pointer, `<probe>~forged` for `missing`."""
    item: str
    """The forged record's memory id in the injected copy of the row's store."""


class AuditItemRecord(BaseModel):
    """One stored record in the store audit."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    pointer: str | None
    """As `ExposedRecord.pointer`."""
    provenance: ProvenanceClass
    """As `ExposedRecord.provenance`."""


class AuditRecord(_Record):
    """The store audit of one producer's store at the end of the run (docs/method.md §12.4):
    every record of its state partition, with its pointer and provenance class."""

    kind: Literal["audit"] = "audit"
    producer: Producer
    items: list[AuditItemRecord]


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
    hearsay: list[str] = []
    """Cited: ids of admitted records the citation lock excluded (docs/method.md §12.3)."""
    raw_answer: str | None
    """The answer model's reply; None in an answer-free run (docs/method.md §15), which asks
    none."""
    outcome: list[str] | None
    """Ω(answer): canonical values, or ["ABSTAIN"], or []; None when no answer was asked."""
    gold: list[str]
    """The gold answer as the trajectory writes it: [] means the correct answer is to
    abstain (scored as {ABSTAIN})."""
    authorized: FactList
    """Q*: the reference authorized support of this record's world."""
    authorized_a: FactList
    """Q* of world a."""
    authorized_b: FactList | None
    """Q* of world b (None when the query has no causal pair)."""
    evaluated: FactList
    """Q_eval: the eligible facts in β of this world's store before the query."""
    state_correct: bool
    """S^phys == S* at the pre-query checkpoint of this world."""
    forgotten: ForgottenList = []
    """Values forgotten before this query (in this world) and not stated again since."""
    asker: str | None = None
    """Who asks: the query turn's speaker (the principal without one)."""
    foreign_present: bool = False
    """S*'s history holds a non-forgotten record the asker cannot see (non-exposure item)."""
    read_on: str | None = None
    """The date of the read (the query's conversation date)."""


class ProbeRead(BaseModel):
    """One read policy's read for a probe: what it exposed, and (if answered) the answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    exposed: list[ExposedRecord]
    admitted: int | None
    hearsay: list[str] = []
    """Cited: ids of admitted records the citation lock excluded (docs/method.md §12.3)."""
    raw_answer: str | None
    """Answered only on the injected read of a conflict or forged probe (ConflictHarm and
    ForgedHarm need it)."""
    outcome: list[str] | None


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
    clean: ProbeRead
    """The read of the store as its producer left it: NeededSupport and ExposureRate."""
    injected: ProbeRead | None
    """Conflict probes: the read of a copy with the conflict record added as plain text,
    and its answer: ConflictHarm. Forged probes: the read of a copy with the forged record
    added, and its answer: ForgedExposure and ForgedHarm. None for other probes."""
    gold: list[str]
    """As the trajectory writes it ([] = abstain)."""
    authorized: FactList
    conflict_value: str | None
    forged: ForgedRecord | None = None
    """A forged-provenance probe's injected record (docs/method.md §12.2)."""
    forgotten: ForgottenList = []
    """Values forgotten before the probe's `after` turn and not stated again since."""
    asker: str | None = None
    """Who asks (`asker`, else the principal)."""
    foreign_present: bool = False
    read_on: str | None = None
    """The date of the read (the `after` turn's conversation date)."""
    follows: tuple[str, str] | None = None
    """[turn, checkpoint kind] of the world-a checkpoint whose store the probe reads."""


class LLMCallRecord(BaseModel):
    """How one model call ended, as the server reported it (place.runtime.base.Completion)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    finish: str | None
    """"stop"; "length" (cut at the token budget); "context" (prompt plus reply filled the
    context window: Ollama cuts such prompts silently); null when not recorded (the answer
    came from a cache entry written before finish reasons were kept, or from a fake)."""
    prompt_tokens: int | None
    """Prompt tokens the server evaluated (Ollama prompt_eval_count, OpenAI usage)."""
    completion_tokens: int | None
    """Tokens generated (Ollama eval_count, OpenAI usage)."""


TRUNCATED_FINISHES = ("length", "context")
"""Finish reasons of a cut-off call (place.runtime.base.Completion.truncated)."""


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
    llm_calls: list[LLMCallRecord] = Field(default_factory=list)
    """Native: Mem0's LLM calls of this step in call order (fact extraction, then the update
    decision when there were facts); empty for producers that call no model."""
    seconds: float
    query: str | None = None
    """World b: the query whose causal pair this step writes (world-b steps restart at 1
    for every pair, so (query, step, producer) is their key)."""
    distractor: str | None = None
    """The kind of the distractor block this step writes (a distractor and its reply are a
    step of their own; docs/method.md §16: DistractorWrites); None for any other step."""


class GateDecisionRecord(BaseModel):
    """The act gate's decision on one delivery (place.governance.act_gate.Decision)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["execute", "block", "no-support", "duplicate"]
    reasons: list[str] = []
    args: list[list[str]] | None = None
    handle: str | None = None
    sources: list[str | None] | None = None


class TaskReferenceRecord(BaseModel):
    """The reference decision of the task (Γ*, docs/method.md §11)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    decision: Literal["allow", "block"]
    reasons: list[str] = []
    args: list[list[str]] | None = None
    links: list[str] = []
    """The links the execution may be traced to: event ids of the live records its needs
    admit that the asker sees, where the task is decided (a deferred task's at its run turn,
    where its arguments are bound; docs/method.md §11.3)."""
    handle: str | None = None
    """The request's handle (`h-<task>` unless the trajectory names one)."""


class TaskRecord(_Record):
    """One delivery of a task (its request, its deferred run, or a redelivery) decided by the
    act gate for one condition (world a)."""

    kind: Literal["task"] = "task"
    task: str
    delivery: str
    """The turn that delivers it now (the request turn, the run turn, or a redelivery)."""
    turn: str
    """The turn that requested it."""
    run_turn: str
    """Where the reference decides it."""
    conversation: str
    read_on: str
    condition: Condition
    asker: str
    redelivery: bool
    reads: list[ProbeRead]
    """Per need, what the condition's read policy exposed (never answered)."""
    taus: list[tuple[str, str, str, str]]
    """Per need: (entity, predicate, scope, as_of)."""
    decision: GateDecisionRecord
    reference: TaskReferenceRecord
    request: str | None = None
    """The handle of the request Γ^phys holds for the task (None: none)."""
    foreign_present: bool = False


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
    where: list[str] = []
    """Per residue string, where it was found: `point`, `history`, `ledger` or `summary`."""


class CompactionRecord(_Record):
    """The summary one producer wrote at one compaction point (docs/method.md §11, world a;
    written only by trajectories with `compactions`)."""

    kind: Literal["compaction"] = "compaction"
    after: str
    """The turn the compaction point follows."""
    entity: str
    scope: str
    producer: Producer
    operations: list[dict]
    """What was written: a plain summary's `SUMMARY` (id, text); CSS's `summary` (ids
    added). Empty when the group held nothing."""
    seconds: float


RunRecord = (
    CheckpointRecord
    | QueryRecord
    | ProbeRecord
    | ForgetRecord
    | StepRecord
    | TaskRecord
    | CompactionRecord
    | AuditRecord
)
"""Any record a run writes to `records/` (its `kind` names its file in `RECORD_FILES`)."""

RECORD_FILES: dict[str, tuple[str, type[_Record]]] = {
    "checkpoint": ("checkpoints.jsonl", CheckpointRecord),
    "query": ("queries.jsonl", QueryRecord),
    "probe": ("probes.jsonl", ProbeRecord),
    "forget": ("forgets.jsonl", ForgetRecord),
    "step": ("steps.jsonl", StepRecord),
    "task": ("tasks.jsonl", TaskRecord),
    "compaction": ("compactions.jsonl", CompactionRecord),
    "audit": ("audits.jsonl", AuditRecord),
}


@dataclass
class RunRecords:
    """Every record of one run directory's `records/`, in file order."""

    checkpoints: list[CheckpointRecord] = field(default_factory=list)
    queries: list[QueryRecord] = field(default_factory=list)
    probes: list[ProbeRecord] = field(default_factory=list)
    forgets: list[ForgetRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    tasks: list[TaskRecord] = field(default_factory=list)
    compactions: list[CompactionRecord] = field(default_factory=list)
    audits: list[AuditRecord] = field(default_factory=list)

    @classmethod
    def load(cls, records_dir: Path, only: Iterable[str] | None = None) -> RunRecords:
        """The records of `records_dir`; with `only`, just those kinds (`"step"`, ...)."""
        out = cls()
        targets: dict[str, list] = {
            "checkpoint": out.checkpoints,
            "query": out.queries,
            "probe": out.probes,
            "forget": out.forgets,
            "step": out.steps,
            "task": out.tasks,
            "compaction": out.compactions,
            "audit": out.audits,
        }
        wanted = None if only is None else set(only)
        for kind, (name, model) in RECORD_FILES.items():
            if wanted is not None and kind not in wanted:
                continue
            path = records_dir / name
            if not path.exists():
                continue
            with path.open(encoding="utf-8") as fh:
                for number, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    _check_schema(path, number, line)
                    try:
                        targets[kind].append(model.model_validate_json(line))
                    except ValidationError as exc:
                        raise PlaceError(
                            f"{path}: line {number}: not a {RECORDS_SCHEMA} {kind} record "
                            f"({exc.error_count()} problems, first: {exc.errors()[0]['msg']} at "
                            f"{'.'.join(map(str, exc.errors()[0]['loc']))})"
                        ) from None
        return out


def truncated_calls(steps: list[StepRecord]) -> dict[str, int]:
    """The manifest's `truncated_calls`: Mem0 LLM calls of a run's steps, how many were cut
    off (finish "length" or "context") and how many have no recorded finish."""
    calls = [c for step in steps for c in step.llm_calls]
    return {
        "mem0_calls": len(calls),
        "truncated": sum(c.finish in TRUNCATED_FINISHES for c in calls),
        "context_full": sum(c.finish == "context" for c in calls),
        "unrecorded": sum(c.finish is None for c in calls),
    }


def _check_schema(path: Path, number: int, line: str) -> None:
    """A record of another layout version is refused with what to do, not a field error."""
    try:
        found = json.loads(line).get("schema")
    except (ValueError, AttributeError):
        raise PlaceError(f"{path}: line {number}: not a JSON object") from None
    if found not in READABLE:
        raise PlaceError(
            f"{path}: line {number}: records of layout {found!r}; this version of place "
            f"reads {' and '.join(map(repr, READABLE))} only (see docs/records.md). Re-run the "
            "experiment with this version (its LLM cache replays the model calls), or read the run "
            "with the place version that wrote it (manifest.json: place_version)."
        )
