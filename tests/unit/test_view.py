"""`place view` (place/view/): the site of recorded runs, without a browser.

The browser half is tests/integration/test_view_browser.py. Here: the files are written for
a recorded run (`experiments/smoke`) and an answer-free population job kept as
records.tar.xz; data.js is JSON behind one assignment; every record's item has a row and a
page; the scorecard's cells list exactly their items; summary directories (`place compare
--replications`/`--dose-response`, `place drift`) are shown as their tables and figures, and
listed nowhere else; bad inputs exit 2 and write nothing; `--out` is refused unless
`--force`; the same input gives the same bytes.
"""

from __future__ import annotations

import json
import shutil
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from place.archive import load_run_records
from place.cli import main
from place.design import Design
from place.records import ReadFactRecord
from place.view import site as site_module
from place.view.items import detail_key, why
from place.view.site import DATA_PREFIX
from place.view.tables import parse_markdown

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke" / "smollm2-135m"
STATE = ROOT / "experiments" / "population" / "study" / "0_state"
REPLICATIONS = ROOT / "experiments" / "replications" / "summary-smollm2-135m"
DOSE = ROOT / "experiments" / "population" / "dose-response"
DRIFT = ROOT / "experiments" / "drift" / "replications"


def read_data(site: Path) -> dict[str, Any]:
    """data.js as JSON: the assignment stripped."""
    text = (site / "data.js").read_text(encoding="utf-8")
    assert text.startswith(DATA_PREFIX) and text.endswith(";\n")
    return json.loads(text[len(DATA_PREFIX) : -2])


def copy_run(src: Path, dest: Path) -> Path:
    """A run directory without its LLM cache (the viewer never reads it)."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("llm_cache.sqlite"))
    return dest


@pytest.fixture(scope="module")
def smoke_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view") / "smoke"
    assert main(["view", str(SMOKE), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def state_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view") / "state"
    assert main(["view", str(STATE), "--out", str(out)]) == 0
    return out


def expected_keys(run_dir: Path) -> set[str]:
    """The page of every item of the records, as the viewer keys them: (query, condition),
    (probe, condition), (checkpoint, condition), (forget event, each condition of its
    producer), the store audit of each producer per condition, (task, condition)."""
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    design = Design.from_json(manifest["header"].get("design"))
    records = load_run_records(run_dir)
    keys = {detail_key("query", q.query, q.condition) for q in records.queries}
    keys |= {detail_key("probe", p.probe, p.condition) for p in records.probes}
    keys |= {
        detail_key(
            "checkpoint",
            f"{c.turn}/{c.checkpoint}" + (f"/{c.query}" if c.query else ""),
            c.condition,
        )
        for c in records.checkpoints
    }
    keys |= {
        detail_key("forget", f.event, c) for f in records.forgets for c in design.row(f.producer)
    }
    keys |= {
        detail_key("audit", "store", c) for a in records.audits for c in design.row(a.producer)
    }
    keys |= {detail_key("task", t.task, t.condition) for t in records.tasks}
    return keys


def change_answer(run_dir: Path, query: str, condition: str, value: str) -> None:
    """Give one world-a primary read of a copied run another (wrong) answer."""
    path = run_dir / "records" / "queries.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines):
        rec = json.loads(line)
        if (rec["query"], rec["condition"], rec["mode"], rec["world"]) == (
            query,
            condition,
            "primary",
            "a",
        ):
            rec["outcome"], rec["raw_answer"] = [value], f"{value}."
            lines[n] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- the site ---------------------------------------------------------------------------


def test_the_smoke_site_has_its_files_and_the_runs_plots(smoke_site: Path) -> None:
    for name in ("index.html", "data.js", "app.js", "style.css"):
        assert (smoke_site / name).is_file(), name
    plots = sorted((SMOKE / "plots").glob("*.png"))
    assert plots
    for p in plots:
        assert (smoke_site / "runs" / "0" / "plots" / p.name).read_bytes() == p.read_bytes()
    html = (smoke_site / "index.html").read_text(encoding="utf-8")
    assert '<script src="data.js"></script>' in html and '<script src="app.js"></script>' in html


def test_nothing_is_fetched_from_the_network(smoke_site: Path) -> None:
    """No CDN, no remote font or script: the page's own files name no URL."""
    for name in ("index.html", "app.js", "style.css"):
        text = (smoke_site / name).read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, name
        assert "fetch(" not in text and "XMLHttpRequest" not in text, name


def test_data_js_is_json_behind_one_assignment(smoke_site: Path) -> None:
    doc = read_data(smoke_site)
    assert doc["schema"] == "place-view/1"
    (run,) = doc["runs"]
    header = run["header"]
    assert header["trajectory"]["id"] == "smoke"
    assert len(header["trajectory"]["sha256"]) == 64
    assert header["answers"] is True
    assert header["git"]["commit"]
    assert header["status"] == "complete"
    assert run["tables_source"] == "tables/tables.md"
    assert [c[0] for c in run["conditions"]] == ["Native", "CSS", "QASC", "PLACE"]


def test_every_item_of_the_records_has_a_row_and_a_page(smoke_site: Path) -> None:
    (run,) = read_data(smoke_site)["runs"]
    keys = {r["d"] for r in run["rows"]}
    assert keys == expected_keys(SMOKE)
    assert keys == set(run["details"])
    assert len(run["rows"]) == len(keys)  # one row per (item, condition)
    kinds = {r["k"] for r in run["rows"]}
    assert {"query", "probe", "checkpoint", "forget", "audit"} <= kinds
    for r in run["rows"]:
        assert r["st"] in ("pass", "fail", "n/a")
        assert r["dist"] == ["none"]  # the smoke trajectory has no distractors


def test_a_query_page_holds_both_worlds_with_exposure_and_eligibility(smoke_site: Path) -> None:
    (run,) = read_data(smoke_site)["runs"]
    page = run["details"][detail_key("query", "s-correction", "CSS")]
    assert page["a"] is not None and page["b"] is not None
    texts, facts = run["pools"]["texts"], run["pools"]["facts"]
    exposed = page["a"]["exposed"]
    assert exposed and all(isinstance(texts[e["t"]], str) for e in exposed)
    ineligible = [e for e in exposed if e["x"]]
    assert ineligible  # CSS's native read shows a superseded value here
    reasons = [texts[w] for e in ineligible for f, w in e["f"] if not facts[f][9]]
    assert any(r.startswith("ineligible: ") for r in reasons)
    assert page["a"]["answer"] is not None and page["a"]["verdict"] in ("correct", "wrong")


def test_each_scorecard_cell_lists_exactly_its_items(smoke_site: Path) -> None:
    (run,) = read_data(smoke_site)["runs"]
    assert run["aoep_source"] == "metrics.json"
    linked = 0
    for condition, card in run["aoep"].items():
        for family in ("obligations", "invariants"):
            for kind, cell in card[family]["kinds"].items():
                items = run["aoep_items"].get(condition, {}).get(kind, [])
                assert len(items) == cell["total"], (condition, kind)
                assert sum(1 for i in items if i[1]) == cell["passed"], (condition, kind)
                assert sorted(i[0] for i in items if not i[1]) == sorted(cell["failed"])
                for item in items:
                    if item[3] is not None:
                        assert item[3] in run["details"]
                        linked += 1
                if kind in ("support", "conflict", "exposure", "forget", "deletion", "transition"):
                    assert all(i[3] is not None for i in items), (condition, kind)
    assert linked


def test_a_checkpoint_page_keeps_both_states_and_a_forget_its_residue(smoke_site: Path) -> None:
    (run,) = read_data(smoke_site)["runs"]
    blobs, facts = run["pools"]["blobs"], run["pools"]["facts"]
    failing = [r for r in run["rows"] if r["k"] == "checkpoint" and r["st"] == "fail"]
    assert failing
    world = run["details"][failing[0]["d"]]["worlds"]["a"]
    observed = {tuple(facts[i][:4]) for i in blobs[world["o"]]}
    reference = {tuple(facts[i][:4]) for i in blobs[world["r"]]}
    assert observed != reference and world["match"] is False
    forgets = [run["details"][r["d"]] for r in run["rows"] if r["k"] == "forget"]
    assert {f["producer"] for f in forgets} == {"native", "css"}
    assert all({c["check"] for c in f["checks"]} == {"after", "end"} for f in forgets)


def test_an_answer_free_archived_job_says_it_has_no_answers(state_site: Path) -> None:
    (run,) = read_data(state_site)["runs"]
    assert not (STATE / "records").exists()  # read from records.tar.xz
    assert run["header"]["answers"] is False
    assert run["tables_source"] == "metrics.json"  # the job keeps no tables/
    keys = {r["d"] for r in run["rows"]}
    assert keys == expected_keys(STATE) == set(run["details"])
    queries = [run["details"][r["d"]] for r in run["rows"] if r["k"] == "query"]
    assert queries and all(q["a"]["answer"] is None and q["a"]["verdict"] is None for q in queries)
    assert all(r["ans"] is None for r in run["rows"])
    assert {r["k"] for r in run["rows"]} >= {"task"}
    for card in run["aoep"].values():
        assert card["obligations"]["kinds"]["conflict"] is None  # not measured


def test_the_same_input_gives_the_same_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["view", str(SMOKE), "--out", str(a)]) == 0
    assert main(["view", str(SMOKE), "--out", str(b)]) == 0
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


# -- several runs -----------------------------------------------------------------------


def test_a_multirun_root_is_its_runs_and_runs_of_one_trajectory_pair(tmp_path: Path) -> None:
    root = tmp_path / "multirun"
    copy_run(SMOKE, root / "0_job")
    other = copy_run(SMOKE, root / "1_job")
    change_answer(other, "s-correction", "PLACE", "07:15")
    out = tmp_path / "site"
    assert main(["view", str(root), str(STATE), "--out", str(out)]) == 0
    doc = read_data(out)
    assert [r["header"]["path"] for r in doc["runs"]] == [
        str(root / "0_job"),
        str(root / "1_job"),
        str(STATE),
    ]
    paired, unpaired = doc["compare"]["pairs"]
    assert unpaired == {"other": 2, "rows": [], "unpaired": "another trajectory"}
    joint = next(
        r for r in paired["rows"] if r["condition"] == "PLACE" and r["endpoint"] == "JointSuccess"
    )
    assert joint["n"] == 8 and joint["differing"] == ["s-correction"]
    assert joint["difference"] == pytest.approx(-1 / 8, abs=1e-4)
    assert joint["interval"][0] <= joint["difference"] <= joint["interval"][1]
    native = next(
        r for r in paired["rows"] if r["condition"] == "Native" and r["endpoint"] == "State F1"
    )
    assert native["difference"] == 0 and native["differing"] == []


# -- summary directories ----------------------------------------------------------------


def report_tables(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """A `place compare` report: its `_header line_` and the tables after it."""
    first, rest = path.read_text(encoding="utf-8").split("\n", 1)
    assert first.startswith("_") and first.endswith("_")
    return first[1:-1], [dict(t) for t in parse_markdown(rest)]


def test_a_replications_summary_is_its_tables_and_forest_plot(tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert main(["view", str(REPLICATIONS), "--out", str(out)]) == 0
    doc = read_data(out)
    assert doc["runs"] == [] and doc["compare"]["pairs"] == []
    (summary,) = doc["summaries"]
    assert summary["kind"] == "Replications" and summary["report"] == "replications.md"
    assert summary["path"] == str(REPLICATIONS)
    assert summary["label"] == "Replications summary · summary-smollm2-135m"
    description, tables = report_tables(REPLICATIONS / "replications.md")
    assert summary["description"] == description
    assert description.startswith("Replication study: 10 trajectories")
    assert summary["tables"] == tables
    assert [t["title"][:32] for t in tables] == [
        "Replications: endpoints per cond",
        "Replications: effect estimates o",
    ]
    assert all(t["note"] is None for t in tables)  # the header line is not a table's note
    endpoints = tables[0]
    assert endpoints["header"][:3] == ["Condition", "StateCorrectness", "LeakageRate"]
    assert endpoints["rows"][0][0] == "Append/Native" and len(endpoints["rows"]) == 10
    assert summary["figures"] == [{"name": "forest.png", "src": "summaries/0/forest.png"}]
    copied = out / "summaries" / "0" / "forest.png"
    assert copied.read_bytes() == (REPLICATIONS / "forest.png").read_bytes()
    assert "summary-smollm2-135m" in (out / "index.html").read_text(encoding="utf-8")


def test_a_dose_response_summary_beside_a_run_leaves_the_run_as_it_was(
    tmp_path: Path, smoke_site: Path
) -> None:
    out = tmp_path / "site"
    assert main(["view", str(DOSE), str(SMOKE), "--out", str(out)]) == 0
    doc, alone = read_data(out), read_data(smoke_site)
    assert doc["runs"] == alone["runs"]  # items, scorecard: the run's own, no summary in them
    assert doc["compare"] == alone["compare"]
    (summary,) = doc["summaries"]
    assert summary["kind"] == "Dose-response" and summary["report"] == "dose_response.md"
    description, tables = report_tables(DOSE / "dose_response.md")
    assert summary["description"] == description and summary["tables"] == tables
    md = (DOSE / "dose_response.md").read_text(encoding="utf-8")
    pipe_rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert sum(len(t["rows"]) + 1 for t in tables) == len(pipe_rows)  # header + rows each
    assert tables[0]["header"] == [
        "Condition",
        "Endpoint",
        "filler 0",
        "filler 10",
        "filler 50",
        "filler 250",
        "change (longest − shortest)",
    ]
    assert summary["figures"] == [
        {"name": "dose_response.png", "src": "summaries/0/dose_response.png"}
    ]
    copied = out / "summaries" / "0" / "dose_response.png"
    assert copied.read_bytes() == (DOSE / "dose_response.png").read_bytes()
    assert (out / "runs" / "0" / "plots").is_dir()  # the run's plots, beside


def test_a_distractor_study_and_a_drift_directory_are_summaries(tmp_path: Path) -> None:
    study = tmp_path / "distractors"
    study.mkdir()
    (study / "distractors.md").write_text(
        "_Distractor study: 1 trajectory_\n\n**Distractors: change by kind**\n\n"
        "_Note: paired over seeds._\n\n| Condition | Kind | d4 |\n|---|---|---|\n"
        "| CSS | topic | 0.000 [0.000, 0.000] |\n",
        encoding="utf-8",
    )
    png = (REPLICATIONS / "forest.png").read_bytes()
    for name in ("distractors_state.png", "distractors_change.png"):
        (study / name).write_bytes(png)
    (study / "distractors_summary.csv").write_text("a\n1\n", encoding="utf-8")
    out = tmp_path / "site"
    assert main(["view", str(study), str(DRIFT), "--out", str(out)]) == 0
    first, drift = read_data(out)["summaries"]
    assert (
        first["kind"] == "Distractors" and first["description"] == "Distractor study: 1 trajectory"
    )
    assert first["tables"] == [
        {
            "title": "Distractors: change by kind",
            "note": "paired over seeds.",
            "banner": None,
            "header": ["Condition", "Kind", "d4"],
            "rows": [["CSS", "topic", "0.000 [0.000, 0.000]"]],
        }
    ]
    assert [f["name"] for f in first["figures"]] == [
        "distractors_change.png",
        "distractors_state.png",
    ]
    assert drift["kind"] == "Drift" and drift["report"] == "drift.json"
    cells = json.loads((DRIFT / "drift.json").read_text(encoding="utf-8"))["cells"]
    table, trajectories = drift["tables"]
    assert len(table["rows"]) == len(cells) and table["header"][:4] == [
        "trajectory",
        "ε",
        "N",
        "D_T",
    ]
    c = cells[-1]
    assert table["rows"][-1][:3] == [c["trajectory"], f"{c['eps']:g}", str(c["every"])]
    assert table["rows"][-1][3].startswith(f"{c['D_T']['estimate']:.3f} [")
    assert len(trajectories["rows"]) == 10
    assert "0 violations" in drift["description"]
    assert (out / "summaries" / "1" / "drift.png").read_bytes() == (
        DRIFT / "drift.png"
    ).read_bytes()


def test_a_directory_neither_run_nor_summary_is_refused_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    empty = tmp_path / "empty"
    empty.mkdir()
    err = _refused(["view", str(empty), "--out", str(out)], capsys, out)
    assert "not a run" in err and "not a summary" in err
    assert "a run directory (manifest.json" in err and "a summary directory" in err
    for name in ("replications.md", "dose_response.md", "distractors.md", "drift.json"):
        assert name in err
    no_figure = tmp_path / "no-figure"
    no_figure.mkdir()
    shutil.copy(REPLICATIONS / "replications.md", no_figure / "replications.md")
    err = _refused(["view", str(no_figure), "--out", str(out)], capsys, out)
    assert "holds replications.md but no PNG figure" in err
    summary = tmp_path / "summary"
    shutil.copytree(REPLICATIONS, summary)
    assert main(["view", str(summary), "--out", str(summary), "--force"]) == 2
    assert "holds the summary" in capsys.readouterr().err
    assert (summary / "replications.md").is_file()


# -- bad inputs -------------------------------------------------------------------------


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], out: Path) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("place: error: ") and "Traceback" not in err
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    return err


def test_bad_run_directories_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    assert "no such directory" in _refused(
        ["view", str(tmp_path / "missing"), "--out", str(out)], capsys, out
    )
    a_file = tmp_path / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    assert "not a directory" in _refused(["view", str(a_file), "--out", str(out)], capsys, out)
    empty = tmp_path / "empty"
    empty.mkdir()
    err = _refused(["view", str(empty), "--out", str(out)], capsys, out)
    assert "not a run" in err and "manifest.json" in err
    no_records = tmp_path / "no-records"
    no_records.mkdir()
    shutil.copy(SMOKE / "manifest.json", no_records / "manifest.json")
    err = _refused(["view", str(no_records), "--out", str(out)], capsys, out)
    assert "no records" in err and "records.tar.xz" in err
    no_manifest = copy_run(SMOKE, tmp_path / "no-manifest")
    (no_manifest / "manifest.json").unlink()
    assert "no manifest.json" in _refused(
        ["view", str(no_manifest), "--out", str(out)], capsys, out
    )


def test_records_of_an_unknown_layout_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    old = copy_run(SMOKE, tmp_path / "old")
    path = old / "records" / "queries.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"place-records/7"', '"place-records/5"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert "place-records/5" in _refused(["view", str(old), "--out", str(out)], capsys, out)
    other = copy_run(SMOKE, tmp_path / "other")
    for p in (other / "records").glob("*.jsonl"):
        p.rename(p.with_suffix(".log"))
    (other / "records" / "events.jsonl").write_text("{}\n", encoding="utf-8")
    err = _refused(["view", str(other), "--out", str(out)], capsys, out)
    assert "unknown records layout" in err and "queries.jsonl" in err


def test_a_non_empty_out_is_refused_unless_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    assert main(["view", str(SMOKE), "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert main(["view", str(SMOKE), "--out", str(out), "--force"]) == 0
    assert not (out / "keep.txt").exists() and (out / "index.html").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no temporary left behind
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["view", str(SMOKE), "--out", str(empty)]) == 0  # empty: no --force needed


def test_out_may_not_be_a_file_or_hold_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "site"
    a_file.write_text("x", encoding="utf-8")
    assert main(["view", str(SMOKE), "--out", str(a_file), "--force"]) == 2
    assert "is a file" in capsys.readouterr().err
    run = copy_run(SMOKE, tmp_path / "runs" / "smoke")
    for out in (run, run.parent):
        assert main(["view", str(run), "--out", str(out), "--force"]) == 2
        assert "would delete" in capsys.readouterr().err
    assert (run / "manifest.json").is_file()


def test_a_failure_while_writing_leaves_out_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    assert main(["view", str(SMOKE), "--out", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def half(into: Path, doc: dict[str, Any], runs: Any, summaries: Any = ()) -> None:
        (into / "index.html").write_text("half", encoding="utf-8")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(site_module, "write_tree", half)
    with pytest.raises(OSError):
        main(["view", str(SMOKE), "--out", str(out), "--force"])
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


# -- parts ------------------------------------------------------------------------------


def test_tables_md_is_read_as_place_report_writes_it() -> None:
    text = (SMOKE / "tables" / "tables.md").read_text(encoding="utf-8")
    tables = parse_markdown(text)
    assert len(tables) == text.count("\n**") + text.startswith("**")
    first = tables[0]
    assert first["title"] == "Table 1 A: primary endpoints"
    assert first["header"][:2] == ["Model", "Condition"]
    assert [r[1] for r in first["rows"]] == ["Native", "CSS", "QASC", "PLACE"]
    assert tables[1]["note"] and "conversation-block" in tables[1]["note"]
    banner = parse_markdown("> **INVALID: factorization**\n\n**T**\n\n| a |\n|---|\n| 1 |\n")
    assert banner == [
        {
            "title": "T",
            "note": None,
            "banner": "INVALID: factorization",
            "header": ["a"],
            "rows": [["1"]],
        }
    ]


def test_why_names_the_clauses_of_e_a_fact_fails() -> None:
    fact = ReadFactRecord(
        entity="sam",
        predicate="flight_time",
        value="07:15",
        scope="trip-paris",
        status="superseded",
        valid_from=None,
        valid_until="2026-05-01",
        certified=True,
        readable=False,
        eligible=False,
        visible=False,
    )
    text = why(fact, ("sam", "flight_time", "trip-rome", "2026-05-04"), "kim")
    assert text.startswith("ineligible: ")
    for part in (
        "scope trip-paris",
        "status superseded",
        "excludes 2026-05-04",
        "not visible to kim",
    ):
        assert part in text
    ok = fact.model_copy(
        update={"scope": "trip-rome", "status": "active", "valid_until": None, "eligible": True}
    )
    assert why(ok, ("sam", "flight_time", "trip-rome", "2026-05-04"), None).startswith("eligible")


def test_serve_serves_the_site_on_the_loopback(smoke_site: Path) -> None:
    from place.view.serve import HOST, make_server

    server = make_server(smoke_site, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://{HOST}:{server.server_address[1]}/data.js"
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert reply.read() == (smoke_site / "data.js").read_bytes()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_distractor_kinds_come_from_exposed_items_and_update_steps(tmp_path: Path) -> None:
    run = copy_run(SMOKE, tmp_path / "distracted")
    steps = run / "records" / "steps.jsonl"
    lines = steps.read_text(encoding="utf-8").splitlines()
    marked = None
    for n, line in enumerate(lines):
        rec = json.loads(line)
        if rec["producer"] == "css" and rec["world"] == "a" and "c1-003" in rec["turns"]:
            rec["distractor"], marked = "topic", rec["turns"]
            lines[n] = json.dumps(rec)
    assert marked is not None
    steps.write_text("\n".join(lines) + "\n", encoding="utf-8")
    queries = run / "records" / "queries.jsonl"
    lines = queries.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[4])
    assert rec["exposed"], "the fifth query record (CSS) exposes items"
    rec["exposed"][0]["distractor"] = "negated"
    lines[4] = json.dumps(rec)
    queries.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "site"
    assert main(["view", str(run), "--out", str(out)]) == 0
    (doc,) = read_data(out)["runs"]
    dist = {r["d"]: r["dist"] for r in doc["rows"]}
    assert dist[detail_key("query", rec["query"], rec["condition"])] == ["negated"]
    for condition in ("CSS", "PLACE"):  # the rows of css's store
        assert dist[detail_key("checkpoint", "c1-003/post-update", condition)] == ["topic"]
        assert dist[detail_key("checkpoint", "c1-005/post-update", condition)] == ["none"]
    assert dist[detail_key("checkpoint", "c1-003/post-update", "Native")] == ["none"]
