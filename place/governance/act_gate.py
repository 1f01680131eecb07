"""The act gate: may a task be carried out, and with which arguments (docs/method.md §11).

Deterministic, with no LLM, and the same for every condition: what differs between
conditions is only what their store, ledger and read policy give it. For one delivery of a
task (its request, its deferred run, or a redelivery of either) by asker A at run turn u:

1. A redelivery whose request the ledger already holds is a `duplicate`: the gate never
   runs a task twice (the idempotency key is the task id).
2. Each need i is read by the condition's read policy with the task text and
   τ_i = (entity, predicate, scope, date_u, A); args_i = the values of (entity, predicate)
   that β reads from the top-ranked exposed item yielding any (for a `many` need, every
   such item; a `one` need whose item yields two values gets none).
3. A task that names permission p needs the ledger's (p, A) epoch row: none → `block`
   [stale-epoch] for a producer that keeps a ledger, `no-support` for one that does not; a
   row that does not hold, or a deferred task whose epoch captured at the request differs
   from the current one → `block` [stale-epoch]. A permission's owner always holds it.
4. A need without arguments: an active, unexpired certified record of its slot invisible to
   A → `block` [out-of-scope]; else a quarantine row of its predicate → `block`
   [untrusted]; else `no-support`.
5. Otherwise `execute`, with the arguments, the request's handle (None when the ledger has
   no request) and the sources: the `event_id`s of the supplying certified items (None for a
   plain item, which names no event).

Steps 1, 3 and 4 read the ledger and lifecycle metadata by key, never text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from place.reference.governance import Governance
from place.trajectory.model import Reason, Slot, Task

DecisionKind = Literal["execute", "block", "no-support", "duplicate"]
BlockReason = Reason
"""The reasons of a block are the reference's (stale-epoch, out-of-scope, untrusted)."""


@dataclass(frozen=True)
class NeedRead:
    """What the condition's read policy exposed for one need, ranked as the gate uses it
    (top-ranked first), each item with the values β reads for the need's predicate and the
    event id of a certified item (None for a plain one)."""

    slot: Slot
    many: bool
    """The need's predicate holds several values at once (`cardinality: many`)."""
    items: tuple[tuple[tuple[str, ...], str | None], ...]
    """(values β reads for the need's entity and predicate, event_id or None), ranked."""


@dataclass(frozen=True)
class Decision:
    """The gate's decision on one delivery."""

    kind: DecisionKind
    reasons: tuple[BlockReason, ...] = ()
    args: tuple[tuple[str, ...], ...] | None = None
    """For `execute`: one sorted value list per need."""
    handle: str | None = None
    sources: tuple[str | None, ...] | None = None
    """For `execute`: the event id of each supplying item (None: a plain item)."""


def need_args(read: NeedRead) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """args_i and the sources that supplied them (step 2)."""
    supplying = [(values, source) for values, source in read.items if values]
    if not supplying:
        return (), ()
    if read.many:
        values = sorted({v for vs, _ in supplying for v in vs})
        return tuple(values), tuple(source for _, source in supplying)
    top, source = supplying[0]
    if len(set(top)) != 1:
        return (), ()  # a one-valued need read as two values: no argument
    return (top[0],), (source,)


def decide(
    task: Task,
    asker: str,
    reads: Sequence[NeedRead],
    ledger: Governance,
    *,
    keeps_ledger: bool,
    owner_of_permission: Callable[[str], str],
    redelivery: bool,
    invisible_certified: Callable[[Slot], bool],
) -> Decision:
    """The gate's decision for one delivery (module doc). `ledger` is the condition's Γ^phys
    (empty for a producer without a ledger); `invisible_certified(slot)`: the store holds an
    active, unexpired certified record of the slot that `asker` cannot see."""
    request = next((r for r in ledger.requests if r.task == task.id), None)
    if redelivery and request is not None:
        return Decision("duplicate")
    args: list[tuple[str, ...]] = []
    sources: list[str | None] = []
    for read in reads:
        values, supplied = need_args(read)
        args.append(values)
        sources.extend(supplied)
    if task.permission is not None and owner_of_permission(task.permission) != asker:
        row = next(
            (
                e
                for e in ledger.epochs
                if e.permission == task.permission and e.principal == asker
            ),
            None,
        )
        if row is None:
            return Decision("block", ("stale-epoch",)) if keeps_ledger else Decision("no-support")
        captured = request.n if request is not None else None
        if not row.held or (task.deferred and captured is not None and captured != row.n):
            return Decision("block", ("stale-epoch",))
    missing = [read.slot for read, values in zip(reads, args, strict=True) if not values]
    if missing:
        if any(invisible_certified(slot) for slot in missing):
            return Decision("block", ("out-of-scope",))
        quarantined = {row.fact.predicate for row in ledger.quarantine}
        if any(slot.predicate in quarantined for slot in missing):
            return Decision("block", ("untrusted",))
        return Decision("no-support")
    return Decision(
        "execute",
        args=tuple(tuple(sorted(a)) for a in args),
        handle=request.handle if request is not None else None,
        sources=tuple(sources),
    )
