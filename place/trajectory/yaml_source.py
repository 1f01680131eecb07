"""Parse YAML or JSON text into a small positioned tree the trajectory validator walks.

Why not `yaml.safe_load`: it forgets where things are (the user needs line and column),
silently keeps the last of two duplicate keys, and expands aliases (an alias bomb can
exhaust memory). We compose the node graph ourselves, refuse anchors, aliases and custom
tags, build scalars with PyYAML's safe constructor only, and keep every duplicate key so
the validator can report it where it knows the mapping's id path. JSON is parsed with the
standard library and converted into the same tree (without positions).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

_YAML_TAG = "tag:yaml.org,2002:"
# Plain data only. `binary`, `set`, `omap`, `pairs` and `merge` (`<<`) are safe in PyYAML
# but have no meaning in a trajectory, so they are refused like any custom tag.
ALLOWED_TAGS = frozenset(
    _YAML_TAG + name for name in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq")
)
_SEXAGESIMAL = re.compile(r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$")


@dataclass(frozen=True)
class Pos:
    """1-based position in the source text."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


@dataclass
class Scalar:
    value: Any
    """The safely constructed value (str, int, float, bool, None, date, datetime)."""
    raw: str | None = None
    """The text as written, for YAML scalars (used to explain YAML's implicit typing)."""
    quoted: bool = False
    pos: Pos | None = None


@dataclass
class Seq:
    items: list[Value]
    pos: Pos | None = None


@dataclass
class Map:
    entries: list[tuple[Scalar, Value]] = field(default_factory=list)
    """Every key/value pair in source order, duplicates included."""
    pos: Pos | None = None

    def get(self, key: str) -> Value | None:
        """The value of the first occurrence of `key` (duplicates are reported separately)."""
        for k, v in self.entries:
            if k.value == key and isinstance(k.value, str):
                return v
        return None

    def key_pos(self, key: str) -> Pos | None:
        for k, _ in self.entries:
            if k.value == key and isinstance(k.value, str):
                return k.pos
        return None

    def has(self, key: str) -> bool:
        return any(k.value == key and isinstance(k.value, str) for k, _ in self.entries)


Value = Scalar | Seq | Map


class SourceError(Exception):
    """The text cannot be turned into a tree at all; carries (position, message) pairs."""

    def __init__(self, problems: list[tuple[Pos | None, str]]) -> None:
        super().__init__("; ".join(m for _, m in problems))
        self.problems = problems


def pos_of(node: Value | None) -> Pos | None:
    return None if node is None else node.pos


def _mark_pos(mark: yaml.Mark | None) -> Pos | None:
    return None if mark is None else Pos(mark.line + 1, mark.column + 1)


class _NoAliasComposer(Composer):
    """Composer that refuses anchors and aliases instead of building a shared graph."""

    def compose_node(self, parent: Node | None, index: object) -> Node | None:  # type: ignore[override]
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            raise SourceError(
                [
                    (
                        _mark_pos(event.start_mark),
                        f"YAML alias '*{event.anchor}' is not allowed; write the value out "
                        "in full (anchors and aliases are refused to rule out alias bombs)",
                    )
                ]
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise SourceError(
                [
                    (
                        _mark_pos(event.start_mark),
                        f"YAML anchor '&{anchor}' is not allowed; write every value out in "
                        "full (anchors and aliases are refused to rule out alias bombs)",
                    )
                ]
            )
        return super().compose_node(parent, index)


class _Loader(Reader, Scanner, Parser, _NoAliasComposer, SafeConstructor, Resolver):
    """Safe loader pieces with our composer; only `compose_node` is used, never `construct`."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        _NoAliasComposer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)


def parse_yaml(text: str) -> Value | None:
    """Parse YAML text; None for an empty document. Raises SourceError."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise SourceError([(_mark_pos(exc.problem_mark), _yaml_error_text(exc))]) from None
    except RecursionError:
        raise SourceError([(None, "the document is nested too deeply")]) from None
    finally:
        loader.dispose()
    if root is None:
        return None
    problems: list[tuple[Pos | None, str]] = []
    try:
        tree = _convert(root, loader, problems)
    except RecursionError:
        raise SourceError([(None, "the document is nested too deeply")]) from None
    if problems:
        raise SourceError(problems)
    return tree


def _yaml_error_text(exc: yaml.MarkedYAMLError) -> str:
    parts = [p for p in (exc.context, exc.problem) if p]
    detail = "; ".join(parts) if parts else "malformed YAML"
    return f"YAML syntax error: {detail}; the file must be well-formed YAML (or JSON)"


def _convert(node: Node, loader: _Loader, problems: list[tuple[Pos | None, str]]) -> Value:
    pos = _mark_pos(node.start_mark)
    if node.tag == _YAML_TAG + "merge":
        problems.append((pos, "YAML merge key '<<' is not allowed; write the keys out in full"))
        return Scalar(None, pos=pos)
    if node.tag not in ALLOWED_TAGS:
        problems.append(
            (
                pos,
                f"YAML tag '{node.tag}' is not allowed; only plain strings, numbers, booleans, "
                "null, dates, mappings and lists may be used",
            )
        )
        return Scalar(None, pos=pos)
    if isinstance(node, ScalarNode):
        return _scalar(node, loader, pos)
    if isinstance(node, SequenceNode):
        return Seq([_convert(item, loader, problems) for item in node.value], pos)
    assert isinstance(node, MappingNode)
    result = Map(pos=pos)
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode):
            problems.append((_mark_pos(key_node.start_mark), "mapping keys must be plain text"))
            continue
        key = _convert(key_node, loader, problems)
        assert isinstance(key, Scalar)
        result.entries.append((key, _convert(value_node, loader, problems)))
    return result


def _scalar(node: ScalarNode, loader: _Loader, pos: Pos | None) -> Scalar:
    quoted = node.style in ("'", '"', "|", ">")
    try:
        value = loader.construct_object(node)
    except (ValueError, yaml.YAMLError):
        # e.g. `2026-02-30` resolves as a timestamp that is not a real date; keep the text so
        # the validator reports it as a bad date rather than as a crash.
        value = node.value
    return Scalar(value, raw=node.value, quoted=quoted, pos=pos)


def is_sexagesimal(scalar: Scalar) -> bool:
    """True when YAML 1.1 read a plain `07:15` as a base-60 number."""
    return (
        not scalar.quoted
        and isinstance(scalar.value, int | float)
        and not isinstance(scalar.value, bool)
        and scalar.raw is not None
        and _SEXAGESIMAL.match(scalar.raw) is not None
    )


# ---------------------------------------------------------------- JSON


class _Pairs(list[tuple[str, Any]]):
    """An object's pairs as JSON wrote them (kept as a list so duplicates survive)."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed; numbers must be finite")


def parse_json(text: str) -> Value | None:
    """Parse JSON text; None for empty text. Raises SourceError."""
    if not text.strip():
        return None
    try:
        data = json.loads(text, object_pairs_hook=_Pairs, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise SourceError(
            [
                (
                    Pos(exc.lineno, exc.colno),
                    f"JSON syntax error: {exc.msg}; the file must be well-formed JSON",
                )
            ]
        ) from None
    except ValueError as exc:
        raise SourceError([(None, f"JSON error: {exc}")]) from None
    except RecursionError:
        raise SourceError([(None, "the document is nested too deeply")]) from None
    try:
        return _from_json(data)
    except RecursionError:
        raise SourceError([(None, "the document is nested too deeply")]) from None


def _from_json(data: Any) -> Value:
    if isinstance(data, _Pairs):
        return Map([(Scalar(k, raw=k, quoted=True), _from_json(v)) for k, v in data])
    if isinstance(data, list):
        return Seq([_from_json(v) for v in data])
    return Scalar(data, raw=None, quoted=isinstance(data, str))
