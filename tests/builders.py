"""Small builders for hand-computed trajectories in tests (no file I/O, no loader)."""

from __future__ import annotations

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
    Predicate,
    Probe,
    Query,
    Schema,
    Scope,
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
