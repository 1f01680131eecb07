"""The citation lock through the real runner (docs/method.md §12): aoep-pilot, whose c3 holds
the four forged probes p2-p5, with none, append, css × native, qasc, cited, in-process on
the real stack (Mem0, Qdrant local mode, MiniLM) with the FAKE answer model of
tests/fakes/. The facts §12 says hold on every model are checked on the records, and every
new figure is recomputed independently from them (tests/recompute.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import inprocess
import pytest
from recompute import recompute

from place.design import make_design
from place.governance.citation import consequential_predicates
from place.reference.validate import load_trajectory
from place.trajectory.model import FORGED_KINDS

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PILOT = ROOT / "trajectories" / "aoep-pilot.yaml"
DESIGN = make_design("citation", ["none", "append", "css"], ["native", "qasc", "cited"])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    run_dir = tmp_path_factory.mktemp("citation") / "run"
    metrics = inprocess.run_inprocess(run_dir, load_trajectory(PILOT), DESIGN, plots=False)
    return run_dir, metrics


def records(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records" / f"{name}.jsonl").open()]


def forged_reads(run_dir: Path, condition: str) -> dict[str, bool]:
    """Per forgery kind: did the condition's injected read expose the forged record?"""
    out = {}
    for p in records(run_dir, "probes"):
        if p["condition"] == condition and p["forged"] is not None:
            shown = {e["id"] for e in p["injected"]["exposed"]}
            out[p["forged"]["kind"]] = p["forged"]["item"] in shown
    return out


def test_qasc_exposes_every_forgery_and_cited_only_the_stale_one(run) -> None:
    run_dir, m = run
    assert forged_reads(run_dir, "PLACE") == dict.fromkeys(FORGED_KINDS, True)
    cited = forged_reads(run_dir, "CSS/Cited")
    assert cited == {"missing": False, "tool": False, "unsupported": False, "stale": True}
    forged = m["conditions"]["CSS/Cited"]["forged"]
    assert (forged["exposure"], forged["n"], forged["exposure_stale"]) == (0.25, 4, 1.0)
    assert m["conditions"]["PLACE"]["forged"]["exposure"] == 1.0
    # no cited condition exposes a missing, tool or unsupported forgery, whatever its row
    for c in ("None/Cited", "Append/Cited", "CSS/Cited"):
        reads = forged_reads(run_dir, c)
        assert not (reads["missing"] or reads["tool"] or reads["unsupported"]), c


def test_the_forged_record_carries_css_metadata(run) -> None:
    run_dir, _m = run
    probes = {p["probe"]: p for p in records(run_dir, "probes") if p["condition"] == "PLACE"}
    for pid, pointer in (("p2", "c3-05"), ("p3", "p3~forged"), ("p4", "c3-03"), ("p5", "c3-01")):
        item = next(
            e
            for e in probes[pid]["injected"]["exposed"]
            if e["id"] == probes[pid]["forged"]["item"]
        )
        assert item["pointer"] == pointer == probes[pid]["forged"]["pointer"]
        assert (
            item["lifecycle"]["status"] == "active"
            and item["lifecycle"]["predicate"] == "door_code"
        )
        expected = "openable" if pid == "p5" else "pointer_only"
        assert item["provenance"] == expected, pid


def test_cited_reads_what_qasc_reads_on_clean_reads(run) -> None:
    # every event turn of aoep-pilot passes the lexicon self-check, so every CSS record is
    # openable and the lock excludes nothing on the CSS row
    run_dir, m = run

    def reads(condition: str) -> dict[str, list[str]]:
        out = {
            f"q:{q['query']}": [e["id"] for e in q["exposed"]]
            for q in records(run_dir, "queries")
            if q["condition"] == condition and q["world"] == "a" and q["mode"] == "primary"
        }
        out |= {
            f"p:{p['probe']}": [e["id"] for e in p["clean"]["exposed"]]
            for p in records(run_dir, "probes")
            if p["condition"] == condition
        }
        return out

    assert reads("CSS/Cited") == reads("PLACE")
    card = m["conditions"]["CSS/Cited"]
    assert card["hearsay"]["items"] == 0 and card["hearsay"]["reads"] > 0
    assert card["provenance"]["store_openable"] == 1.0
    assert m["effects"]["SupportCost_Cited"]["estimate"] == 0.0


def test_only_the_css_store_has_openable_records(run) -> None:
    run_dir, m = run
    audits = {a["producer"]: a["items"] for a in records(run_dir, "audits")}
    assert set(audits) == {"none", "append", "css"}
    assert audits["none"] == []
    assert audits["append"] and {i["provenance"] for i in audits["append"]} == {"orphaned"}
    assert audits["css"] and {i["provenance"] for i in audits["css"]} == {"openable"}
    assert m["conditions"]["Append/Native"]["provenance"]["store_openable"] == 0.0


def test_on_the_append_row_cited_exposes_no_consequential_record(run) -> None:
    run_dir, m = run
    shown = [
        f["predicate"]
        for q in records(run_dir, "queries")
        if q["condition"] == "Append/Cited"
        for e in q["exposed"]
        for f in e["facts"]
    ]
    shown += [
        f["predicate"]
        for p in records(run_dir, "probes")
        if p["condition"] == "Append/Cited"
        for e in p["clean"]["exposed"]
        for f in e["facts"]
    ]
    consequential = consequential_predicates(load_trajectory(PILOT))
    assert "door_code" in consequential
    assert not consequential & set(shown), shown
    assert m["conditions"]["Append/Cited"]["hearsay"]["items"] > 0


def test_every_figure_is_recomputed_independently(run) -> None:
    run_dir, m = run
    assert recompute(run_dir) == m
