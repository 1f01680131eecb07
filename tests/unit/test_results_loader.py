"""`place.results.load_run` on a tiny hand-made run directory.

The run has two conversations, two queries and one probe per condition, one `forget` event
and a few update steps. Each scenario is chosen so that the loader's derived columns have a
known value (leaked pair, state-mediated pair, equal-but-wrong pair, ineligible exposure,
partial state), and every derived column is also checked against `place.metrics.endpoints`
and the recomputed `metrics.json`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from place.design import PAPER
from place.metrics import endpoints as ep
from place.records import (
    CheckpointRecord,
    ExposedRecord,
    ForgetRecord,
    ProbeRead,
    ProbeRecord,
    QueryRecord,
    ReadFactRecord,
    RunRecords,
    StepRecord,
)
from place.report.metrics import MetricsDocument, dump_metrics
from place.report.report import recompute
from place.report.tables import all_tables
from place.results import load_run

FLIGHT = ("sam", "flight_time", "09:40", "trip")
OLD_FLIGHT = ("sam", "flight_time", "07:15", "trip")
BUDGET = ("sam", "budget", "1200", "trip")
NATIVE_SIDE = ("Native", "QASC")
CONDITIONS = PAPER.names


def item(fact: tuple[str, str, str, str], ineligible: bool = False) -> ExposedRecord:
    entity, predicate, value, scope = fact
    return ExposedRecord(
        id=f"{predicate}-{value}",
        text=f"{entity} {predicate} {value} ({scope})",
        score=0.5,
        facts=[
            ReadFactRecord(
                entity=entity,
                predicate=predicate,
                value=value,
                scope=scope,
                status="active",
                valid_from=None,
                valid_until=None,
                certified=True,
                readable=not ineligible,
                eligible=not ineligible,
            )
        ],
        lifecycle={
            "place_lifecycle": "1",
            "entity": entity,
            "predicate": predicate,
            "value": value,
            "scope": scope,
            "status": "superseded" if ineligible else "active",
            "valid_from": None,
            "valid_until": None,
        },
        ineligible=ineligible,
    )


def windowed(facts: list[tuple[str, str, str, str]]) -> list[tuple]:
    return [(*f, None, None) for f in facts]


def checkpoints() -> list[CheckpointRecord]:
    """S* = {FLIGHT} throughout; Native/QASC read nothing in c1 and FLIGHT + a stale value
    in c2 (F1 2/3); CSS/PLACE read S* exactly."""
    out = []
    for conv, turn, date in (("c1", "c1-002", "2026-01-12"), ("c2", "c2-002", "2026-02-09")):
        for kind in ("post-update", "pre-query"):
            for c in CONDITIONS:
                if c in NATIVE_SIDE:
                    observed = [] if conv == "c1" else [OLD_FLIGHT, FLIGHT]
                else:
                    observed = [FLIGHT]
                out.append(
                    CheckpointRecord(
                        turn=turn,
                        checkpoint=kind,
                        conversation=conv,
                        date=date,
                        condition=c,
                        query=None if kind == "post-update" else "q1",
                        observed=windowed(observed),
                        reference=windowed([FLIGHT]),
                    )
                )
    return out


def query(
    qid: str,
    condition: str,
    world: str,
    *,
    mode: str = "primary",
    outcome: list[str],
    exposed: list[ExposedRecord],
    evaluated: list[tuple[str, str, str, str]],
    state_correct: bool,
) -> QueryRecord:
    fact, conv, gold = (FLIGHT, "c1", ["09:40"]) if qid == "q1" else (BUDGET, "c2", ["1200"])
    return QueryRecord(
        query=qid,
        turn=f"{conv}-005",
        conversation=conv,
        family="correction" if qid == "q1" else "temporal",
        condition=condition,
        world=world,
        mode=mode,
        tau=(fact[0], fact[1], fact[3], "2026-01-12"),
        question=f"What is my {fact[1]}?",
        exposed=exposed,
        admitted=None if condition in ("Native", "CSS") else len(exposed),
        raw_answer=" and ".join(outcome) or "no idea",
        outcome=outcome,
        gold=gold,
        authorized=[fact],
        authorized_a=[fact],
        authorized_b=[fact],
        evaluated=evaluated,
        state_correct=state_correct,
    )


def queries() -> list[QueryRecord]:
    out = []
    for c in CONDITIONS:
        native = c in NATIVE_SIDE
        for world in ("a", "b"):
            # q1: Native/QASC hold nothing in either world (equal but wrong: not counted);
            # CSS exposes a stale value too and answers differently in world b (leaked);
            # PLACE exposes exactly Q* and answers right in both worlds (counted, no leak).
            if native:
                q1 = dict(outcome=[], exposed=[], evaluated=[], state_correct=False)
            elif c == "CSS":
                q1 = dict(
                    outcome=["09:40"] if world == "a" else ["07:15"],
                    exposed=[item(FLIGHT), item(OLD_FLIGHT, ineligible=True)],
                    evaluated=[FLIGHT],
                    state_correct=True,
                )
            else:
                q1 = dict(
                    outcome=["09:40"],
                    exposed=[item(FLIGHT)],
                    evaluated=[FLIGHT],
                    state_correct=True,
                )
            out.append(query("q1", c, world, **q1))
            # q2: Native/QASC hold the budget in world a only (state-mediated: not counted);
            # Native also answers a wrong extra value (F1 2/3). CSS/PLACE: counted, correct.
            if native:
                q2 = dict(
                    outcome=["1200", "900"] if c == "Native" else ["1200"],
                    exposed=[item(BUDGET)] if world == "a" else [],
                    evaluated=[BUDGET] if world == "a" else [],
                    state_correct=False,
                )
            else:
                q2 = dict(
                    outcome=["1200"], exposed=[item(BUDGET)], evaluated=[BUDGET], state_correct=True
                )
            out.append(query("q2", c, world, **q2))
        # Closed loop: world a only; CSS again exposes the stale value.
        out.append(
            query(
                "q1",
                c,
                "a",
                mode="closed_loop",
                outcome=["09:40"],
                exposed=[item(FLIGHT), item(OLD_FLIGHT, ineligible=True)]
                if c == "CSS"
                else [item(FLIGHT)],
                evaluated=[FLIGHT],
                state_correct=not native,
            )
        )
    return out


def probes() -> list[ProbeRecord]:
    out = []
    for c in CONDITIONS:
        exposed = {
            "Native": [item(OLD_FLIGHT)],
            "CSS": [item(FLIGHT), item(OLD_FLIGHT, ineligible=True)],
            "QASC": [],
            "PLACE": [item(FLIGHT)],
        }[c]
        outcome = ["07:15"] if c == "Native" else ["09:40"]
        out.append(
            ProbeRecord(
                probe="p1",
                after="c1-002",
                conversation="c1",
                family="correction",
                condition=c,
                tau=("sam", "flight_time", "trip", "2026-01-12"),
                question="When does my flight leave?",
                clean=ProbeRead(
                    exposed=exposed,
                    admitted=None if c in ("Native", "CSS") else len(exposed),
                    raw_answer=None,
                    outcome=None,
                ),
                injected=ProbeRead(
                    exposed=exposed,
                    admitted=None if c in ("Native", "CSS") else len(exposed),
                    raw_answer=outcome[0],
                    outcome=outcome,
                ),
                gold=["09:40"],
                authorized=[FLIGHT],
                conflict_value="07:15",
            )
        )
    return out


def forgets() -> list[ForgetRecord]:
    return [
        ForgetRecord(
            event="c2-001#1",
            producer=producer,
            check=check,
            slot=("sam", "budget", "trip"),
            values=["1200"],
            residue=["sam budget 1200"] if (producer, check) == ("native", "after") else [],
        )
        for producer in ("native", "css")
        for check in ("after", "end")
    ]


def steps() -> list[StepRecord]:
    return [
        StepRecord(
            step=step,
            producer=producer,
            world="a",
            turns=[f"c{step}-001", f"c{step}-002"],
            operations=[] if producer == "native" else [{"op": "assert"}],
            failures=["mem0.memory.main: Invalid JSON response: x"]
            if (producer, step) == ("native", 1)
            else [],
            seconds=0.1,
        )
        for step in (1, 2)
        for producer in ("native", "css")
    ]


def write_run(run_dir: Path) -> None:
    records = run_dir / "records"
    records.mkdir(parents=True)
    for name, rows in (
        ("checkpoints", checkpoints()),
        ("queries", queries()),
        ("probes", probes()),
        ("forgets", forgets()),
        ("steps", steps()),
    ):
        (records / f"{name}.jsonl").write_text(
            "".join(r.model_dump_json(by_alias=True) + "\n" for r in rows), encoding="utf-8"
        )
    manifest = {
        "header": {
            "trajectory": {"id": "tiny", "sha256": "0" * 64, "path": "tiny.yaml"},
            "model": {"name": "tiny-model", "runtime": "none", "identity": "none"},
            "counts": {"conversations": 2, "queries": 2, "pairs": 2, "probes": 1},
            "conversation_ids": ["c1", "c2"],
        },
        "seeds": {"bootstrap": 7, "resamples": 200},
        "mem0_failures": 1,
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tiny-run")
    write_run(path)
    return path


@pytest.fixture(scope="module")
def metrics(run_dir: Path) -> MetricsDocument:
    return recompute(run_dir)


def test_frames_have_one_row_per_record(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert run.metrics is None  # no metrics.json written yet
    assert run.manifest["header"]["conversation_ids"] == ["c1", "c2"]
    assert len(run.checkpoints) == 2 * 2 * 4
    assert len(run.queries) == 4 * (2 * 2 + 1)
    assert len(run.pairs) == 4 * 2
    assert len(run.probes) == 4
    assert len(run.forgets) == 4
    assert len(run.steps) == 4
    assert {"f1", "observed_n", "reference_n"} <= set(run.checkpoints.columns)
    assert {
        "answer_score",
        "joint_success",
        "ineligible_exposure",
        "supported",
        "exposed_texts",
    } <= set(run.queries.columns)
    assert {"counted", "leaked", "answer_a", "answer_b", "evaluated_a", "evaluated_b"} <= set(
        run.pairs.columns
    )
    assert {"ineligible_exposure", "supported", "harmed"} <= set(run.probes.columns)
    assert "schema_" not in run.queries.columns and "exposed" not in run.queries.columns
    assert run.steps["failures"].map(len).sum() == run.manifest["mem0_failures"]


def test_derived_columns_agree_with_endpoints(run_dir: Path) -> None:
    run = load_run(run_dir)
    recs = run.records
    assert list(run.checkpoints["f1"]) == [ep.checkpoint_f1(c) for c in recs.checkpoints]
    assert list(run.queries["answer_score"]) == [ep.answer_score(q) for q in recs.queries]
    assert list(run.queries["joint_success"]) == [ep.joint_success(q) for q in recs.queries]
    assert list(run.queries["ineligible_exposure"]) == [
        ep.has_ineligible_exposure(q) for q in recs.queries
    ]
    assert list(run.probes["harmed"]) == [ep.conflict_harmed(p) for p in recs.probes]
    for c in CONDITIONS:
        pairs = run.pairs[run.pairs["condition"] == c]
        from_frame = {
            row.query: (bool(row.leaked) if row.counted else None)
            for row in pairs.itertuples(index=False)
        }
        assert from_frame == ep.leakage_pairs(recs.queries, c)


def test_hand_computed_values(run_dir: Path) -> None:
    run = load_run(run_dir)
    q = run.queries.set_index(["query", "condition", "world", "mode"])
    assert q.loc[("q2", "Native", "a", "primary"), "answer_score"] == pytest.approx(2 / 3)
    assert not q.loc[("q1", "CSS", "a", "primary"), "joint_success"]  # stale value exposed
    assert q.loc[("q1", "CSS", "a", "primary"), "ineligible_exposure"]
    assert q.loc[("q1", "PLACE", "a", "primary"), "joint_success"]
    assert not q.loc[("q2", "QASC", "a", "primary"), "joint_success"]  # state not correct
    status = {
        (r.query, r.condition): (r.counted, r.leaked) for r in run.pairs.itertuples(index=False)
    }
    assert status[("q1", "CSS")] == (True, True)
    assert status[("q1", "PLACE")] == (True, False)
    assert status[("q1", "Native")] == (False, False)  # equal but wrong
    assert status[("q2", "Native")] == (False, False)  # state-mediated
    pair = run.pairs.set_index(["query", "condition"]).loc[("q2", "QASC")]
    assert pair["evaluated_a"] != pair["evaluated_b"]
    cp = run.checkpoints[run.checkpoints["checkpoint"] == "post-update"]
    assert cp.groupby("condition")["f1"].mean().to_dict() == pytest.approx(
        {"Native": 1 / 3, "QASC": 1 / 3, "CSS": 1.0, "PLACE": 1.0}
    )
    harmed = run.probes.set_index("condition")["harmed"]
    assert harmed["Native"] and not harmed["PLACE"]


def test_frames_reproduce_recomputed_metrics(run_dir: Path, metrics: MetricsDocument) -> None:
    doc = metrics.to_json()  # as written to metrics.json
    run = load_run(run_dir)
    primary = run.queries[(run.queries["mode"] == "primary") & (run.queries["world"] == "a")]
    loop = run.queries[(run.queries["mode"] == "closed_loop") & (run.queries["world"] == "a")]
    post = run.checkpoints[run.checkpoints["checkpoint"] == "post-update"]
    for c in CONDITIONS:
        m = doc["conditions"][c]
        mine = primary[primary["condition"] == c]
        assert m["state_correctness"] == pytest.approx(post[post["condition"] == c]["f1"].mean())
        assert m["answer_correctness"] == pytest.approx(mine["answer_score"].mean())
        assert m["joint_success"] == pytest.approx(mine["joint_success"].mean())
        counted = run.pairs[(run.pairs["condition"] == c) & run.pairs["counted"]]
        assert m["leakage_n"] == len(counted)
        if len(counted):
            assert m["leakage_rate"] == pytest.approx(counted["leaked"].mean())
        else:
            assert m["leakage_rate"] is None
        probe = run.probes[run.probes["condition"] == c]
        assert m["exposure_rate"] == pytest.approx(probe["ineligible_exposure"].mean())
        assert m["conflict_harm"] == pytest.approx(probe["harmed"].astype(float).mean())
        assert m["closed_loop"]["exposure_rate"] == pytest.approx(
            loop[loop["condition"] == c]["ineligible_exposure"].mean()
        )
    assert doc["conditions"]["Native"]["deletion_residue"] == 1.0
    assert doc["conditions"]["PLACE"]["deletion_residue"] == 0.0
    assert doc["factorization"]["ok"]
    assert doc["effects"]["StateGain"]["estimate"] == pytest.approx(2 / 3, abs=1e-6)
    assert doc["effects"]["LeakageDrop"]["n"] == 2
    assert doc["bootstrap"] == {"seed": 7, "resamples": 200}


def test_metrics_json_is_loaded_and_tables_render(tmp_path: Path, metrics: MetricsDocument) -> None:
    write_run(tmp_path)
    (tmp_path / "metrics.json").write_text(dump_metrics(metrics), encoding="utf-8")
    run = load_run(tmp_path)
    assert run.metrics == metrics
    assert len(run.records.queries) == len(RunRecords.load(tmp_path / "records").queries)
    t1a = {t.name: t for t in all_tables([run.metrics], paper=True)}["table1a"]
    models = [row[0] for row in t1a.rows]
    assert models[:4] == ["tiny-model"] * 4
    assert all(m.startswith("paper (its own trajectory, not this one): ") for m in models[4:])
