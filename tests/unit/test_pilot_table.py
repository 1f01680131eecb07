"""AOEP-v0's pilot table (docs/method.md §11, "Pilot table"): `aoep_pilot` in metrics.json,
its table and plot beside the pilot's published figures, and the independent recomputation
of every §11 figure from a run directory.

The records are `test_aoep`'s hand-built governed history, written for every condition of
`design=aoep`: the css row keeps a ledger (Γ^phys = Γ*), the other producers none, so every
cell is known in advance.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from recompute import recompute
from test_aoep import (
    BILL,
    GOOD_READS,
    GOVERNED,
    K1,
    PARTY,
    STATE,
    _timeline,
    fact,
    governed,
    records,
)

from place.design import EXTENDED, PAPER, Design
from place.metrics.aoep import PILOT_SYSTEMS, pilot_table, scorecard
from place.records import RECORD_FILES, GateDecisionRecord, GovernanceRows, RunRecords
from place.report.metrics import MetricsDocument, compute_metrics, dump_metrics, load_metrics
from place.report.plots import aoep_pilot_figure, aoep_pilot_plot, write_plots
from place.report.report import write_tables
from place.report.tables import (
    PILOT_HEADER,
    all_tables,
    aoep_pilot,
    pilot_values,
    to_csv,
    to_latex,
    to_markdown,
)

AOEP = Design(
    "aoep",
    ("none", "append", "extract", "native", "css"),
    ("native", "recency", "fullcontext", "qasc"),
)
"""configs/design/aoep.yaml (20 conditions)."""


def governed_run(design: Design = AOEP) -> RunRecords:
    """The governed history for every condition; only the css row keeps a ledger."""
    out = RunRecords()
    for c in design.conditions:
        one = governed(condition=c.name, ledger=c.producer == "css")
        out.checkpoints += one.checkpoints
        out.queries += one.queries
        out.tasks += one.tasks
    return out


def header(design: Design) -> dict[str, Any]:
    return {
        "trajectory": {"id": "hand-built", "sha256": "0" * 64, "path": "none"},
        "model": {"name": "tiny"},
        "counts": {"conversations": 1},
        **({} if design.is_paper else {"design": design.to_json()}),
        "conversation_ids": ["c1"],
    }


def metrics(recs: RunRecords, design: Design = AOEP) -> MetricsDocument:
    return compute_metrics(recs, header(design), seed=7, conversations=["c1"], resamples=50)


# -- aoep_pilot in metrics.json --------------------------------------------------------------


def test_the_pilot_s_systems_and_their_conditions():
    assert [(s.system, s.condition, s.mark) for s in PILOT_SYSTEMS] == [
        ("governed reducer", "PLACE", "fixed"),
        ("no-memory floor", "None/Native", "fixed"),
        ("naive append", "Append/Recency", "D"),
        ("full context", "Append/Fullcontext", "D"),
        ("vector-RAG", "Append/Native", "D"),
        ("Mem0-style (extracted facts)", "Extract/Native", "D"),
        ("mem0ai", "Native", "M"),
    ]
    assert AOEP.has(*(s.condition for s in PILOT_SYSTEMS))


@pytest.mark.parametrize("design", [PAPER, EXTENDED], ids=["paper", "extended"])
def test_no_pilot_table_without_the_pilot_s_conditions(design: Design):
    recs = records(GOVERNED, reads=GOOD_READS)
    card = scorecard(recs, design)
    assert pilot_table(card, design) is None


def tally(passed: int, total: int, mark: str) -> dict[str, Any]:
    return {"passed": passed, "total": total, "mark": mark}


def test_pilot_rows_tally_model_independent_answer_and_aoep_kinds_apart():
    rows = pilot_table(scorecard(governed_run(), AOEP), AOEP)
    assert rows is not None
    assert [(r["system"], r["condition"]) for r in rows] == [
        (s.system, s.condition) for s in PILOT_SYSTEMS
    ]
    place, floor = rows[0], rows[1]
    # PLACE keeps the ledger: support, act, epoch, block, surface, rollback all kept; the
    # AOEP kinds leave act out (obligations) and idempotence (invariants).
    assert place["obligations"] == {
        "model_independent": tally(6, 6, "fixed"),
        "answer_dependent": tally(0, 0, "A"),
        "aoep_kinds": tally(5, 5, "fixed"),
    }
    assert place["invariants"] == {
        "model_independent": tally(10, 10, "fixed"),
        "answer_dependent": tally(0, 0, "A"),
        "aoep_kinds": tally(8, 8, "fixed"),
    }
    # Without a ledger: epoch, surface and rollback fail, whatever the store recalls.
    assert floor["obligations"]["model_independent"] == tally(3, 6, "fixed")
    assert floor["obligations"]["aoep_kinds"] == tally(2, 5, "fixed")
    assert rows[2]["obligations"]["model_independent"] == tally(3, 6, "D")
    assert rows[6]["invariants"]["model_independent"] == tally(10, 10, "M")


def test_the_metrics_document_carries_the_pilot_and_the_task_counts():
    m = metrics(governed_run())
    assert m.schema_ == "place-metrics/6"
    assert m.aoep_pilot is not None and m.aoep_pilot[0].condition == "PLACE"
    assert m.tasks is not None and m.tasks["PLACE"].matching == 3
    assert m.tasks["None/Native"].deliveries == 3
    doc = json.loads(dump_metrics(m))
    assert list(doc)[-3:] == ["tasks", "aoep_pilot", "bootstrap"]
    assert doc["aoep"]["PLACE"]["model_independent"]["obligations"]["total"] == 6


def test_an_ungoverned_paper_run_writes_neither_tasks_nor_a_pilot_table():
    doc = json.loads(dump_metrics(metrics(records(GOVERNED, reads=GOOD_READS), PAPER)))
    assert doc["schema"] == "place-metrics/6"
    assert "tasks" not in doc and "aoep_pilot" not in doc and "design" not in doc
    native = doc["aoep"]["Native"]
    assert (native["obligations"]["passed"], native["obligations"]["total"]) == (5, 5)
    assert (native["invariants"]["passed"], native["invariants"]["total"]) == (4, 4)


def test_older_layouts_still_load(tmp_path: Path):
    doc = json.loads(dump_metrics(metrics(records(GOVERNED, reads=GOOD_READS), PAPER)))
    for schema in ("place-metrics/2", "place-metrics/3"):
        old = dict(doc, schema=schema)
        if schema == "place-metrics/2":
            del old["aoep"]
        path = tmp_path / "metrics.json"
        path.write_text(json.dumps(old), encoding="utf-8")
        m = load_metrics(path)
        assert m.schema_ == schema and m.tasks is None and m.aoep_pilot is None
        assert json.loads(dump_metrics(m)) == old  # read back as written


# -- the published figures -----------------------------------------------------------------


def test_the_published_pilot_figures_and_their_source():
    values = pilot_values()
    assert "arXiv:2606.30306" in values["source"] and "Table 18" in values["source"]
    assert (values["obligations_total"], values["invariants_total"]) == (15, 41)
    assert [s["system"] for s in values["systems"]] == [s.system for s in PILOT_SYSTEMS]
    assert [(s["obligations"], s["invariants"]) for s in values["systems"]] == [
        (15, 41),
        (0, 41),
        (7, 40),
        (7, 40),
        (7, 40),
        (4, 38),
        (3, 36),
    ]


# -- the table -----------------------------------------------------------------------------


def test_the_table_shows_each_cell_with_its_mark_beside_the_published_figures():
    t = aoep_pilot([metrics(governed_run())], paper=False)
    assert t.name == "aoep_pilot" and t.header == PILOT_HEADER
    assert t.note is not None and "arXiv:2606.30306" in t.note
    assert t.rows[0] == [
        "tiny",
        "governed reducer",
        "PLACE",
        "6/6 fixed",
        "5/5 fixed",
        "–",  # no answer-dependent obligation in this history
        "10/10 fixed",
        "8/8 fixed",
        "–",
        "15/15",
        "41/41",
    ]
    assert t.rows[3][1:6] == ["full context", "Append/Fullcontext", "3/6 D", "2/5 D", "–"]
    assert t.rows[6][-2:] == ["3/15", "36/41"]
    md = to_markdown(t)
    assert (
        "| tiny | mem0ai | Native | 3/6 M | 2/5 M | – | 10/10 M | 8/8 M | – | 3/15 | 36/41 |" in md
    )
    assert r"tiny & governed reducer & PLACE & 6/6 fixed" in to_latex(t)
    rows = list(csv.reader(io.StringIO(to_csv(t))))
    assert rows[0][0].startswith("# Note: published columns")
    assert rows[1] == PILOT_HEADER and rows[2:] == t.rows


def test_the_answer_dependent_part_is_its_own_cell():
    recs = governed_run()
    recs.probes += [
        p.model_copy(update={"condition": c})
        for c in AOEP.names
        for p in records(GOVERNED, reads=GOOD_READS).probes
    ]
    t = aoep_pilot([metrics(recs)], paper=False)
    assert t.rows[0][5] == "1/1 A"  # the conflict probe, never blended into 6/6 fixed
    assert t.rows[0][3] == "6/6 fixed"


def test_the_table_is_added_only_when_a_run_has_it(tmp_path: Path):
    plain = metrics(records(GOVERNED, reads=GOOD_READS), PAPER)
    assert [t.name for t in all_tables([plain])][-1] == "aoep"
    pilot = metrics(governed_run())
    assert [t.name for t in all_tables([pilot])][-2:] == ["aoep", "aoep_pilot"]
    write_tables([pilot], tmp_path, paper=False)
    assert (tmp_path / "aoep_pilot.csv").exists() and (tmp_path / "aoep_pilot.tex").exists()
    assert "AOEP-v0 pilot table" in (tmp_path / "tables.md").read_text(encoding="utf-8")
    (tmp_path / "plain").mkdir()
    write_tables([plain], tmp_path / "plain", paper=False)
    assert not (tmp_path / "plain" / "aoep_pilot.csv").exists()


def test_the_scorecard_table_shows_section_11_kinds_only_when_they_have_items():
    plain = all_tables([metrics(records(GOVERNED, reads=GOOD_READS), PAPER)])[-1]
    assert plain.header[2:] == [
        "Obligations", "Forget", "Transition", "Support", "Conflict",
        "Invariants", "Deletion", "Promotion", "Exposure",
    ]  # fmt: skip
    assert plain.title.endswith("(docs/method.md §10)")
    card = next(t for t in all_tables([metrics(governed_run())]) if t.name == "aoep")
    assert card.header[2:] == [
        "Obligations", "Forget", "Transition", "Support", "Conflict",
        "Act", "Epoch", "Block", "Surface", "Rollback",
        "Invariants", "Deletion", "Promotion", "Exposure",
        "Authority", "Traceability", "Non-exposure", "Idempotence",
    ]  # fmt: skip
    assert card.title.endswith("(docs/method.md §10, §11)")
    place = next(r for r in card.rows if r[1] == "PLACE")
    assert place[2:12] == ["6/6", "0/0", "0/0", "1/1", "0/0", "1/1", "1/1", "1/1", "1/1", "1/1"]


# -- the plot ------------------------------------------------------------------------------


def test_the_plot_draws_each_system_beside_the_published_rate(tmp_path: Path):
    m = metrics(governed_run())
    points = aoep_pilot_plot(m, tmp_path / "pilot.png")
    assert list(points) == [s.condition for s in PILOT_SYSTEMS]
    assert points["PLACE"] == (1.0, 1.0)
    assert points["Append/Native"] == (0.5, 1.0)
    first = (tmp_path / "pilot.png").read_bytes()
    assert first[:4] == b"\x89PNG"
    aoep_pilot_plot(m, tmp_path / "again.png")
    assert (tmp_path / "again.png").read_bytes() == first  # deterministic


def test_the_plot_draws_a_part_without_items_as_no_data():
    m = metrics(governed_run())
    assert m.aoep_pilot is not None
    empty = m.aoep_pilot[1].model_copy(
        update={
            "obligations": m.aoep_pilot[1].obligations.model_copy(
                update={
                    "model_independent": m.aoep_pilot[1].obligations.model_independent.model_copy(
                        update={"passed": 0, "total": 0}
                    )
                }
            )
        }
    )
    m = m.model_copy(update={"aoep_pilot": [m.aoep_pilot[0], empty, *m.aoep_pilot[2:]]})
    fig, points = aoep_pilot_figure(m)
    assert points["None/Native"][0] is None
    gids = {a.get_gid() for ax in fig.axes for a in ax.patches}
    assert "no-data|obligations|None/Native" in gids
    assert "run|obligations|PLACE" in gids and "published|invariants|Native" in gids


def test_write_plots_adds_the_pilot_plot_only_when_present(tmp_path: Path):
    pilot = write_plots(RunRecords(), metrics(governed_run()), tmp_path / "a")
    assert [p.name for p in pilot][-2:] == ["aoep.png", "aoep_pilot.png"]
    plain = write_plots(
        RunRecords(), metrics(records(GOVERNED, reads=GOOD_READS), PAPER), tmp_path / "b"
    )
    assert [p.name for p in plain][-1] == "aoep.png"


# -- the independent recomputation ---------------------------------------------------------


def run_dir(tmp_path: Path, recs: RunRecords, design: Design) -> Path:
    """A run directory: manifest header and seeds, records, and the package's metrics.json."""
    out = tmp_path / "run"
    (out / "records").mkdir(parents=True)
    manifest = {"header": header(design), "seeds": {"bootstrap": 7, "resamples": 50}}
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    groups = {
        "checkpoint": recs.checkpoints,
        "query": recs.queries,
        "probe": recs.probes,
        "forget": recs.forgets,
        "step": recs.steps,
        "task": recs.tasks,
        "compaction": recs.compactions,
        "audit": recs.audits,
    }
    for kind, (name, _model) in RECORD_FILES.items():
        lines = [r.model_dump_json(by_alias=True) + "\n" for r in groups[kind]]
        (out / "records" / name).write_text("".join(lines), encoding="utf-8")
    reloaded = RunRecords.load(out / "records")
    (out / "metrics.json").write_text(dump_metrics(metrics(reloaded, design)), encoding="utf-8")
    return out


def test_every_figure_of_a_governed_run_is_recomputed_independently(tmp_path: Path):
    recs = governed_run()
    recs.probes += [
        p.model_copy(update={"condition": c})
        for c in AOEP.names
        for p in records(GOVERNED, reads=GOOD_READS).probes
    ]
    path = run_dir(tmp_path, recs, AOEP)
    committed = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
    assert "tasks" in committed and "aoep_pilot" in committed
    assert recompute(path) == committed


def _g5_unresolved() -> GovernanceRows:
    g5 = next(ref for turn, _k, _t, _m, ref in _timeline() if turn == "g5")
    assert g5 is not None
    return g5.model_copy(update={"conflicts": [K1]})


BROKEN: dict[str, dict[str, Any]] = {
    "no-ledger": {"ledger": False},
    "no-support": {"decisions": {"c-t1": GateDecisionRecord(kind="no-support")}},
    "held-values": {
        "state": {
            "q1": sorted([*STATE, fact(PARTY, "20:00")]),
            "g7": sorted([*STATE, fact(BILL, "95 EUR")]),
        }
    },
    "unresolved": {"tamper": {"g5": _g5_unresolved()}},
    "executes-again": {"decisions": {"r1": GateDecisionRecord(kind="execute", args=[["9"]])}},
}
"""One broken rule each (test_aoep's tests say which items it fails)."""


@pytest.mark.parametrize("broken", list(BROKEN))
def test_failures_are_recomputed_independently_too(tmp_path: Path, broken: str):
    recs = RunRecords()
    for c in PAPER.names:
        one = governed(condition=c, **BROKEN[broken])
        recs.checkpoints += one.checkpoints
        recs.queries += one.queries
        recs.tasks += one.tasks
    path = run_dir(tmp_path, recs, PAPER)
    committed = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
    independent = committed["aoep"]["PLACE"]["model_independent"]
    assert independent["obligations"]["failed"] or independent["invariants"]["failed"]
    assert recompute(path) == committed


def test_an_ungoverned_run_is_recomputed_as_before(tmp_path: Path):
    recs = records(GOVERNED, reads=GOOD_READS)
    path = run_dir(tmp_path, recs, PAPER)
    committed = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
    assert "tasks" not in committed and "aoep_pilot" not in committed
    assert recompute(path) == committed
