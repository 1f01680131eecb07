"""Read the generator's data files (`place/data/generator/*.yaml`) into validated models.

The files are data, never code: they are parsed with the project's YAML reader
(`place.trajectory.yaml_source`, which refuses anchors, aliases, tags and repeated keys) and
validated by frozen pydantic models that forbid unknown keys. Templates are `str.format`
strings, so `Placeholders` admits named fields only: no positions, attribute or index access,
conversions or format specs, nothing a template could use to reach beyond its arguments.

A malformed file is an `InputError` whose problems name the file, the key path with its line
and column (`predicates[3] (flight_time).pool[2] (line 54, column 15)`) and what is allowed.
"""

from __future__ import annotations

import string
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from place.errors import InputError, Problem
from place.trajectory.yaml_source import NULL, Pos, Source, SourceError, parse_yaml

DATA_DIR = "generator"
"""Directory of the data files inside the `place.data` package."""

KeyPath = tuple[str | int, ...]
"""Keys and list indices from a file's root to one value."""

Check = tuple[KeyPath, str]
"""A rule broken across parts of a file: where, and what is wrong and allowed."""

M = TypeVar("M", bound=BaseModel)


class DataModel(BaseModel):
    """Base of the data files' models: frozen, no unknown keys, field docstrings kept."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


def load(name: str, model: type[M], checks: Callable[[M], Iterable[Check]] | None = None) -> M:
    """The validated contents of the package's data file `name`."""
    text = resources.files("place.data").joinpath(DATA_DIR, name).read_text(encoding="utf-8")
    return parse(f"place/data/{DATA_DIR}/{name}", text, model, checks)


def parse(
    file: str, text: str, model: type[M], checks: Callable[[M], Iterable[Check]] | None = None
) -> M:
    """Validate YAML `text` as `model`, then run `checks` over it; raise `InputError` with every
    problem found (`file` names the file in messages)."""
    try:
        source = parse_yaml(text)
    except SourceError as exc:
        problems = [Problem(file, str(pos or "file"), msg) for pos, msg in exc.problems]
        raise InputError(problems) from None
    if source is None:
        raise InputError([Problem(file, "file", "the file is empty")])
    problems = [
        Problem(file, _where(source, path, at=spot.pos), f"key {path[-1]!r} is written twice")
        for path, spot in source.duplicates
    ]
    try:
        result = model.model_validate(source.data)
    except ValidationError as exc:
        problems += [_problem(file, source, model, err) for err in exc.errors()]
        raise InputError(problems) from None
    problems += [
        Problem(file, _where(source, path), msg) for path, msg in (checks or _none)(result)
    ]
    if problems:
        raise InputError(problems)
    return result


def _none(_model: Any) -> Iterable[Check]:
    return ()


# ---------------------------------------------------------------- templates


@dataclass(frozen=True)
class Placeholders:
    """The `{fields}` a template may use (`allowed`) and must use (`needs`: each entry is a
    field name, or a tuple of which at least one must occur). Used as `Annotated` metadata
    with `AfterValidator`."""

    allowed: tuple[str, ...] = ()
    needs: tuple[str | tuple[str, ...], ...] = ()

    def __call__(self, text: str) -> str:
        found = fields_of(text)
        unknown = [f for f in found if f not in self.allowed]
        if unknown:
            allowed = ", ".join(f"{{{a}}}" for a in self.allowed) or "none (plain text)"
            raise ValueError(
                f"placeholder {{{unknown[0]}}} is not allowed here; allowed: {allowed}"
            )
        for need in self.needs:
            options = (need,) if isinstance(need, str) else need
            if not any(o in found for o in options):
                wanted = " or ".join(f"{{{o}}}" for o in options)
                raise ValueError(f"the template must contain {wanted}")
        return text


def fields_of(text: str) -> list[str]:
    """The named fields of a `str.format` template, in order; ValueError for anything else a
    format string can do."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"{exc}; write a literal brace as {{{{ or }}}}") from None
    found: list[str] = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(
                f"'{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}'"
                " is not a placeholder; write {name} with a plain name"
            )
        found.append(name)
    return found


# ---------------------------------------------------------------- messages


def _problem(file: str, source: Source, model: type[BaseModel], err: Any) -> Problem:
    path = _data_path(source.data, tuple(err["loc"]))
    kind, message = err["type"], str(err["msg"])
    if kind == "extra_forbidden":
        allowed = ", ".join(_keys_at(model, path[:-1])) or "none"
        return Problem(
            file, _where(source, path, key=True), f"unknown key {path[-1]!r}; allowed: {allowed}"
        )
    if kind == "missing":
        return Problem(file, _where(source, path), f"the key {path[-1]!r} is missing")
    message = message.removeprefix("Value error, ")
    value = err.get("input")
    if kind not in ("value_error", "assertion_error") and not isinstance(value, dict | list):
        message += f"; got {'null' if value is NULL else repr(value)}"
    return Problem(file, _where(source, path), message)


def _data_path(data: Any, loc: tuple[Any, ...]) -> KeyPath:
    """The data path a pydantic loc stands for, without the branch names of unions and
    validators (`'tuple[str, ...]'`, `'function-after[...]'`) that are no keys of the file."""
    path: list[str | int] = []
    node = data
    for part in loc:
        if (isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)) or (
            isinstance(node, dict) and part in node
        ):
            node = node[part]
            path.append(part)
        elif isinstance(node, dict) and isinstance(part, str) and not _is_branch(part):
            node = None  # a missing key: nothing below it
            path.append(part)
    return tuple(path)


def _is_branch(part: str) -> bool:
    return "[" in part or part in ("str", "int", "bool", "float", "dict", "list", "tuple")


def _where(source: Source, path: KeyPath, *, key: bool = False, at: Pos | None = None) -> str:
    """`path` as the file's keys and indices (list items named by their `id`), with the line
    and column of the value (or of the key, or of the nearest enclosing value written)."""
    shown = ""
    node = source.data
    for part in path:
        if isinstance(part, int):
            shown += f"[{part}]"
            node = node[part] if isinstance(node, list) and part < len(node) else None
            if isinstance(node, dict) and isinstance(node.get("id"), str):
                shown += f" ({node['id']})"
        else:
            shown += ("." if shown else "") + part
            node = node.get(part) if isinstance(node, dict) else None
    spots = [source.key(path)] if key else []
    spots += [source.value(path[:n]) for n in range(len(path), -1, -1)]
    pos = at or next((s.pos for s in spots if s.pos is not None), None)
    shown = shown or "top level"
    return f"{shown} ({pos})" if pos else shown


def _keys_at(model: type[BaseModel], path: Sequence[str | int]) -> list[str]:
    """The keys the model allows in the mapping at `path` (empty when it is no model)."""
    tp: Any = model
    for part in path:
        tp = _step(tp, part)
        if tp is None:
            return []
    tp = _model_in(tp)
    if tp is None:
        return []
    return [f.alias or name for name, f in tp.model_fields.items()]


def _step(tp: Any, part: str | int) -> Any:
    inner = _model_in(tp)
    if inner is not None:
        field = next((f for n, f in inner.model_fields.items() if (f.alias or n) == part), None)
        return None if field is None else field.annotation
    for option in _options(tp):
        origin, args = typing.get_origin(option), typing.get_args(option)
        if origin in (list, tuple) and args:
            return args[0]
        if origin is dict and len(args) == 2:
            return args[1]
    return None


def _model_in(tp: Any) -> type[BaseModel] | None:
    for option in _options(tp):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return option
    return None


def _options(tp: Any) -> list[Any]:
    """The members of a union (or the type itself), with `Annotated` metadata removed."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return [o for a in typing.get_args(tp) for o in _options(a)]
    return [tp]
