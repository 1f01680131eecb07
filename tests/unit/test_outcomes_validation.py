"""`place outcomes export` and `place outcomes agree` (issue 43, part 2; docs/validation.md).

Export runs on the recorded smoke run; every expectation is derived here from its records and
trajectory by other means than the module uses (the first record of each answer in file
order, Ω formatted by hand). Agreement runs on small CSVs whose figures were worked out by hand.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from place.archive import load_run_records
from place.cli import main
from place.lexicon import Lexicon
from place.lexicon.outcome import outcome
from place.reference.validate import load_trajectory
from place.validation.agree import read_labels, with_omega
from place.validation.export import find_trajectory, format_outcome

ROOT = Path(__file__).parents[2]
SMOKE_RUN = ROOT / "experiments" / "smoke" / "smollm2-135m"
SMOKE_TRAJ = ROOT / "trajectories" / "smoke.yaml"
REPLICATION = ROOT / "experiments" / "replications" / "smollm2-135m" / "0_smollm2-135m"
COLUMNS = [
    "id",
    "run",
    "item",
    "condition",
    "predicate",
    "question",
    "gold",
    "answer",
    "values",
    "omega",
    "label",
]


# --- export -----------------------------------------------------------------------------------


def _first_records(run: Path) -> dict[tuple[str, str, str], tuple[str, str, list[str]]]:
    """(question, answer, predicate) -> (item, condition, gold) of its first record: queries
    in file order, then injected probe reads."""
    records = load_run_records(run)
    first: dict[tuple[str, str, str], tuple[str, str, list[str]]] = {}
    for q in records.queries:
        if q.raw_answer is not None:
            first.setdefault((q.question, q.raw_answer, q.tau[1]), (q.query, q.condition, q.gold))
    for p in records.probes:
        if p.injected is not None and p.injected.raw_answer is not None:
            key = (p.question, p.injected.raw_answer, p.tau[1])
            first.setdefault(key, (p.probe, p.condition, p.gold))
    return first


SMOKE_FIRST = _first_records(SMOKE_RUN)


def _export(out: Path, *extra: str, run: Path = SMOKE_RUN, sample: int = 10) -> int:
    args = ["outcomes", "export", str(run), "--sample", str(sample), "--out", str(out)]
    return main([*args, *extra])


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        return list(reader)


def test_the_smoke_run_has_answers_to_draw_from() -> None:
    """The pool is real: the smoke run repeats answers across conditions, so de-duplication
    has something to remove (otherwise the tests below would not see it work)."""
    records = load_run_records(SMOKE_RUN)
    answered = sum(q.raw_answer is not None for q in records.queries)
    answered += sum(
        p.injected is not None and p.injected.raw_answer is not None for p in records.probes
    )
    assert 20 < len(SMOKE_FIRST) < answered


def test_export_writes_the_columns_and_the_rows_drawn(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sample.csv"
    assert _export(out, "--seed", "3") == 0
    rows = _read(out)
    assert [r["id"] for r in rows] == [f"e{i}" for i in range(1, 11)]
    assert {r["run"] for r in rows} == {str(SMOKE_RUN)}
    assert {r["label"] for r in rows} == {""}
    keys = [(r["question"], r["answer"], r["predicate"]) for r in rows]
    assert len(set(keys)) == 10  # de-duplicated
    traj = load_trajectory(SMOKE_TRAJ)
    for row, key in zip(rows, keys, strict=True):
        # Each row is the first record of its answer, in file order.
        item, condition, gold = SMOKE_FIRST[key]
        assert (row["item"], row["condition"]) == (item, condition)
        assert row["gold"] == (" | ".join(gold) if gold else "ABSTAIN")
        assert row["values"].split(" | ") == list(traj.schema.predicates[row["predicate"]].values)
    assert "10 rows drawn with seed 3" in capsys.readouterr().out


def test_the_omega_column_is_outcome_recomputed_on_each_answer(tmp_path: Path) -> None:
    out = tmp_path / "all.csv"
    assert _export(out, sample=1000) == 0
    traj = load_trajectory(SMOKE_TRAJ)
    lexicon = Lexicon(traj.schema, traj.principal)
    rows = _read(out)
    seen = set()
    for row in rows:
        omega = outcome(lexicon, row["answer"], row["predicate"])
        expected = "NONE" if not omega else " | ".join(sorted(omega))
        assert row["omega"] == expected
        seen.add("ABSTAIN" if omega == {"ABSTAIN"} else "NONE" if not omega else "VALUE")
    assert seen == {"ABSTAIN", "NONE", "VALUE"}  # the smoke run exercises every class


def test_the_omega_column_is_not_the_stored_outcome(tmp_path: Path) -> None:
    """Ω is recomputed: a run whose stored outcomes all say ABSTAIN still exports the Ω of
    each answer (the smoke run's stored outcomes equal today's Ω, so only a doctored copy
    tells the two apart)."""
    run = _copy_run(tmp_path)
    queries = run / "records" / "queries.jsonl"
    doctored = []
    for line in queries.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["outcome"] = ["ABSTAIN"]
        doctored.append(json.dumps(record))
    queries.write_text("\n".join(doctored) + "\n", encoding="utf-8")
    (run / "records" / "probes.jsonl").unlink()
    out = tmp_path / "out.csv"
    assert _export(out, run=run, sample=1000) == 0
    omegas = {row["omega"] for row in _read(out)}
    assert "NONE" in omegas and len(omegas) > 2


def test_export_is_deterministic_byte_for_byte(tmp_path: Path) -> None:
    first, second, other = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    assert _export(first, "--seed", "7") == 0
    assert _export(second, "--seed", "7") == 0
    assert first.read_bytes() == second.read_bytes()
    assert _export(other, "--seed", "8") == 0
    assert other.read_bytes() != first.read_bytes()  # the seed draws


def test_a_sample_larger_than_the_pool_writes_all_and_says_so(tmp_path: Path, capsys) -> None:
    out = tmp_path / "all.csv"
    assert _export(out, "--seed", "1", sample=10_000) == 0
    rows = _read(out)
    assert {(r["question"], r["answer"], r["predicate"]) for r in rows} == set(SMOKE_FIRST)
    assert len(rows) == len(SMOKE_FIRST)
    err = capsys.readouterr().err
    assert f"only {len(SMOKE_FIRST)} distinct answered items" in err
    assert "fewer than --sample 10000" in err


def test_an_existing_out_is_refused_unless_forced(tmp_path: Path, capsys) -> None:
    out = tmp_path / "labels.csv"
    out.write_text("someone's labels\n", encoding="utf-8")
    assert _export(out) == 2
    assert "exists" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "someone's labels\n"
    assert _export(out, "--force") == 0
    assert len(_read(out)) == 10


def _copy_run(tmp_path: Path, header_path: str | None = None, answers: bool = True) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    manifest = json.loads((SMOKE_RUN / "manifest.json").read_text(encoding="utf-8"))
    if header_path is not None:
        manifest["header"]["trajectory"]["path"] = header_path
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    if answers:
        shutil.copytree(SMOKE_RUN / "records", run / "records")
    else:
        (run / "records").mkdir()
    return run


def test_a_run_whose_trajectory_is_not_found_exits_2_naming_it(tmp_path: Path, capsys) -> None:
    run = _copy_run(tmp_path, header_path="trajectories/gone.yaml")
    assert _export(tmp_path / "out.csv", run=run) == 2
    err = capsys.readouterr().err
    assert f"{run}: the run's trajectory (trajectories/gone.yaml" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.csv").exists()


def test_a_file_of_the_trajectory_name_with_other_bytes_is_not_the_run_s(
    tmp_path: Path, capsys
) -> None:
    run = _copy_run(tmp_path, header_path="trajectory.yaml")
    text = SMOKE_TRAJ.read_text(encoding="utf-8")
    (run / "trajectory.yaml").write_text(text + "\n# edited\n", encoding="utf-8")
    assert _export(tmp_path / "out.csv", run=run) == 2
    assert "other bytes" in capsys.readouterr().err
    (run / "trajectory.yaml").write_text(text, encoding="utf-8")
    assert _export(tmp_path / "out.csv", run=run) == 0


def test_a_generated_trajectory_is_read_from_the_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "job.csv"
    assert _export(out, run=REPLICATION, sample=5) == 0
    traj = load_trajectory(REPLICATION / "trajectory.yaml")
    for row in _read(out):
        assert row["values"].split(" | ") == list(traj.schema.predicates[row["predicate"]].values)


def test_an_answer_free_run_contributes_nothing_and_needs_no_trajectory(tmp_path: Path) -> None:
    free = _copy_run(tmp_path, header_path="trajectories/gone.yaml", answers=False)
    alone, both = tmp_path / "alone.csv", tmp_path / "both.csv"
    assert _export(alone, sample=1000) == 0
    assert (
        main(
            [
                "outcomes",
                "export",
                str(SMOKE_RUN),
                str(free),
                "--sample",
                "1000",
                "--out",
                str(both),
            ]
        )
        == 0
    )
    assert both.read_bytes() == alone.read_bytes()


def test_nothing_answered_exits_2(tmp_path: Path, capsys) -> None:
    run = _copy_run(tmp_path, answers=False)
    assert _export(tmp_path / "out.csv", run=run) == 2
    assert "no answered item" in capsys.readouterr().err


# --- agree ------------------------------------------------------------------------------------

VALUES = "Oslo | Rome | Porto"


def _write(path: Path, rows: list[tuple[str, str, str, str]], header: list[str] = COLUMNS) -> Path:
    """A labelled file of (id, answer, omega, label) rows, the other columns filled."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        for row_id, answer, omega, label in rows:
            full = {
                "id": row_id,
                "run": "run",
                "item": "q1",
                "condition": "Native",
                "predicate": "city",
                "question": "Where?",
                "gold": "Oslo",
                "answer": answer,
                "values": VALUES,
                "omega": omega,
                "label": label,
            }
            writer.writerow([full[c] for c in header])
    return path


KNOWN = [
    ("e1", "a1", "ABSTAIN", "ABSTAIN"),
    ("e2", "a2", "ABSTAIN", "ABSTAIN"),
    ("e3", "a3", "ABSTAIN", "ABSTAIN"),
    ("e4", "a4", "NONE", "NONE"),
    ("e5", "a5", "NONE", "NONE"),
    ("e6", "a6", "Oslo", "Oslo"),
    ("e7", "a7", "Oslo | Rome", "Rome|Oslo"),  # the same set, written otherwise
    ("e8", "a8", "Oslo", "ABSTAIN"),
    ("e9", "a9", "NONE", "Oslo"),
    ("e10", "a10", "Oslo", "Rome"),
]
"""Ω and label agree on 7 of 10 (e8, e9, e10 differ). Categories of Ω: ABSTAIN 3, NONE 3,
Oslo 3, "Oslo | Rome" 1; of the labels: ABSTAIN 4, NONE 2, Oslo 2, "Oslo | Rome" 1, Rome 1.
Chance agreement p_e = (3·4 + 3·2 + 3·2 + 1·1) / 100 = 0.25, so kappa = (0.7 − 0.25) / 0.75
= 0.6."""


def _agree(*args: str) -> int:
    return main(["outcomes", "agree", *args])


def test_perfect_agreement_has_kappa_one(tmp_path: Path, capsys) -> None:
    rows = [(i, a, o, o) for i, a, o, _ in KNOWN]
    path = _write(tmp_path / "perfect.csv", rows)
    assert _agree(str(path)) == 0
    out = capsys.readouterr().out
    assert "| exact agreement | 1.000 (10/10) |" in out
    assert "| Cohen's kappa | 1.000 |" in out
    assert "Disagreements: none." in out


def test_a_known_confusion(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path / "known.csv", KNOWN)
    agreement = with_omega(read_labels(str(path)))
    assert (agreement.n, agreement.agreed) == (10, 7)
    assert agreement.kappa == pytest.approx(0.6)
    assert agreement.confusion[("ABSTAIN", "ABSTAIN")] == 3
    assert agreement.confusion[("NONE", "NONE")] == 2
    assert agreement.confusion[("NONE", "VALUE")] == 1
    assert agreement.confusion[("VALUE", "ABSTAIN")] == 1
    assert agreement.confusion[("VALUE", "VALUE")] == 3
    assert sum(agreement.confusion.values()) == 10
    assert agreement.other_values == 1
    assert [d[0] for d in agreement.disagreements] == ["e8", "e9", "e10"]
    assert _agree(str(path), "--out", str(tmp_path / "report.md")) == 0
    out = capsys.readouterr().out
    assert "| exact agreement | 0.700 (7/10) |" in out
    assert "| Cohen's kappa | 0.600 |" in out
    assert "| NONE | 0 | 2 | 1 | 3 |" in out  # Ω NONE: 2 labelled NONE, 1 VALUE
    assert "| e9 | a9 | NONE | Oslo |" in out
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == out


def test_one_category_only_has_no_kappa(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path / "one.csv", [("e1", "a", "NONE", "NONE"), ("e2", "b", "NONE", "NONE")])
    assert _agree(str(path)) == 0
    assert "| Cohen's kappa | undefined" in capsys.readouterr().out


def test_two_labellers_are_matched_by_id(tmp_path: Path, capsys) -> None:
    first = _write(tmp_path / "anna.csv", KNOWN)
    # Bea agrees with Anna except on e1 and e6; her file lists the rows in another order.
    bea = [(i, a, o, lab) for i, a, o, lab in KNOWN]
    bea[0] = ("e1", "a1", "ABSTAIN", "NONE")
    bea[5] = ("e6", "a6", "Oslo", "Porto")
    second = _write(tmp_path / "bea.csv", list(reversed(bea)))
    assert _agree(str(first), str(second)) == 0
    out = capsys.readouterr().out
    labellers = out.split(f"## {first} and {second}")[1]
    assert "| exact agreement | 0.800 (8/10) |" in labellers
    assert "| e1 | a1 | ABSTAIN | NONE |" in labellers
    assert "| e6 | a6 | Oslo | Porto |" in labellers
    # Each labeller against Ω has its own section; Bea's agreement with Ω is 5/10.
    assert f"## Ω and {first}" in out
    bea_omega = out.split(f"## Ω and {second}")[1].split("## ")[0]
    assert "| exact agreement | 0.500 (5/10) |" in bea_omega


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows: rows[:-1], "only in"),
        (
            lambda rows: [(*rows[0][:1], "another answer", *rows[0][2:]), *rows[1:]],
            "another answer",
        ),
    ],
    ids=["other-ids", "other-answer"],
)
def test_two_files_of_different_exports_are_refused(
    tmp_path: Path, capsys, change, message
) -> None:
    first = _write(tmp_path / "a.csv", KNOWN)
    second = _write(tmp_path / "b.csv", change(list(KNOWN)))
    assert _agree(str(first), str(second)) == 2
    err = capsys.readouterr().err
    assert message in err and "allowed:" in err


def _without_label_column(path: Path) -> Path:
    return _write(path, KNOWN[:2], header=COLUMNS[:-1])


@pytest.mark.parametrize(
    ("make", "line", "message"),
    [
        (_without_label_column, 1, "missing column label"),
        (lambda p: _write(p, [*KNOWN[:3], ("e4", "a4", "NONE", "  ")]), 5, "blank label"),
        (lambda p: _write(p, [*KNOWN[:1], ("e2", "a2", "NONE", "Lisbon")]), 3, "'Lisbon'"),
        (lambda p: _write(p, [*KNOWN[:2], ("e4", "x", "NONE", "oslo")]), 4, "'oslo'"),
        (lambda p: _write(p, [*KNOWN[:1], ("e2", "a", "NONE", "ABSTAIN | Oslo")]), 3, "alone"),
        (lambda p: _write(p, [*KNOWN[:4], ("e2", "a2b", "NONE", "NONE")]), 6, "duplicate id e2"),
        (lambda p: _write(p, []), 2, "no rows"),
    ],
    ids=[
        "missing-column",
        "blank-label",
        "not-a-value",
        "wrong-case",
        "abstain-with-values",
        "duplicate-id",
        "no-rows",
    ],
)
def test_a_malformed_file_exits_2_with_its_line(
    tmp_path: Path, capsys, make, line, message
) -> None:
    path = make(tmp_path / "bad.csv")
    assert _agree(str(path)) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}: " in err
    assert message in err
    assert "allowed:" in err
    assert "Traceback" not in err


def test_lines_count_the_lines_of_a_multi_line_answer(tmp_path: Path, capsys) -> None:
    """A quoted answer over three lines moves the next row's line number by three."""
    rows = [("e1", "Oslo.\nOr Rome?\nNo idea.", "Oslo | Rome", "ABSTAIN"), ("e2", "x", "NONE", "")]
    path = _write(tmp_path / "multi.csv", rows)
    assert _agree(str(path)) == 2
    err = capsys.readouterr().err
    assert f"{path}:5: blank label" in err
    assert f"{path}:2:" not in err


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path, capsys) -> None:
    rows = [("e1", "a", "NONE", ""), ("e1", "b", "NONE", "Lisbon")]
    path = _write(tmp_path / "two.csv", rows)
    assert _agree(str(path)) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: blank label" in err
    assert f"{path}:3: duplicate id e1 (first on line 2)" in err
    assert f"{path}:3: label: 'Lisbon'" in err


def test_an_exported_file_labelled_with_omega_agrees_with_itself(tmp_path: Path, capsys) -> None:
    """The two commands fit together: export, copy Ω into the labels, agree."""
    exported = tmp_path / "sample.csv"
    assert _export(exported, sample=30) == 0
    rows = _read(exported)
    for row in rows:
        row["label"] = row["omega"]
    labelled = tmp_path / "labelled.csv"
    with labelled.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    capsys.readouterr()
    assert _agree(str(labelled)) == 0
    out = capsys.readouterr().out
    assert "| exact agreement | 1.000 (30/30) |" in out
    assert "| Cohen's kappa | 1.000 |" in out


SHIPPED = ROOT / "experiments" / "validation"


def test_the_shipped_labels_report_is_what_agree_makes_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/validation.md's figures: `place outcomes agree` on the shipped labels writes the
    committed report byte for byte, and prints Cohen's kappa; its Ω column is Ω now."""
    out = tmp_path / "agreement.md"
    code = main(["outcomes", "agree", str(SHIPPED / "labels-reader1.csv"), "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Cohen's kappa | 0.943" in printed
    text = out.read_text(encoding="utf-8").replace(str(SHIPPED / "labels-reader1.csv"), "F")
    committed = (SHIPPED / "agreement.md").read_text(encoding="utf-8")
    assert text == committed.replace("experiments/validation/labels-reader1.csv", "F")
    with (SHIPPED / "labels-reader1.csv").open(newline="", encoding="utf-8") as f:
        shipped = list(csv.DictReader(f))
    assert len(shipped) >= 200
    runs = sorted({r["run"] for r in shipped})
    trajectories = {run: load_trajectory(find_trajectory(run)) for run in runs}
    lexicons = {run: Lexicon(t.schema, t.principal) for run, t in trajectories.items()}
    for r in shipped:
        now = outcome(lexicons[r["run"]], r["answer"], r["predicate"])
        assert format_outcome(now) == r["omega"], r["id"]
