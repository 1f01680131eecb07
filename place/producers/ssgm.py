"""`ssgm`: SSGM's dual-track memory with a core write gate and reconciliation (docs/method.md §13).

The mutable track is M (place.governance.ssgm_memory): CSS-style lifecycle records that
also carry `trust` and `source_turn`, learned from user events and from β's reading of tool
turns, every proposal passing the core write gate first. The immutable track is the evidence
log V (place.governance.evidence), written exactly as CSS writes it. There is no governance
ledger: SSGM has no permissions, shares or tasks. Every `reconcile_every` steps, M is
rebuilt by replaying V through the same proposals and gate. A forget redacts V unless
`redact` is off (the seed's immutable log, kept so the difference can be measured).

Realizing M in the store and verifying it by readback follow the certifier
(place/governance/certifier.py): `infer=False` writes with lifecycle metadata, so QASC
reads SSGM's records exactly as it reads CSS's. Never calls the LLM.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from annotated_types import Ge

from place.eligibility import ELIGIBILITY_KEY, eligibility_key
from place.governance.certifier import (
    TRUST,
    CertificationError,
    Provenance,
    metadata_for,
    render,
    visibility_metadata,
    window_metadata,
)
from place.governance.evidence import EVIDENCE, EvidenceLog
from place.governance.ssgm_gate import Proposal, core_predicates
from place.governance.ssgm_memory import (
    UNTRUSTED,
    Observation,
    Observed,
    Origin,
    SSGMMemory,
    log_of,
)
from place.params import Doc, OneOf
from place.producers.registry import (
    ProducerContext,
    RecordCounter,
    StepOutcome,
    register_producer,
    speakers,
)
from place.readback import LIFECYCLE_KEYS, Readback
from place.reference.lifecycle import FactRecord, Transition
from place.trajectory.model import Compaction, Conversation, Schema, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


@dataclass(frozen=True)
class SSGMParams:
    """`design.ssgm`: the core set, the gate, reconciliation and log redaction."""

    core: Annotated[
        str,
        OneOf("schema", "all"),
        Doc("ssgm: the predicates the write gate protects: those the schema marks `core`, or all."),
    ] = "schema"
    gate: Annotated[
        bool, Doc("ssgm: reject proposals that contradict core memory (false: gate off).")
    ] = True
    reconcile_every: Annotated[
        int,
        Ge(0),
        Doc("ssgm: rebuild M from the evidence log every this many update steps (0: never)."),
    ] = 10
    redact: Annotated[
        bool,
        Doc(
            "ssgm: a forget redacts the evidence log (false: the seed's immutable log; every "
            "forget then fails on its residue)."
        ),
    ] = True


def _key(record: FactRecord) -> tuple[Any, ...]:
    """What the store must hold of a record (as the certifier's `_governed_key`)."""
    return (
        record.event_id,
        record.entity,
        record.predicate,
        record.value,
        record.scope,
        record.status,
        record.valid_from.isoformat() if record.valid_from else None,
        record.valid_until.isoformat() if record.valid_until else None,
    )


def _stored_key(meta: Any) -> tuple[Any, ...]:
    """`_key` of a stored record, read from its metadata."""
    return (meta.get("event_id"), *(meta.get(k) for k in LIFECYCLE_KEYS))


def _stored_origin(meta: Any) -> tuple[Any, ...]:
    return (meta.get("source_turn"), meta.get("speaker"), meta.get("trust"))


def _origin_key(origin: Origin) -> tuple[Any, ...]:
    """What a record's metadata says of its origin (`_add` writes it)."""
    return (origin.turn, origin.speaker, UNTRUSTED if origin.trust == UNTRUSTED else TRUST)


def _proposal(p: Proposal) -> dict[str, Any]:
    e = p.event
    return {
        "op": "rejected",
        "event_id": e.id,
        "event_op": e.op,
        "slot": [e.entity, e.predicate, e.scope],
        "value": e.value,
        "source": p.source,
    }


class SSGMWriter:
    def __init__(
        self,
        store: WritableStore,
        schema: Schema,
        readback: Readback,
        params: SSGMParams,
    ) -> None:
        self.store = store
        self.schema = schema
        self.readback = readback
        self.params = params
        core = core_predicates(schema, "all" if params.core == "all" else None)
        self.memory = SSGMMemory(schema, store.principal, core, params.gate)
        self.evidence = EvidenceLog(store)
        self.memory_ids: dict[str, str] = {}
        """event id of a record of M -> its Mem0 memory id."""
        self.steps = 0

    # -- writing ---------------------------------------------------------------------

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        """Observe the step's turns in order; reconcile when the step count says so."""
        principal = self.store.principal
        said = speakers(turns, principal)
        # V first, as CSS does, so that a forget later in the step redacts this step too.
        for turn, speaker in zip(turns, said, strict=True):
            self.evidence.record(
                turn,
                None if turn.role == "assistant" else speaker,
                conv.date,
                conversation=conv.id,
            )
        counter = RecordCounter(self.store)
        operations: list[dict[str, Any]] = []
        for turn, speaker in zip(turns, said, strict=True):
            if turn.redelivers is not None:
                continue  # V keeps no redelivery; applying it again would be a second write
            seen = self.memory.observe(Observed.delivered(turn, speaker, conv))
            operations += self._realize(seen, counter)
            for event, values in seen.forgotten:
                if values and self.params.redact:
                    lexicon = self.readback.lexicon
                    self.evidence.redact(event, list(values), lexicon, principal)
            self.verify(conv.date, seen)
        self.steps += 1
        every = self.params.reconcile_every
        if every and self.steps % every == 0:
            operations.append(self.reconcile(conv.date, counter))
        return StepOutcome(operations)

    def _realize(self, seen: Observation, counter: RecordCounter) -> list[dict[str, Any]]:
        ops = [_proposal(p) for p in seen.rejected]
        ops += [{"op": "skipped", "event_id": p.event.id, "why": why} for p, why in seen.skipped]
        for transition in seen.transitions:
            ops.append(self._apply(transition, counter))
        return ops

    def _apply(self, transition: Transition, counter: RecordCounter) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event_id": transition.event.id,
            "op": transition.event.op,
            "added": [],
            "changed": [],
            "removed": [],
        }
        for before, after in transition.changed:
            memory_id = self.memory_ids[before.event_id]
            self.store.update_metadata(
                memory_id,
                {
                    "status": after.status,
                    ELIGIBILITY_KEY: eligibility_key(
                        after.entity, after.predicate, after.scope, after.status
                    ),
                    **window_metadata(after.valid_from, after.valid_until),
                },
            )
            out["changed"].append(memory_id)
        for record in transition.added:
            out["added"].append(self._add(record, counter))
        removed = [self.memory_ids.pop(r.event_id) for r in transition.removed]
        if removed:
            self.store.remove(removed)
            out["removed"] = removed
        return out

    def _add(self, record: FactRecord, counter: RecordCounter) -> str:
        origin = self.memory.origins[record.event_id]
        provenance = Provenance(
            origin.turn, origin.conversation or "", origin.day, speaker=origin.speaker
        )
        # No Γ: a record is its speaker's, visible to its speaker (private until shared,
        # and SSGM has no shares).
        visibility = visibility_metadata((origin.speaker, (origin.speaker,)), self.store.principal)
        meta = metadata_for(record, provenance, counter.take(), visibility)
        if origin.trust == UNTRUSTED:
            meta["trust"] = UNTRUSTED
        self.memory_ids[record.event_id] = self.store.add_record(render(self.schema, record), meta)
        return self.memory_ids[record.event_id]

    # -- reconciliation ----------------------------------------------------------------

    def reconcile(self, day: dt.date, counter: RecordCounter) -> dict[str, Any]:
        """R: M' from V replayed through proposals and the gate; the store then holds M'."""
        log = log_of([r.metadata for r in self.store.side_rows(EVIDENCE)], self.store.principal)
        fresh, _seen = self.memory.replay(log)
        gone, added = self._hold(fresh, counter)
        self.verify(day, None)
        return {"event_id": None, "op": "reconcile", "removed": gone, "added": added}

    def _hold(self, target: SSGMMemory, counter: RecordCounter) -> tuple[list[str], list[str]]:
        """Make the store hold exactly `target`'s records. A stored record that `target`
        holds identically (same event, lifecycle, window and origin) stays where it is;
        every other stored record is removed (point and history) and every other record of
        `target` written: the same store as removing everything and writing `target`,
        without re-embedding what did not change (docs/decisions.md). Returns the memory
        ids removed and added."""
        have = {
            _stored_key(p.metadata) + _stored_origin(p.metadata): p.id
            for p in self.store.scan().points
        }
        want = {_key(r) + _origin_key(target.origins[r.event_id]): r for r in target.records()}
        gone = [point for key, point in have.items() if key not in want]
        if gone:
            self.store.remove(gone)
        self.memory = target
        self.memory_ids = {want[k].event_id: point for k, point in have.items() if k in want}
        added = [self._add(r, counter) for k, r in want.items() if k not in have]
        return gone, added

    # -- verification --------------------------------------------------------------------

    def verify(self, day: dt.date, seen: Observation | None) -> None:
        """Read the store back: it holds exactly M's records, β reads M's state, and a
        forgotten record's text is nowhere in the state."""
        scan = self.store.scan()
        stored = {_stored_key(p.metadata) for p in scan.points}
        expected = {_key(r) for r in self.memory.records()}
        problems = []
        if stored != expected:
            problems.append(
                f"records differ: missing {sorted(map(str, expected - stored))}, "
                f"unexpected {sorted(map(str, stored - expected))}"
            )
        phys = self.readback.state(scan.points, day)
        if phys != self.memory.state_at(day):
            problems.append(f"readback {sorted(phys)} != M {sorted(self.memory.state_at(day))}")
        if seen is not None:
            gone = {render(self.schema, r) for t in seen.transitions for r in t.removed}
            left = [p.id for p in scan.points if p.text in gone]
            if left:
                problems.append(f"forgotten records still in the state: {left}")
        if problems:
            raise CertificationError("ssgm write failed verification: " + "; ".join(problems))

    # -- the rest of the Writer protocol ----------------------------------------------

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        """SSGM writes no derived summary (§13 has none): a compaction point leaves M as is."""
        return StepOutcome()

    def fork(self, store: WritableStore) -> SSGMWriter:
        twin = SSGMWriter(store, self.schema, self.readback, self.params)
        twin.memory = self.memory.copy()
        twin.evidence = self.evidence.fork(store)
        twin.memory_ids = dict(self.memory_ids)
        twin.steps = self.steps
        return twin

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """M is what the completed steps' part of V replays to (without corruption, R
        changes nothing); the store is then made to hold it: a step interrupted after it
        wrote left records (and V entries) that the step, run again, writes again."""
        rows = self.store.side_rows(EVIDENCE)
        self.evidence.adopt(rows)
        finished = {t.id for turns, _conv in done for t in turns}
        log = log_of(
            [r.metadata for r in rows if r.metadata.get("turn") in finished],
            self.store.principal,
        )
        replayed, _seen = self.memory.empty().replay(log)
        self._hold(replayed, RecordCounter(self.store))
        self.steps = len(done)
        if done:
            self.verify(done[-1][1].date, None)


@register_producer("ssgm", params=SSGMParams, display="SSGM", governance=True)
def ssgm(store: WritableStore, context: ProducerContext[SSGMParams]) -> SSGMWriter:
    return SSGMWriter(store, context.schema, context.readback, context.params)
