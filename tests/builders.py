"""Small builders for hand-computed trajectories in tests (no file I/O, no loader)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from place.lexicon import Lexicon
from place.trajectory.model import (
    Conversation,
    Entity,
    Event,
    Fact,
    Permission,
    Predicate,
    Probe,
    Query,
    Schema,
    Scope,
    Slot,
    Task,
    Trajectory,
    Turn,
)


def d(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def schema() -> Schema:
    """alex (principal) and dana; scopes trip and work; one/many predicates of several types."""
    return Schema(
        entities={
            "alex": Entity("alex", "Alex"),
            "dana": Entity("dana", "Dana", ("my sister",)),
        },
        scopes={"trip": Scope("trip", ("Lisbon",)), "work": Scope("work", ("work",))},
        predicates={
            "flight": Predicate(
                "flight",
                "time",
                "one",
                ("flight",),
                {"07:15": (), "09:40": (), "06:05": ()},
                default_scope="trip",
            ),
            "hotel": Predicate(
                "hotel", "enum", "one", ("hotel",), {"Avenida": (), "Lumen": (), "Marriott": ()}
            ),
            "diet": Predicate(
                "diet", "enum", "many", ("diet",), {"vegetarian": (), "nut-free": ()}
            ),
            "city": Predicate("city", "enum", "one", ("staying in",), {"Porto": (), "Lisbon": ()}),
        },
    )


def ev(
    turn: str,
    i: int,
    op: str,
    entity: str,
    predicate: str,
    value: str | None = None,
    scope: str = "global",
    valid_from: str | None = None,
    valid_until: str | None = None,
) -> Event:
    return Event(
        id=f"{turn}#{i}",
        op=op,
        entity=entity,
        predicate=predicate,
        scope=scope,  # type: ignore[arg-type]  # reason: builders take plain strings; the model validates
        value=value,
        valid_from=d(valid_from) if valid_from else None,
        valid_until=d(valid_until) if valid_until else None,
    )


def user(turn_id: str, *events: dict[str, Any], text: str = "...") -> Turn:
    built = tuple(ev(turn_id, i + 1, **e) for i, e in enumerate(events))
    return Turn(turn_id, "user", text, events=built)


def ask(
    turn_id: str,
    qid: str,
    entity: str,
    predicate: str,
    gold: tuple[str, ...] = (),
    scope: str = "global",
    as_of: str = "2026-03-02",
    family: str = "supersession",
    insert: tuple[Turn, ...] | None = None,
) -> Turn:
    query = Query(qid, family, entity, predicate, scope, d(as_of), gold, insert)  # type: ignore[arg-type]  # reason: builders take plain strings
    return Turn(turn_id, "user", "?", query=query)


def trajectory(
    *conversations: tuple[str, str, list[Turn]], probes: tuple[Probe, ...] = ()
) -> Trajectory:
    convs = tuple(Conversation(cid, d(date), tuple(turns)) for cid, date, turns in conversations)
    return Trajectory(id="t", principal="alex", schema=schema(), conversations=convs, probes=probes)


LEXICON_SCHEMA_FILE = Path(__file__).parent / "data" / "lexicon_schema.yaml"


def schema_from_yaml(path: Path = LEXICON_SCHEMA_FILE) -> tuple[Schema, str]:
    """Just enough of a loader for a test schema (the real loader is tested elsewhere)."""
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw = doc["schema"]
    entities = {
        eid: Entity(eid, e["name"], tuple(e.get("aliases", ())))
        for eid, e in raw["entities"].items()
    }
    scopes = {sid: Scope(sid, tuple(s.get("aliases", ()))) for sid, s in raw["scopes"].items()}
    predicates = {
        pid: Predicate(
            id=pid,
            type=p["type"],
            cardinality=p["cardinality"],
            keywords=tuple(p["keywords"]),
            values={str(v): tuple(a) for v, a in p["values"].items()},
            default_scope=p.get("default_scope"),
        )
        for pid, p in raw["predicates"].items()
    }
    return Schema(entities, scopes, predicates), doc["principal"]


def lexicon_self_check(traj: Trajectory) -> tuple[int, int, list[str]]:
    """(passed, checked, failures): β on an event turn's own text must read its asserted facts.

    Only turns with an assert/correct event are checked (retract and forget assert no value).
    """
    lexicon = Lexicon(traj.schema, traj.principal)
    passed = checked = 0
    failures: list[str] = []
    for _conv, turn in traj.turns():
        facts = [
            Fact(e.entity, e.predicate, e.value, e.scope)
            for e in turn.events
            if e.op in ("assert", "correct") and e.value is not None
        ]
        if not facts:
            continue
        checked += 1
        read = lexicon.read(turn.text)
        missing = [f for f in facts if f not in read]
        if missing:
            failures.append(f"{turn.id}: {turn.text!r} misses {missing}")
        else:
            passed += 1
    return passed, checked, failures


# ---------------------------------------------------------------- docs/method.md §11


def gev(turn: str, i: int, op: str, **keys: Any) -> Event:
    """A governance event (share, unshare, grant, revoke, rollback): keys as in the model
    (`with_` for the file's `with`); grant, revoke and rollback name no slot."""
    entity, predicate = keys.pop("entity", ""), keys.pop("predicate", "")
    return Event(f"{turn}#{i}", op, entity, predicate, **keys)  # type: ignore[arg-type]  # reason: builders take plain strings; the model validates


def said(
    turn_id: str,
    *events: Event | dict[str, Any],
    speaker: str | None = None,
    text: str = "...",
    restart: bool = False,
) -> Turn:
    """A user turn of `speaker` carrying lifecycle events (dicts, as for `user`) and
    governance events (`gev`), numbered in order."""
    built = tuple(
        e if isinstance(e, Event) else ev(turn_id, i + 1, **e) for i, e in enumerate(events)
    )
    return Turn(turn_id, "user", text, events=built, speaker=speaker, restart=restart)


def tool(turn_id: str, text: str, speaker: str | None = None) -> Turn:
    return Turn(turn_id, "tool", text, source="sms", speaker=speaker)


def request(
    turn_id: str,
    task_id: str,
    *needs: tuple[str, str] | tuple[str, str, str],
    speaker: str | None = None,
    permission: str | None = None,
    deferred: bool = False,
    expect: str = "allow",
    text: str = "please do it",
) -> Turn:
    """A user turn of `speaker` requesting a task whose needs are (entity, predicate[, scope])."""
    slots = tuple(Slot(n[0], n[1], n[2] if len(n) > 2 else "global") for n in needs)
    task = Task(task_id, "act", slots, expect, permission, deferred, f"h-{task_id}")  # type: ignore[arg-type]  # reason: builders take plain strings
    return Turn(turn_id, "user", text, task=task, speaker=speaker)


def run(turn_id: str, task_id: str, speaker: str | None = None) -> Turn:
    return Turn(turn_id, "user", "now", run=task_id, speaker=speaker)


def redeliver(turn_id: str, original: Turn, restart: bool = False) -> Turn:
    """A duplicate delivery of `original`, as the loader builds one."""
    return dataclasses.replace(original, id=turn_id, redelivers=original.id, restart=restart)


def governed(
    *conversations: tuple[str, str, list[Turn]],
    principals: tuple[str, ...] = ("alex", "dana"),
    permissions: dict[str, str] | None = None,
    probes: tuple[Probe, ...] = (),
) -> Trajectory:
    """`trajectory` with principals (alex, the principal, and dana) and permissions
    (id -> owner)."""
    base = trajectory(*conversations, probes=probes)
    perms = {p: Permission(p, owner) for p, owner in (permissions or {}).items()}
    return dataclasses.replace(
        base, schema=dataclasses.replace(base.schema, permissions=perms), principals=principals
    )
