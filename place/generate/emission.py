"""Emission: the `place-trajectory/1` document of a built trajectory and its YAML or JSON text.

The YAML is written by PyYAML with a dumper that fixes the layout the generator has always
written (a seed's file must stay byte-identical): every string double-quoted, keys plain
unless YAML would read them as something else, dates plain, lists of scalars and event
mappings (`Flow`) in flow style, everything else in block style with lists indented under
their key, keys in document order, no line wrapping.

Comments are the one thing PyYAML cannot write: its event model has no comment event. The
header lines are put in front of the dump, and a mapping key starting with `#` (the
repository's `# pair-kind:` marker on each query) is dumped as an ordinary entry and then
rewritten into a comment line (`_comment_lines`); JSON drops such keys.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import yaml

from place import __version__
from place.generate.drafts import EventDraft, ProbeDraft, TurnDraft
from place.generate.forgery import ForgedProbe
from place.generate.governance import Governed, GovernedTurn, TaskDraft
from place.generate.world import World
from place.trajectory.model import FORMAT


class Flow(dict[str, Any]):
    """A mapping written in YAML flow style ({a: 1, b: 2})."""


def document(
    w: World,
    conversations: list[list[TurnDraft]],
    probes: list[ProbeDraft],
    filler: int,
    governed: Governed | None = None,
    forged: list[ForgedProbe] | None = None,
) -> dict[str, Any]:
    """The trajectory as the format's keys, in the order they are written (the governance
    keys only with a governance story, so that `paper` files carry none of them; the forged
    probes after every other probe)."""
    ident = f"gen-{w.design_name}-s{w.seed}" + (f"-f{filler}" if filler else "")
    title = (
        f"Generated trajectory (place {__version__}, design {w.design_name}, "
        f"seed {w.seed}, filler {filler}): {w.names[w.principal]}'s "
        f"{len(conversations)} sessions"
    )
    entities = {}
    for eid, name in w.names.items():
        entry = Flow(name=name)
        if w.alias[eid]:
            entry["aliases"] = [w.alias[eid]]
        entities[eid] = entry
    scopes = {sid: Flow(aliases=list(sc.aliases)) for sid, sc in w.schema.scopes.items()}
    predicates = {}
    # A forger goes for what matters: the slots of the forged probes are declared
    # consequential (unless their type already makes them so), so the citation lock applies
    # to them (docs/method.md §12.3; docs/generator.md, "The forged probes of `small`").
    targeted = {fp.base.predicate for fp in forged or ()}
    for spec in w.specs:
        predicate: dict[str, Any] = {
            "type": spec.type,
            "cardinality": spec.cardinality,
            "keywords": list(spec.keywords),
        }
        if spec.scope in ("work", "home"):
            predicate["default_scope"] = spec.scope
        predicate["template"] = spec.template
        if spec.id in targeted and spec.type != "money":
            predicate["consequential"] = True
        predicate["values"] = {v: list(a) for v, a in w.domains[spec.id].items()}
        predicates[spec.id] = predicate
    convs = [
        {
            "id": f"c{k + 1}",
            "date": w.dates[k],
            "turns": [_turn_doc(t, with_id=True) for t in conv],
        }
        for k, conv in enumerate(conversations)
    ]
    probe_docs = []
    for probe in probes:
        p = probe.point
        probe_doc: dict[str, Any] = {
            "id": probe.id,
            "after": p.anchor.id,
            "family": p.family,
            "text": probe.text,
            "entity": p.entity,
            "predicate": p.predicate,
            "scope": p.scope,
            "gold": list(p.gold),
        }
        if probe.conflict is not None:
            probe_doc["conflict"] = {"text": probe.conflict[0], "value": probe.conflict[1]}
        probe_docs.append(probe_doc)
    schema: dict[str, Any] = {"entities": entities, "scopes": scopes, "predicates": predicates}
    doc: dict[str, Any] = {"format": FORMAT, "id": ident, "title": title}
    doc["principal"] = w.principal
    if governed is not None:
        doc["principals"] = list(governed.principals)
        schema["permissions"] = {p: Flow(owner=o) for p, o in governed.permissions.items()}
        for gp in governed.probes:
            probe_docs.append(
                {
                    "id": gp.id,
                    "after": gp.anchor.id,
                    "family": "scope",
                    "text": gp.text,
                    "entity": gp.entity,
                    "predicate": gp.predicate,
                    "scope": gp.scope,
                    "gold": list(gp.gold),
                    "asker": gp.asker,
                }
            )
    for fp in forged or ():
        record = Flow(kind=fp.kind, value=fp.value)
        if fp.pointer is not None:
            record["pointer"] = fp.pointer
        b = fp.base
        probe_docs.append(
            {
                "id": fp.id,
                "after": b.after,
                "family": b.family,
                "text": fp.text,
                "entity": b.entity,
                "predicate": b.predicate,
                "scope": b.scope,
                "gold": list(b.gold),
                "forged": record,
            }
        )
    doc["schema"] = schema
    doc["conversations"] = convs
    doc["probes"] = probe_docs
    if governed is not None:
        doc["compactions"] = [
            Flow(after=c.anchor.id, entity=c.entity, scope=c.scope) for c in governed.compactions
        ]
    return doc


def _turn_doc(turn: TurnDraft, *, with_id: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": turn.id} if with_id else {}
    doc["role"] = turn.role
    governed = turn if isinstance(turn, GovernedTurn) else None
    if governed is not None and governed.speaker is not None:
        doc["speaker"] = governed.speaker
    if turn.source is not None:
        doc["source"] = turn.source
    doc["text"] = turn.text
    if turn.events:
        doc["events"] = [_event_doc(e) for e in turn.events]
    if governed is not None:
        if governed.acts:
            doc["events"] = [Flow(op=a.op, **a.keys) for a in governed.acts]
        if governed.task is not None:
            doc["task"] = _task_doc(governed.task)
        if governed.run is not None:
            doc["run"] = governed.run.id
        if governed.redelivers is not None:
            doc["redelivers"] = governed.redelivers.id
        if governed.restart:
            doc["restart"] = True
    if turn.query is not None:
        q = turn.query
        qdoc: dict[str, Any] = {
            "id": q.id,
            "family": q.family,
            "entity": q.entity,
            "predicate": q.predicate,
            "scope": q.scope,
        }
        if q.as_of is not None:
            qdoc["as_of"] = q.as_of
        qdoc["gold"] = list(q.gold)
        qdoc["#pair-kind"] = q.pair_kind
        qdoc["pair"] = {"insert": [_turn_doc(t, with_id=False) for t in q.insert]}
        doc["query"] = qdoc
    return doc


def _task_doc(task: TaskDraft) -> dict[str, Any]:
    entity, predicate, scope = task.need
    doc: dict[str, Any] = {"id": task.id, "action": task.action}
    doc["needs"] = [Flow(entity=entity, predicate=predicate, scope=scope)]
    if task.permission is not None:
        doc["permission"] = task.permission
    if task.deferred:
        doc["deferred"] = True
    doc["expect"] = task.expect
    if task.reasons is not None:
        doc["reasons"] = list(task.reasons)
    if task.args is not None:
        doc["args"] = [list(a) for a in task.args]
    return doc


def _event_doc(e: EventDraft) -> Flow:
    doc = Flow(op=e.op, entity=e.entity, predicate=e.predicate)
    if e.value is not None:
        doc["value"] = e.value
    doc["scope"] = e.scope
    if e.valid_from is not None:
        doc["valid_from"] = e.valid_from
    if e.valid_until is not None:
        doc["valid_until"] = e.valid_until
    return doc


# ---------------------------------------------------------------- YAML

_STR = "tag:yaml.org,2002:str"
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# YAML 1.1 words a plain key would be read as (booleans, null) or that some readers treat so.
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_COMMENT = re.compile(r'^( *)"#([A-Za-z0-9_-]+)": "([^"\\]*)"$', re.MULTILINE)


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper with the generator's layout (see the module docstring)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Lists are indented under their key ("turns:\n  - id: ..."), as in the format's
        # examples; PyYAML's default writes them flush with the key.
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        # The same date object may occur twice (a conversation date and an event's window);
        # a trajectory is written out in full, never with anchors and aliases.
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(_STR, value, style='"')


def _represent_mapping(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.MappingNode:
    pairs = [(_key_node(k), dumper.represent_data(v)) for k, v in value.items()]
    return yaml.MappingNode("tag:yaml.org,2002:map", pairs, flow_style=isinstance(value, Flow))


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    flow = not any(isinstance(item, dict) for item in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _key_node(key: str) -> yaml.ScalarNode:
    plain = _PLAIN_KEY.fullmatch(key) is not None and key.lower() not in _YAML_WORDS
    return yaml.ScalarNode(_STR, key, style=None if plain else '"')


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(dict, _represent_mapping)
_Dumper.add_representer(Flow, _represent_mapping)
_Dumper.add_representer(list, _represent_list)


def to_yaml(doc: dict[str, Any], header: list[str]) -> str:
    """The document as YAML, after `header` as comment lines."""
    body = yaml.dump(
        doc,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=float("inf"),
        indent=2,
    )
    head = "".join(f"# {line}\n" if line else "#\n" for line in header)
    return head + _comment_lines(body)


def _comment_lines(text: str) -> str:
    """Entries `"#name": "value"` (keys starting with `#`) become `# name: value` lines."""
    return _COMMENT.sub(r"\1# \2: \3", text)


# ---------------------------------------------------------------- JSON


def to_json(doc: dict[str, Any]) -> str:
    """The document as JSON, without the comment keys."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not k.startswith("#")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dt.date):
            return value.isoformat()
        return value

    return json.dumps(strip(doc), indent=2, ensure_ascii=False) + "\n"
