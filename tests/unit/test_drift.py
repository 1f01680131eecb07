"""`place drift` (docs/method.md §13): the corruption and its draws, the exact
tests D^c ≤ C and D^c = 0 at reconciling steps, drift.json recomputed from drift.jsonl, the
determinism of the outputs and the refusal of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from place.cli import main
from place.drift.corruption import Draw, Draws, corrupt
from place.drift.run import DriftRow, Grid, Prepared, run_grid, run_rows, twin
from place.drift.stats import read_jsonl, recompute, summarize, violations
from place.governance.ssgm_gate import core_predicates
from place.governance.ssgm_memory import Observed, SSGMMemory
from place.trajectory.model import Turn
from tests.builders import d, said, tool, trajectory, user

ROOT = Path(__file__).parents[2]
SMOKE = str(ROOT / "trajectories" / "smoke.yaml")

HOTEL = {"entity": "alex", "predicate": "hotel"}
CITY = {"entity": "alex", "predicate": "city"}
FLIGHT = {"entity": "alex", "predicate": "flight", "scope": "trip"}
DIET = {"entity": "alex", "predicate": "diet"}


def _story():
    """Twelve post-update checkpoints: supersedes, a correct, a retract, a forget (the log is
    redacted), a tool turn (an untrusted assert) and a redelivery (not observed)."""
    u9 = said("u9", {"op": "assert", "entity": "dana", "predicate": "hotel", "value": "Marriott"})
    redelivery = Turn("u10", "user", u9.text, events=u9.events, redelivers="u9")
    return trajectory(
        (
            "c1",
            "2026-03-01",
            [
                user("u1", {"op": "assert", **HOTEL, "value": "Avenida"}),
                user("u2", {"op": "assert", **CITY, "value": "Porto"}),
                user("u3", {"op": "assert", **FLIGHT, "value": "07:15"}),
                tool("t1", "Dana is staying in Lisbon."),
                user("u4", {"op": "assert", **DIET, "value": "vegetarian"}),
                user("u5", {"op": "assert", **HOTEL, "value": "Lumen"}),
            ],
        ),
        (
            "c2",
            "2026-03-05",
            [
                user("u6", {"op": "forget", **CITY}),
                user("u7", {"op": "correct", **FLIGHT, "value": "09:40"}),
                user("u8", {"op": "retract", **DIET, "value": "vegetarian"}),
                u9,
                redelivery,
                user("u11", {"op": "assert", **CITY, "value": "Lisbon"}),
                user("u12", {"op": "assert", **HOTEL, "value": "Marriott"}),
            ],
        ),
    )


@pytest.fixture(scope="module")
def prep() -> Prepared:
    return Prepared.of(_story())


def _rows(prep: Prepared, eps: float, every: int, seed: int, core="all") -> list[DriftRow]:
    cores = core_predicates(prep.trajectory.schema, core)
    return run_rows(prep, eps, every, seed, cores, twin(prep, every, cores, True))


def test_the_story_has_its_checkpoints_and_a_redelivery(prep: Prepared) -> None:
    assert prep.horizon == 12
    assert [o is None for o, _ in prep.turns].count(True) == 1  # u10 is not observed


def test_corruption_takes_the_drawn_record_and_the_drawn_other_value() -> None:
    traj = _story()
    memory = SSGMMemory(traj.schema, "alex", frozenset())
    for _conv, turn in traj.turns()[:5]:  # hotel Avenida, city Porto, flight, tool, diet
        memory.observe(
            Observed(turn.id, turn.role, "alex", turn.text, turn.events, d("2026-03-01"))
        )
    # One-valued active records by slot: (alex, city), (alex, flight, trip), (alex, hotel),
    # and (dana, city) from the tool turn; diet is many-valued and never chosen. a = 6 is
    # index 6 mod 4 = 2; b = 1 is the second of hotel's other values (Lumen, Marriott).
    assert ("dana", "city", "Lisbon", "global") in memory.state_at(d("2026-03-01"))
    got = corrupt(memory, Draw(u=0.0, a=6, b=1))
    assert got is not None
    assert (tuple(got.slot), got.old, got.new) == (
        ("alex", "hotel", "global"),
        "Avenida",
        "Marriott",
    )
    held = {r.fact for r in memory.records() if r.status == "active"}
    assert ("alex", "hotel", "Marriott", "global") in held
    assert ("alex", "hotel", "Avenida", "global") not in held
    # b wraps around the |domain| - 1 other values (now Avenida, Lumen): 2 mod 2 = 0.
    again = corrupt(memory, Draw(u=0.0, a=2, b=2))
    assert again is not None and again.new == "Avenida"


def test_the_draws_are_amendment_13s() -> None:
    rng = np.random.default_rng(11)
    draws = Draws(11)
    for _ in range(50):
        u = rng.random()
        a, b = rng.integers(0, 2**31, 2)
        assert draws.next() == Draw(u, int(a), int(b))


def test_nothing_to_corrupt_is_no_corruption() -> None:
    memory = SSGMMemory(_story().schema, "alex", frozenset())
    assert corrupt(memory, Draw(0.0, 5, 7)) is None


@pytest.mark.parametrize("every", [0, 2, 3, 5])
def test_eps_zero_is_its_own_twin(prep: Prepared, every: int) -> None:
    rows = _rows(prep, 0.0, every, seed=3)
    assert [r.D for r in rows] == [0] * 12
    assert all(r.C == 0 and r.corrupted is None for r in rows)
    assert [r.reconciled for r in rows] == [every > 0 and t % every == 0 for t in range(1, 13)]


@pytest.mark.parametrize("core", ["all", None])
def test_drift_never_exceeds_the_corruptions_and_reconciliation_clears_it(
    prep: Prepared, core
) -> None:
    rows = [
        r
        for eps in (0.3, 0.7, 1.0)
        for every in (0, 2, 3, 5)
        for seed in range(12)
        for r in _rows(prep, eps, every, seed, core)
    ]
    assert violations(rows) == 0
    assert all(r.D <= r.C for r in rows)
    assert all(r.D == 0 and r.C == 0 for r in rows if r.reconciled)
    # Not vacuous: corruptions happen, show in S^phys, and are reconciled away.
    assert any(r.D > 0 for r in rows)
    assert any(r.reconciled and r.corrupted is not None for r in rows)
    # Unreconciled, C counts every corruption since t = 1.
    for eps, seed in ((1.0, 0), (0.7, 4)):
        run = _rows(prep, eps, 0, seed, core)
        assert [r.C for r in run] == [
            sum(1 for s in run[: i + 1] if s.corrupted is not None) for i in range(12)
        ]


def test_the_violation_count_sees_each_broken_test() -> None:
    base = _rows(Prepared.of(_story()), 1.0, 3, 0)
    bad_bound = base[0].model_copy(update={"D": base[0].C + 1})
    reconciled = next(r for r in base if r.reconciled)
    bad_reset = reconciled.model_copy(update={"D": 1, "C": 1})
    assert violations(base) == 0
    assert violations([bad_bound]) == 1
    assert violations([bad_reset]) == 1


def test_draws_are_shared_across_n_and_nested_across_eps(prep: Prepared) -> None:
    seed = 7
    # Amendment 13's draws, written out: u, then (a, b), at every checkpoint.
    rng = np.random.default_rng(seed)
    u = []
    for _ in range(12):
        u.append(rng.random())
        rng.integers(0, 2**31, 2)
    sets = {}
    for eps in (0.2, 0.5, 0.9):
        for every in (0, 2, 5):
            got = {r.t for r in _rows(prep, eps, every, seed) if r.corrupted is not None}
            # m > 0 from t = 1 (u1 asserts a hotel), so the corrupted steps are u_t < ε.
            assert got == {t for t in range(1, 13) if u[t - 1] < eps}
            sets[(eps, every)] = got
    assert sets[(0.2, 0)] <= sets[(0.5, 0)] <= sets[(0.9, 0)]
    assert sets[(0.2, 0)] != sets[(0.9, 0)]
    # The first corruption (before any reconciliation or divergence) is the same for every N.
    firsts = {
        every: next(r.corrupted for r in _rows(prep, 0.9, every, seed) if r.corrupted)
        for every in (0, 2, 5)
    }
    assert len(set(firsts.values())) == 1


def test_forget_redacts_the_log_so_replay_does_not_restore_the_slot(prep: Prepared) -> None:
    rows = _rows(prep, 0.0, 1, 0)  # reconciled at every step
    by_turn = {r.turn: r for r in rows}
    # After the forget (u6) and until u11 asserts it again, the replay holds no city of
    # alex: S^phys agrees with S* there (δ counts no alex-city slot).
    states = twin(prep, 1, core_predicates(prep.trajectory.schema, "all"), True).states
    t6 = by_turn["u6"].t
    assert all(("alex", "city", "global") not in states[t - 1] for t in range(t6, t6 + 4))
    assert by_turn["u6"].replay_skipped >= 1  # the forget of a slot the redacted log never held


def test_a_corrupted_memory_never_reaches_the_log() -> None:
    """The forget redacts what the uncorrupted M held: had it redacted the corrupted value,
    the two-entity tool text would lose Dana's "Lisbon" and her city would change on replay,
    a drift no corruption since the reconciliation accounts for."""
    prep = Prepared.of(
        trajectory(
            (
                "c1",
                "2026-03-01",
                [
                    user("u1", {"op": "assert", **CITY, "value": "Porto"}),
                    tool("t1", "Dana is staying in Lisbon. Alex is staying in Porto."),
                    user("u2", {"op": "assert", **HOTEL, "value": "Avenida"}),
                    user("u3", {"op": "forget", **CITY}),
                    user("u4", {"op": "assert", **HOTEL, "value": "Lumen"}),
                ],
            )
        )
    )
    # t = 1 corrupts alex's city (the only record) to Lisbon; u3 forgets it; t = 4 reconciles.
    rows = [r for seed in range(10) for r in _rows(prep, 1.0, 4, seed)]
    assert {r.corrupted for r in rows if r.t == 1} == {
        (("alex", "city", "global"), "Porto", "Lisbon")
    }
    assert violations(rows) == 0


def _drift(tmp_path: Path, name: str, *extra: str) -> Path:
    out = tmp_path / name
    code = main(["drift", SMOKE, "--seeds", "3", "--out", str(out), "--no-progress", *extra])
    assert code == 0
    return out


def test_drift_json_is_recomputed_from_drift_jsonl(tmp_path: Path) -> None:
    out = _drift(tmp_path, "a", "--eps", "0,0.5", "--every", "0,4")
    written = json.loads((out / "drift.json").read_text(encoding="utf-8"))
    assert recompute(out / "drift.jsonl") == written
    assert written["schema"] == "place-drift/1" and written["violations"] == 0
    assert [(c["eps"], c["every"]) for c in written["cells"]] == [
        (0.0, 0),
        (0.0, 4),
        (0.5, 0),
        (0.5, 4),
    ]
    # The recomputation reads the rows: a changed row changes drift.json.
    header, rows = read_jsonl(out / "drift.jsonl")
    i = next(i for i, r in enumerate(rows) if r.eps == 0.5 and r.every == 0 and r.t == 12)
    rows[i] = rows[i].model_copy(update={"D": rows[i].D + 5})
    changed = summarize(header, rows)
    assert changed["violations"] == 1
    assert changed["cells"][2]["D_T"] != written["cells"][2]["D_T"]


def test_outputs_are_byte_identical_across_runs_and_jobs(tmp_path: Path) -> None:
    one = _drift(tmp_path, "one", "--eps", "0,0.3", "--every", "0,3")
    two = _drift(tmp_path, "two", "--eps", "0,0.3", "--every", "0,3", "--jobs", "2")
    for name in ("drift.json", "drift.jsonl", "drift.png"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


def test_run_grid_orders_rows_whatever_the_jobs() -> None:
    grid = Grid((SMOKE,), (0.0, 0.5), (0, 2), 2, None)
    rows = run_grid(grid, jobs=1)
    assert [(r.eps, r.every, r.seed, r.t) for r in rows] == sorted(
        (r.eps, r.every, r.seed, r.t) for r in rows
    )
    assert len(rows) == 2 * 2 * 2 * 12


def test_the_core_set_and_the_gate_each_get_their_own_twin() -> None:
    """One process, three settings in turn: each must use its own gate (smoke's schema marks
    no core predicate; with all of them core, the gate rejects 3 proposals and S^phys
    differs)."""
    runs = {
        (core, gate): run_grid(Grid((SMOKE,), (0.0,), (0,), 1, core, gate))
        for core, gate in ((None, True), ("all", True), ("all", False))
    }
    rejected = {k: sum(r.rejected for r in rows) for k, rows in runs.items()}
    assert rejected == {(None, True): 0, ("all", True): 3, ("all", False): 0}
    assert all(r.D == 0 for rows in runs.values() for r in rows)
    assert runs[("all", True)][-1].delta != runs[(None, True)][-1].delta


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no/such/file.yaml"], "cannot read"),
        ([SMOKE, "--eps", "0,1.5"], "outside [0, 1]"),
        ([SMOKE, "--eps", "0,-0.1"], "outside [0, 1]"),
        ([SMOKE, "--eps", "0,x"], "not a comma list"),
        ([SMOKE, "--every", "0,-5"], "negative"),
        ([SMOKE, "--seeds", "0"], "--seeds"),
        ([SMOKE, "--core", "nosuch"], "not a predicate"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    tmp_path: Path, capsys, args: list[str], message: str
) -> None:
    out = tmp_path / "out"
    assert main(["drift", *args, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()
