"""Parse YAML or JSON text into plain Python data plus where each part of it was written.

The trajectory format itself is checked by pydantic (`place.trajectory.document`); this
module only keeps what pydantic cannot know: the line and column of every key and value
(the user needs them to find a mistake), the text as written (to explain YAML's implicit
typing, e.g. `07:15` read as a base-60 number) and duplicate keys (a Python dict keeps one).

Why not `yaml.safe_load`: it forgets positions, silently keeps the last of two duplicate
keys, and expands aliases (an alias bomb can exhaust memory). We compose the node graph
ourselves, refuse anchors, aliases and custom tags, and build scalars with PyYAML's safe
constructor only. JSON is parsed with the standard library (without positions).
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

Path = tuple[Any, ...]
"""Mapping keys and list indices from the document root to one value."""


class _Null:
    """An explicit null. In the format an empty value is never the same as an absent key,
    but pydantic's optional fields (default None) could not tell the two apart, so a written
    null becomes NULL, which no field type accepts."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


@dataclass(frozen=True)
class Pos:
    """1-based position in the source text."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


@dataclass(frozen=True)
class Spot:
    """Where one key or value was written; `raw` is the text of a YAML scalar as written."""

    pos: Pos | None = None
    raw: str | None = None
    quoted: bool = False


@dataclass
class Source:
    """A parsed document: its plain data and where each part of it was written."""

    data: Any
    values: dict[Path, Spot] = field(default_factory=dict)
    keys: dict[Path, Spot] = field(default_factory=dict)
    """Spot of the key of the mapping entry at each path."""
    duplicates: list[tuple[Path, Spot]] = field(default_factory=list)
    """(path, key spot) of each repeated key; the first occurrence is the one kept."""

    def value(self, path: Path) -> Spot:
        return self.values.get(path, Spot())

    def key(self, path: Path) -> Spot:
        return self.keys.get(path, Spot())


class SourceError(Exception):
    """The text cannot be turned into data at all; carries (position, message) pairs."""

    def __init__(self, problems: list[tuple[Pos | None, str]]) -> None:
        super().__init__("; ".join(m for _, m in problems))
        self.problems = problems


def _mark_pos(mark: Any) -> Pos | None:
    return None if mark is None else Pos(mark.line + 1, mark.column + 1)


class _Loader(Reader, Scanner, Parser, Composer, SafeConstructor, Resolver):
    """Safe loader pieces whose composer refuses anchors and aliases instead of building a
    shared graph; only `compose_node` is used, never `construct`."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            what = f"alias '*{event.anchor}' is not allowed; write the value"
        elif getattr(event, "anchor", None) is not None:
            what = f"anchor '&{event.anchor}' is not allowed; write every value"
        else:
            return super().compose_node(parent, index)
        raise SourceError(
            [
                (
                    _mark_pos(event.start_mark),
                    f"YAML {what} out in full (anchors and aliases are refused to rule out "
                    "alias bombs)",
                )
            ]
        )


_DEEP = "the document is nested too deeply"


def parse_yaml(text: str) -> Source | None:
    """Parse YAML text; None for an empty document. Raises SourceError."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise SourceError([(_mark_pos(exc.problem_mark), _yaml_error_text(exc))]) from None
    except RecursionError:
        raise SourceError([(None, _DEEP)]) from None
    finally:
        loader.dispose()
    if root is None:
        return None
    source = Source(None)
    problems: list[tuple[Pos | None, str]] = []
    try:
        source.data = _convert(root, (), loader, source, problems)
    except RecursionError:
        raise SourceError([(None, _DEEP)]) from None
    if problems:
        raise SourceError(problems)
    return source


def _yaml_error_text(exc: yaml.MarkedYAMLError) -> str:
    parts = [p for p in (exc.context, exc.problem) if p]
    detail = "; ".join(parts) if parts else "malformed YAML"
    return f"YAML syntax error: {detail}; the file must be well-formed YAML (or JSON)"


def _convert(
    node: Node,
    path: Path,
    loader: _Loader,
    source: Source,
    problems: list[tuple[Pos | None, str]],
) -> Any:
    pos = _mark_pos(node.start_mark)
    source.values[path] = Spot(pos)
    refused = _refused_tag(node)
    if refused:
        problems.append((pos, refused))
        return NULL
    if isinstance(node, ScalarNode):
        value, source.values[path] = _scalar(node, loader, pos)
        return value
    if isinstance(node, SequenceNode):
        return [
            _convert(item, (*path, i), loader, source, problems)
            for i, item in enumerate(node.value)
        ]
    assert isinstance(node, MappingNode)
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        refused = "mapping keys must be plain text"
        if isinstance(key_node, ScalarNode):
            refused = _refused_tag(key_node)
        if refused:
            problems.append((_mark_pos(key_node.start_mark), refused))
            continue
        key, key_spot = _scalar(key_node, loader, _mark_pos(key_node.start_mark))
        key = None if key is NULL else key
        if key in result:
            # Reported by the loader, which knows the mapping's id path; the first one counts
            # (the later value is still read, for its own syntax problems).
            source.duplicates.append(((*path, key), key_spot))
            _convert(value_node, (*path, key), loader, Source(None), problems)
            continue
        source.keys[(*path, key)] = key_spot
        result[key] = _convert(value_node, (*path, key), loader, source, problems)
    return result


def _refused_tag(node: Node) -> str | None:
    if node.tag == _YAML_TAG + "merge":
        return "YAML merge key '<<' is not allowed; write the keys out in full"
    if node.tag not in ALLOWED_TAGS:
        return (
            f"YAML tag '{node.tag}' is not allowed; only plain strings, numbers, booleans, "
            "null, dates, mappings and lists may be used"
        )
    return None


def _scalar(node: ScalarNode, loader: _Loader, pos: Pos | None) -> tuple[Any, Spot]:
    quoted = node.style in ("'", '"', "|", ">")
    try:
        value = loader.construct_object(node)
    except (ValueError, yaml.YAMLError):
        # e.g. `2026-02-30` resolves as a timestamp that is not a real date; keep the text so
        # it is reported as a bad date rather than as a crash.
        value = node.value
    return (NULL if value is None else value), Spot(pos, node.value, quoted)


def is_sexagesimal(value: Any, spot: Spot) -> bool:
    """True when YAML 1.1 read a plain `07:15` as a base-60 number."""
    return (
        not spot.quoted
        and isinstance(value, int | float)
        and not isinstance(value, bool)
        and spot.raw is not None
        and _SEXAGESIMAL.match(spot.raw) is not None
    )


# ---------------------------------------------------------------- JSON


class _Pairs(list[tuple[str, Any]]):
    """An object's pairs as JSON wrote them (kept as a list so duplicates survive)."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed; numbers must be finite")


def parse_json(text: str) -> Source | None:
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
        raise SourceError([(None, _DEEP)]) from None
    source = Source(None)
    try:
        source.data = _from_json(data, (), source)
    except RecursionError:
        raise SourceError([(None, _DEEP)]) from None
    return source


def _from_json(data: Any, path: Path, source: Source) -> Any:
    if isinstance(data, _Pairs):
        result: dict[str, Any] = {}
        for key, value in data:
            if key in result:
                source.duplicates.append(((*path, key), Spot(raw=key, quoted=True)))
            else:
                result[key] = _from_json(value, (*path, key), source)
        return result
    if isinstance(data, list):
        return [_from_json(v, (*path, i), source) for i, v in enumerate(data)]
    return NULL if data is None else data
