"""The per-condition endpoints, each declared once (docs/method.md §4; docs/extending.md).

An endpoint's declaration says everything the rest of the package needs: its key in
metrics.json (dotted for a nested one: `closed_loop.joint_success`), its display name, which
direction is better, what it measures (the metrics.json schema description), which tables
show it under which header, whether the replication study's endpoints table has a column for
it, and how to compute it from a run's records. The metrics document's per-condition model
(`place.report.metrics.ConditionMetrics`), Tables 1 A, 2 A and 2 B and the replication
tables are built from these declarations, in declaration order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from place.design import Design
from place.metrics import citation as cit
from place.metrics import endpoints as ep
from place.records import PROVENANCE_CLASSES, ProvenanceClass, RunRecords
from place.registry import Registry
from place.trajectory.model import FORGED_KINDS

Value = float | int | None
Compute = Callable[[RunRecords, str, Design], Value]


@dataclass(frozen=True)
class Endpoint:
    """One per-condition endpoint as declared."""

    key: str
    """Its key in metrics.json `conditions.<condition>`; dotted for a nested one."""
    display: str
    """How tables and plots name it (`JointSuccess`)."""
    direction: Literal["higher", "lower", "none"]
    """Which way is better: `higher`, `lower`, or `none` for a count."""
    doc: str
    """What it measures, in one sentence (the metrics.json schema description)."""
    compute: Compute
    """(records, condition, design) -> its value; None where it is undefined."""
    kind: Literal["rate", "count"] = "rate"
    """A rate in [0, 1] (rounded to 6 decimals in metrics.json) or a count (an integer)."""
    tables: Mapping[str, str] = field(default_factory=dict)
    """Table name (`table1a`, `table2a`, `table2b`) -> its column header there."""
    count: str | None = None
    """The key of the count it is over, shown beside it as `rate (n)` (LeakageRate)."""
    replicate: bool = False
    """A column of the replication study's endpoints table."""
    answers: bool = False
    """It reads the answer model's answers (Ω): not measured in an answer-free run
    (docs/method.md §15), where its value is None and metrics.json lists it as
    `not_measured`."""

    @property
    def group(self) -> str | None:
        """The nested group of a dotted key (`closed_loop`), None at the top level."""
        return self.key.rpartition(".")[0] or None

    @property
    def leaf(self) -> str:
        return self.key.rpartition(".")[2]


ENDPOINTS: Registry[Endpoint] = Registry("endpoint", "place.endpoints")

GROUP_DOCS: dict[str, str] = {
    "closed_loop": "Closed Loop (docs/method.md §4): the agent's own earlier answers are "
    "shown back to it as non-authoritative dialogue; memory writes are unchanged.",
    "reads": "Read-level endpoints (docs/method.md §16): what the recorded reads showed, "
    "judged with β on the exposed items whatever their eligibility; over the utility probes' "
    "clean reads and the world-a query reads together, and each apart.",
}
"""The description of each nested group of endpoints (its metrics.json object)."""


def endpoint(
    key: str,
    *,
    display: str,
    direction: Literal["higher", "lower", "none"],
    doc: str,
    kind: Literal["rate", "count"] = "rate",
    tables: Mapping[str, str] | None = None,
    count: str | None = None,
    replicate: bool = False,
    answers: bool = False,
) -> Callable[[Compute], Compute]:
    """Declare the decorated `compute(records, condition, design)` as endpoint `key`."""

    def decorate(compute: Compute) -> Compute:
        ENDPOINTS.add(
            key,
            Endpoint(
                key,
                display,
                direction,
                doc,
                compute,
                kind,
                dict(tables or {}),
                count,
                replicate,
                answers,
            ),
        )
        return compute

    return decorate


def in_table(table: str) -> list[Endpoint]:
    """The endpoints a table shows, in declaration order."""
    return [e for _, e in ENDPOINTS.items() if table in e.tables]


def replicated() -> list[Endpoint]:
    """The endpoints the replication study's endpoints table shows, in declaration order."""
    return [e for _, e in ENDPOINTS.items() if e.replicate]


# --- the endpoints of docs/method.md §4, in metrics.json order -------------------------------


@endpoint(
    "state_correctness",
    display="StateCorrectness",
    direction="higher",
    doc="Mean, over the world-a post-update checkpoints, of set-F1 between the readback "
    "S^phys and the reference state S* (two empty sets score 1).",
    tables={"table1a": "StateCorrectness"},
    replicate=True,
)
def state_correctness(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.state_correctness(records.checkpoints, condition)


@endpoint(
    "leakage_rate",
    display="LeakageRate",
    direction="lower",
    doc="Share of counted causal pairs (both worlds' evaluated supports equal Q*) whose "
    "answer outcomes differ between world a and world b; None when no pair counts.",
    tables={"table1a": "LeakageRate (n)"},
    count="leakage_n",
    replicate=True,
    answers=True,
)
def leakage_rate(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.leakage_rate(records.queries, condition)[0]


@endpoint(
    "leakage_n",
    display="LeakageN",
    direction="none",
    kind="count",
    doc="Number of causal pairs the leakage rate counts.",
)
def leakage_n(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.leakage_rate(records.queries, condition)[1]


@endpoint(
    "answer_correctness",
    display="AnswerCorrectness",
    direction="higher",
    doc="Mean over the primary world-a queries of F1(Ω, gold), an empty gold read as {ABSTAIN}.",
    tables={"table1a": "AnswerCorrectness"},
    replicate=True,
    answers=True,
)
def answer_correctness(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.answer_correctness(records.queries, condition)


@endpoint(
    "joint_success",
    display="JointSuccess",
    direction="higher",
    doc="Share of primary world-a queries with a fully correct pre-query state, every fact "
    "of Q* readable from the exposed items, no ineligible item exposed, and Ω = gold.",
    tables={"table1a": "JointSuccess"},
    replicate=True,
    answers=True,
)
def joint_success(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.joint_success_rate(records.queries, condition)


@endpoint(
    "needed_support",
    display="NeededSupport",
    direction="higher",
    doc="Share of utility probes with non-empty Q* whose facts are all readable from the "
    "items the clean read exposed.",
    tables={"table2a": "NeededSupport"},
    replicate=True,
)
def needed_support(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.needed_support(records.probes, condition)


@endpoint(
    "exposure_rate",
    display="ExposureRate",
    direction="lower",
    doc="Share of utility probes whose clean read exposed at least one ineligible item.",
    tables={"table2a": "ExposureRate"},
    replicate=True,
)
def exposure_rate(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.exposure_rate_probes(records.probes, condition)


@endpoint(
    "conflict_harm",
    display="ConflictHarm",
    direction="lower",
    doc="Share of conflict probes whose answer on the injected read is wrong and contains "
    "the injected value.",
    tables={"table2a": "ConflictHarm"},
    replicate=True,
    answers=True,
)
def conflict_harm(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.conflict_harm(records.probes, condition)


@endpoint(
    "deletion_residue",
    display="DeletionResidue",
    direction="lower",
    doc="Share of the producer's `forget` events with residue: a stored text or history row "
    "that still names a forgotten value of the slot's entity, at either check (right after "
    "the forget, or at the end of the run); None without forgets.",
)
def deletion_residue(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.deletion_residue(records.forgets, condition, design)


@endpoint(
    "closed_loop.state_correctness",
    display="ClosedLoop StateCorrectness",
    direction="higher",
    doc="The primary state correctness (memory writes are unchanged in Closed Loop); None when "
    "the closed loop was not run.",
    tables={"table2b": "StateCorrectness"},
    answers=True,
)
def closed_loop_state_correctness(records: RunRecords, condition: str, design: Design) -> Value:
    if not ep.query_records(records.queries, condition, "closed_loop"):
        return None  # not run: no figure, rather than the primary one standing in for it
    return ep.state_correctness(records.checkpoints, condition)


@endpoint(
    "closed_loop.exposure_rate",
    display="ClosedLoop ExposureRate",
    direction="lower",
    doc="Share of closed-loop queries whose read exposed at least one ineligible item.",
    tables={"table2b": "ExposureRate"},
    answers=True,
)
def closed_loop_exposure_rate(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.exposure_rate_queries(records.queries, condition, "closed_loop")


@endpoint(
    "closed_loop.joint_success",
    display="ClosedLoop JointSuccess",
    direction="higher",
    doc="JointSuccess over the closed-loop queries.",
    tables={"table2b": "JointSuccess"},
    replicate=True,
    answers=True,
)
def closed_loop_joint_success(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.joint_success_rate(records.queries, condition, "closed_loop")


# -- the citation lock (docs/method.md §12.5) ----------------------------------------------

GROUP_DOCS.update(
    {
        "provenance": "The provenance audit (docs/method.md §12.4): the share of records in "
        "each class (openable: the evidence pointer opens to a V entry that supports the "
        "record; pointer-only: a pointer that does not; orphaned: no pointer), of the "
        "producer's store at the end (`store_*`) and of every exposed occurrence in the "
        "condition's world-a primary queries, clean probe reads and task reads (`exposed_*`).",
        "hearsay": "The citation lock's exclusions (docs/method.md §12.3) over the reads the "
        "exposed audit covers; 0 for a policy without the lock.",
        "forged": "Forged-provenance probes (docs/method.md §12.2): the injected read of a "
        "copy of the store holding a record with certified-looking metadata.",
    }
)


def _declare_audit(where: Literal["store", "exposed"], which: ProvenanceClass) -> None:
    label = which.replace("_", "-")
    source = (
        "the producer's stored records at the end"
        if where == "store"
        else "the records the condition exposed"
    )

    @endpoint(
        f"provenance.{where}_{which}",
        display=f"Provenance {where} {label}",
        direction="none",
        doc=f"Share of {source} that are {label}; None without any.",
        tables={"citation": f"{where.title()} {label}"},
    )
    def compute(records: RunRecords, condition: str, design: Design) -> Value:
        classes = (
            cit.store_audit(records, condition, design)
            if where == "store"
            else cit.exposed_audit(records, condition)
        )
        return cit.audit_share(classes, which)


def _declare_audit_n(where: Literal["store", "exposed"]) -> None:
    @endpoint(
        f"provenance.{where}_n",
        display=f"Provenance {where} n",
        direction="none",
        kind="count",
        doc="How many records the audit classed"
        + (" (the store at the end)." if where == "store" else " (exposed occurrences)."),
    )
    def compute(records: RunRecords, condition: str, design: Design) -> Value:
        if where == "store":
            return len(cit.store_audit(records, condition, design))
        return len(cit.exposed_audit(records, condition))


for _where in ("store", "exposed"):
    for _which in PROVENANCE_CLASSES:
        _declare_audit(_where, _which)
    _declare_audit_n(_where)


@endpoint(
    "hearsay.items",
    display="Hearsay items",
    direction="none",
    kind="count",
    doc="Admitted records the citation lock excluded, summed over the reads.",
    tables={"citation": "Hearsay"},
    count="hearsay.reads",
)
def hearsay_items(records: RunRecords, condition: str, design: Design) -> Value:
    return cit.hearsay_items(records, condition)


@endpoint(
    "hearsay.reads_with_hearsay",
    display="Reads with hearsay",
    direction="none",
    kind="count",
    doc="Reads in which the lock excluded at least one record.",
)
def reads_with_hearsay(records: RunRecords, condition: str, design: Design) -> Value:
    return cit.reads_with_hearsay(records, condition)


@endpoint(
    "hearsay.reads",
    display="Reads",
    direction="none",
    kind="count",
    doc="The reads counted: world-a primary queries, clean probe reads and task reads.",
)
def hearsay_reads(records: RunRecords, condition: str, design: Design) -> Value:
    return cit.read_count(records, condition)


@endpoint(
    "forged.exposure",
    display="ForgedExposure",
    direction="lower",
    doc="Share of forged probes whose injected read exposes the forged record; None without "
    "forged probes.",
    tables={"citation": "ForgedExposure"},
    count="forged.n",
    replicate=True,
)
def forged_exposure(records: RunRecords, condition: str, design: Design) -> Value:
    return cit.forged_exposure(records, condition)


@endpoint(
    "forged.harm",
    display="ForgedHarm",
    direction="lower",
    doc="Share of forged probes whose answer on the injected read is wrong and contains the "
    "forged value; None without forged probes.",
    tables={"citation": "ForgedHarm"},
    replicate=True,
    answers=True,
)
def forged_harm(records: RunRecords, condition: str, design: Design) -> Value:
    return cit.forged_harm(records, condition)


@endpoint(
    "forged.n",
    display="Forged n",
    direction="none",
    kind="count",
    doc="Forged probes read by the condition.",
)
def forged_n(records: RunRecords, condition: str, design: Design) -> Value:
    return len(cit.forged_probes(records, condition))


def _declare_forged_kind(kind: str) -> None:
    @endpoint(
        f"forged.exposure_{kind}",
        display=f"ForgedExposure {kind}",
        direction="lower",
        doc=f"ForgedExposure over the `{kind}` forgeries alone; None without any.",
    )
    def exposure(records: RunRecords, condition: str, design: Design) -> Value:
        return cit.forged_exposure(records, condition, kind)

    @endpoint(
        f"forged.n_{kind}",
        display=f"Forged n {kind}",
        direction="none",
        kind="count",
        doc=f"The `{kind}` forged probes read by the condition.",
    )
    def count(records: RunRecords, condition: str, design: Design) -> Value:
        return len(cit.forged_probes(records, condition, kind))


for _kind in FORGED_KINDS:
    _declare_forged_kind(_kind)


# --- read-level endpoints (docs/method.md §16) ---------------------------------------------

_READ_ENDPOINTS: tuple[
    tuple[str, str, Literal["higher", "lower", "none"], str, ep.ReadJudge], ...
] = (
    (
        "wrong_value_shown",
        "WrongValueShown",
        "lower",
        "Share of reads whose exposed items yield (β, plain text included whatever its "
        "eligibility) a fact of the read's own slot with a value not in Q*",
        ep.wrong_value_shown,
    ),
    (
        "wrong_entity_shown",
        "WrongEntityShown",
        "lower",
        "Share of reads whose exposed items yield a fact of the queried predicate for another "
        "entity",
        ep.wrong_entity_shown,
    ),
    (
        "distractor_share",
        "DistractorShare",
        "lower",
        "Mean, over reads that exposed anything, of the share of exposed items written from a "
        "distractor turn",
        ep.distractor_share,
    ),
    (
        "current_in_context",
        "CurrentInContext",
        "higher",
        "Share of reads with non-empty Q* whose facts are all readable from the exposed items "
        "(NeededSupport, extended to query reads)",
        ep.current_in_context,
    ),
)
_PARTS: tuple[tuple[ep.ReadPart, str, str], ...] = (
    ("all", "", "probes' clean reads and world-a query reads"),
    ("probes", "_probes", "utility probes' clean reads"),
    ("queries", "_queries", "world-a primary query reads"),
)


def _declare_read(
    key: str,
    display: str,
    direction: Literal["higher", "lower", "none"],
    doc: str,
    judge: ep.ReadJudge,
    part: ep.ReadPart,
    suffix: str,
    over: str,
) -> None:
    table = "reads" if part == "all" else "reads_apart"
    header = display if part == "all" else f"{display} ({part})"

    @endpoint(
        f"reads.{key}{suffix}",
        display=f"{display}{'' if part == 'all' else ' ' + part}",
        direction=direction,
        doc=f"{doc}; over the {over}. None without such a read.",
        tables={table: header},
    )
    def compute(records: RunRecords, condition: str, design: Design) -> Value:
        return ep.read_share(records, condition, part, judge)


for _part, _suffix, _over in _PARTS:
    for _key, _display, _direction, _doc, _judge in _READ_ENDPOINTS:
        _declare_read(_key, _display, _direction, _doc, _judge, _part, _suffix, _over)


@endpoint(
    "reads.distractor_writes",
    display="DistractorWrites",
    direction="none",
    kind="count",
    doc="Store operations (Mem0 ADD/UPDATE/DELETE, certified record changes) of the "
    "producer's world-a steps that write a distractor turn and its reply.",
    tables={"reads": "DistractorWrites"},
)
def distractor_writes(records: RunRecords, condition: str, design: Design) -> Value:
    return ep.distractor_writes(records.steps, condition, design)
