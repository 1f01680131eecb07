"""Loader/validator for `place-trajectory/1`: the good file loads into the expected model,
every bad file is rejected with a located problem that names the rule it breaks.

`place.reference.validate.load_trajectory` is the checked load (structure, then the replay's
rules); `place.trajectory.loader.load_structure` is its first step on its own."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from place.errors import InputError, Problem
from place.reference.validate import load_trajectory
from place.trajectory.loader import load_structure
from place.trajectory.model import Compaction, Conflict, Event, Permission, Slot, Task, Trajectory

DATA = Path(__file__).parents[1] / "data"
GOOD = DATA / "good" / "minimal.yaml"
GOOD_JSON = DATA / "good" / "minimal.json"
GOVERNANCE = DATA / "good" / "governance.yaml"
BAD = DATA / "bad"

# file -> (substring of the problem's location, substring of its message).
# Every bad file breaks exactly one rule, so exactly one problem is expected.
STRUCTURAL: dict[str, tuple[str, str]] = {
    "yaml_syntax.yaml": ("line 39, column 10", "YAML syntax error"),
    "top_level_list.yaml": ("document (line 2, column 1)", "must be a mapping"),
    "top_level_string.yaml": ("document (line 2", "got 'just some text'"),
    "empty.yaml": ("document", "the file is empty"),
    "wrong_format.yaml": (
        "format (line 3, column 9)",
        "only supported format is 'place-trajectory/1'",
    ),
    "bad_id.yaml": ("id (line 4", "must match [a-z0-9][a-z0-9_.-]*"),
    "missing_principal.yaml": ("top level (line 3, column 1)", "missing required key 'principal'"),
    "principal_not_entity.yaml": ("principal (line 6", "must include the principal"),
    "conversations_not_list.yaml": (
        "conversations (line 36",
        "must be a non-empty list; got a mapping",
    ),
    "unknown_key_evnts.yaml": (
        "conversation s1 > turn s1-03 (line 51",
        "unknown key 'evnts' in turn; allowed keys: id, role, text, source, events, query",
    ),
    "duplicate_key.yaml": ("turn s1-02 (line 48", "duplicate key 'text' (first at line 47"),
    "yaml_alias.yaml": ("line 9, column 10", "aliases are refused"),
    "custom_tag.yaml": ("line 47, column 15", "YAML tag '!shout' is not allowed"),
    "unknown_entity.yaml": ("turn s1-01 > events[0] > entity (line 44", "unknown entity 'bob'"),
    "unknown_predicate.yaml": (
        "turn s1-01 > events[0] > predicate (line 44",
        "unknown predicate 'train'; declared predicates: 'train_time'",
    ),
    "unknown_scope.yaml": (
        "turn s1-01 > events[0] > scope (line 44",
        "unknown scope 'paris'; allowed scopes: 'global', 'conference'",
    ),
    "value_not_in_domain.yaml": (
        "turn s1-03 > events[2] > value (line 54",
        "'350 EUR' is not in the value domain of predicate budget",
    ),
    "value_is_alias.yaml": (
        "turn s1-03 > events[1] > value",
        "'seafood' is an alias of the canonical value 'shellfish'",
    ),
    "unquoted_time.yaml": (
        "schema > predicate train_time > values (line 20, column 16)",
        'base-60 number 510; quote it: "8:30"',
    ),
    "bad_canonical_time.yaml": ("predicate train_time > values (line 20", "not a canonical time"),
    "bad_canonical_date.yaml": ("predicate checkout > values (line 35", "not a canonical date"),
    "bad_canonical_money.yaml": ("predicate budget > values (line 30", "not a canonical money"),
    "bad_template.yaml": ("predicate train_time > template", "unknown placeholder(s) {name}"),
    "alias_collision.yaml": ("predicate allergy > values > shellfish", "collides with 'pollen'"),
    "global_scope_declared.yaml": ("schema > scope global (line 12", "may not be declared"),
    "correct_on_many.yaml": (
        "turn s1-03 > events[1] > op (line 53",
        "'correct' is allowed on cardinality-one predicates only",
    ),
    "forget_with_value.yaml": ("turn s2-02 > events[1] > value (line 91", "takes no 'value'"),
    "assert_without_value.yaml": ("turn s1-01 > events[0] (line 44", "must have a 'value'"),
    "retract_many_without_value.yaml": ("turn s2-01 > events[1]", "must name the 'value'"),
    "window_order.yaml": ("turn s2-02 > events[0] > valid_until", "must precede valid_until"),
    "window_on_retract.yaml": (
        "turn s2-01 > events[1] > valid_from",
        "allowed on assert and correct events only",
    ),
    "events_on_assistant.yaml": ("turn s1-01 > events (line 43", "user turns only"),
    "events_on_tool.yaml": ("turn s1-04 > events (line 59", "never a trusted event"),
    "event_and_query.yaml": ("turn s2-03 (line 97", "events or a query, never both"),
    "duplicate_turn_id.yaml": ("conversation s2 > turn s1-05 > id (line 102", "duplicate turn id"),
    "tool_without_source.yaml": ("turn s1-04 (line 55", "tool turn must have a 'source'"),
    "source_on_user.yaml": ("turn s2-04 > source (line 104", "allowed on tool turns only"),
    "bad_family.yaml": (
        "query q2 > family (line 97",
        "allowed: supersession, correction, deletion, scope, temporal, provenance",
    ),
    "gold_duplicate.yaml": ("query q1 > gold[1] (line 68", "listed twice"),
    "probe_after_unknown.yaml": ("probe p1 > after (line 108", "'s9-99', which is not a turn"),
    "conflict_not_in_domain.yaml": ("probe p1 > conflict > value", "not in the value domain"),
    "conflict_is_gold.yaml": ("probe p1 > conflict > value", "one of the gold values"),
    "pair_insert_with_id.yaml": ("query q1 > pair > insert[0] > id (line 71", "take no 'id'"),
    "pair_insert_with_query.yaml": ("pair > insert[2] > query", "may not carry a query"),
    "pair_extra_key.yaml": (
        "query q1 > pair (line 70",
        "unknown key 'world' in pair; allowed keys: insert",
    ),
    "dates_decrease.yaml": ("conversation s2 > date (line 78", "must be non-decreasing"),
    "json_syntax.json": ("line 3, column 3", "JSON syntax error"),
    "json_unknown_key.json": ("conversation s1 > turn s1-02", "unknown key 'evnts' in turn"),
    "json_duplicate_key.json": ("top level", "duplicate key 'principal'"),
    # docs/method.md §11 (AOEP's governance half), derived from good/governance.yaml.
    "gov_principals_not_entity.yaml": ("principals[3] (line 9", "'sam' is not an entity"),
    "gov_principals_without_principal.yaml": (
        "principals (line 9",
        "principals must include the principal 'nora'",
    ),
    "gov_permission_owner_not_principal.yaml": (
        "schema > permission joint_account > owner (line 44",
        "owner 'bank' is not a principal; principals: 'nora', 'theo', 'ivy'",
    ),
    "gov_flag_not_bool.yaml": (
        "predicate electricity_bill > consequential (line 25",
        "must be true or false; got the number 1",
    ),
    "gov_speaker_not_principal.yaml": (
        "turn c2-03 > speaker (line 84",
        "speaker 'kim' is not a principal",
    ),
    "gov_speaker_on_assistant.yaml": (
        "turn c1-03b > speaker (line 66",
        "'speaker' is allowed on user and tool turns only",
    ),
    "gov_share_with_speaker.yaml": (
        "turn c2-01 > events[1] > with (line 76",
        "a slot is shared with another principal",
    ),
    "gov_share_without_with.yaml": (
        "turn c2-01 > events[1] (line 76",
        "a 'share' event must have 'with'",
    ),
    "gov_grant_by_non_owner.yaml": (
        "turn c2-02 > events[0] (line 82",
        "issued by its owner 'nora'; this turn's speaker is 'ivy'",
    ),
    "gov_revoke_by_non_owner.yaml": (
        "turn c2-04 > events[0] (line 98",
        "a 'revoke' of permission 'joint_account' is issued by its owner 'nora'",
    ),
    "gov_grant_to_owner.yaml": ("turn c2-02 > events[0] > to (line 81", "always holds it"),
    "gov_grant_unknown_permission.yaml": (
        "turn c2-02 > events[0] > permission (line 81",
        "unknown permission 'savings'; declared permissions: 'joint_account'",
    ),
    "gov_grant_with_entity.yaml": (
        "turn c2-02 > events[0] > entity (line 81",
        "'entity' is not a key of a 'grant' event; a 'grant' event has keys: op, permission, to",
    ),
    "gov_task_unknown_permission.yaml": (
        "turn c2-05 > task t2 > permission (line 106",
        "unknown permission 'savings'",
    ),
    "gov_task_duplicate_id.yaml": ("turn c2-05 > task t1 > id (line 103", "duplicate task id"),
    "gov_task_duplicate_handle.yaml": (
        "turn c2-06 > task t3 > handle (line 119",
        "handle 'h-t1' is already the handle of another task",
    ),
    "gov_task_args_per_need.yaml": (
        "task t1 > args (line 92",
        "args has 2 list(s) of values for 1 need(s)",
    ),
    "gov_task_on_tool_turn.yaml": (
        "turn c4-01 > task (line 179",
        "tasks are allowed on user turns only; this turn's role is tool",
    ),
    "gov_task_and_run.yaml": (
        "turn c3-02 (line 135",
        "at most one of events, query, task and run; this one has task and run",
    ),
    "gov_run_unknown_task.yaml": (
        "turn c3-02 > run (line 135",
        "run names task 't9', which is not a task of an earlier turn",
    ),
    "gov_run_not_deferred.yaml": (
        "turn c3-02 > run (line 135",
        "task 't2' is not deferred: it runs at its own turn c2-05",
    ),
    "gov_run_by_other_speaker.yaml": (
        "turn c3-02 > run (line 135",
        "task 't3' was requested by 'theo'",
    ),
    "gov_run_twice.yaml": ("turn c3-02b > run (line 140", "already runs at turn c3-02"),
    "gov_deferred_never_runs.yaml": (
        "turn c2-06 > task (line 118",
        "deferred task 't3' never runs",
    ),
    "gov_redelivers_later_turn.yaml": (
        "turn c1-03 > redelivers (line 62",
        "turn 'c2-01', which is not an earlier turn",
    ),
    "gov_redelivers_tool_turn.yaml": (
        "turn c4-04 > redelivers (line 201",
        "a tool turn; only a user turn is delivered again",
    ),
    "gov_redelivers_query_turn.yaml": (
        "turn c4-04 > redelivers (line 201",
        "turn 'c3-04' carries a query",
    ),
    "gov_redelivers_other_text.yaml": (
        "turn c1-03 > redelivers (line 62",
        "a redelivery repeats the text of the turn it redelivers exactly",
    ),
    "gov_redelivery_with_events.yaml": (
        "turn c1-03 (line 64",
        "a redelivery carries nothing of its own",
    ),
    "gov_restart_not_bool.yaml": (
        "turn c1-03 > restart (line 63",
        "'restart' of turn must be true or false; got 'yes'",
    ),
    "gov_rollback_unknown_task.yaml": (
        "turn c4-05 > events[0] > task (line 207",
        "rollback names task 't9', which is not a task of an earlier turn",
    ),
    "gov_insert_governance_event.yaml": (
        "query q2 > pair > insert[0] > events[0] > op (line 156",
        "inserted (pair) turns carry lifecycle events only",
    ),
    "gov_insert_with_speaker.yaml": (
        "query q2 > pair > insert[0] (line 154",
        "unknown key 'speaker' in inserted turn; allowed keys: role, text, source, events",
    ),
    "gov_probe_asker_not_principal.yaml": (
        "probe p1 > asker (line 215",
        "asker 'kim' is not a principal",
    ),
    "gov_compaction_after_unknown.yaml": (
        "compactions[0] > after (line 218",
        "'c9-99', which is not a turn",
    ),
}

# Rules that need the replay (place.reference.validate); only checked once the structure
# is sound. The replay may report knock-on effects too, so only inclusion is asserted.
SEMANTIC: dict[str, tuple[str, str]] = {
    "gold_mismatch.yaml": ("query q2", "gold"),
    "retract_not_active.yaml": ("turn s2-01", "not active"),
    "forget_never_held.yaml": ("turn s2-02", "never held"),
    "pair_changes_support.yaml": ("query q1", "world b"),
    # docs/method.md §11: ownership, shares, rollbacks and task decisions need the replay.
    "gov_share_by_non_owner.yaml": (
        "turn c2-01b > event c2-01b#1 (line 77",
        "share of slot (nora, electricity_bill, global) by 'theo', who does not own it",
    ),
    "gov_unshare_not_shared.yaml": (
        "turn c3-08 > event c3-08#2 (line 167",
        "with 'ivy', who is not among its shares (theo)",
    ),
    "gov_retract_by_non_owner.yaml": (
        "turn c3-03b > event c3-03b#1",
        "retract of slot (theo, salary, global) by 'nora', who does not own it",
    ),
    "gov_rollback_blocked_task.yaml": (
        "turn c4-05 > event c4-05#1",
        "rollback of task 't5', which the reference blocks (untrusted)",
    ),
    "gov_rollback_before_run.yaml": (
        "turn c3-00 > event c3-00#1",
        "rollback of task 't3', which has not run yet",
    ),
    "gov_task_undecidable.yaml": (
        "turn c4-02 > task t5 (line 183",
        "the task is undecidable: its need(s) (nora, locker_code, global) have no eligible value",
    ),
    "gov_task_expect_mismatch.yaml": (
        "turn c2-05 > task t2 (line 103",
        "expect 'allow' does not match the decision computed by replay 'block' "
        "(reasons: stale-epoch)",
    ),
    "gov_task_reasons_mismatch.yaml": (
        "turn c3-05 > task t4",
        "reasons ['untrusted'] do not match the reasons computed by replay ['out-of-scope']",
    ),
    "gov_task_args_mismatch.yaml": (
        "turn c2-03 > task t1",
        "args [['140 EUR']] do not match the arguments computed by replay [['120 EUR']]",
    ),
}


def _problems(path: Path) -> list[Problem]:
    with pytest.raises(InputError) as info:
        load_trajectory(path)
    problems = info.value.problems
    assert problems, "InputError must carry at least one problem"
    assert all(p.file == str(path) for p in problems)
    return problems


def _matching(problems: list[Problem], location: str, message: str) -> list[Problem]:
    return [p for p in problems if location in p.location and message in p.message]


@pytest.mark.parametrize(("name", "expected"), sorted(STRUCTURAL.items()))
def test_structural_problem_is_located_and_explained(name: str, expected: tuple[str, str]) -> None:
    problems = _problems(BAD / name)
    location, message = expected
    assert len(problems) == 1, "\n".join(map(str, problems))
    assert _matching(problems, location, message), "\n".join(map(str, problems))


@pytest.mark.parametrize(("name", "expected"), sorted(SEMANTIC.items()))
def test_semantic_problem_is_located_and_explained(name: str, expected: tuple[str, str]) -> None:
    problems = _problems(BAD / name)
    location, message = expected
    assert _matching(problems, location, message), "\n".join(map(str, problems))


@pytest.mark.parametrize("name", sorted(SEMANTIC))
def test_structure_load_leaves_the_replay_rules_to_the_reference_layer(name: str) -> None:
    trajectory, locate = load_structure(BAD / name)
    assert trajectory.source_path == str(BAD / name)
    first = trajectory.conversations[0].turns[0].id
    located = locate(Problem(str(BAD / name), f"turn {first}", "m"))
    assert located.location.startswith(f"turn {first} (line ")


def test_trajectory_layer_does_not_import_the_reference_layer() -> None:
    code = (
        "import sys, place.trajectory.loader, place.trajectory.document; "
        "print([m for m in sys.modules if m.startswith('place.reference')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_bad_file_is_in_a_table() -> None:
    on_disk = {p.name for p in BAD.iterdir()} - {"multi_problem.yaml"}
    assert on_disk == set(STRUCTURAL) | set(SEMANTIC)


def test_independent_mistakes_are_all_reported_at_once() -> None:
    problems = _problems(BAD / "multi_problem.yaml")
    assert len(problems) == 3, "\n".join(map(str, problems))
    assert _matching(problems, "format (line 3", "place-trajectory/1")
    assert _matching(problems, "conversation s1 > turn s1-02 (line 48", "unknown key 'mood'")
    assert _matching(problems, "probe p1 > entity (line 112", "unknown entity 'kimm'")


# ---------------------------------------------------------------- the good file


@pytest.fixture(scope="module")
def minimal() -> Trajectory:
    return load_trajectory(GOOD)


def test_minimal_top_level(minimal: Trajectory) -> None:
    assert minimal.id == "minimal"
    assert minimal.title == "Tiny valid trajectory for the loader tests"
    assert minimal.principal == "kim"
    assert minimal.source_path == str(GOOD)
    assert minimal.sha256 == hashlib.sha256(GOOD.read_bytes()).hexdigest()
    assert [c.id for c in minimal.conversations] == ["s1", "s2"]
    assert [c.date for c in minimal.conversations] == [dt.date(2026, 5, 1), dt.date(2026, 5, 2)]


def test_minimal_schema(minimal: Trajectory) -> None:
    schema = minimal.schema
    assert set(schema.entities) == {"kim", "ravi"}
    assert schema.entities["ravi"].aliases == ("my brother",)
    assert schema.entities["kim"].aliases == ()
    assert set(schema.scopes) == {"conference"}  # `global` is implicit, never listed
    assert schema.has_scope("global")
    train = schema.predicates["train_time"]
    assert (train.type, train.cardinality, train.default_scope) == ("time", "one", "conference")
    assert train.values == {"08:30": ("half past eight",), "10:05": ()}
    assert train.keywords == ("train", "departs")
    assert train.template == "{entity_name}'s train leaves at {value} ({scope})"
    # An unquoted YAML date key is accepted for a date-typed predicate, as ISO text.
    assert schema.predicates["checkout"].values == {"2026-05-04": (), "2026-05-05": ()}
    assert schema.predicates["allergy"].template is None


def test_minimal_turns_and_event_ids(minimal: Trajectory) -> None:
    turns = {t.id: t for _, t in minimal.turns()}
    assert list(turns) == [*(f"s1-0{i}" for i in range(1, 6)), *(f"s2-0{i}" for i in range(1, 5))]
    assert [e.id for e in turns["s1-03"].events] == ["s1-03#1", "s1-03#2", "s1-03#3"]
    assert turns["s1-03"].events[0] == Event(
        "s1-03#1", "assert", "kim", "allergy", "global", "pollen"
    )
    assert turns["s1-04"].role == "tool"
    assert turns["s1-04"].source == "sms"
    assert turns["s1-02"].source is None
    retract = turns["s2-01"].events[1]
    assert (retract.op, retract.value, retract.scope) == ("retract", "pollen", "global")
    checkout, forget = turns["s2-02"].events
    assert checkout.value == "2026-05-04"  # YAML date value converted to ISO text
    assert (checkout.valid_from, checkout.valid_until) == (dt.date(2026, 5, 2), dt.date(2026, 6, 1))
    assert (forget.op, forget.value) == ("forget", None)


def test_minimal_queries(minimal: Trajectory) -> None:
    queries = {q.id: (turn.id, q) for _, turn, q in minimal.queries()}
    assert list(queries) == ["q1", "q2", "q3"]
    turn_id, q1 = queries["q1"]
    assert turn_id == "s1-05"
    assert q1.as_of == dt.date(2026, 5, 1)  # defaults to the conversation's date
    assert (q1.family, q1.scope, q1.gold) == ("provenance", "conference", ("08:30",))
    assert q1.pair_insert is not None
    assert [t.id for t in q1.pair_insert] == ["s1-05~b1", "s1-05~b2"]
    assert [e.id for e in q1.pair_insert[0].events] == ["s1-05~b1#1"]
    assert q1.pair_insert[0].events[0].entity == "ravi"
    assert queries["q2"][1].as_of == dt.date(2026, 5, 3)  # explicit as_of wins
    assert queries["q2"][1].scope == "global"
    assert queries["q2"][1].pair_insert is None
    assert queries["q3"][1].as_of == dt.date(2026, 5, 2)
    assert queries["q3"][1].gold == ()


def test_minimal_probes(minimal: Trajectory) -> None:
    (probe,) = minimal.probes
    assert (probe.id, probe.after, probe.family, probe.scope) == (
        "p1",
        "s2-03",
        "correction",
        "global",
    )
    assert probe.gold == ("450 EUR",)
    assert probe.conflict == Conflict("Kim's budget is 300 EUR.", "300 EUR")


def test_json_encoding_loads_to_the_same_model(minimal: Trajectory) -> None:
    from_json = load_trajectory(str(GOOD_JSON))
    assert from_json.id == "minimal-json"
    assert from_json.source_path == str(GOOD_JSON)
    assert from_json.schema == minimal.schema
    assert from_json.conversations == minimal.conversations
    assert from_json.probes == minimal.probes


# ---------------------------------------------------------------- the §11 constructs


@pytest.fixture(scope="module")
def governance() -> Trajectory:
    return load_trajectory(GOVERNANCE)


def test_minimal_uses_no_governance_construct(minimal: Trajectory) -> None:
    assert not minimal.governed
    assert minimal.principals == () and minimal.all_principals() == ("kim",)
    assert minimal.schema.permissions == {} and minimal.compactions == ()
    assert all(
        (t.speaker, t.task, t.run, t.redelivers, t.restart) == (None, None, None, None, False)
        for _, t in minimal.turns()
    )


def test_governance_top_level_and_schema(governance: Trajectory) -> None:
    assert governance.governed
    assert governance.principal == "nora"
    assert governance.principals == ("nora", "theo", "ivy") == governance.all_principals()
    assert governance.schema.permissions == {"joint_account": Permission("joint_account", "nora")}
    bill = governance.schema.predicates["electricity_bill"]
    assert (bill.consequential, bill.core) == (True, False)
    salary = governance.schema.predicates["salary"]
    assert (salary.consequential, salary.core) == (False, True)
    assert governance.compactions == (Compaction("c3-08", "nora", "global"),)
    (probe,) = governance.probes
    assert probe.asker == "theo" and governance.asker_of(probe) == "theo"


def test_governance_speakers_and_events(governance: Trajectory) -> None:
    turns = {t.id: t for _, t in governance.turns()}
    assert turns["c2-03"].speaker == "theo"
    assert turns["c2-01"].speaker is None and governance.speaker_of(turns["c2-01"]) == "nora"
    assert turns["c4-01"].speaker is None and governance.speaker_of(turns["c4-01"]) == "nora"
    share = turns["c2-01"].events[1]
    assert (share.op, share.slot, share.with_) == (
        "share",
        Slot("nora", "electricity_bill", "global"),
        "theo",
    )
    assert share.has_slot
    grant = turns["c2-02"].events[0]
    assert grant == Event(
        "c2-02#1", "grant", "", "", "global", permission="joint_account", to="theo"
    )
    assert not grant.has_slot
    rollback = turns["c4-05"].events[0]
    assert (rollback.op, rollback.task) == ("rollback", "t6")


def test_governance_tasks(governance: Trajectory) -> None:
    tasks = {k.id: (t.id, k) for _, t, k in governance.tasks()}
    assert list(tasks) == ["t1", "t2", "t3", "t4", "t5", "t6"]  # the redelivery of t6 is not one
    turn_id, t1 = tasks["t1"]
    assert turn_id == "c2-03"
    assert t1 == Task(
        id="t1",
        action="pay-bill",
        needs=(Slot("nora", "electricity_bill", "global"),),
        expect="allow",
        permission="joint_account",
        deferred=False,
        handle="h-t1",  # the default handle
        reasons=None,
        args=(("120 EUR",),),
    )
    _, t3 = tasks["t3"]
    assert (t3.deferred, t3.handle, t3.reasons) == (True, "bill-next-week", ("stale-epoch",))
    assert governance.task("t4").permission is None
    run = governance.turn("c3-02")
    assert (run.run, run.task, run.events) == ("t3", None, ())


def test_a_redelivery_carries_its_original(governance: Trajectory) -> None:
    original, again = governance.turn("c1-01"), governance.turn("c1-03")
    assert (again.redelivers, again.restart) == ("c1-01", True)
    assert again.text == original.text
    assert again.events == original.events  # same ids: the idempotency key
    assert [e.id for e in again.events] == ["c1-01#1"]
    task_again = governance.turn("c4-04")
    assert task_again.task == governance.task("t6") and task_again.redelivers == "c4-03"
    assert governance.turn("c3-01").restart and not governance.turn("c3-02").restart


def test_governance_yaml_and_json_load_to_the_same_model(tmp_path: Path) -> None:
    import yaml

    document = yaml.safe_load(GOVERNANCE.read_text(encoding="utf-8"))
    path = tmp_path / "governance.json"
    path.write_text(json.dumps(document, default=str), encoding="utf-8")
    from_json = load_trajectory(path)
    from_yaml = load_trajectory(GOVERNANCE)
    assert from_json.schema == from_yaml.schema
    assert from_json.conversations == from_yaml.conversations
    assert from_json.probes == from_yaml.probes
    assert (from_json.principals, from_json.compactions) == (
        from_yaml.principals,
        from_yaml.compactions,
    )


# ---------------------------------------------------------------- files and YAML edge cases


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_unsupported_extension_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "minimal.txt", GOOD.read_text())
    (problem,) = _problems(path)
    assert ".yaml, .yml, .json" in problem.message


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    (problem,) = _problems(tmp_path / "nope.yaml")
    assert "cannot read" in problem.message


def test_non_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "latin1.yaml", "format: caf\u00e9\n".encode("latin-1"))
    (problem,) = _problems(path)
    assert "UTF-8" in problem.message


def test_alias_without_anchor_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "alias.yaml", "a: 1\nb: *missing\n")
    (problem,) = _problems(path)
    assert problem.location == "line 2, column 4"
    assert "alias '*missing' is not allowed" in problem.message


def test_python_tags_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "tag.yaml", "a: !!python/object/apply:os.system ['true']\n")
    (problem,) = _problems(path)
    assert "not allowed" in problem.message


def test_several_documents_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "two.yaml", "a: 1\n---\nb: 2\n")
    (problem,) = _problems(path)
    assert "line 2" in problem.location


def test_yml_extension_and_path_as_given(tmp_path: Path) -> None:
    path = _write(tmp_path, "copy.yml", GOOD.read_text())
    trajectory = load_trajectory(str(path))
    assert trajectory.source_path == str(path)


# ---------------------------------------------------------------- robustness


def _json_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths: list[tuple[Any, ...]] = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            paths += _json_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            paths += _json_paths(value, (*prefix, index))
    return paths


def _replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(document))
    target = copy
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return copy


def _governance_document() -> Any:
    import yaml

    return json.loads(
        json.dumps(yaml.safe_load(GOVERNANCE.read_text(encoding="utf-8")), default=str)
    )


@pytest.mark.parametrize("which", ["minimal", "governance"])
def test_any_wrong_type_anywhere_is_an_input_error_never_a_crash(
    tmp_path: Path, which: str
) -> None:
    """Swap every node of a good document for a value of another type: the loader must
    either accept it or raise InputError (a traceback would be a loader bug)."""
    document = json.loads(GOOD_JSON.read_text()) if which == "minimal" else _governance_document()
    path = tmp_path / "mutant.json"
    substitutes: list[Any] = [None, 7, "", [], {}]
    for node_path in _json_paths(document):
        for substitute in substitutes:
            path.write_text(json.dumps(_replaced(document, node_path, substitute)))
            try:
                load_trajectory(path)
            except InputError as exc:
                assert exc.problems


def test_merge_keys_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "merge.yaml", "a: {<<: {b: 1}}\n")
    (problem,) = _problems(path)
    assert "merge key '<<' is not allowed" in problem.message


def test_short_time_value_points_at_the_canonical_form(tmp_path: Path) -> None:
    text = GOOD.read_text().replace('value: "08:30", scope:', 'value: "8:30", scope:')
    (problem,) = _problems(_write(tmp_path, "short.yaml", text))
    assert "turn s1-01 > events[0] > value" in problem.location
    assert "write times as HH:MM: '08:30'" in problem.message
