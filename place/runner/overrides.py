"""Every override names a key of the schema, every group option a file under configs/.

`override_problems(overrides)` refuses, before Hydra composes, an override whose key the run
schema lacks (with or without Hydra's `+`, `++`, `~`: Hydra itself would add a `+` key
silently) or whose group option is no file under configs/ (the ConfigStore's `*_schema`
entries are never options), with the keys allowed at that level and a did-you-mean:
`experiment.kk=3: unknown key experiment.kk; allowed keys of experiment: ... (did you mean
experiment.k?)`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from collections.abc import Sequence
from typing import Any, get_origin

from place.runner.checks import SchemaField, fields_by_key, schema_fields, show
from place.runner.config import run_schema


def config_groups() -> dict[str, list[str]]:
    """Each config group (a top-level section with a folder under configs/) and its options:
    the YAML files in that folder, sorted. The ConfigStore's `*_schema` entries (what those
    files extend) are never options."""
    from place.runner.config import CONFIG_DIR

    return {
        f.name: sorted(p.stem for p in (CONFIG_DIR / f.name).glob("*.yaml"))
        for f in dataclasses.fields(run_schema())
        if (CONFIG_DIR / f.name).is_dir()
    }


def _key_tree() -> dict[str, Any]:
    return _schema_tree(run_schema())


@functools.cache
def _schema_tree(schema: type) -> dict[str, Any]:
    """The schema's keys as nested sections (dicts, in declaration order) of leaves
    (`SchemaField`s)."""
    tree: dict[str, Any] = {}
    for f in schema_fields(schema):
        *sections, name = f.key.split(".")
        node = tree
        for section in sections:
            node = node.setdefault(section, {})
        node[name] = f
    return tree


def _did_you_mean(candidates: Sequence[str]) -> str:
    return f" (did you mean {' or '.join(candidates)}?)" if candidates else ""


def _key_suggestions(parts: list[str], at: int) -> list[str]:
    """Known keys close to `parts`, whose part `at` is not at its level: the keys anywhere
    that end in the same name (`k` -> `experiment.k`), else the closest name at that level
    (`experiment.kk` -> `experiment.k`) when the rest of the key then exists."""
    if at == len(parts) - 1:
        same = [key for key in fields_by_key() if key.rsplit(".", 1)[-1] == parts[-1]]
        if same:
            return same[:3]
    level = _key_tree()
    for part in parts[:at]:
        level = level[part]
    for name in difflib.get_close_matches(parts[at], list(level), n=3):
        key = ".".join([*parts[:at], name, *parts[at + 1 :]])
        if _unknown_key(key) is None:
            return [key]
    return []


def _unknown_key(key: str) -> str | None:
    """Why `key` is no key of the schema, with the keys allowed where it goes wrong; None
    when it is one (a section, a leaf, or an index into a list-valued leaf)."""
    parts = key.split(".")
    node: Any = _key_tree()
    for at, part in enumerate(parts):
        if isinstance(node, SchemaField):
            if get_origin(node.type) is list:
                return None  # `design.producers.0=...`: an item of the list; Hydra's to judge
            return f"unknown key {key}; {node.key} is a value ({node.allowed}), not a section"
        if part not in node:
            section = ".".join(parts[:at])
            where = f"allowed keys of {section}" if section else "allowed top-level keys"
            return (
                f"unknown key {key}; {where}: {', '.join(node)}"
                f"{_did_you_mean(_key_suggestions(parts, at))}"
            )
        node = node[part]
    return None


def _unknown_option(group: str, value: str) -> str | None:
    options = config_groups()[group]
    if value in options:
        return None
    return (
        f"unknown {group} option {show(value)}; allowed: {', '.join(options)}"
        f"{_did_you_mean(difflib.get_close_matches(value, options, n=1))}"
    )


def override_problems(overrides: Sequence[str]) -> dict[str, str]:
    """Each override (as written) that names a key the schema lacks or a group option that is
    no file under configs/, with its problem: `experiment.kk=3: unknown key experiment.kk;
    allowed keys of experiment: ... (did you mean experiment.k?)`.

    With or without `+`, `++` or `~`: Hydra would add a `+` key silently. A `+` of a key or
    group that exists is refused too (Hydra refuses it, in three lines); `++` of an existing
    key sets it, and `~` of an existing key deletes it, as Hydra does. Only keys are judged,
    never values (sweeps included), except a group's option. Left to Hydra: its own keys
    (`hydra.*`, `hydra/...`), `@package` overrides, overrides that do not parse (Hydra reports
    them while composing), and a group's deletion."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import OverrideType, ValueType
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    groups = config_groups()
    problems: dict[str, str] = {}
    for text in overrides:
        try:
            override = parser.parse_override(text)
        except HydraException:
            continue
        key = override.key_or_group
        if key == "hydra" or key.startswith(("hydra.", "hydra/")) or override.package:
            continue
        plain = text.lstrip("+")  # the override without `+`/`++`
        problem: str | None
        if "/" in key:
            problem = f"unknown config group {key}; allowed groups: {', '.join(groups)}"
        elif key in groups and override.type != OverrideType.DEL:
            value = override.value() if override.value_type == ValueType.ELEMENT else None
            problem = _unknown_option(key, value) if isinstance(value, str) else None
            if problem is None and plain != text:
                problem = (
                    f"{text[: len(text) - len(plain)]} does not choose a group's option "
                    f"(configs/config.yaml chooses one already); write {plain}"
                )
        else:
            problem = _unknown_key(key)
            if problem is None and override.type == OverrideType.ADD:
                problem = f"+ only adds new keys, and {key} exists; write {plain} (or +{text})"
        if problem is not None:
            problems[text] = f"{text}: {problem}"
    return problems
