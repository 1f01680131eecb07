"""`bounded`: CSS with per-class budgets (docs/method.md §14; place/governance/bounded.py).

It writes exactly what `css` writes, step by step, and then enforces the state budget: ended
records beyond `design.bounded.budget.state` are folded into their (entity, scope) archive
summary. Every summary version is logged in L and rebuilt from L and V after every step. A
forget reaches the archives too, and the deletion row in L says whether it was carried out
(`done`), kept under the declared retention (`retained`, `retain: [evidence]` keeps V
unredacted) or left residue (`pending`).

The step record's operations are css's, followed by one `op: bounded` entry (state size,
folds, summary versions logged, rebuild checks, deletion statuses) from which the
`bounded` group of metrics.json is computed (place/metrics/bounded.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from annotated_types import Ge

from place.governance.bounded import RETAINABLE, BoundedCertifier
from place.governance.certifier import Provenance
from place.params import Doc, Rule
from place.producers.css import CSSWriter
from place.producers.registry import (
    ProducerContext,
    RecordCounter,
    StepOutcome,
    register_producer,
    turn_speaker,
)
from place.trajectory.model import Conversation, Turn

if TYPE_CHECKING:
    from place.memory.item import WritableStore


class NullOnly(Rule):
    """Only null: the key names a mechanism this version does not build."""

    allowed = "null (line retirement, docs/method.md §14, is not built)"

    def check(self, value: object) -> bool:
        return value is None


class Retainable(Rule):
    """A list of classes a design may keep under declared retention."""

    allowed = "a list of: " + ", ".join(RETAINABLE)

    def check(self, value: object) -> bool:
        return isinstance(value, list) and all(v in RETAINABLE for v in value)


@dataclass
class BudgetParams:
    """`design.bounded.budget`: per-class budgets (null: unbounded)."""

    state: (
        Annotated[
            int,
            Ge(0),
            Doc(
                "bounded: B_state, the most certified state records kept after a step (null: "
                "unbounded); ended records beyond it are folded into archive summaries."
            ),
        ]
        | None
    ) = None
    summary: Annotated[
        int | None,
        NullOnly(),
        Doc(
            "bounded: B_summary, lines per summary (null: unbounded). Line retirement is not "
            "built: any other value is refused."
        ),
    ] = None


@dataclass
class BoundedParams:
    """`design.bounded`: the budgets and the declared retention (docs/method.md §14)."""

    budget: BudgetParams = field(default_factory=BudgetParams)
    retain: Annotated[
        list[str],
        Retainable(),
        Doc(
            "bounded: classes kept under declared retention on forget (allowed: evidence); "
            "a retained V is not redacted and its forgets are `retained`, not `done`."
        ),
    ] = field(default_factory=list)


class BoundedWriter(CSSWriter):
    """CSS's writer, then the budget after every update step."""

    certifier: BoundedCertifier

    def __init__(
        self, store: WritableStore, certifier: BoundedCertifier, params: BoundedParams
    ) -> None:
        super().__init__(store, certifier)
        self.params = params

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        """css's step, then the budget. Task and run turns are reads (§11): the runner keeps
        no step record of them, so the budget waits for the next update step."""
        done = super().write(turns, conv)
        if not turns or any(t.task is not None or t.run is not None for t in turns):
            return done
        last = turns[-1]
        provenance = Provenance(
            last.id, conv.id, conv.date, speaker=turn_speaker(last, self.store.principal)
        )
        step = self.certifier.end_step(conv.date, last.id, provenance, RecordCounter(self.store))
        done.operations.append(step.operation(self.params.budget.state, self.params.retain))
        return done

    def fork(self, store: WritableStore) -> BoundedWriter:
        return BoundedWriter(store, self.certifier.fork(store), self.params)

    def restart(self) -> None:
        old = self.certifier
        self.certifier = BoundedCertifier.restore_bounded(
            self.store, old.schema, old.readback, old.budget_state, old.retain
        )


@register_producer("bounded", params=BoundedParams, display="Bounded", governance=True)
def bounded(store: WritableStore, context: ProducerContext[BoundedParams]) -> BoundedWriter:
    params = context.params or BoundedParams()
    certifier = BoundedCertifier(
        store, context.schema, context.readback, params.budget.state, params.retain
    )
    return BoundedWriter(store, certifier, params)
