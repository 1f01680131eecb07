"""Load a `place-trajectory/1` file (YAML or JSON) and check its structure.

The format is the project's public input, so the loader accepts exactly the documented
format and never guesses. What the format is (keys, types, enums, patterns, the rules
between parts) is stated once, as pydantic models, in `place.trajectory.document`. This
module reads the file (`yaml_source` keeps where everything was written), validates it with
those models and turns every pydantic error into a `Problem` saying where it is (an id path
such as `conversation s1 > turn s1-02`, plus line and column for YAML), what is wrong and
what is allowed. All problems found are reported together in one `InputError`.

Rules that need a replay of the events (retracting an inactive value, golds, pair
irrelevance) are not checked here: `place.reference.validate.load_trajectory` runs them
once the structure is sound (the replay assumes a well-formed trajectory) and uses
`Structure.locate` to give their problems a line and column.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from place.errors import InputError, Problem
from place.trajectory.document import (
    CANONICAL_FORMS,
    DATE,
    DOMAIN,
    ITEM_ID,
    ConflictDoc,
    ForgedDoc,
    Part,
    Refs,
    TrajectoryDoc,
    format_keys,
    parse,
)
from place.trajectory.model import FORMAT, Trajectory
from place.trajectory.yaml_source import (
    NULL,
    Pos,
    Source,
    SourceError,
    Spot,
    is_sexagesimal,
    parse_json,
    parse_yaml,
)

SUFFIXES = (".yaml", ".yml", ".json")

# Fields named on their own rather than as "'key' of <part>".
_BARE = {"principal": "principal", "default_scope": "default_scope", "value": "value"}
_ITEMS = {"conversations": "conversation", "turns": "turn", "probes": "probe"}
_DECLARED = {
    "entities": "entity",
    "scopes": "scope",
    "predicates": "predicate",
    "permissions": "permission",
}
_NAMED_PARTS = ("query", "task")
"""Parts of a turn shown by their id in locations (`turn c1-04 > task t1`)."""
_ABSENT = object()


class Structure(NamedTuple):
    """A structurally valid trajectory and a way to locate later problems in its file."""

    trajectory: Trajectory
    locate: Callable[[Problem], Problem]
    """Adds the line and column of the turn, query or probe a problem's location names."""


def load_structure(path: str | Path) -> Structure:
    """Read `path` and check it against the format; raise InputError listing every problem
    found otherwise. The replay's rules are not checked (see the module docstring)."""
    file = str(path)
    data = _read_bytes(file)
    source = _parse(file, Path(file).suffix.lower(), _decode(file, data))
    explain = _Explainer(file, source)
    found = [explain.duplicate(dup, spot) for dup, spot in source.duplicates]
    try:
        doc = parse(source.data)
    except ValidationError as exc:
        found += [p for e in exc.errors(include_url=False) if (p := explain.error(e))]
    if found:
        # Positions give the document's order; pydantic's is per model, extra keys last.
        found.sort(key=lambda pp: (pp[0].line, pp[0].column) if pp[0] else (0, 0))
        raise InputError(problems=[p for _, p in found])
    return Structure(doc.to_trajectory(file, hashlib.sha256(data).hexdigest()), explain.locate)


def read_source(path: str | Path) -> Source:
    """The file's plain data and positions, before any check of the format (for tools that
    rewrite a trajectory they have validated, such as `place distract`)."""
    file = str(path)
    return _parse(file, Path(file).suffix.lower(), _decode(file, _read_bytes(file)))


def _read_bytes(file: str) -> bytes:
    suffix = Path(file).suffix.lower()
    if suffix not in SUFFIXES:
        message = f"unsupported extension '{suffix}'; allowed: .yaml, .yml, .json"
        raise InputError([Problem(file, "file", message)])
    try:
        return Path(file).read_bytes()
    except OSError as exc:
        raise InputError([Problem(file, "file", f"cannot read the file: {exc.strerror}")]) from None


def _decode(file: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        message = "the file is not valid UTF-8; save it as UTF-8"
        raise InputError([Problem(file, f"byte {exc.start}", message)]) from None


def _parse(file: str, suffix: str, text: str) -> Source:
    try:
        source = parse_json(text) if suffix == ".json" else parse_yaml(text)
    except SourceError as exc:
        raise InputError(
            [Problem(file, str(pos) if pos else "document", msg) for pos, msg in exc.problems]
        ) from None
    if source is None:
        keys = ", ".join(format_keys(TrajectoryDoc))
        message = f"the file is empty; expected a {FORMAT} mapping with keys {keys}"
        raise InputError([Problem(file, "document", message)])
    return source


# ---------------------------------------------------------------- what the user wrote


def describe(value: Any, spot: Spot) -> str:
    """What the user wrote, in words, explaining YAML's implicit typing when it bites."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is NULL or value is None:
        return "null (an empty value)"
    raw = spot.raw
    if isinstance(value, bool):
        return f"the boolean {raw or value}"
    if is_sexagesimal(value, spot):
        return f"{raw}, which YAML reads as the base-60 number {value}"
    if isinstance(value, int | float):
        return f"the number {raw or value}"
    if isinstance(value, dt.datetime):
        return f"the timestamp {raw or value}"
    if isinstance(value, dt.date):
        return f"the date {raw or value}"
    return repr(value)


def _quote_hint(value: Any, spot: Spot) -> str:
    """Tell YAML users how to get a string when YAML typed their plain scalar."""
    if not isinstance(value, str) and spot.raw and not spot.quoted:
        return f'; quote it: "{spot.raw}"'
    return ""


def _key_text(key: Any, spot: Spot) -> str:
    return repr(key) if isinstance(key, str) else (spot.raw or repr(key))


def _bare(tp: Any, meta: list[Any]) -> tuple[Any, list[Any]]:
    """A declared type without Optional and Annotated (whose constraints join `meta`)."""
    while True:
        if get_origin(tp) is Annotated:
            tp, *extra = get_args(tp)
            meta = [*meta, *extra]
        elif get_origin(tp) in (Union, UnionType):
            tp = next(a for a in get_args(tp) if a is not type(None))
        else:
            return tp, meta


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


@dataclass
class _Slot:
    """Where a pydantic loc points in the format: which key of which part, what type."""

    model: type[Part]
    """The innermost part on the way, at `model_loc`."""
    model_loc: tuple[Any, ...]
    key: Any
    """The key of `model` the loc goes into (None for the document itself)."""
    tp: Any
    """The type declared at the loc (None for an unknown key)."""
    meta: list[Any]
    rest: tuple[Any, ...]
    """List indices and mapping keys below the key."""


def _slot(loc: tuple[Any, ...]) -> _Slot:
    slot = _Slot(TrajectoryDoc, (), None, TrajectoryDoc, [], ())
    for i, part in enumerate(loc):
        if _is_model(slot.tp):
            fields = {f.alias or n: f for n, f in slot.tp.model_fields.items()}
            found = fields.get(part)
            tp, meta = _bare(found.annotation, list(found.metadata)) if found else (None, [])
            slot = _Slot(slot.tp, loc[:i], part, tp, meta, ())
        elif get_origin(slot.tp) in (dict, tuple):
            args = get_args(slot.tp)
            slot.tp, slot.meta = _bare(args[1] if get_origin(slot.tp) is dict else args[0], [])
            slot.rest += (part,)
        else:
            slot.tp = None
    return slot


def _key_in(node: Any, part: Any) -> Any:
    """The key or index of `node` that a loc part names (pydantic shows keys as text)."""
    if isinstance(node, list):
        return part if isinstance(part, int) and 0 <= part < len(node) else _ABSENT
    if isinstance(node, dict):
        if isinstance(part, str | int) and part in node:
            return part
        return next((k for k in node if part in (str(k), repr(k))), _ABSENT)
    return _ABSENT


# ---------------------------------------------------------------- explaining errors


@dataclass
class _Explainer:
    """Turns pydantic errors into Problems located in the source."""

    file: str
    source: Source

    def _walk(self, loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
        """The data path of a loc (keys as written) and the value there."""
        path: list[Any] = []
        node = self.source.data
        for part in loc:
            key = _key_in(node, part)
            if key is _ABSENT:
                return (*path, part), _ABSENT
            path.append(key)
            node = node[key]
        return tuple(path), node

    def _where(self, loc: tuple[Any, ...], at: str) -> Pos | None:
        path, _ = self._walk(loc)
        return (self.source.key(path) if at == "key" else self.source.value(path)).pos

    def _display(self, loc: tuple[Any, ...], at: str = "value") -> str:
        """The id path: `conversation s1 > turn s1-02 > events[0] > value`."""
        parts: list[str] = []
        node: Any = self.source.data
        for i, part in enumerate(loc):
            key = _key_in(node, part)
            child = _ABSENT if key is _ABSENT else node[key]
            prev = loc[i - 1] if i else None
            ident = child.get("id") if isinstance(child, dict) else None
            named = isinstance(ident, str) and re.fullmatch(ITEM_ID, ident) is not None
            if isinstance(node, list):
                if prev in _ITEMS and named:
                    parts[-1] = f"{_ITEMS[prev]} {ident}"
                else:
                    parts[-1] += f"[{part}]"
            elif i == 2 and loc[0] == "schema" and prev in _DECLARED:
                parts[-1] = f"{_DECLARED[prev]} {part if key is _ABSENT else key}"
            elif (
                loc[i - 2 : i] == ("turns", prev)
                and part in _NAMED_PARTS
                and named
                and not (at == "key" and i == len(loc) - 1)
            ):
                parts.append(f"{part} {ident}")
            else:
                parts.append(str(part if key is _ABSENT else key))
            node = child
        return " > ".join(parts)

    def _problem(
        self, loc: tuple[Any, ...], pos: Pos | None, message: str, at: str = "value"
    ) -> tuple[Pos | None, Problem]:
        where = self._display(loc, at) or "top level"
        return pos, Problem(self.file, f"{where} ({pos})" if pos else where, message)

    def duplicate(self, path: tuple[Any, ...], key: Spot) -> tuple[Pos | None, Problem]:
        first = self.source.key(path).pos
        name = path[-1]
        if path[0] == "schema" and len(path) == 5 and path[3] == "values":
            message = f"duplicate canonical value {name!r}; list it once"
        else:
            where = f" (first at {first})" if first else ""
            message = f"duplicate key '{name}'{where}; each key may appear only once in a mapping"
        return self._problem(path[:-1], key.pos, message)

    def error(self, err: Any) -> tuple[Pos | None, Problem] | None:
        """The Problem a pydantic error stands for (None for a mere consequence of others)."""
        loc = tuple(err["loc"])
        if err["type"] == "too_short" and self._walk(loc)[1]:
            return None  # pydantic counts only valid items; the invalid ones are reported
        try:
            return self._explain(loc, err["type"], err.get("ctx") or {})
        except (KeyError, IndexError, TypeError, AttributeError, StopIteration):
            # An error this module does not know how to word is still reported, as pydantic
            # words it: a user never sees a traceback for a bad file.
            return self._problem(loc, self._where(loc, "value"), err["msg"])

    def _explain(
        self, loc: tuple[Any, ...], kind: str, ctx: dict[str, Any]
    ) -> tuple[Pos | None, Problem]:
        keyed = loc[-1:] == ("[key]",)
        loc = loc[:-1] if keyed else loc
        if kind == "place":
            at = ctx["at"]
            pos = self._where((*loc, *ctx["pos_of"]), at)
            return self._problem(loc, pos, ctx["message"], at)
        if kind == "missing":
            noun = self._name(loc[:-1], 0)
            message = f"missing required key '{loc[-1]}' in {noun}"
            return self._problem(loc[:-1], self._where(loc[:-1], "value"), message)
        if kind in ("extra_forbidden", "invalid_key"):
            path, _ = self._walk(loc)
            allowed = ", ".join(format_keys(_slot(loc[:-1]).tp))
            noun = self._name(loc[:-1], 0)
            text = _key_text(path[-1], self.source.key(path))
            message = f"unknown key {text} in {noun}; allowed keys: {allowed}"
            return self._problem(loc[:-1], self._where(loc, "key"), message)
        if keyed:
            return self._problem(loc[:-1], self._where(loc, "key"), self._bad_key(loc))
        pos = self._where(loc, "value")
        if not loc:  # not a mapping at all
            return pos, Problem(
                self.file, f"document ({pos})" if pos else "document", self._wrong(loc)
            )
        return self._problem(loc, pos, self._wrong(loc))

    def _name(self, loc: tuple[Any, ...], which: int) -> str:
        tp = _slot(loc).tp
        return tp.NAMES[which].format(loc[-1] if loc else "")

    def _bad_key(self, loc: tuple[Any, ...]) -> str:
        """A mapping key that is not a valid id or canonical value."""
        path, _ = self._walk(loc)
        key, spot = path[-1], self.source.key(path)
        slot = _slot(loc[:-1])
        if slot.key == "values":
            _, ptype = self._walk((*loc[:-2], "type"))
            form = f" ({CANONICAL_FORMS[ptype]})" if ptype in CANONICAL_FORMS else ""
            got = describe(key, spot) + _quote_hint(key, spot)
            return f"canonical value must be a string{form}; got {got}"
        return (
            f"{_DECLARED[slot.key]} id {_key_text(key, spot)} is not valid; ids are strings "
            f"matching {ITEM_ID}"
        )

    def _wrong(self, loc: tuple[Any, ...]) -> str:
        """A value of the wrong type or form, worded for the key it was written under."""
        path, value = self._walk(loc)
        spot = self.source.value(path)
        got, hint = describe(value, spot), _quote_hint(value, spot)
        slot = _slot(loc)
        tp, key = slot.tp, slot.key
        if not loc:
            keys = ", ".join(format_keys(TrajectoryDoc))
            return f"the document must be a mapping with keys {keys}; got {got}"
        if _is_model(tp):
            return f"{tp.NAMES[2].format(loc[-1])} must be a mapping; got {got}"
        noun = slot.model.NAMES[1].format(slot.model_loc[-1] if slot.model_loc else "")
        if get_origin(tp) is dict:
            if key == "values":
                got = "an empty mapping" if isinstance(value, dict) else got
                return (
                    "values must be a non-empty mapping of canonical value -> list of aliases; "
                    f"got {got}"
                )
            if isinstance(value, dict):
                return f"schema.{key} must declare at least one predicate"
            return f"schema.{key} must be a mapping; got {got}"
        if get_origin(tp) is tuple:
            non_empty = any(getattr(m, "min_length", 0) for m in slot.meta)
            if value == []:
                return f"{self._list_label(slot)} must be a non-empty list; got an empty list"
            kind = "a non-empty list" if non_empty else "a list"
            return f"{self._list_label(slot)} must be {kind}; got {got}"
        if get_origin(tp) is Literal:
            if key == "format":
                return f"format is {got}; the only supported format is '{FORMAT}'"
            return f"'{key}' of {noun} is {got}; allowed: {', '.join(get_args(tp))}"
        if tp is bool:
            return f"'{key}' of {noun} must be true or false; got {got}"
        if tp is dt.date:
            if isinstance(value, str) and DATE.fullmatch(value):
                return f"{key} {value!r} is not a real calendar date"
            return f"{key} must be a date written YYYY-MM-DD; got {got}"
        if slot.rest:
            label = "gold value" if key == "gold" else f"each entry of {self._list_label(slot)}"
        elif key == "id":
            label = "trajectory id" if slot.model is TrajectoryDoc else f"{noun} id"
        elif key in _BARE:
            label = (
                "conflict value"
                if slot.model is ConflictDoc
                else "forged value"
                if slot.model is ForgedDoc
                else _BARE[key]
            )
        else:
            label = f"'{key}' of {noun}"
        pid = self._sound_predicate(slot) if DOMAIN in slot.meta else None
        if pid is not None and not isinstance(value, str):
            return f"{label} must be a string naming a value of predicate {pid}; got {got}{hint}"
        if not isinstance(value, str):
            return f"{label} must be a non-empty string; got {got}{hint}"
        if not value.strip():
            return f"{label} must be a non-empty string; got an empty string"
        pattern = next(m.pattern for m in slot.meta if getattr(m, "pattern", None))
        return f"{label} {value!r} must match {pattern.strip('^$')}"

    def _sound_predicate(self, slot: _Slot) -> str | None:
        """The predicate a domain value belongs to, if its declaration is sound."""
        # A conflict's or forgery's value belongs to its probe's predicate.
        nested = slot.model in (ConflictDoc, ForgedDoc)
        owner = slot.model_loc[:-1] if nested else slot.model_loc
        _, pid = self._walk((*owner, "predicate"))
        refs = Refs.read(self.source.data)
        return pid if refs is not None and isinstance(pid, str) and pid in refs.sound else None

    @staticmethod
    def _list_label(slot: _Slot) -> str:
        if slot.key == "values":
            return f"aliases of {slot.rest[0]!r}"
        return "pair.insert" if slot.key == "insert" else str(slot.key)

    # ------------------------------------------------------------ the replay's problems

    @cached_property
    def _id_positions(self) -> dict[str, Pos]:
        found: dict[str, Pos] = {}

        def note(kind: str, path: tuple[Any, ...], node: Any) -> None:
            pos = self.source.value((*path, "id")).pos
            if isinstance(node, dict) and isinstance(node.get("id"), str) and pos:
                found.setdefault(f"{kind} {node['id']}", pos)

        data = self.source.data
        for ci, conv in enumerate(data["conversations"]):
            for ti, turn in enumerate(conv["turns"]):
                note("turn", ("conversations", ci, "turns", ti), turn)
                for part in _NAMED_PARTS:
                    if part in turn:
                        note(part, ("conversations", ci, "turns", ti, part), turn[part])
        for pi, probe in enumerate(data.get("probes", [])):
            note("probe", ("probes", pi), probe)
        return found

    def locate(self, problem: Problem) -> Problem:
        if "(line " in problem.location:
            return problem
        found = re.findall(r"\b(turn|query|task|probe) ([^\s>()]+)", problem.location)
        for kind, ident in reversed(found):
            pos = self._id_positions.get(f"{kind} {ident}")
            if pos:
                return Problem(problem.file, f"{problem.location} ({pos})", problem.message)
        return problem
