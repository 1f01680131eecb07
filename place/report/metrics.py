"""metrics.json (`place-metrics/6`): every endpoint and effect, computed from records only.

The document is a pydantic model (`MetricsDocument`) with a docstring per field; it is built
by `compute_metrics`, written by `dump_metrics` and read back by `load_metrics`, so a reader
(tables, plots, replications, notebooks) gets typed attributes rather than string keys.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from place.design import PAPER, Design
from place.errors import PlaceError
from place.metrics import effects as fx
from place.metrics import endpoints as ep
from place.metrics.aoep import Mark, pilot_table, scorecard, task_counts
from place.metrics.bounded import bounded_group
from place.records import RunRecords

if TYPE_CHECKING:
    from place.metrics.catalog import Endpoint

__all__ = [
    "METRICS_SCHEMA",
    "MetricsDocument",
    "PilotRow",
    "TaskCounts",
    "compute_metrics",
    "dump_metrics",
    "load_metrics",
]

METRICS_SCHEMA = "place-metrics/6"
"""/2: strict Ω, clean probe reads, leakage over both worlds' Q*, factorization over worlds a
and b with the first mismatch. /3: the AOEP scorecard (`aoep`, docs/method.md §10). /4: the
scorecard's governance-shaped kinds and its `model_independent` and `answer_dependent`
tallies (§11), the act gate's decisions per condition (`tasks`) and the pilot table
(`aoep_pilot`). /5: per condition, the citation lock's `provenance`, `hearsay` and `forged`
(§12.5); ConflictHarm over conflict probes only. /6: per condition, the read-level endpoints
`reads` (§16)."""

READABLE_SCHEMAS = (
    "place-metrics/2",
    "place-metrics/3",
    "place-metrics/4",
    "place-metrics/5",
    METRICS_SCHEMA,
)
"""Layouts `load_metrics` reads: /2 differs only by lacking `aoep`, /3 by lacking §11's kinds
and tallies in it, `tasks` and `aoep_pilot`, /4 by lacking §12's groups per condition, /5 by
lacking `reads` (read as None)."""

OPTIONAL_GROUPS = ("provenance", "hearsay", "forged", "reads")
"""Per-condition groups an older layout lacks: None when read from one."""


class _Part(BaseModel):
    # Field docstrings become the JSON-schema descriptions; unknown keys are an error so a
    # renamed endpoint cannot be read back silently as missing.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ConditionMetricsBase(_Part):
    """One condition's endpoints (docs/method.md §4); rates in [0, 1], None when undefined.

    The fields are not written here: `ConditionMetrics` is built from the endpoint
    declarations (`place.metrics.catalog`), one field per endpoint and one nested object per
    group (`closed_loop`), each described by its declaration."""

    def value(self, key: str) -> float | int | None:
        """An endpoint's value by its (dotted) key."""
        node: Any = self
        for part in key.split("."):
            node = None if node is None else getattr(node, part)
        return cast(float | int | None, node)


def _condition_model() -> type[ConditionMetricsBase]:
    """The per-condition model from the declared endpoints, in declaration order."""
    from pydantic import create_model

    from place.metrics.catalog import ENDPOINTS, GROUP_DOCS

    def annotation(e: Endpoint) -> Any:
        # A count an answer-free run did not measure is None, not 0 (docs/method.md §15).
        if e.kind == "count":
            return int | None if e.answers else int
        return float | None

    def describe(e: Endpoint) -> str:
        better = "" if e.direction == "none" else f" ({e.direction} is better)"
        return f"{e.display}: {e.doc}{better}"

    top: dict[str, Any] = {}
    groups: dict[str, dict[str, Any]] = {}
    for _, e in ENDPOINTS.items():
        spec = (annotation(e), Field(description=describe(e)))
        if e.group is None:
            top[e.key] = spec
        else:
            if e.group not in groups:
                groups[e.group] = {}
                top[e.group] = None  # keeps the group where its first endpoint is declared
            groups[e.group][e.leaf] = spec
    for group, fields in groups.items():
        model = create_model(
            f"{group.title().replace('_', '')}Metrics",
            __base__=_Part,
            __doc__=GROUP_DOCS.get(group, group),
            **fields,
        )
        if group in OPTIONAL_GROUPS:
            top[group] = (model | None, Field(None, description=GROUP_DOCS.get(group, group)))
        else:
            top[group] = (model, Field(description=GROUP_DOCS.get(group, group)))
    return cast(
        type[ConditionMetricsBase],
        create_model(
            "ConditionMetrics",
            __base__=ConditionMetricsBase,
            __doc__=ConditionMetricsBase.__doc__,
            **top,
        ),
    )


if TYPE_CHECKING:
    ConditionMetrics = ConditionMetricsBase
else:
    ConditionMetrics = _condition_model()
    """One condition's endpoints, a field per declared endpoint (place.metrics.catalog)."""


class BlockEffect(_Part):
    """An effect bootstrapped over conversation blocks, with its leave-one-out range."""

    estimate: float | None
    """Point estimate."""
    interval: list[float | None] | None
    """95 % percentile interval [low, high]; None when undefined."""
    loco_range: list[float | None] | None
    """[min, max] of the estimate leaving one conversation out."""


class PairEffect(_Part):
    """An effect bootstrapped over paired items (queries or probes)."""

    estimate: float | None
    """Point estimate."""
    interval: list[float | None] | None
    """95 % percentile interval [low, high]; None when undefined."""
    n: int
    """Number of pairs."""


class Factorization(_Part):
    """The factorization check: the read policies of one write row saw the same store."""

    ok: bool
    """True when every checkpoint matched; read-side comparisons are valid only then."""
    checkpoints: int
    """Checkpoints compared."""
    mismatches: int
    """Mismatches: per checkpoint, each member of a write row whose readback differed from
    the row's first member's, or that was missing."""
    first_mismatch: Any = None
    """The first differing checkpoint (as `ep.factorization` reports it), or None."""


class Bootstrap(_Part):
    """The seeded bootstrap every interval came from."""

    seed: int
    """Bootstrap seed (manifest `seeds.bootstrap`)."""
    resamples: int
    """Bootstrap resamples."""


class TaskCounts(_Part):
    """How the act gate decided one condition's task deliveries (docs/method.md §11)."""

    deliveries: int
    """Task deliveries decided (a task's run turn, and every redelivery of it or of its
    request): the condition's records in `tasks.jsonl`."""
    executed: int
    """Decided `execute`."""
    blocked: int
    """Decided `block`."""
    no_support: int
    """Decided `no-support`: an argument the condition could not find, and no reason to block."""
    duplicate: int
    """Decided `duplicate`: a redelivery the ledger already holds."""
    matching: int
    """Decided as the reference decides: a redelivery `duplicate`; an allowed task executed
    with the reference's arguments; a blocked one blocked for one of the reference's reasons."""


class PilotTally(_Part):
    """Items kept (obligations) or held (invariants) of one part of a pilot table cell."""

    passed: int
    """Items passed."""
    total: int
    """Items."""
    mark: Mark
    """How the part comes out (docs/method.md §11, "Pilot table"): `fixed` by the
    definitions, `D` deterministic but rank-dependent, `A` dependent on the answer model, `M`
    dependent on Mem0's LLM."""


class PilotFamily(_Part):
    """One family (obligations or invariants) of a pilot system, its tallies never blended."""

    model_independent: PilotTally
    """Every item that reads no answer (without `conflict`, deletion without its answer
    clause): `aoep.<condition>.model_independent`."""
    answer_dependent: PilotTally | None
    """Items that read an answer (`conflict`; deletion's answer clause), always `A`; None in
    an answer-free run (not measured)."""
    aoep_kinds: PilotTally
    """`model_independent` over AOEP-v0's named kinds only (without `act` and
    `idempotence`)."""


class PilotRow(_Part):
    """One system of AOEP-v0's pilot, measured as its condition (docs/method.md §11)."""

    system: str
    """The pilot's name for the system."""
    condition: str
    """The condition that stands for it."""
    obligations: PilotFamily
    """Its obligations."""
    invariants: PilotFamily
    """Its negative invariants."""


class MetricsDocument(_Part):
    """metrics.json: a run's endpoints, effects, factorization and AOEP scorecard."""

    # `schema` is a (deprecated) BaseModel method, so the field is `schema_` aliased.
    schema_: Literal[
        "place-metrics/2",
        "place-metrics/3",
        "place-metrics/4",
        "place-metrics/5",
        "place-metrics/6",
    ] = Field("place-metrics/6", alias="schema")
    """Layout version (`METRICS_SCHEMA`)."""
    trajectory: dict[str, Any]
    """The manifest header's trajectory: id, sha256, path (and `generated` for a generated one)."""
    model: dict[str, Any]
    """The answer model: name, runtime, weights identity."""
    counts: dict[str, int]
    """Trajectory counts: conversations, turns, checkpoints, queries, pairs, probes."""
    design: dict[str, Any] | None = None
    """The producers × read policies design; absent for the paper's 2 × 2."""
    conditions: dict[str, ConditionMetrics]
    """Per condition, in design order."""
    effects: dict[str, BlockEffect | PairEffect]
    """Named effects (docs/method.md §5, §8), in computation order."""
    factorization: Factorization
    """The factorization check."""
    aoep: dict[str, dict[str, Any]] | None = None
    """Per condition, the AOEP scorecard (docs/method.md §10, §11): `obligations` and
    `invariants`, each with passed, total and per-kind passed/total/failed item ids, kinds in
    the scorecard's order; and (/4) `model_independent` and `answer_dependent`, each
    {obligations, invariants} with passed, total and failed `kind:item` ids: the items that
    read no answer, and the answer clauses alone. Absent in /2."""
    tasks: dict[str, TaskCounts] | None = None
    """Per condition, how the act gate decided the task deliveries (docs/method.md §11);
    absent when the run delivered no task (a trajectory without tasks, and /2, /3)."""
    aoep_pilot: list[PilotRow] | None = None
    """AOEP-v0's pilot table (docs/method.md §11): its seven systems in its order, each as
    its condition; absent when the design lacks one of them (and in /2, /3)."""
    bounded: dict[str, dict[str, Any]] | None = None
    """Per condition whose producer keeps §14's budgets (docs/method.md §14): budget_state,
    max_state, over_budget, folds, versions, rebuild_checks and deletion {done, pending,
    retained, total, accurate} (place/metrics/bounded.py); absent for runs without one."""
    bootstrap: Bootstrap
    """The bootstrap's seed and resamples."""
    not_measured: list[str] | None = None
    """An answer-free run (`experiment=state`, docs/method.md §15): what it did not measure,
    because it asked no answer: the endpoint keys (None in every condition), the effect
    names (estimate None), and `aoep.conflict` and `aoep.answer_dependent` (None in the
    scorecard). Absent for a run that asked answers."""

    def to_json(self) -> dict[str, Any]:
        """The document as written: `design`, a /2 document's `aoep`, `tasks` and
        `aoep_pilot` only when present."""
        doc = self.model_dump(mode="json", by_alias=True)
        for optional in ("design", "aoep", "tasks", "aoep_pilot", "bounded", "not_measured"):
            if doc[optional] is None:
                del doc[optional]
        return doc


def _round(x: float | None) -> float | None:
    # Rounded so that metrics.json is byte-stable across platforms' float printing.
    return None if x is None or x != x else round(float(x), 6)


def _interval(iv: tuple[float, float] | None) -> list[float | None] | None:
    return None if iv is None else [_round(iv[0]), _round(iv[1])]


def condition_metrics(
    records: RunRecords, condition: str, design: Design = PAPER, answers: bool = True
) -> ConditionMetrics:
    """Every declared endpoint of one condition, from the records alone; without `answers`
    (an answer-free run), None for every endpoint that reads an answer."""
    from place.metrics.catalog import ENDPOINTS

    doc: dict[str, Any] = {}
    for _, e in ENDPOINTS.items():
        if e.answers and not answers:
            value = None
        else:
            value = e.compute(records, condition, design)
            value = int(value or 0) if e.kind == "count" else _round(value)
        (doc.setdefault(e.group, {}) if e.group else doc)[e.leaf] = value
    return ConditionMetrics.model_validate(doc)


def _block(e: fx.Effect) -> BlockEffect:
    return BlockEffect(
        estimate=_round(e.estimate),
        interval=_interval(e.interval),
        loco_range=_interval(e.loco_range),
    )


def _pair(e: fx.Effect) -> PairEffect:
    return PairEffect(estimate=_round(e.estimate), interval=_interval(e.interval), n=e.n)


def compute_metrics(
    records: RunRecords,
    header: dict[str, Any],
    seed: int,
    conversations: Sequence[str],
    resamples: int = fx.RESAMPLES,
) -> MetricsDocument:
    """The whole metrics document. `header` carries trajectory, model, counts and (for any
    design but the paper's) the design."""
    design = Design.from_json(header.get("design"))
    # An answer-free run says so in its header (docs/method.md §15); every other run asked.
    answers = bool(header.get("answers", True))
    longitudinal = fx.longitudinal_effects(
        records.checkpoints, records.queries, conversations, seed, resamples, design
    )
    effects: dict[str, BlockEffect | PairEffect] = {
        name: _block(e) for name, e in longitudinal.items()
    }
    if design.has("CSS", "PLACE"):
        effects["LeakageDrop"] = _pair(fx.leakage_drop(records.queries, seed, resamples))
    for name, e in fx.extended_effects(
        records.queries, records.probes, seed, resamples, design
    ).items():
        effects[name] = _pair(e)
    unmeasured: list[str] | None = None
    if not answers:
        effects = {
            name: _unmeasured(e)
            if name in fx.ANSWER_EFFECTS or name.startswith("LeakageDrop_")
            else e
            for name, e in effects.items()
        }
        unmeasured = not_measured(effects)
    fact = ep.factorization(records.checkpoints, design)
    card = scorecard(records, design, header.get("core"), answers)
    tasks = task_counts(records, design)
    pilot = pilot_table(card, design)
    return MetricsDocument(
        trajectory=header["trajectory"],
        model=header["model"],
        counts=header["counts"],
        design=None if design.is_paper else design.to_json(),  # the paper's layout stays
        conditions={c: condition_metrics(records, c, design, answers) for c in design.names},
        effects=effects,
        factorization=Factorization(
            ok=fact.ok,
            checkpoints=fact.checkpoints,
            mismatches=len(fact.mismatches),
            first_mismatch=fact.mismatches[0] if fact.mismatches else None,
        ),
        aoep=card,
        tasks=None if tasks is None else {c: TaskCounts(**v) for c, v in tasks.items()},
        aoep_pilot=None if pilot is None else [PilotRow.model_validate(r) for r in pilot],
        bounded=bounded_group(records, design),
        bootstrap=Bootstrap(seed=seed, resamples=resamples),
        not_measured=unmeasured,
    )


def _unmeasured(e: BlockEffect | PairEffect) -> BlockEffect | PairEffect:
    """An effect an answer-free run cannot estimate: no estimate, no interval."""
    if isinstance(e, PairEffect):
        return PairEffect(estimate=None, interval=None, n=0)
    return BlockEffect(estimate=None, interval=None, loco_range=None)


def not_measured(effects: dict[str, BlockEffect | PairEffect]) -> list[str]:
    """What an answer-free run lists as not measured: the answer-reading endpoints, the
    effects among `effects` that read answers, and the scorecard's answer parts."""
    from place.metrics.catalog import ENDPOINTS

    keys = [e.key for _, e in ENDPOINTS.items() if e.answers]
    names = [n for n in effects if n in fx.ANSWER_EFFECTS or n.startswith("LeakageDrop_")]
    return [*keys, *names, "aoep.conflict", "aoep.answer_dependent"]


def dump_metrics(metrics: MetricsDocument) -> str:
    return json.dumps(metrics.to_json(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def load_metrics(path: Path) -> MetricsDocument:
    """A run's metrics.json, validated; a clear `PlaceError` naming the file otherwise."""
    try:
        return MetricsDocument.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " > ".join(str(p) for p in first["loc"]) or "top level"
        raise PlaceError(
            f"{path}: not a metrics document ({', '.join(READABLE_SCHEMAS)}): "
            f"{where}: {first['msg']} ({exc.error_count()} problem(s))"
        ) from None
