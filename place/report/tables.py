"""Tables 1 and 2 as in the paper, the AOEP scorecard and the AOEP-v0 pilot table, in
Markdown, LaTeX (booktabs) and CSV.

Rows come from one or more metrics documents (one per model scale). The paper's published
values can be shown beside them, always in rows labelled as the paper's (Tables 1 and 2 only:
the paper reports no AOEP scorecard). The pilot table shows the AOEP-v0 pilot's published
figures in columns of their own, labelled as the pilot's.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

from place.design import PAPER, Design
from place.metrics.aoep import GOVERNANCE_KINDS, INVARIANTS, OBLIGATIONS
from place.metrics.catalog import Endpoint, in_table
from place.report.metrics import BlockEffect, MetricsDocument, PairEffect, PilotTally

EFFECTS = ("StateGain", "LeakageDrop", "JointGain", "InteractionGain")
NOT_MEASURED = "not measured"
"""The cell of a figure an answer-free run did not measure (docs/method.md §15): never `–`
(undefined) and never 0."""


def _unmeasured(m: MetricsDocument) -> set[str]:
    return set(m.not_measured or ())


def answer_free_note(runs: Sequence[MetricsDocument]) -> str | None:
    """The note under a table that shows an answer-free run."""
    free = [_label(m, runs) for m in runs if m.not_measured]
    if not free:
        return None
    return (
        f"{', '.join(free)}: answer-free run (experiment=state, docs/method.md §15): no answer "
        f"was asked, so what reads one is {NOT_MEASURED}"
    )


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


CONDITIONS = PAPER.names
"""The paper's four conditions: the rows of its published values."""


def _conditions(m: MetricsDocument) -> list[str]:
    """The run's conditions in its design's order (metrics.json keeps that order)."""
    return list(m.conditions)


def _effect_names(runs: Sequence[MetricsDocument]) -> list[str]:
    """The paper's four effects, then every other effect any run reports, in order."""
    names = list(EFFECTS)
    for m in runs:
        names += [n for n in m.effects if n not in names]
    return names


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    header: list[str]
    rows: list[list[str]]
    banner: str | None = None
    """Shown above the table when a run it reports is invalid (e.g. factorization failed)."""
    note: str | None = None
    """A caution shown under the title (e.g. intervals resting on too few blocks)."""


def paper_values() -> dict[str, Any]:
    """The paper's published Table 1 and 2 values (Qwen2.5-3B/7B), carried by the package."""
    return json.loads(
        resources.files("place.data").joinpath("paper_values.json").read_text("utf-8")
    )


def pilot_values() -> dict[str, Any]:
    """The AOEP-v0 pilot's published figures (its Table 18), carried by the package with
    their source (`place/data/aoep_pilot_values.json`)."""
    return json.loads(
        resources.files("place.data").joinpath("aoep_pilot_values.json").read_text("utf-8")
    )


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def fmt_interval(iv: Sequence[float | None] | None) -> str:
    if iv is None or iv[0] is None or iv[1] is None:
        return "–"
    return f"[{iv[0]:.3f}, {iv[1]:.3f}]"


def _trajectory(metrics: MetricsDocument) -> str:
    t = metrics.trajectory
    return str(t.get("id") or str(t.get("sha256", "?"))[:12])


def _label(metrics: MetricsDocument, runs: Sequence[MetricsDocument] = ()) -> str:
    """A run's row label: its model, and its trajectory when the table reports several runs
    (`place compare`), so rows of different trajectories can be told apart."""
    model = str(metrics.model["name"])
    return f"{model} on {_trajectory(metrics)}" if len(runs) > 1 else model


PAPER_TRAJECTORY = "trajectories/primary.yaml"
"""The shipped trajectory built to the paper's design (302 turns, 105 checkpoints, 48
queries and pairs, 72 utility probes, and 4 forged-provenance probes outside them, which the
paper's figures do not count); its sha256 is `trajectory_sha256` in paper_values.json."""


def on_paper_trajectory(runs: Sequence[MetricsDocument]) -> bool:
    """Every run is on the paper's trajectory (by content), so the paper's values compare."""
    sha = paper_values()["trajectory_sha256"]
    return bool(runs) and all(m.trajectory.get("sha256") == sha for m in runs)


def _paper_label(model: str, runs: Sequence[MetricsDocument]) -> str:
    """The paper's rows are always labelled as the paper's; beside a run of another
    trajectory they also say that they are not of this trajectory."""
    if on_paper_trajectory(runs):
        return f"paper: {model}"
    return f"paper (its own trajectory, not this one): {model}"


MIN_BLOCKS = 4
"""Fewer conversations than this and a conversation-block bootstrap interval says little: K
blocks give C(2K-1, K) distinct resamples (35 for the paper's 4, 10 for 3, 3 for 2), so its
percentiles are the extremes of a handful of values. The paper's design has 4; the table
says so below that (docs/decisions.md)."""
MIN_PAIRS = 10
"""Likewise for a pair or probe bootstrap over fewer items than this."""


def interval_warnings(runs: Sequence[MetricsDocument]) -> str | None:
    """A warning for Table 1 B when an interval rests on too few blocks or items."""
    notes = []
    for m in runs:
        k = int(m.counts.get("conversations", 0))
        if k < MIN_BLOCKS and any(isinstance(e, BlockEffect) for e in m.effects.values()):
            notes.append(
                f"{_label(m, runs)}: the conversation-block intervals rest on {k} "
                f"conversation(s), fewer than {MIN_BLOCKS}; read them as descriptive"
            )
        small = sorted(
            name for name, e in m.effects.items() if isinstance(e, PairEffect) and e.n < MIN_PAIRS
        )
        if small:
            notes.append(
                f"{_label(m, runs)}: {', '.join(small)} rest on fewer than {MIN_PAIRS} pairs "
                "or probes (n shown)"
            )
    return "; ".join(notes) or None


ENDPOINT_TABLES: dict[str, tuple[str, str | None]] = {
    "table1a": ("Table 1 A: primary endpoints", "table1_primary"),
    "table2a": ("Table 2 A: utility probes", "table2_utility"),
    "table2b": ("Table 2 B: closed loop", "table2_closed_loop"),
    "citation": (
        "Table 3: citation lock and provenance audit (docs/method.md §12; shares of records "
        "openable, pointer-only, orphaned; hearsay = excluded records / reads)",
        None,
    ),
    "reads": (
        "Table 4 A: read-level endpoints over probes' clean reads and world-a query reads "
        "(docs/method.md §16; β on the exposed items, eligible or not)",
        None,
    ),
    "reads_apart": (
        "Table 4 B: read-level endpoints, probes and query reads apart (docs/method.md §16)",
        None,
    ),
}
"""The per-condition endpoint tables: name -> (title, section of the paper's values; None
for a table the paper has no values for). Their columns are the endpoints declared in them
(place.metrics.catalog), in declaration order."""


def _endpoint_cell(e: Endpoint, value: Callable[[str], Any]) -> str:
    raw = value(e.key)
    text = str(raw) if e.kind == "count" and raw is not None else fmt(raw)
    return text if e.count is None else f"{text} ({value(e.count)})"


def _ungrouped(published: dict[str, Any]) -> Callable[[str], Any]:
    """The paper's values are keyed by an endpoint's own name, without its group."""
    return lambda key: published.get(key.rpartition(".")[2])


def endpoint_table(name: str, runs: Sequence[MetricsDocument], paper: bool) -> Table:
    """A per-condition table: one row per run and condition, a column per endpoint declared
    in it; with `paper`, the paper's rows (its four conditions), labelled as the paper's."""
    title, section = ENDPOINT_TABLES[name]
    columns = in_table(name)
    rows = []
    for m in runs:
        skip = _unmeasured(m)
        for c in _conditions(m):
            w = m.conditions[c]
            cells = [NOT_MEASURED if e.key in skip else _endpoint_cell(e, w.value) for e in columns]
            rows.append([_label(m, runs), c, *cells])
    if paper and section is not None:
        for model, conds in paper_values()[section].items():
            for c in CONDITIONS:
                published = _ungrouped(conds[c])
                cells = [_endpoint_cell(e, published) for e in columns]
                rows.append([_paper_label(model, runs), c, *cells])
    return Table(
        name,
        title,
        ["Model", "Condition", *[e.tables[name] for e in columns]],
        rows,
        note=answer_free_note(runs) if any(e.answers for e in columns) else None,
    )


def table1a(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    return endpoint_table("table1a", runs, paper)


def table1b(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    rows = []
    names = _effect_names(runs)
    for m in runs:
        row = [_label(m, runs)]
        for name in names:
            e = m.effects.get(name)
            if name in _unmeasured(m):
                row.append(NOT_MEASURED)
                continue
            if e is None:
                row.append("–")
                continue
            extra = (
                f" n={e.n}" if isinstance(e, PairEffect) else f" LOCO {fmt_interval(e.loco_range)}"
            )
            row.append(f"{fmt(e.estimate)} {fmt_interval(e.interval)}{extra}")
        rows.append(row)
    if paper:
        for model, effs in paper_values()["table1_effects"].items():
            rows.append(
                [_paper_label(model, runs)]
                + [
                    f"{fmt(effs[n]['estimate'])} {fmt_interval(effs[n]['interval'])}"
                    if n in effs
                    else "–"
                    for n in names
                ]
            )
    return Table(
        "table1b",
        "Table 1 B: effects with 95 % intervals "
        "(LeakageDrop: pair bootstrap; others: conversation-block bootstrap, LOCO range)"
        + (
            "; extended design (docs/method.md §8): LeakageDrop_P pair bootstrap, StateGain_P "
            "conversation blocks, SupportCost_R and ExposureGap_R probe bootstrap"
            if len(names) > len(EFFECTS)
            else ""
        ),
        ["Model", *names],
        rows,
        note=_join(interval_warnings(runs), answer_free_note(runs)),
    )


def table2a(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    return endpoint_table("table2a", runs, paper)


def table2b(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    return endpoint_table("table2b", runs, paper)


def floor_forgery_note(runs: Sequence[MetricsDocument]) -> str | None:
    """The note on the no-memory floor's ForgedExposure (docs/method.md §12.5): its store
    holds nothing but the forgery, so the figure measures the read policy alone."""
    floors = list(
        dict.fromkeys(
            c.name
            for m in runs
            for c in Design.from_json(m.design).conditions
            if c.producer == "none"
            and c.name in m.conditions
            and (m.conditions[c.name].value("forged.n") or 0) > 0
        )
    )
    if not floors:
        return None
    return (
        f"{', '.join(floors)}: the `none` producer keeps no memory, so a forged probe's store "
        "holds the forgery alone; its ForgedExposure measures the read policy, not a memory"
    )


def citation(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    table = endpoint_table("citation", runs, paper)
    return replace(table, note=_join(table.note, floor_forgery_note(runs)))


def reads(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    return endpoint_table("reads", runs, paper)


def reads_apart(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    return endpoint_table("reads_apart", runs, paper)


AOEP_FAMILIES = (
    ("obligations", "Obligations", OBLIGATIONS),
    ("invariants", "Invariants", INVARIANTS),
)
"""metrics.json `aoep` families: key, column header, kinds (in docs/records.md order)."""


def _passed_of(v: dict[str, Any] | None, measured: bool = True) -> str:
    if not measured:
        return NOT_MEASURED
    return "–" if v is None else f"{v['passed']}/{v['total']}"


def _kinds_shown(runs: Sequence[MetricsDocument], family: str, kinds: Sequence[str]) -> list[str]:
    """§10's kinds always; one of §11's governance-shaped kinds only when some run has an
    item of it, so that the scorecard of a run without §11's constructs is what it was."""

    def has_items(kind: str) -> bool:
        return any(
            ((card.get(family) or {}).get("kinds", {}).get(kind) or {}).get("total", 0) > 0
            for m in runs
            for card in (m.aoep or {}).values()
        )

    return [k for k in kinds if k not in GOVERNANCE_KINDS or has_items(k)]


def aoep(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    """The AOEP scorecard (docs/method.md §10), one row per run and condition: obligations kept and
    negative invariants held as `passed/total`, overall and per kind. The two are never
    blended (a store that keeps nothing holds every invariant). A metrics document without
    `aoep` (schema place-metrics/2 and older) adds no rows; `paper` adds none either, as the
    paper publishes no scorecard."""
    del paper
    shown = {key: _kinds_shown(runs, key, kinds) for key, _, kinds in AOEP_FAMILIES}
    rows = []
    for m in runs:
        card = m.aoep
        if not card:
            continue
        for c in _conditions(m):
            if c not in card:
                continue
            row = [_label(m, runs), c]
            skip = _unmeasured(m)
            for key, _, _kinds in AOEP_FAMILIES:
                family = card[c].get(key)
                row.append(_passed_of(family))
                row += [
                    _passed_of((family or {}).get("kinds", {}).get(k), f"aoep.{k}" not in skip)
                    for k in shown[key]
                ]
            rows.append(row)
    header = ["Model", "Condition"]
    for key, title, _kinds in AOEP_FAMILIES:
        header += [title, *(k.capitalize() for k in shown[key])]
    governed = any(k in GOVERNANCE_KINDS for kinds in shown.values() for k in kinds)
    return Table(
        "aoep",
        "AOEP scorecard: obligations kept and negative invariants held (docs/method.md §10"
        + (", §11)" if governed else ")"),
        header,
        rows,
        note=answer_free_note(runs),
    )


PILOT_HEADER = [
    "Model",
    "Pilot system",
    "Condition",
    "Obligations",
    "Obligations, AOEP kinds",
    "Obligations, answer",
    "Invariants",
    "Invariants, AOEP kinds",
    "Invariants, answer",
    "Pilot: obligations (published)",
    "Pilot: invariants (published)",
]
"""The pilot table's columns: a run's tallies that read no answer (all kinds, then AOEP-v0's
named kinds alone) and those that read an answer, per family, then the pilot's published
figures (docs/method.md §11, "Pilot table")."""


def _pilot_cell(t: PilotTally | None) -> str:
    """`passed/total mark`; `–` for a part without items; `not measured` for the answer part
    of an answer-free run."""
    if t is None:
        return NOT_MEASURED
    return "–" if t.total == 0 else f"{t.passed}/{t.total} {t.mark}"


def aoep_pilot(runs: Sequence[MetricsDocument], paper: bool) -> Table:
    """AOEP-v0's pilot table (docs/method.md §11): a row per run and pilot system, in the
    pilot's order, with the condition that stands for the system; each cell `passed/total`
    and its mark (fixed, D, A, M); beside them the pilot's published figures (its own
    episodes, items and reader), labelled as the pilot's. A metrics document without
    `aoep_pilot` (a design without the pilot's conditions, or /2, /3) adds no rows. `paper`
    (the PLACE paper's values) does not apply: the published pilot columns are always shown."""
    del paper
    values = pilot_values()
    published = {s["system"]: s for s in values["systems"]}
    rows = []
    for m in runs:
        for r in m.aoep_pilot or []:
            pub = published.get(r.system)
            rows.append(
                [
                    _label(m, runs),
                    r.system,
                    r.condition,
                    *(
                        _pilot_cell(part)
                        for family in (r.obligations, r.invariants)
                        for part in (
                            family.model_independent,
                            family.aoep_kinds,
                            family.answer_dependent,
                        )
                    ),
                    "–" if pub is None else f"{pub['obligations']}/{values['obligations_total']}",
                    "–" if pub is None else f"{pub['invariants']}/{values['invariants_total']}",
                ]
            )
    return Table(
        "aoep_pilot",
        "AOEP-v0 pilot table: the pilot's systems as conditions (docs/method.md §11); fixed = "
        "follows from the definitions, D = deterministic but rank-dependent, A = depends on the "
        "answer model, M = depends on Mem0's LLM; AOEP kinds = without act and idempotence",
        list(PILOT_HEADER),
        rows,
        note=f"published columns: {values['source']}; its own episodes and items, not this run's",
    )


def invalid_banner(runs: Sequence[MetricsDocument]) -> str | None:
    """The banner every table carries when a run it reports failed the factorization check."""
    failed = [
        f"{_label(m, runs)}: first mismatch at {m.factorization.first_mismatch}"
        for m in runs
        if not m.factorization.ok
    ]
    if not failed:
        return None
    return (
        "INVALID: factorization check failed (the read policies of a write row observed "
        "different stores), so read-side comparisons are not valid; " + "; ".join(failed)
    )


def all_tables(runs: Sequence[MetricsDocument], paper: bool = False) -> list[Table]:
    """Tables 1 A/B, 2 A/B, 3 (the citation lock) and the AOEP scorecard; the pilot table
    too when a run has it."""
    banner = invalid_banner(runs)
    tables: list[Callable[[Sequence[MetricsDocument], bool], Table]] = [
        table1a,
        table1b,
        table2a,
        table2b,
        citation,
        reads,
        reads_apart,
        aoep,
    ]
    if any(m.aoep_pilot for m in runs):
        tables.append(aoep_pilot)
    return [replace(f(runs, paper), banner=banner) for f in tables]


def to_markdown(t: Table) -> str:
    lines = [f"> **{t.banner}**", ""] if t.banner else []
    lines += [f"**{t.title}**", ""]
    lines += [f"_Note: {t.note}._", ""] if t.note else []
    lines += [
        "| " + " | ".join(t.header) + " |",
        "|" + "|".join("---" for _ in t.header) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in t.rows]
    return "\n".join(lines) + "\n"


def _latex_escape(s: str) -> str:
    return s.replace("%", r"\%").replace("_", r"\_").replace("–", "--").replace("&", r"\&")


def to_latex(t: Table) -> str:
    cols = "l" * 2 + "r" * (len(t.header) - 2)
    out = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{_latex_escape(t.title)}}}",
        *([rf"\textbf{{{_latex_escape(t.banner)}}}\\[1ex]"] if t.banner else []),
        *([rf"\emph{{Note: {_latex_escape(t.note)}.}}\\[1ex]"] if t.note else []),
        rf"\begin{{tabular}}{{{cols}}}",
        r"\toprule",
        " & ".join(_latex_escape(h) for h in t.header) + r" \\",
        r"\midrule",
    ]
    out += [" & ".join(_latex_escape(c) for c in r) + r" \\" for r in t.rows]
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"


def to_csv(t: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if t.banner:  # a comment line: pandas.read_csv(..., comment="#") skips it
        buf.write(f"# {t.banner}\n")
    if t.note:
        buf.write(f"# Note: {t.note}.\n")
    writer.writerow(t.header)
    writer.writerows(t.rows)
    return buf.getvalue()
