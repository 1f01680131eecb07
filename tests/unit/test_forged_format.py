"""The `forged` probe key (docs/method.md §12): a forged-provenance probe's record, its kind,
value and pointer, and every rule the validator holds it to.

Each trajectory is trajectories/aoep-pilot.yaml with probes added after c3's conversation,
where Nora's door code went 1357 (c3-01) -> 2718 (c3-03), the tool turn c3-05 claims 9999
and the query turn c3-06 asks for it (gold 2718). The file's header names c3's intended
forged probes p2-p5: tool -> c3-05, 9999; missing, 4444; unsupported -> c3-03, 8642;
stale -> c3-01, 1357. Structural rules are the loader's (`place.trajectory.document`), the
pointer's turn, β's reading, S* and the support bound the replay's
(`place.reference.validate`); both surface through `load_trajectory` and `place validate`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from place.cli import main
from place.errors import InputError
from place.governance.citation import consequential_predicates
from place.reference.validate import FORGED_K_BOUND, load_trajectory
from place.trajectory.model import FORGED_KINDS, Forged, Probe

PILOT = Path(__file__).parents[2] / "trajectories" / "aoep-pilot.yaml"
QUESTION = "What's the door code right now?"

VALID: dict[str, Forged] = {
    "p2": Forged("tool", "9999", "c3-05"),
    "p3": Forged("missing", "4444"),
    "p4": Forged("unsupported", "8642", "c3-03"),
    "p5": Forged("stale", "1357", "c3-01"),
}
"""The header's four probes, one of each kind."""


def probe_yaml(
    pid: str,
    forged: dict[str, str] | None,
    *,
    after: str = "c3-06",
    gold: tuple[str, ...] = ("2718",),
    predicate: str = "door_code",
    asker: str | None = None,
    conflict: dict[str, str] | None = None,
) -> str:
    """One probe of the `probes` list, as YAML (values written as JSON strings)."""
    lines = [
        f"  - id: {pid}",
        f"    after: {after}",
        "    family: provenance",
        f"    text: {json.dumps(QUESTION)}",
        "    entity: nora",
        f"    predicate: {predicate}",
        f"    gold: {json.dumps(list(gold))}",
    ]
    if conflict is not None:
        lines.append(f"    conflict: {json.dumps(conflict)}")
    if asker is not None:
        lines.append(f"    asker: {asker}")
    if forged is not None:
        lines.append(f"    forged: {json.dumps(forged)}")
    return "\n".join(lines) + "\n"


def forged_of(forged: Forged) -> dict[str, str]:
    doc = {"kind": forged.kind, "value": forged.value}
    return doc if forged.pointer is None else {**doc, "pointer": forged.pointer}


def pilot_with(
    tmp_path: Path,
    *probes: str,
    schema: str = "",
    conversation: str = "",
    marked: tuple[str, ...] = (),
) -> Path:
    """aoep-pilot.yaml without its forged probes, with `probes` appended to its probes (and,
    if given, predicates added to its schema, a conversation after c9, and the predicates
    `marked` declared 'consequential: true')."""
    text = PILOT.read_text(encoding="utf-8")
    for pid in marked:
        assert text.count(f"\n    {pid}:\n") == 1, pid
        text = text.replace(f"\n    {pid}:\n", f"\n    {pid}:\n      consequential: true\n")
    # the file's own forged probes p2-p5 are taken out: each test adds the probes it needs
    start, end = text.index("  - id: p2\n"), text.index("\ncompactions:\n") + 1
    text = text[:start] + text[end:]
    for anchor, added in (
        ("  permissions:\n", schema),
        ("probes:\n", conversation),
        ("compactions:\n", "".join(probes)),
    ):
        assert text.count("\n" + anchor) == 1, anchor
        text = text.replace("\n" + anchor, "\n" + added + anchor)
    path = tmp_path / "aoep-forged.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    """Every problem `load_trajectory` reports, as the CLI prints them."""
    with pytest.raises(InputError) as caught:
        load_trajectory(path)
    return [str(p) for p in caught.value.problems]


def only_problem(tmp_path: Path, *probes: str, **extra: Any) -> str:
    found = problems(pilot_with(tmp_path, *probes, **extra))
    assert len(found) == 1, found
    return found[0]


# ---------------------------------------------------------------- valid probes


def test_the_header_probes_load_as_forged_records(tmp_path: Path) -> None:
    path = pilot_with(
        tmp_path, *(probe_yaml(pid, forged_of(forged)) for pid, forged in VALID.items())
    )
    traj = load_trajectory(path)
    loaded = {p.id: p for p in traj.probes}
    assert set(loaded) == {"p1", *VALID}
    for pid, forged in VALID.items():
        assert loaded[pid] == Probe(
            pid,
            "c3-06",
            "provenance",
            QUESTION,
            "nora",
            "door_code",
            "global",
            ("2718",),
            forged=forged,
        )
    assert loaded["p1"].forged is None
    assert {f.kind for f in VALID.values()} == set(FORGED_KINDS)
    assert loaded["p3"].forged is not None
    assert loaded["p3"].forged.source_turn("p3") == "p3~forged"


def test_a_pointer_may_be_the_probes_own_turn(tmp_path: Path) -> None:
    """'At or before': the tool turn itself may be the probe's `after`."""
    path = pilot_with(tmp_path, probe_yaml("p2", forged_of(VALID["p2"]), after="c3-05"))
    (probe,) = [p for p in load_trajectory(path).probes if p.id == "p2"]
    assert probe.forged == VALID["p2"]


def test_place_validate_accepts_the_header_probes(tmp_path: Path, capsys) -> None:
    path = pilot_with(
        tmp_path, *(probe_yaml(pid, forged_of(forged)) for pid, forged in VALID.items())
    )
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()


# ---------------------------------------------------------------- structural rules


def test_unknown_kind_lists_the_kinds(tmp_path: Path) -> None:
    bad = only_problem(tmp_path, probe_yaml("p9", {"kind": "bogus", "value": "9999"}))
    assert "probe p9 > forged > kind (line " in bad
    assert "'kind' of forged is 'bogus'; allowed: missing, tool, unsupported, stale" in bad


def test_missing_takes_no_pointer(tmp_path: Path) -> None:
    forged = {"kind": "missing", "value": "4444", "pointer": "c3-05"}
    bad = only_problem(tmp_path, probe_yaml("p3", forged))
    assert "probe p3 > forged (line " in bad
    assert "a forgery of kind 'missing' has no pointer: its record cites 'p3~forged'" in bad
    assert "remove 'pointer'" in bad


@pytest.mark.parametrize(
    ("kind", "value"), [("tool", "9999"), ("unsupported", "8642"), ("stale", "1357")]
)
def test_kinds_that_cite_a_turn_need_a_pointer(tmp_path: Path, kind: str, value: str) -> None:
    bad = only_problem(tmp_path, probe_yaml("p9", {"kind": kind, "value": value}))
    assert "probe p9 > forged (line " in bad
    assert f"a forgery of kind {kind!r} must have a 'pointer'" in bad
    assert "only kind 'missing' has none" in bad


def test_value_outside_the_domain(tmp_path: Path) -> None:
    bad = only_problem(tmp_path, probe_yaml("p9", {"kind": "missing", "value": "1111"}))
    assert "probe p9 > forged > value (line " in bad
    assert "forged value '1111' is not in the value domain of predicate door_code" in bad
    assert "allowed values: '1357', '2718', '9999', '4444', '8642'" in bad


def test_value_in_gold(tmp_path: Path) -> None:
    bad = only_problem(tmp_path, probe_yaml("p9", {"kind": "missing", "value": "2718"}))
    assert "probe p9 > forged > value (line " in bad
    assert "forged value '2718' is one of the gold values" in bad


def test_not_both_conflict_and_forged(tmp_path: Path) -> None:
    conflict = {"text": "Nora's door code is 9999.", "value": "9999"}
    probe = probe_yaml("p9", {"kind": "missing", "value": "4444"}, conflict=conflict)
    bad = only_problem(tmp_path, probe)
    assert "probe p9 (line " in bad
    assert "a probe has at most one of 'conflict' and 'forged'; this one has both" in bad


def test_pointer_to_no_turn(tmp_path: Path) -> None:
    forged = {"kind": "tool", "value": "9999", "pointer": "c3-99"}
    bad = only_problem(tmp_path, probe_yaml("p9", forged))
    assert "probe p9 > forged > pointer (line " in bad
    assert "pointer names turn 'c3-99', which is not a turn of the trajectory" in bad


# ---------------------------------------------------------------- rules that need the replay


def test_pointer_after_the_probes_turn(tmp_path: Path) -> None:
    """c9-01 is a tool turn, but a later one."""
    forged = {"kind": "tool", "value": "9999", "pointer": "c9-01"}
    bad = only_problem(tmp_path, probe_yaml("p9", forged))
    assert "probe p9 > forged (line " in bad
    assert "pointer c9-01 comes after the probe's turn c3-06" in bad


def test_tool_pointer_to_a_user_turn(tmp_path: Path) -> None:
    forged = {"kind": "tool", "value": "9999", "pointer": "c3-03"}
    bad = only_problem(tmp_path, probe_yaml("p9", forged))
    assert "probe p9 > forged (line " in bad
    assert "a forgery of kind 'tool' points at a tool turn; turn c3-03 is a user turn" in bad


def test_unsupported_pointer_to_a_turn_that_states_the_fact(tmp_path: Path) -> None:
    """c3-01 says "The front door code for our building is 1357.": β reads the fact."""
    forged = {"kind": "unsupported", "value": "1357", "pointer": "c3-01"}
    bad = only_problem(tmp_path, probe_yaml("p9", forged))
    assert "probe p9 > forged (line " in bad
    assert "β (the text readback) reads (nora, door_code, '1357', global) from turn c3-01" in bad


def test_unsupported_pointer_to_a_tool_turn(tmp_path: Path) -> None:
    forged = {"kind": "unsupported", "value": "8642", "pointer": "c3-05"}
    bad = only_problem(tmp_path, probe_yaml("p9", forged))
    assert "probe p9 > forged (line " in bad
    assert "kind 'unsupported' points at a user turn; turn c3-05 is a tool turn" in bad


def test_stale_pointer_to_a_turn_that_never_asserted_it(tmp_path: Path) -> None:
    """c3-03 asserts 2718, not 1357."""
    forged = {"kind": "stale", "value": "1357", "pointer": "c3-03"}
    bad = only_problem(tmp_path, probe_yaml("p9", forged))
    assert "probe p9 > forged (line " in bad
    assert (
        "turn c3-03 has no 'assert' or 'correct' event of (nora, door_code, '1357', global)" in bad
    )


def test_a_pointer_to_a_redelivery_is_refused(tmp_path: Path) -> None:
    """c1-05 redelivers c1-01 (locker code 4512, forgotten in c1-03): V keeps no entry for a
    redelivery, so the forgery must cite the turn as first delivered. (locker_code is marked
    consequential here: a forged probe is on a consequential predicate.)"""
    forged = {"kind": "stale", "value": "4512", "pointer": "c1-05"}
    probe = probe_yaml("p9", forged, after="c1-06", gold=(), predicate="locker_code")
    bad = only_problem(tmp_path, probe, marked=("locker_code",))
    assert "pointer c1-05 is a redelivery of turn c1-01" in bad
    ok = {"kind": "stale", "value": "4512", "pointer": "c1-01"}
    load_trajectory(
        pilot_with(
            tmp_path,
            probe_yaml("p9", ok, after="c1-06", gold=(), predicate="locker_code"),
            marked=("locker_code",),
        )
    )


def test_stale_fact_still_in_the_reference_state(tmp_path: Path) -> None:
    """Theo asks: Nora's 2718 is not shared with him, so it is not in his gold, but it is
    still in S* after c3-06, so it is not stale."""
    forged = {"kind": "stale", "value": "2718", "pointer": "c3-03"}
    bad = only_problem(tmp_path, probe_yaml("p9", forged, gold=(), asker="theo"))
    assert "probe p9 > forged (line " in bad
    assert (
        "(nora, door_code, '2718', global) is still in the reference state S* after turn c3-06"
        in bad
    )


SPARE_KEYS = """    spare_key_holder:
      type: enum
      cardinality: many
      consequential: true
      keywords: ["spare key"]
      template: "{entity_name}'s spare key is with {value}"
      values: {"Ana": [], "Ben": [], "Cleo": [], "Dev": [], "Eli": [], "Finn": []}
"""
HOLDERS = ("Ana", "Ben", "Cleo", "Dev", "Eli")


def _spare_keys(holders: tuple[str, ...]) -> str:
    events = "".join(
        f"          - {{op: assert, entity: nora, predicate: spare_key_holder, value: {h}}}\n"
        for h in holders
    )
    return (
        "  - id: c10\n"
        "    date: 2026-08-03\n"
        "    turns:\n"
        "      - id: c10-01\n"
        "        role: user\n"
        f'        text: "Spare keys are with {", ".join(holders)}."\n'
        "        events:\n" + events
    )


def test_a_slot_with_k_admissible_facts_is_refused(tmp_path: Path) -> None:
    assert FORGED_K_BOUND == 5
    probe = probe_yaml(
        "p9",
        {"kind": "missing", "value": "Finn"},
        after="c10-01",
        predicate="spare_key_holder",
        gold=HOLDERS,
    )
    bad = only_problem(tmp_path, probe, schema=SPARE_KEYS, conversation=_spare_keys(HOLDERS))
    assert "probe p9 > forged (line " in bad
    assert "the slot has 5 admissible facts at the probe" in bad
    assert "a forged probe needs fewer than 5" in bad


def test_a_slot_with_fewer_than_k_admissible_facts_is_accepted(tmp_path: Path) -> None:
    probe = probe_yaml(
        "p9",
        {"kind": "missing", "value": "Finn"},
        after="c10-01",
        predicate="spare_key_holder",
        gold=HOLDERS[:4],
    )
    path = pilot_with(tmp_path, probe, schema=SPARE_KEYS, conversation=_spare_keys(HOLDERS[:4]))
    (loaded,) = [p for p in load_trajectory(path).probes if p.id == "p9"]
    assert loaded.forged == Forged("missing", "Finn")


def test_place_validate_reports_the_problem_and_exits_2(tmp_path: Path, capsys) -> None:
    forged = {"kind": "tool", "value": "9999", "pointer": "c3-03"}
    path = pilot_with(tmp_path, probe_yaml("p9", forged))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert "probe p9 > forged" in err
    assert "a forgery of kind 'tool' points at a tool turn; turn c3-03 is a user turn" in err


def test_an_unquoted_forged_value_names_its_predicate(tmp_path: Path) -> None:
    probe = probe_yaml("p9", None) + "    forged: {kind: missing, value: 4444}\n"
    bad = only_problem(tmp_path, probe)
    assert "forged value must be a string naming a value of predicate door_code" in bad


# ---------------------------------------------------------------- the predicate: cons(m)

DEPOSIT = """    deposit:
      type: money
      cardinality: one
      keywords: ["deposit"]
      template: "{entity_name}'s deposit is {value}"
      values: {"500 EUR": [], "700 EUR": []}
"""
"""A money predicate that is neither marked consequential nor named in any task's needs."""

NOT_CONSEQUENTIAL = [
    # locker_code: a number, unmarked, in no task's needs (c1-03 forgets it)
    pytest.param("locker_code", "number", "c1-06", (), "4512", id="number"),
    # party_time: a time, unmarked, in no task's needs (19:00 at c7-01)
    pytest.param("party_time", "time", "c7-01", ("19:00",), "20:00", id="time"),
]


def _line_of_forged(path: Path, pid: str) -> int:
    """The 1-based line of probe `pid`'s `forged` key in `path`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"  - id: {pid}")
    return next(i for i in range(start, len(lines)) if lines[i].startswith("    forged:")) + 1


@pytest.mark.parametrize(("predicate", "ptype", "after", "gold", "value"), NOT_CONSEQUENTIAL)
def test_a_forged_probe_on_a_non_consequential_predicate_is_refused(
    tmp_path: Path, predicate: str, ptype: str, after: str, gold: tuple[str, ...], value: str
) -> None:
    """Spec amendment 17: the citation lock applies only to cons(m), so a forged probe is on
    a consequential predicate; the validator names the probe, the rule and the type."""
    probe = probe_yaml(
        "p9", {"kind": "missing", "value": value}, after=after, gold=gold, predicate=predicate
    )
    path = pilot_with(tmp_path, probe)
    found = problems(path)
    assert len(found) == 1, found
    (bad,) = found
    assert f"probe p9 > forged (line {_line_of_forged(path, 'p9')}, column 5)" in bad
    assert (
        f"forged probe 'p9' is on predicate {predicate!r} (type {ptype}), which is not "
        "consequential; a forged probe tests the citation lock, which applies only to "
        "consequential predicates (type money, marked 'consequential: true', or named in a "
        f"task's needs): mark {predicate} 'consequential: true' or forge a record of a "
        "consequential predicate"
    ) in bad


def test_the_predicate_rule_is_reported_with_the_probes_other_problems(tmp_path: Path) -> None:
    """Read from the raw probe, like the pointer rule: a bad kind does not hide it."""
    probe = probe_yaml(
        "p9", {"kind": "bogus", "value": "4512"}, after="c1-06", gold=(), predicate="locker_code"
    )
    found = problems(pilot_with(tmp_path, probe))
    assert len(found) == 2, found
    assert any("'kind' of forged is 'bogus'" in p for p in found)
    assert any("forged probe 'p9' is on predicate 'locker_code' (type number)" in p for p in found)


def test_place_validate_refuses_a_forged_probe_off_the_lock_and_exits_2(
    tmp_path: Path, capsys
) -> None:
    probe = probe_yaml(
        "p9", {"kind": "missing", "value": "4512"}, after="c1-06", gold=(), predicate="locker_code"
    )
    path = pilot_with(tmp_path, probe)
    assert main(["validate", str(path)]) == 2
    captured = capsys.readouterr()
    assert (
        f"{path}: probe p9 > forged (line {_line_of_forged(path, 'p9')}, column 5)" in captured.err
    )
    assert "forged probe 'p9' is on predicate 'locker_code' (type number)" in captured.err
    assert "Traceback" not in captured.err + captured.out


CONSEQUENTIAL = [
    # type money (deposit: unmarked, in no task's needs)
    pytest.param("deposit", "c3-06", (), "500 EUR", DEPOSIT, (), id="money"),
    # marked 'consequential: true' (door_code: a number, in no task's needs)
    pytest.param("door_code", "c3-06", ("2718",), "4444", "", (), id="marked"),
    # marked here (locker_code: a number, otherwise refused above)
    pytest.param("locker_code", "c1-06", (), "4512", "", ("locker_code",), id="marked-here"),
    # named in a task's needs (grocery_order: an unmarked enum, needed by t4 at c8-02, a
    # turn after the probe's)
    pytest.param("grocery_order", "c8-01", ("veg box",), "fruit box", "", (), id="needs"),
]


@pytest.mark.parametrize(("predicate", "after", "gold", "value", "schema", "marked"), CONSEQUENTIAL)
def test_a_forged_probe_on_a_consequential_predicate_is_accepted(
    tmp_path: Path,
    predicate: str,
    after: str,
    gold: tuple[str, ...],
    value: str,
    schema: str,
    marked: tuple[str, ...],
    capsys,
) -> None:
    probe = probe_yaml(
        "p9", {"kind": "missing", "value": value}, after=after, gold=gold, predicate=predicate
    )
    path = pilot_with(tmp_path, probe, schema=schema, marked=marked)
    traj = load_trajectory(path)
    (loaded,) = [p for p in traj.probes if p.id == "p9"]
    assert loaded.forged == Forged("missing", value)
    # the validator's rule is the runtime's cons(m)
    assert predicate in consequential_predicates(traj)
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()


def test_every_forged_probe_of_the_pilot_is_on_a_locked_predicate() -> None:
    traj = load_trajectory(PILOT)
    forged = [p for p in traj.probes if p.forged is not None]
    assert forged
    assert {p.predicate for p in forged} <= consequential_predicates(traj)
