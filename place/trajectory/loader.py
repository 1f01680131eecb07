"""Load and validate a `place-trajectory/1` file (YAML or JSON) into the immutable model.

The format is the project's public input, so the loader accepts exactly the documented
format and never guesses: every deviation is a `Problem` saying where it is (an id path,
plus line and column for YAML), what is wrong and what is allowed. All problems found are
reported together in one `InputError`. Rules that need a replay of the events (retracting
an inactive value, golds, pair irrelevance) live in `place.reference.validate` and run
only once the structure is sound, because the replay assumes a well-formed trajectory.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from place.errors import InputError, Problem
from place.trajectory.model import (
    CARDINALITIES,
    FAMILIES,
    FORMAT,
    GLOBAL_SCOPE,
    OPS,
    ROLES,
    VALUE_TYPES,
    Conflict,
    Conversation,
    Entity,
    Event,
    Predicate,
    Probe,
    Query,
    Schema,
    Scope,
    Trajectory,
    Turn,
)
from place.trajectory.yaml_source import (
    Map,
    Pos,
    Scalar,
    Seq,
    SourceError,
    Value,
    is_sexagesimal,
    parse_json,
    parse_yaml,
    pos_of,
)

TRAJECTORY_ID = re.compile(r"[a-z0-9][a-z0-9_.-]*")
# Ids of schema items, conversations, turns, queries and probes. `#` and `~` are excluded
# because derived ids use them (`c1-004#1`, `c1-004~b1`) and must never collide.
ITEM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
SUFFIXES = (".yaml", ".yml", ".json")

TOP_KEYS = ("format", "id", "title", "principal", "schema", "conversations", "probes")
TOP_REQUIRED = ("format", "id", "principal", "schema", "conversations")
SCHEMA_KEYS = ("entities", "scopes", "predicates")
SCHEMA_REQUIRED = ("entities", "predicates")
ENTITY_KEYS = ("name", "aliases")
SCOPE_KEYS = ("aliases",)
PREDICATE_KEYS = ("type", "cardinality", "keywords", "default_scope", "template", "values")
PREDICATE_REQUIRED = ("type", "cardinality", "keywords", "values")
TEMPLATE_FIELDS = ("entity_name", "value", "scope")
CONVERSATION_KEYS = ("id", "date", "turns")
TURN_KEYS = ("id", "role", "text", "source", "events", "query")
INSERT_TURN_KEYS = ("role", "text", "source", "events")
EVENT_KEYS = ("op", "entity", "predicate", "scope", "value", "valid_from", "valid_until")
QUERY_KEYS = ("id", "family", "entity", "predicate", "scope", "as_of", "gold", "pair")
QUERY_REQUIRED = ("id", "family", "entity", "predicate", "gold")
PAIR_KEYS = ("insert",)
PROBE_KEYS = ("id", "after", "family", "text", "entity", "predicate", "scope", "gold", "conflict")
PROBE_REQUIRED = ("id", "after", "family", "text", "entity", "predicate", "gold")
CONFLICT_KEYS = ("text", "value")

_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_MONEY = re.compile(r"[0-9]+(\.[0-9]+)? [A-Z]{3}")
CANONICAL_FORMS = {
    "time": "HH:MM on a 24-hour clock, e.g. '07:15'",
    "date": "YYYY-MM-DD naming a real date, e.g. '2026-03-14'",
    "number": "a decimal string, e.g. '3' or '2.5'",
    "money": "'<amount> <ISO 4217 code>', e.g. '1200 EUR'",
    "enum": "any non-empty string",
}
_MAX_LISTED = 12


# ---------------------------------------------------------------- entry point


def load_trajectory(path: str | Path) -> Trajectory:
    """Read, validate and return the trajectory at `path`; raise InputError listing every
    problem found otherwise."""
    file = str(path)
    data = _read_bytes(file)
    text = _decode(file, data)
    tree = _parse(file, Path(file).suffix.lower(), text)
    checker = _Checker(file)
    trajectory = checker.trajectory(tree, sha256=hashlib.sha256(data).hexdigest())
    if checker.problems or trajectory is None:
        raise InputError(problems=checker.problems)
    semantic = _semantic_problems(trajectory)
    if semantic:
        raise InputError(problems=[checker.with_position(p) for p in semantic])
    return trajectory


def _read_bytes(file: str) -> bytes:
    suffix = Path(file).suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(
            [
                Problem(
                    file, "file", f"unsupported extension '{suffix}'; allowed: .yaml, .yml, .json"
                )
            ]
        )
    try:
        return Path(file).read_bytes()
    except OSError as exc:
        raise InputError([Problem(file, "file", f"cannot read the file: {exc.strerror}")]) from None


def _decode(file: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            [Problem(file, f"byte {exc.start}", "the file is not valid UTF-8; save it as UTF-8")]
        ) from None


def _parse(file: str, suffix: str, text: str) -> Value:
    try:
        tree = parse_json(text) if suffix == ".json" else parse_yaml(text)
    except SourceError as exc:
        raise InputError(
            [Problem(file, str(pos) if pos else "document", msg) for pos, msg in exc.problems]
        ) from None
    if tree is None:
        raise InputError(
            [
                Problem(
                    file,
                    "document",
                    f"the file is empty; expected a {FORMAT} mapping with keys "
                    + ", ".join(TOP_KEYS),
                )
            ]
        )
    return tree


def _semantic_problems(trajectory: Trajectory) -> list[Problem]:
    # Imported here: the replay depends on the model, and the loader must stay importable
    # on its own (the replay imports nothing from the loader, but keep the edge one-way).
    from place.reference.validate import semantic_problems

    return semantic_problems(trajectory)


# ---------------------------------------------------------------- helpers


def _loc(path: str, pos: Pos | None) -> str:
    where = path or "top level"
    return f"{where} ({pos})" if pos else where


def _join(path: str, part: str) -> str:
    return f"{path} > {part}" if path else part


def _listing(items: Iterable[str]) -> str:
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:_MAX_LISTED])
    more = f", ... ({len(items) - _MAX_LISTED} more)" if len(items) > _MAX_LISTED else ""
    return (shown + more) if items else "(none)"


def describe(node: Value | None) -> str:
    """What the user wrote, in words, explaining YAML's implicit typing when it bites."""
    if node is None:
        return "nothing"
    if isinstance(node, Map):
        return "a mapping"
    if isinstance(node, Seq):
        return "a list"
    value, raw = node.value, node.raw
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return f"the boolean {raw or value}"
    if is_sexagesimal(node):
        return f"{raw}, which YAML reads as the base-60 number {value}"
    if isinstance(value, int | float):
        return f"the number {raw or value}"
    if isinstance(value, dt.datetime):
        return f"the timestamp {raw or value}"
    if isinstance(value, dt.date):
        return f"the date {raw or value}"
    return repr(value)


def _quote_hint(node: Value | None) -> str:
    """Tell YAML users how to get a string when YAML typed their plain scalar."""
    if (
        isinstance(node, Scalar)
        and not isinstance(node.value, str)
        and node.raw
        and not node.quoted
    ):
        return f'; quote it: "{node.raw}"'
    return ""


def _key_text(key: Scalar) -> str:
    return repr(key.value) if isinstance(key.value, str) else (key.raw or repr(key.value))


@dataclass
class _Checker:
    """Walks the tree once, collecting problems and building model objects as it goes."""

    file: str
    problems: list[Problem] = field(default_factory=list)
    # Positions of ids, to add line numbers to the replay's problems (which know only ids).
    id_positions: dict[str, Pos] = field(default_factory=dict)
    # Predicates whose own declaration is broken: value checks against them would only
    # repeat the same mistake, so they are skipped.
    broken_predicates: set[str] = field(default_factory=set)
    state: _WalkState = field(default_factory=lambda: _WalkState())

    def add(self, path: str, pos: Pos | None, message: str) -> None:
        self.problems.append(Problem(self.file, _loc(path, pos), message))

    def with_position(self, problem: Problem) -> Problem:
        if "(line " in problem.location:
            return problem
        found = re.findall(r"\b(turn|query|probe) ([^\s>()]+)", problem.location)
        for kind, ident in reversed(found):
            pos = self.id_positions.get(f"{kind} {ident}")
            if pos:
                return Problem(problem.file, f"{problem.location} ({pos})", problem.message)
        return problem

    # ------------------------------------------------------------ generic checks

    def keys(
        self, m: Map, path: str, what: str, allowed: tuple[str, ...], required: tuple[str, ...]
    ) -> None:
        """Unknown, duplicate and missing keys of one mapping."""
        seen: dict[str, Pos | None] = {}
        for key, _ in m.entries:
            name = key.value
            if not isinstance(name, str) or name not in allowed:
                self.add(
                    path,
                    key.pos,
                    f"unknown key {_key_text(key)} in {what}; allowed keys: {', '.join(allowed)}",
                )
            elif name in seen:
                self.add(path, key.pos, self._duplicate_message(name, seen[name]))
            else:
                seen[name] = key.pos
        for name in required:
            if name not in seen:
                self.add(path, m.pos, f"missing required key '{name}' in {what}")

    def id_keys(self, m: Map, path: str, what: str) -> list[tuple[str, Value]]:
        """Entries of a mapping keyed by ids (schema entities ...): valid, first occurrences."""
        seen: dict[str, Pos | None] = {}
        result: list[tuple[str, Value]] = []
        for key, value in m.entries:
            name = key.value
            if not isinstance(name, str) or not ITEM_ID.fullmatch(name):
                self.add(
                    path,
                    key.pos,
                    f"{what} id {_key_text(key)} is not valid; ids are strings matching "
                    f"{ITEM_ID.pattern}",
                )
            elif name in seen:
                self.add(path, key.pos, self._duplicate_message(name, seen[name]))
            else:
                seen[name] = key.pos
                result.append((name, value))
        return result

    @staticmethod
    def _duplicate_message(name: str, first: Pos | None) -> str:
        where = f" (first at {first})" if first else ""
        return f"duplicate key '{name}'{where}; each key may appear only once in a mapping"

    def mapping(self, node: Value | None, path: str, what: str) -> Map | None:
        if isinstance(node, Map):
            return node
        self.add(path, pos_of(node), f"{what} must be a mapping; got {describe(node)}")
        return None

    def seq(self, node: Value | None, path: str, what: str, *, non_empty: bool) -> Seq | None:
        if not isinstance(node, Seq):
            kind = "a non-empty list" if non_empty else "a list"
            self.add(path, pos_of(node), f"{what} must be {kind}; got {describe(node)}")
            return None
        if non_empty and not node.items:
            self.add(path, node.pos, f"{what} must be a non-empty list; got an empty list")
            return None
        return node

    def text(self, node: Value | None, path: str, what: str) -> str | None:
        """A non-empty string."""
        if isinstance(node, Scalar) and isinstance(node.value, str):
            if node.value.strip():
                return node.value
            self.add(path, node.pos, f"{what} must be a non-empty string; got an empty string")
            return None
        self.add(
            path,
            pos_of(node),
            f"{what} must be a non-empty string; got {describe(node)}{_quote_hint(node)}",
        )
        return None

    def field_text(self, m: Map, key: str, path: str, what: str) -> str | None:
        """A required or optional string field (missing keys are reported by `keys`)."""
        if not m.has(key):
            return None
        return self.text(m.get(key), _join(path, key), f"'{key}' of {what}")

    def ident(
        self, node: Value | None, path: str, what: str, pattern: re.Pattern[str]
    ) -> str | None:
        value = self.text(node, path, what)
        if value is None:
            return None
        if not pattern.fullmatch(value):
            self.add(path, pos_of(node), f"{what} {value!r} must match {pattern.pattern}")
            return None
        return value

    def choice(self, m: Map, key: str, path: str, what: str, allowed: Iterable[str]) -> str | None:
        if not m.has(key):
            return None
        allowed = tuple(allowed)
        node = m.get(key)
        if isinstance(node, Scalar) and isinstance(node.value, str) and node.value in allowed:
            return node.value
        self.add(
            _join(path, key),
            pos_of(node),
            f"'{key}' of {what} is {describe(node)}; allowed: {', '.join(allowed)}",
        )
        return None

    def date(self, node: Value | None, path: str, what: str) -> dt.date | None:
        """A YAML date or an ISO `YYYY-MM-DD` string naming a real date."""
        if isinstance(node, Scalar):
            value = node.value
            if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
                return value
            if isinstance(value, str) and _DATE.fullmatch(value):
                try:
                    return dt.date.fromisoformat(value)
                except ValueError:
                    self.add(path, node.pos, f"{what} {value!r} is not a real calendar date")
                    return None
        self.add(
            path, pos_of(node), f"{what} must be a date written YYYY-MM-DD; got {describe(node)}"
        )
        return None

    def string_list(
        self, node: Value | None, path: str, what: str, *, non_empty: bool
    ) -> tuple[str, ...]:
        seq = self.seq(node, path, what, non_empty=non_empty)
        if seq is None:
            return ()
        result = []
        for i, item in enumerate(seq.items):
            value = self.text(item, f"{path}[{i}]", f"each entry of {what}")
            if value is not None:
                result.append(value)
        return tuple(result)

    # ------------------------------------------------------------ top level

    def trajectory(self, tree: Value, sha256: str) -> Trajectory | None:
        if not isinstance(tree, Map):
            self.add(
                "document",
                pos_of(tree),
                f"the document must be a mapping with keys {', '.join(TOP_KEYS)}; "
                f"got {describe(tree)}",
            )
            return None
        self.keys(tree, "", "the top level", TOP_KEYS, TOP_REQUIRED)
        self._format(tree)
        traj_id = None
        if tree.has("id"):
            traj_id = self.ident(tree.get("id"), "id", "trajectory id", TRAJECTORY_ID)
        title = self.field_text(tree, "title", "", "the trajectory")
        schema = self._schema(tree)
        principal = self._principal(tree, schema)
        conversations = self._conversations(tree, schema)
        probes = self._probes(tree, schema, self.state.turn_ids)
        if self.problems or traj_id is None or schema is None or principal is None:
            return None
        return Trajectory(
            id=traj_id,
            principal=principal,
            schema=schema,
            conversations=tuple(conversations),
            probes=tuple(probes),
            title=title,
            source_path=self.file,
            sha256=sha256,
        )

    def _format(self, tree: Map) -> None:
        if not tree.has("format"):
            return
        node = tree.get("format")
        if not (isinstance(node, Scalar) and node.value == FORMAT):
            self.add(
                "format",
                pos_of(node),
                f"format is {describe(node)}; the only supported format is '{FORMAT}'",
            )

    def _principal(self, tree: Map, schema: Schema | None) -> str | None:
        if not tree.has("principal"):
            return None
        node = tree.get("principal")
        principal = self.text(node, "principal", "principal")
        if principal is not None and schema is not None and principal not in schema.entities:
            self.add(
                "principal",
                pos_of(node),
                f"principal {principal!r} is not an entity of the schema; declared entities: "
                f"{_listing(schema.entities)} (schema.entities must include the principal)",
            )
            return None
        return principal

    # ------------------------------------------------------------ schema

    def _schema(self, tree: Map) -> Schema | None:
        if not tree.has("schema"):
            return None
        m = self.mapping(tree.get("schema"), "schema", "schema")
        if m is None:
            return None
        self.keys(m, "schema", "schema", SCHEMA_KEYS, SCHEMA_REQUIRED)
        entities = self._entities(m)
        scopes = self._scopes(m)
        draft = Schema(entities, scopes, {})
        draft.predicates.update(self._predicates(m, draft))
        return draft

    def _entities(self, schema: Map) -> dict[str, Entity]:
        if not schema.has("entities"):
            return {}
        path = "schema > entities"
        m = self.mapping(schema.get("entities"), path, "schema.entities")
        if m is None:
            return {}
        result: dict[str, Entity] = {}
        for eid, node in self.id_keys(m, path, "entity"):
            epath = f"schema > entity {eid}"
            em = self.mapping(node, epath, f"entity {eid}")
            if em is None:
                continue
            self.keys(em, epath, f"entity {eid}", ENTITY_KEYS, ("name",))
            name = self.field_text(em, "name", epath, f"entity {eid}")
            aliases = self._aliases(em, epath)
            result[eid] = Entity(eid, name or eid, aliases)
        return result

    def _aliases(self, m: Map, path: str) -> tuple[str, ...]:
        if not m.has("aliases"):
            return ()
        return self.string_list(
            m.get("aliases"), _join(path, "aliases"), "aliases", non_empty=False
        )

    def _scopes(self, schema: Map) -> dict[str, Scope]:
        if not schema.has("scopes"):
            return {}
        path = "schema > scopes"
        m = self.mapping(schema.get("scopes"), path, "schema.scopes")
        if m is None:
            return {}
        result: dict[str, Scope] = {}
        for sid, node in self.id_keys(m, path, "scope"):
            spath = f"schema > scope {sid}"
            if sid == GLOBAL_SCOPE:
                self.add(
                    spath,
                    m.key_pos(sid),
                    "scope 'global' always exists implicitly and may not be declared; "
                    "remove it from schema.scopes",
                )
                continue
            sm = self.mapping(node, spath, f"scope {sid} (write {{}} for no aliases)")
            if sm is None:
                continue
            self.keys(sm, spath, f"scope {sid}", SCOPE_KEYS, ())
            result[sid] = Scope(sid, self._aliases(sm, spath))
        return result

    def _predicates(self, schema: Map, draft: Schema) -> dict[str, Predicate]:
        if not schema.has("predicates"):
            return {}
        path = "schema > predicates"
        m = self.mapping(schema.get("predicates"), path, "schema.predicates")
        if m is None:
            return {}
        result: dict[str, Predicate] = {}
        for pid, node in self.id_keys(m, path, "predicate"):
            predicate = self._predicate(pid, node, draft)
            if predicate is not None:
                result[pid] = predicate
        if not m.entries:
            self.add(path, m.pos, "schema.predicates must declare at least one predicate")
        return result

    def _predicate(self, pid: str, node: Value, draft: Schema) -> Predicate | None:
        path = f"schema > predicate {pid}"
        m = self.mapping(node, path, f"predicate {pid}")
        if m is None:
            self.broken_predicates.add(pid)
            return None
        before = len(self.problems)
        what = f"predicate {pid}"
        self.keys(m, path, what, PREDICATE_KEYS, PREDICATE_REQUIRED)
        ptype = self.choice(m, "type", path, what, VALUE_TYPES)
        cardinality = self.choice(m, "cardinality", path, what, CARDINALITIES)
        keywords: tuple[str, ...] = ()
        if m.has("keywords"):
            keywords = self.string_list(
                m.get("keywords"), _join(path, "keywords"), "keywords", non_empty=True
            )
        default_scope = self._default_scope(m, path, draft)
        template = self._template(m, path, what)
        values = self._domain(m, path, ptype) if ptype is not None else {}
        if len(self.problems) > before:
            self.broken_predicates.add(pid)
        return Predicate(
            id=pid,
            type=ptype or "enum",  # type: ignore[arg-type]
            cardinality=cardinality or "one",  # type: ignore[arg-type]
            keywords=keywords,
            values=values,
            default_scope=default_scope,
            template=template,
        )

    def _default_scope(self, m: Map, path: str, draft: Schema) -> str | None:
        if not m.has("default_scope"):
            return None
        node = m.get("default_scope")
        scope = self.text(node, _join(path, "default_scope"), "default_scope")
        if scope is not None and scope != GLOBAL_SCOPE and scope not in draft.scopes:
            self.add(
                _join(path, "default_scope"),
                pos_of(node),
                f"default_scope {scope!r} is not a declared scope; allowed: "
                f"{_listing([GLOBAL_SCOPE, *draft.scopes])}",
            )
            return None
        return scope

    def _template(self, m: Map, path: str, what: str) -> str | None:
        template = self.field_text(m, "template", path, what)
        if template is None:
            return None
        tpath, pos = _join(path, "template"), pos_of(m.get("template"))
        allowed = ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
        except ValueError as exc:
            self.add(tpath, pos, f"template is malformed ({exc}); use placeholders {allowed}")
            return None
        bad = [f for f in fields if f not in TEMPLATE_FIELDS]
        if bad:
            shown = ", ".join("{" + f + "}" for f in bad)
            self.add(
                tpath, pos, f"template uses unknown placeholder(s) {shown}; allowed: {allowed}"
            )
            return None
        return template

    def _domain(self, m: Map, path: str, ptype: str) -> dict[str, tuple[str, ...]]:
        """The closed value domain: canonical value -> aliases, canonical forms checked."""
        if not m.has("values"):
            return {}
        vpath = _join(path, "values")
        vm = m.get("values")
        if not isinstance(vm, Map) or not vm.entries:
            self.add(
                vpath,
                pos_of(vm),
                "values must be a non-empty mapping of canonical value -> list of aliases; "
                f"got {describe(vm) if not isinstance(vm, Map) else 'an empty mapping'}",
            )
            return {}
        result: dict[str, tuple[str, ...]] = {}
        owner: dict[str, str] = {}  # casefolded surface form -> canonical value it names
        for key, node in vm.entries:
            canonical = self._canonical(key, vpath, ptype, what="canonical value")
            if canonical is None:
                continue
            if canonical in result:
                self.add(vpath, key.pos, f"duplicate canonical value {canonical!r}; list it once")
                continue
            apath = f"{vpath} > {canonical}"
            aliases = self.string_list(node, apath, f"aliases of {canonical!r}", non_empty=False)
            result[canonical] = aliases
            self._claim_forms(canonical, aliases, owner, apath, pos_of(node))
        return result

    def _claim_forms(
        self,
        canonical: str,
        aliases: tuple[str, ...],
        owner: dict[str, str],
        path: str,
        pos: Pos | None,
    ) -> None:
        """Aliases (case-insensitive, as matching is) must name a single canonical value."""
        for form in (canonical, *aliases):
            other = owner.setdefault(form.casefold(), canonical)
            if other != canonical:
                self.add(
                    path,
                    pos,
                    f"alias {form!r} of {canonical!r} collides with {other!r} (matching is "
                    "case-insensitive); each alias must name exactly one canonical value",
                )

    def _canonical(self, node: Value | None, path: str, ptype: str, what: str) -> str | None:
        """A canonical value in the type's form; YAML dates are accepted for date types."""
        pos = pos_of(node)
        if (
            isinstance(node, Scalar)
            and isinstance(node.value, dt.date)
            and not isinstance(node.value, dt.datetime)
            and ptype == "date"
        ):
            return node.value.isoformat()
        if not (isinstance(node, Scalar) and isinstance(node.value, str)):
            self.add(
                path,
                pos,
                f"{what} must be a string ({CANONICAL_FORMS[ptype]}); got "
                f"{describe(node)}{_quote_hint(node)}",
            )
            return None
        value = node.value
        if not _canonical_ok(value, ptype):
            self.add(
                path,
                pos,
                f"{what} {value!r} is not a canonical {ptype}; expected {CANONICAL_FORMS[ptype]}",
            )
            return None
        return value

    # ------------------------------------------------------------ slot references

    def slot_refs(
        self, m: Map, path: str, what: str, schema: Schema | None
    ) -> tuple[str | None, Predicate | None, str]:
        """entity, predicate and scope (default global) of an event, query or probe."""
        entity = self.field_text(m, "entity", path, what)
        pid = self.field_text(m, "predicate", path, what)
        scope = GLOBAL_SCOPE
        if m.has("scope"):
            scope = self.field_text(m, "scope", path, what) or GLOBAL_SCOPE
        if schema is None:
            return entity, None, scope
        if entity is not None and entity not in schema.entities:
            self.add(
                _join(path, "entity"),
                pos_of(m.get("entity")),
                f"unknown entity {entity!r}; declared entities: {_listing(schema.entities)}",
            )
            entity = None
        predicate = None
        if pid is not None:
            predicate = schema.predicates.get(pid)
            if predicate is None and pid not in self.broken_predicates:
                self.add(
                    _join(path, "predicate"),
                    pos_of(m.get("predicate")),
                    f"unknown predicate {pid!r}; declared predicates: "
                    f"{_listing(schema.predicates)}",
                )
        if m.has("scope") and not schema.has_scope(scope):
            self.add(
                _join(path, "scope"),
                pos_of(m.get("scope")),
                f"unknown scope {scope!r}; allowed scopes: "
                f"{_listing([GLOBAL_SCOPE, *schema.scopes])}",
            )
        return entity, predicate, scope

    def domain_value(
        self, node: Value | None, path: str, predicate: Predicate | None, what: str
    ) -> str | None:
        """A value of the predicate's closed domain, written in its canonical form."""
        if predicate is None or predicate.id in self.broken_predicates:
            # Without a usable domain we can only insist on a string.
            if isinstance(node, Scalar) and isinstance(node.value, dt.date):
                return node.value.isoformat()
            return self.text(node, path, what)
        pos = pos_of(node)
        if isinstance(node, Scalar) and isinstance(node.value, dt.date):
            value = node.value.isoformat() if predicate.type == "date" else None
        elif isinstance(node, Scalar) and isinstance(node.value, str):
            value = node.value
        else:
            value = None
        if value is None:
            self.add(
                path,
                pos,
                f"{what} must be a string naming a value of predicate {predicate.id}; got "
                f"{describe(node)}{_quote_hint(node)}",
            )
            return None
        if value in predicate.values:
            return value
        self.add(path, pos, _not_in_domain(value, predicate, what))
        return None

    def gold(self, m: Map, path: str, predicate: Predicate | None) -> tuple[str, ...]:
        if not m.has("gold"):
            return ()
        gpath = _join(path, "gold")
        seq = self.seq(m.get("gold"), gpath, "gold", non_empty=False)
        if seq is None:
            return ()
        result: list[str] = []
        for i, item in enumerate(seq.items):
            value = self.domain_value(item, f"{gpath}[{i}]", predicate, "gold value")
            if value is None:
                continue
            if value in result:
                self.add(f"{gpath}[{i}]", pos_of(item), f"gold value {value!r} is listed twice")
                continue
            result.append(value)
        return tuple(result)

    # ------------------------------------------------------------ conversations

    def _conversations(self, tree: Map, schema: Schema | None) -> list[Conversation]:
        if not tree.has("conversations"):
            return []
        seq = self.seq(tree.get("conversations"), "conversations", "conversations", non_empty=True)
        if seq is None:
            return []
        state = self.state
        result: list[Conversation] = []
        previous: tuple[str, dt.date] | None = None
        for i, node in enumerate(seq.items):
            conv = self._conversation(i, node, schema, state)
            if conv is None:
                continue
            if previous is not None and conv.date < previous[1]:
                path = f"conversation {conv.id} > date"
                m = node if isinstance(node, Map) else None
                self.add(
                    path,
                    pos_of(m.get("date")) if m else None,
                    f"date {conv.date.isoformat()} is earlier than the date "
                    f"{previous[1].isoformat()} of the previous conversation {previous[0]}; "
                    "conversation dates must be non-decreasing",
                )
            previous = (conv.id, conv.date)
            result.append(conv)
        return result

    def _conversation(
        self, index: int, node: Value, schema: Schema | None, state: _WalkState
    ) -> Conversation | None:
        path = f"conversations[{index}]"
        m = self.mapping(node, path, "a conversation")
        if m is None:
            return None
        cid = None
        if m.has("id"):
            cid = self.ident(m.get("id"), _join(path, "id"), "conversation id", ITEM_ID)
        if cid is not None:
            path = f"conversation {cid}"
            if cid in state.conversation_ids:
                self.add(
                    _join(path, "id"),
                    pos_of(m.get("id")),
                    f"duplicate conversation id {cid!r}; conversation ids must be unique",
                )
            state.conversation_ids.add(cid)
        self.keys(m, path, "conversation", CONVERSATION_KEYS, CONVERSATION_KEYS)
        date = self.date(m.get("date"), _join(path, "date"), "date") if m.has("date") else None
        turns: list[Turn] = []
        if m.has("turns"):
            seq = self.seq(m.get("turns"), _join(path, "turns"), "turns", non_empty=True)
            for ti, tnode in enumerate(seq.items if seq else []):
                turn = self._turn(path, ti, tnode, schema, state, date)
                if turn is not None:
                    turns.append(turn)
        if cid is None or date is None:
            return None
        return Conversation(cid, date, tuple(turns))

    def _turn(
        self,
        conv_path: str,
        index: int,
        node: Value,
        schema: Schema | None,
        state: _WalkState,
        date: dt.date | None,
    ) -> Turn | None:
        path = f"{conv_path} > turns[{index}]"
        m = self.mapping(node, path, "a turn")
        if m is None:
            return None
        tid = None
        if m.has("id"):
            tid = self.ident(m.get("id"), _join(path, "id"), "turn id", ITEM_ID)
        if tid is not None:
            pos = pos_of(m.get("id"))
            path = f"{conv_path} > turn {tid}"
            if tid in state.turn_ids:
                self.add(
                    _join(path, "id"),
                    pos,
                    f"duplicate turn id {tid!r}; turn ids must be unique across the whole "
                    "trajectory",
                )
            state.turn_ids.add(tid)
            if pos:
                self.id_positions.setdefault(f"turn {tid}", pos)
        self.keys(m, path, "turn", TURN_KEYS, ("id", "role", "text"))
        return self._turn_body(m, path, tid, schema, state, date)

    def _turn_body(
        self,
        m: Map,
        path: str,
        tid: str | None,
        schema: Schema | None,
        state: _WalkState | None,
        date: dt.date | None,
    ) -> Turn | None:
        """Role, text, source, events and query: shared by world-a and inserted turns.
        `state` is None for inserted turns, which may not carry a query."""
        role = self.choice(m, "role", path, "turn", ROLES)
        text = self.field_text(m, "text", path, "turn")
        source = self._source(m, path, role)
        if m.has("events") and m.has("query"):
            self.add(
                path,
                m.key_pos("query"),
                "a turn carries events or a query, never both; split it into two user turns",
            )
        events = self._events(m, path, tid, role, schema)
        query = None
        if m.has("query"):
            query = self._query_slot(m, path, tid, role, schema, state, date)
        if tid is None or role is None or text is None:
            return None
        return Turn(tid, role, text, source, events, query)  # type: ignore[arg-type]

    def _source(self, m: Map, path: str, role: str | None) -> str | None:
        if role == "tool" and not m.has("source"):
            self.add(
                path,
                m.pos,
                "a tool turn must have a 'source' naming where the untrusted content came "
                "from (e.g. forwarded-email, sms)",
            )
            return None
        if m.has("source") and role in ("user", "assistant"):
            self.add(
                _join(path, "source"),
                m.key_pos("source"),
                f"'source' is allowed on tool turns only; this turn's role is {role}",
            )
            return None
        return self.field_text(m, "source", path, "turn")

    def _events(
        self, m: Map, path: str, tid: str | None, role: str | None, schema: Schema | None
    ) -> tuple[Event, ...]:
        if not m.has("events"):
            return ()
        epath = _join(path, "events")
        if role in ("assistant", "tool"):
            why = " (untrusted content is never a trusted event)" if role == "tool" else ""
            self.add(
                epath,
                m.key_pos("events"),
                f"events are allowed on user turns only; this turn's role is {role}{why}",
            )
            return ()
        seq = self.seq(m.get("events"), epath, "events", non_empty=True)
        result: list[Event] = []
        for i, node in enumerate(seq.items if seq else []):
            event = self._event(f"{epath}[{i}]", node, f"{tid}#{i + 1}", schema)
            if event is not None:
                result.append(event)
        return tuple(result)

    def _event(self, path: str, node: Value, eid: str, schema: Schema | None) -> Event | None:
        m = self.mapping(node, path, "an event")
        if m is None:
            return None
        self.keys(m, path, "event", EVENT_KEYS, ("op", "entity", "predicate"))
        op = self.choice(m, "op", path, "event", OPS)
        entity, predicate, scope = self.slot_refs(m, path, "event", schema)
        value = self._event_value(m, path, op, predicate)
        valid_from, valid_until = self._window(m, path, op)
        if op == "correct" and predicate is not None and predicate.cardinality == "many":
            self.add(
                _join(path, "op"),
                pos_of(m.get("op")),
                f"'correct' is allowed on cardinality-one predicates only; {predicate.id} is "
                "'many' (retract the wrong value and assert the right one instead)",
            )
        if op is None or entity is None or predicate is None:
            return None
        return Event(eid, op, entity, predicate.id, scope, value, valid_from, valid_until)  # type: ignore[arg-type]

    def _event_value(
        self, m: Map, path: str, op: str | None, predicate: Predicate | None
    ) -> str | None:
        has_value = m.has("value")
        if op in ("assert", "correct") and not has_value:
            self.add(
                path,
                m.pos,
                f"an '{op}' event must have a 'value' (a canonical value of the predicate)",
            )
        elif op == "forget" and has_value:
            self.add(
                _join(path, "value"),
                m.key_pos("value"),
                "a 'forget' event forgets the whole slot and takes no 'value'; remove it "
                "(use 'retract' to end one value)",
            )
            return None
        elif op == "retract" and not has_value and predicate and predicate.cardinality == "many":
            self.add(
                path,
                m.pos,
                f"a 'retract' on the cardinality-many predicate {predicate.id} must name the "
                "'value' to retract",
            )
        if not has_value or op is None:
            return None
        return self.domain_value(m.get("value"), _join(path, "value"), predicate, "value")

    def _window(self, m: Map, path: str, op: str | None) -> tuple[dt.date | None, dt.date | None]:
        dates: dict[str, dt.date | None] = {}
        for key in ("valid_from", "valid_until"):
            if not m.has(key):
                dates[key] = None
                continue
            if op in ("retract", "forget"):
                self.add(
                    _join(path, key),
                    m.key_pos(key),
                    f"'{key}' is allowed on assert and correct events only, not on '{op}'",
                )
                dates[key] = None
                continue
            dates[key] = self.date(m.get(key), _join(path, key), key)
        start, end = dates["valid_from"], dates["valid_until"]
        if start is not None and end is not None and start >= end:
            self.add(
                _join(path, "valid_until"),
                pos_of(m.get("valid_until")),
                f"valid_from {start.isoformat()} must precede valid_until {end.isoformat()} "
                "(the window is [valid_from, valid_until))",
            )
        return start, end

    # ------------------------------------------------------------ queries

    def _query_slot(
        self,
        turn: Map,
        path: str,
        tid: str | None,
        role: str | None,
        schema: Schema | None,
        state: _WalkState | None,
        date: dt.date | None,
    ) -> Query | None:
        qpos = turn.key_pos("query")
        if state is None:
            self.add(
                _join(path, "query"),
                qpos,
                "inserted (pair) turns may not carry a query; only world-a user turns do",
            )
            return None
        if role in ("assistant", "tool"):
            self.add(
                _join(path, "query"),
                qpos,
                f"queries are allowed on user turns only; this turn's role is {role}",
            )
            return None
        return self._query(turn.get("query"), _join(path, "query"), tid, schema, state, date)

    def _query(
        self,
        node: Value | None,
        path: str,
        tid: str | None,
        schema: Schema | None,
        state: _WalkState,
        date: dt.date | None,
    ) -> Query | None:
        m = self.mapping(node, path, "query")
        if m is None:
            return None
        qid = None
        if m.has("id"):
            qid = self.ident(m.get("id"), _join(path, "id"), "query id", ITEM_ID)
        if qid is not None:
            pos = pos_of(m.get("id"))
            path = path.removesuffix("query") + f"query {qid}"
            if qid in state.query_ids:
                self.add(
                    _join(path, "id"),
                    pos,
                    f"duplicate query id {qid!r}; query ids must be unique",
                )
            state.query_ids.add(qid)
            if pos:
                self.id_positions.setdefault(f"query {qid}", pos)
        self.keys(m, path, "query", QUERY_KEYS, QUERY_REQUIRED)
        family = self.choice(m, "family", path, "query", FAMILIES)
        entity, predicate, scope = self.slot_refs(m, path, "query", schema)
        as_of = self.date(m.get("as_of"), _join(path, "as_of"), "as_of") if m.has("as_of") else None
        gold = self.gold(m, path, predicate)
        insert = self._pair(m, path, tid, schema) if m.has("pair") else None
        as_of = as_of or date
        if qid is None or family is None or entity is None or predicate is None or as_of is None:
            return None
        return Query(qid, family, entity, predicate.id, scope, as_of, gold, insert)  # type: ignore[arg-type]

    def _pair(
        self, query: Map, path: str, tid: str | None, schema: Schema | None
    ) -> tuple[Turn, ...] | None:
        ppath = _join(path, "pair")
        m = self.mapping(query.get("pair"), ppath, "pair")
        if m is None:
            return None
        self.keys(m, ppath, "pair", PAIR_KEYS, PAIR_KEYS)
        if not m.has("insert"):
            return None
        ipath = _join(ppath, "insert")
        seq = self.seq(m.get("insert"), ipath, "pair.insert", non_empty=True)
        turns: list[Turn] = []
        for i, node in enumerate(seq.items if seq else []):
            turn = self._insert_turn(f"{ipath}[{i}]", node, f"{tid}~b{i + 1}", schema)
            if turn is not None:
                turns.append(turn)
        return tuple(turns)

    def _insert_turn(self, path: str, node: Value, tid: str, schema: Schema | None) -> Turn | None:
        m = self.mapping(node, path, "an inserted turn")
        if m is None:
            return None
        if m.has("id"):
            self.add(
                _join(path, "id"),
                m.key_pos("id"),
                "inserted turns take no 'id': their ids are derived as <query turn id>~b1, "
                "~b2, ...; remove the 'id'",
            )
        # `id` and `query` get the specific messages above and in _query_slot.
        rest = Map([(k, v) for k, v in m.entries if k.value not in ("id", "query")], m.pos)
        self.keys(rest, path, "inserted turn", INSERT_TURN_KEYS, ("role", "text"))
        return self._turn_body(m, path, tid, schema, None, None)

    # ------------------------------------------------------------ probes

    def _probes(self, tree: Map, schema: Schema | None, world_a: set[str]) -> list[Probe]:
        if not tree.has("probes"):
            return []
        seq = self.seq(tree.get("probes"), "probes", "probes", non_empty=False)
        result: list[Probe] = []
        seen: set[str] = set()
        for i, node in enumerate(seq.items if seq else []):
            probe = self._probe(i, node, schema, world_a, seen)
            if probe is not None:
                result.append(probe)
        return result

    def _probe(
        self,
        index: int,
        node: Value,
        schema: Schema | None,
        world_a: set[str],
        seen: set[str],
    ) -> Probe | None:
        path = f"probes[{index}]"
        m = self.mapping(node, path, "a probe")
        if m is None:
            return None
        pid = None
        if m.has("id"):
            pid = self.ident(m.get("id"), _join(path, "id"), "probe id", ITEM_ID)
        if pid is not None:
            pos = pos_of(m.get("id"))
            path = f"probe {pid}"
            if pid in seen:
                self.add(
                    _join(path, "id"), pos, f"duplicate probe id {pid!r}; probe ids must be unique"
                )
            seen.add(pid)
            if pos:
                self.id_positions.setdefault(f"probe {pid}", pos)
        self.keys(m, path, "probe", PROBE_KEYS, PROBE_REQUIRED)
        after = self.field_text(m, "after", path, "probe")
        if after is not None and after not in world_a:
            self.add(
                _join(path, "after"),
                pos_of(m.get("after")),
                f"'after' names turn {after!r}, which is not a turn of the trajectory; it must "
                "be the id of an existing (world-a) turn",
            )
            after = None
        family = self.choice(m, "family", path, "probe", FAMILIES)
        text = self.field_text(m, "text", path, "probe")
        entity, predicate, scope = self.slot_refs(m, path, "probe", schema)
        gold = self.gold(m, path, predicate)
        conflict = self._conflict(m, path, predicate, gold) if m.has("conflict") else None
        if (
            pid is None
            or after is None
            or family is None
            or text is None
            or entity is None
            or predicate is None
        ):
            return None
        return Probe(pid, after, family, text, entity, predicate.id, scope, gold, conflict)  # type: ignore[arg-type]

    def _conflict(
        self, probe: Map, path: str, predicate: Predicate | None, gold: tuple[str, ...]
    ) -> Conflict | None:
        cpath = _join(path, "conflict")
        m = self.mapping(probe.get("conflict"), cpath, "conflict")
        if m is None:
            return None
        self.keys(m, cpath, "conflict", CONFLICT_KEYS, CONFLICT_KEYS)
        text = self.field_text(m, "text", cpath, "conflict")
        value = None
        if m.has("value"):
            vnode = m.get("value")
            value = self.domain_value(vnode, _join(cpath, "value"), predicate, "conflict value")
            if value is not None and value in gold:
                self.add(
                    _join(cpath, "value"),
                    pos_of(vnode),
                    f"conflict value {value!r} is one of the gold values; conflicting evidence "
                    "must name a value that is not gold",
                )
                value = None
        if text is None or value is None:
            return None
        return Conflict(text, value)


@dataclass
class _WalkState:
    turn_ids: set[str] = field(default_factory=set)
    query_ids: set[str] = field(default_factory=set)
    conversation_ids: set[str] = field(default_factory=set)


def _canonical_ok(value: str, ptype: str) -> bool:
    if ptype == "time":
        return _TIME.fullmatch(value) is not None
    if ptype == "date":
        if not _DATE.fullmatch(value):
            return False
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            return False
        return True
    if ptype == "number":
        return _NUMBER.fullmatch(value) is not None
    if ptype == "money":
        return _MONEY.fullmatch(value) is not None
    return bool(value.strip())


def _not_in_domain(value: str, predicate: Predicate, what: str) -> str:
    """Explain a value outside the closed domain, pointing at the canonical value if the user
    wrote an alias or a different capitalisation of one."""
    folded = value.casefold()
    for canonical, aliases in predicate.values.items():
        if folded in (a.casefold() for a in aliases):
            return (
                f"{what} {value!r} is an alias of the canonical value {canonical!r} of "
                f"predicate {predicate.id}; write the canonical value {canonical!r}"
            )
        if folded == canonical.casefold():
            return (
                f"{what} {value!r} is not canonical; write it exactly as {canonical!r} "
                f"(predicate {predicate.id})"
            )
    padded = (
        "0" + value if predicate.type == "time" and re.fullmatch(r"[0-9]:[0-5][0-9]", value) else ""
    )
    if padded in predicate.values:
        return (
            f"{what} {value!r} is not canonical; write times as HH:MM: {padded!r} "
            f"(predicate {predicate.id})"
        )
    return (
        f"{what} {value!r} is not in the value domain of predicate {predicate.id}; allowed "
        f"values: {_listing(predicate.values)}"
    )
