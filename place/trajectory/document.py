"""The `place-trajectory/1` file format as pydantic models: the one statement of its keys.

The fields below are the format's keys (in the order messages list them), their types and
patterns; the enumerations are the Literals of `place.trajectory.model`. Validators state
the rules that tie parts of a file together: references to declared entities, predicates
and scopes, unique ids, which keys a turn or an event may carry, canonical values. They
raise `place` errors carrying the finished message and whether the position to show is the
key's or the value's; `place.trajectory.loader` maps every pydantic error to a `Problem`
with an id path, line and column, and words plain type errors itself.
`trajectories/FORMAT.md` documents the same keys (checked by `tests/unit/test_format_doc.py`).

`parse` validates with a context holding what the schema declares (`Refs`, read leniently
first, so one broken declaration does not hide problems elsewhere), the predicates the
tasks' needs name (read leniently too: with the schema's flags they are cons(m), which a
forged probe must target) and the ids seen so far (pydantic validates fields and list items
in order, so that is "written earlier").
A valid document becomes the immutable in-memory model with `to_trajectory`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, ClassVar

from annotated_types import MinLen
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic import Strict as StrictType
from pydantic_core import InitErrorDetails, PydanticCustomError

from place.trajectory.model import (
    EPOCH_OPS,
    FACT_OPS,
    FORGED_SUFFIX,
    GLOBAL_SCOPE,
    OPS,
    SHARE_OPS,
    Cardinality,
    Compaction,
    Conflict,
    Conversation,
    DistractorKind,
    Entity,
    Event,
    Expectation,
    Family,
    Forged,
    ForgedKind,
    Format,
    Op,
    Permission,
    Predicate,
    Probe,
    Query,
    Reason,
    Role,
    Schema,
    Scope,
    Slot,
    Task,
    Trajectory,
    Turn,
    ValueType,
)

# Ids of schema items, conversations, turns, queries and probes. `#` and `~` are excluded
# because derived ids use them (`c1-004#1`, `c1-004~b1`) and must never collide.
ITEM_ID = r"[A-Za-z0-9][A-Za-z0-9_.:-]*"
TRAJECTORY_ID = r"[a-z0-9][a-z0-9_.-]*"
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_CANONICAL = {
    "time": re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]"),
    "date": DATE,
    "number": re.compile(r"-?[0-9]+(\.[0-9]+)?"),
    "money": re.compile(r"[0-9]+(\.[0-9]+)? [A-Z]{3}"),
    "enum": re.compile(r".*\S.*", re.DOTALL),
}
CANONICAL_FORMS = {
    "time": "HH:MM on a 24-hour clock, e.g. '07:15'",
    "date": "YYYY-MM-DD naming a real date, e.g. '2026-03-14'",
    "number": "a decimal string, e.g. '3' or '2.5'",
    "money": "'<amount> <ISO 4217 code>', e.g. '1200 EUR'",
    "enum": "any non-empty string",
}
TEMPLATE_FIELDS = ("entity_name", "value", "scope")
_MAX_LISTED = 12


def _iso_date(value: Any) -> Any:
    """ISO text naming a date becomes that date (a non-date of that shape fails here, as a
    ValueError); YAML's own dates pass; anything else fails the strict date type."""
    if isinstance(value, str) and DATE.fullmatch(value):
        return dt.date.fromisoformat(value)
    if isinstance(value, dt.datetime):
        raise ValueError("a timestamp is not a date")
    return value


def _iso_key(value: Any) -> Any:
    """A date predicate's canonical value may be written as an unquoted YAML date."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    return value


def _iso_value(value: Any, info: ValidationInfo) -> Any:
    """An unquoted YAML date (or timestamp) written as a value stands for its ISO text,
    unless the value's predicate is known to take no dates (then it is reported)."""
    sound = _sound(info)
    if isinstance(value, dt.date) and (sound is None or sound[1].type == "date"):
        return value.isoformat()
    return value


def _not_global(scope: str) -> str:
    if scope == GLOBAL_SCOPE:
        raise problem(
            "scope 'global' always exists implicitly and may not be declared; "
            "remove it from schema.scopes",
            at="key",
        )
    return scope


# "Non-empty" is "not blank": the pattern is searched, not matched.
Text = Annotated[str, StringConstraints(pattern=r"\S")]
ItemId = Annotated[str, StringConstraints(pattern=f"^{ITEM_ID}$")]
TrajectoryId = Annotated[str, StringConstraints(pattern=f"^{TRAJECTORY_ID}$")]
ScopeId = Annotated[ItemId, AfterValidator(_not_global)]
# Strict: pydantic would otherwise read numbers as Unix timestamps.
Date = Annotated[dt.date, StrictType(), BeforeValidator(_iso_date)]
# Strict: `yes`, `1` or "true" are not booleans of this format.
Flag = Annotated[bool, StrictType()]


class _Domain:
    """Marks a value of a predicate's closed domain: validators check it against the domain
    of the predicate it belongs to or, when that declaration is broken, that it is not blank."""


DOMAIN = _Domain()
Canonical = Annotated[str, BeforeValidator(_iso_value), DOMAIN]


class _Refused:
    """Marks a key that is declared only to be refused with a specific reason."""


REFUSED = _Refused()


def format_keys(model: type[BaseModel]) -> tuple[str, ...]:
    """The keys `model` allows in a file, in order (refused keys are not among them)."""
    return tuple(
        f.alias or name for name, f in model.model_fields.items() if REFUSED not in f.metadata
    )


def problem(
    message: str, *, at: str = "value", pos_of: tuple[Any, ...] = ()
) -> PydanticCustomError:
    """A rule's finding. Its position is the value's or (`at="key"`) its key's, of the part
    validated or of its part `pos_of` (mapping keys and indices below it)."""
    return PydanticCustomError(
        "place", "{message}", {"message": message, "at": at, "pos_of": pos_of}
    )


# A blank value where no domain is known: the loader words it like any other bad string.
_BLANK = PydanticCustomError("blank", "{message}", {"message": "the value is blank"})


def _fail(
    found: list[tuple[tuple[Any, ...], PydanticCustomError]], inner: ValidationError | None = None
) -> None:
    """Raise every finding at once (locs relative to the part being validated), together
    with the errors of a nested validation if there were any."""
    details = [InitErrorDetails(type=e, loc=loc, input=None) for loc, e in found]
    for e in inner.errors() if inner is not None else ():
        # Pydantic's own errors are rebuilt from their type; ours from their context.
        kind: str | PydanticCustomError = e["type"]
        if kind in ("place", "blank"):
            kind = PydanticCustomError(e["type"], "{message}", e["ctx"])
        details.append(
            InitErrorDetails(type=kind, loc=e["loc"], input=e["input"], ctx=e.get("ctx", {}))
        )
    if details:
        raise ValidationError.from_exception_data("place-trajectory", details)


def _with(found: list[tuple[tuple[Any, ...], PydanticCustomError]], handler: Any, data: Any) -> Any:
    """Validate `data` with `handler`; raise its errors together with `found`, if any."""
    try:
        result = handler(data)
    except ValidationError as exc:
        _fail(found, exc)
        raise
    _fail(found)
    return result


def listing(items: Iterable[str]) -> str:
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:_MAX_LISTED])
    more = f", ... ({len(items) - _MAX_LISTED} more)" if len(items) > _MAX_LISTED else ""
    return (shown + more) if items else "(none)"


def _context(info: ValidationInfo) -> dict[str, Any]:
    return info.context if isinstance(info.context, dict) else {}


def _refs(info: ValidationInfo) -> Refs | None:
    return _context(info).get("refs")


def _register(info: ValidationInfo, kind: str, ident: str, rule: str) -> None:
    seen = _context(info).get("seen", {}).get(kind)
    if seen is None:
        return
    if ident in seen:
        raise problem(f"duplicate {kind} id {ident!r}; {rule}")
    seen.add(ident)


class Part(BaseModel):
    """A part of a trajectory file: a mapping with exactly the keys its fields declare."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    NAMES: ClassVar[tuple[str, str, str]]
    """How messages name this part: about its keys, about its fields, and when it is not a
    mapping (`{}` is the id of a schema declaration)."""


# ---------------------------------------------------------------- schema


class EntityDoc(Part):
    NAMES = ("entity {}", "entity {}", "entity {}")

    name: Text
    aliases: tuple[Text, ...] = ()


class ScopeDoc(Part):
    NAMES = ("scope {}", "scope {}", "scope {} (write {{}} for no aliases)")

    aliases: tuple[Text, ...] = ()


class PredicateDoc(Part):
    NAMES = ("predicate {}", "predicate {}", "predicate {}")

    type: ValueType
    cardinality: Cardinality
    keywords: Annotated[tuple[Text, ...], MinLen(1)]
    default_scope: Text | None = None
    template: Text | None = None
    values: Annotated[dict[str, tuple[Text, ...]], MinLen(1)]
    """The closed domain: canonical value -> extra aliases."""
    consequential: Flag = False
    core: Flag = False

    @field_validator("default_scope")
    @classmethod
    def _declared_scope(cls, scope: str, info: ValidationInfo) -> str:
        refs = _refs(info)
        if refs is not None and scope != GLOBAL_SCOPE and scope not in refs.scopes:
            allowed = listing([GLOBAL_SCOPE, *refs.scopes])
            raise problem(f"default_scope {scope!r} is not a declared scope; allowed: {allowed}")
        return scope

    @field_validator("template")
    @classmethod
    def _placeholders(cls, template: str) -> str:
        allowed = ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
        except ValueError as exc:
            raise problem(f"template is malformed ({exc}); use placeholders {allowed}") from None
        bad = ", ".join("{" + f + "}" for f in fields if f not in TEMPLATE_FIELDS)
        if bad:
            raise problem(f"template uses unknown placeholder(s) {bad}; allowed: {allowed}")
        return template

    @field_validator("values", mode="wrap")
    @classmethod
    def _canonical(
        cls, values: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> dict[str, tuple[str, ...]]:
        """Canonical values in the type's form (a date predicate's may be unquoted YAML
        dates), each surface form naming one value. A value not in canonical form is left
        out of the rest of the check: its aliases would only repeat the mistake."""
        ptype = info.data.get("type")
        if ptype is None:
            # Nothing to check the values against (the type's own problem is reported), and
            # the predicate is invalid whatever they are.
            return {}
        if not isinstance(values, dict):
            return handler(values)
        found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
        kept: dict[Any, Any] = {}  # non-text keys are kept for pydantic to report
        for key, aliases in values.items():
            text = _iso_key(key) if ptype == "date" else key
            if isinstance(text, str) and not _canonical_ok(text, ptype):
                message = (
                    f"canonical value {text!r} is not a canonical {ptype}; "
                    f"expected {CANONICAL_FORMS[ptype]}"
                )
                found.append(((), problem(message, at="key", pos_of=(key,))))
            elif text in kept:
                message = f"duplicate canonical value {text!r}; list it once"
                found.append(((), problem(message, at="key", pos_of=(key,))))
            else:
                kept[text] = aliases
        owner: dict[str, str] = {}  # casefolded surface form -> canonical value it names
        for canonical, aliases in kept.items():
            if not isinstance(canonical, str):
                continue
            forms = [a for a in aliases if isinstance(a, str)] if isinstance(aliases, list) else []
            # Matching is case-insensitive, so each surface form must name one value.
            for form in (canonical, *forms):
                other = owner.setdefault(form.casefold(), canonical)
                if other != canonical:
                    message = (
                        f"alias {form!r} of {canonical!r} collides with {other!r} (matching is "
                        "case-insensitive); each alias must name exactly one canonical value"
                    )
                    found.append(((canonical,), problem(message)))
        return _with(found, handler, kept)


def _canonical_ok(value: str, ptype: str) -> bool:
    if not _CANONICAL[ptype].fullmatch(value):
        return False
    try:
        return ptype != "date" or bool(dt.date.fromisoformat(value))
    except ValueError:
        return False


class PermissionDoc(Part):
    NAMES = ("permission {}", "permission {}", "permission {}")

    owner: Text

    @field_validator("owner")
    @classmethod
    def _owner_is_principal(cls, owner: str, info: ValidationInfo) -> str:
        bad = _not_a_principal(owner, info, "owner")
        if bad is not None:
            raise bad
        return owner


class SchemaDoc(Part):
    NAMES = ("schema", "schema", "schema")

    entities: dict[ItemId, EntityDoc]
    scopes: dict[ScopeId, ScopeDoc] = Field(default_factory=dict)
    predicates: Annotated[dict[ItemId, PredicateDoc], MinLen(1)]
    permissions: dict[ItemId, PermissionDoc] = Field(default_factory=dict)


@dataclass(frozen=True)
class Refs:
    """What the schema declares, for the references elsewhere in the file."""

    entities: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    """Declared scopes; `global` is implicit."""
    predicates: tuple[str, ...] = ()
    """Predicates declared as mappings (the list shown in messages)."""
    declared: frozenset[str] = frozenset()
    """Every predicate id: a reference to a broken declaration is not also unknown."""
    sound: Mapping[str, PredicateDoc] = field(default_factory=dict)
    """Declarations without problems: only their domains are checked against."""
    many: frozenset[str] = frozenset()
    """Predicates declared cardinality-many (even if something else in them is broken)."""
    principals: tuple[str, ...] | None = None
    """The principals (docs/method.md §11): `principals` as written, else `(principal,)`; None
    when neither can be read (references to principals are then not checked)."""
    permissions: Mapping[str, str | None] | None = None
    """Permission id -> its owner as written (None: unreadable); None when the schema's
    `permissions` is not a mapping (references to permissions are then not checked)."""

    @classmethod
    def read(cls, data: Any) -> Refs | None:
        """Read leniently from raw data; None when there is no schema mapping."""
        schema = data.get("schema") if isinstance(data, dict) else None
        if not isinstance(schema, dict):
            return None
        assert isinstance(data, dict)
        principal = data.get("principal")
        principals: tuple[str, ...] | None = None
        if isinstance(data.get("principals"), list):
            # A principal left out of `principals` is reported there, not at every reference.
            named = [p for p in data["principals"] if isinstance(p, str)]
            if isinstance(principal, str):
                named.append(principal)
            principals = tuple(dict.fromkeys(named))
        elif "principals" not in data and isinstance(principal, str):
            principals = (principal,)
        permissions: dict[str, str | None] | None = None
        if isinstance(schema.get("permissions", {}), dict):
            permissions = {
                k: (v.get("owner") if isinstance(v.get("owner"), str) else None)
                if isinstance(v, dict)
                else None
                for k, v in schema.get("permissions", {}).items()
                if _is_id(k)
            }

        def ids(key: str) -> dict[str, Any]:
            part = schema.get(key)
            if not isinstance(part, dict):
                return {}
            return {k: v for k, v in part.items() if isinstance(k, str) and _is_id(k)}

        def mappings(part: dict[str, Any]) -> tuple[str, ...]:
            return tuple(k for k, v in part.items() if isinstance(v, dict))

        entities = mappings(ids("entities"))
        scopes = tuple(s for s in mappings(ids("scopes")) if s != GLOBAL_SCOPE)
        predicates, partial, sound = ids("predicates"), cls(entities, scopes), {}
        for pid, raw in predicates.items():
            # A broken declaration's problems are reported where it is declared.
            with contextlib.suppress(ValidationError):
                sound[pid] = PredicateDoc.model_validate(raw, context={"refs": partial})
        many = {
            p
            for p, raw in predicates.items()
            if isinstance(raw, dict) and raw.get("cardinality") == "many"
        }
        declared = frozenset(predicates)
        return cls(
            entities,
            scopes,
            mappings(predicates),
            declared,
            sound,
            frozenset(many),
            principals,
            permissions,
        )


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(ITEM_ID, value) is not None


# ---------------------------------------------------------------- principals (docs/method.md §11)


def _principal(info: ValidationInfo) -> str | None:
    """The trajectory's `principal` as written (the default speaker and asker)."""
    principal = _context(info).get("principal")
    return principal if isinstance(principal, str) else None


def _not_a_principal(name: str, info: ValidationInfo, what: str) -> PydanticCustomError | None:
    refs = _refs(info)
    if refs is None or refs.principals is None or name in refs.principals:
        return None
    hint = (
        "the top-level 'principals'"
        if _context(info).get("principals_declared")
        else "without a top-level 'principals', the only principal is 'principal'"
    )
    return problem(
        f"{what} {name!r} is not a principal; principals: {listing(refs.principals)} ({hint})"
    )


# ---------------------------------------------------------------- slots and values


def _sound(info: ValidationInfo) -> tuple[str, PredicateDoc] | None:
    """The predicate named earlier in this mapping, if its declaration is sound."""
    refs, pid = _refs(info), info.data.get("predicate")
    if refs is None or not isinstance(pid, str) or pid not in refs.sound:
        return None
    return pid, refs.sound[pid]


def _domain(value: str, info: ValidationInfo, what: str) -> PydanticCustomError | None:
    """A value outside the predicate's closed domain, pointing at the canonical value if the
    user wrote an alias or a different capitalisation of one."""
    sound = _sound(info)
    if sound is None:
        return None if value.strip() else _BLANK
    if value in sound[1].values:
        return None
    pid, predicate = sound
    folded = value.casefold()
    for canonical, aliases in predicate.values.items():
        if folded in (a.casefold() for a in aliases):
            return problem(
                f"{what} {value!r} is an alias of the canonical value {canonical!r} of "
                f"predicate {pid}; write the canonical value {canonical!r}"
            )
        if folded == canonical.casefold():
            return problem(
                f"{what} {value!r} is not canonical; write it exactly as {canonical!r} "
                f"(predicate {pid})"
            )
    padded = "0" + value if re.fullmatch(r"[0-9]:[0-5][0-9]", value) else ""
    if predicate.type == "time" and padded in predicate.values:
        return problem(
            f"{what} {value!r} is not canonical; write times as HH:MM: {padded!r} (predicate {pid})"
        )
    return problem(
        f"{what} {value!r} is not in the value domain of predicate {pid}; allowed "
        f"values: {listing(predicate.values)}"
    )


def _check_gold(gold: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
    seen: set[str] = set()
    for i, value in enumerate(gold):
        bad = _domain(value, info, "gold value")
        if bad is None and value in seen:
            bad = problem(f"gold value {value!r} is listed twice")
        if bad is not None:
            found.append(((i,), bad))
        seen.add(value)
    _fail(found)
    return gold


class _SlotDoc(Part):
    """References to the schema shared by events, queries and probes."""

    @field_validator("entity", check_fields=False)
    @classmethod
    def _entity(cls, entity: str, info: ValidationInfo) -> str:
        refs = _refs(info)
        if refs is not None and entity not in refs.entities:
            raise problem(f"unknown entity {entity!r}; declared entities: {listing(refs.entities)}")
        return entity

    @field_validator("predicate", check_fields=False)
    @classmethod
    def _predicate(cls, pid: str, info: ValidationInfo) -> str:
        refs = _refs(info)
        if refs is not None and pid not in refs.declared:
            raise problem(
                f"unknown predicate {pid!r}; declared predicates: {listing(refs.predicates)}"
            )
        return pid

    @field_validator("scope", check_fields=False)
    @classmethod
    def _scope(cls, scope: str, info: ValidationInfo) -> str:
        refs = _refs(info)
        if refs is not None and scope != GLOBAL_SCOPE and scope not in refs.scopes:
            allowed = listing([GLOBAL_SCOPE, *refs.scopes])
            raise problem(f"unknown scope {scope!r}; allowed scopes: {allowed}")
        return scope


# ---------------------------------------------------------------- turns and events


_KEYS_OF_OP: dict[str, tuple[str, ...]] = {
    **{
        op: ("entity", "predicate", "scope", "value", "valid_from", "valid_until")
        for op in FACT_OPS
    },
    **{op: ("entity", "predicate", "scope", "with") for op in SHARE_OPS},
    **{op: ("permission", "to") for op in EPOCH_OPS},
    "rollback": ("task",),
}
"""The keys an event of each op may have besides `op` (docs/method.md §1 and §11)."""
_REQUIRED_OF_OP: dict[str, tuple[str, ...]] = {
    **{op: ("entity", "predicate") for op in FACT_OPS},
    **{op: ("entity", "predicate", "with") for op in SHARE_OPS},
    **{op: ("permission", "to") for op in EPOCH_OPS},
    "rollback": ("task",),
}
_WHAT = {
    "with": "the principal the slot is shared with",
    "permission": "a permission declared in schema.permissions",
    "to": "the principal who gets or loses the permission",
    "task": "the id of an earlier task",
}


class EventDoc(_SlotDoc):
    NAMES = ("event", "event", "an event")

    op: Op
    entity: Text | None = None
    predicate: Text | None = None
    scope: Text = GLOBAL_SCOPE
    value: Canonical | None = None
    valid_from: Date | None = None
    valid_until: Date | None = None
    with_: Text | None = Field(default=None, alias="with")
    permission: Text | None = None
    to: Text | None = None
    task: Text | None = None

    @field_validator(
        "entity", "predicate", "scope", "with_", "permission", "to", "task", mode="before"
    )
    @classmethod
    def _keys_of_op(cls, value: Any, info: ValidationInfo) -> Any:
        """A key the event's op does not take (the lifecycle ops' own rules on `value` and
        the window are below; these are the keys of docs/method.md §11)."""
        op, key = info.data.get("op"), "with" if info.field_name == "with_" else info.field_name
        if op in _KEYS_OF_OP and key not in _KEYS_OF_OP[op]:
            keys = ", ".join(("op", *_KEYS_OF_OP[op]))
            raise problem(
                f"'{key}' is not a key of a '{op}' event; a '{op}' event has keys: {keys}",
                at="key",
            )
        return value

    @field_validator("value", mode="before")
    @classmethod
    def _forget_takes_no_value(cls, value: Any, info: ValidationInfo) -> Any:
        op = info.data.get("op")
        if op == "forget":
            raise problem(
                "a 'forget' event forgets the whole slot and takes no 'value'; remove it "
                "(use 'retract' to end one value)",
                at="key",
            )
        if op in _KEYS_OF_OP and "value" not in _KEYS_OF_OP[op]:
            keys = ", ".join(("op", *_KEYS_OF_OP[op]))
            raise problem(
                f"'value' is not a key of a '{op}' event; a '{op}' event has keys: {keys}",
                at="key",
            )
        return value

    @field_validator("value")
    @classmethod
    def _in_domain(cls, value: str, info: ValidationInfo) -> str:
        # Which values an event takes depends on its op: without a valid op, only the type.
        bad = _domain(value, info, "value") if "op" in info.data else None
        if bad is not None:
            raise bad
        return value

    @field_validator("valid_from", "valid_until", mode="before")
    @classmethod
    def _window_ops(cls, value: Any, info: ValidationInfo) -> Any:
        op = info.data.get("op")
        if op in OPS and op not in ("assert", "correct"):
            raise problem(
                f"'{info.field_name}' is allowed on assert and correct events only, not on '{op}'",
                at="key",
            )
        return value

    @field_validator("valid_until")
    @classmethod
    def _window_order(cls, end: dt.date, info: ValidationInfo) -> dt.date:
        start = info.data.get("valid_from")
        if start is not None and start >= end:
            raise problem(
                f"valid_from {start.isoformat()} must precede valid_until {end.isoformat()} "
                "(the window is [valid_from, valid_until))"
            )
        return end

    @field_validator("with_", "to")
    @classmethod
    def _principal_named(cls, name: str, info: ValidationInfo) -> str:
        bad = _not_a_principal(name, info, "with" if info.field_name == "with_" else "to")
        if bad is not None:
            raise bad
        return name

    @field_validator("permission")
    @classmethod
    def _declared_permission(cls, permission: str, info: ValidationInfo) -> str:
        refs = _refs(info)
        declared = refs.permissions if refs is not None else None
        if declared is not None and permission not in declared:
            raise problem(
                f"unknown permission {permission!r}; declared permissions: {listing(declared)} "
                "(schema.permissions)"
            )
        return permission

    @field_validator("task")
    @classmethod
    def _earlier_task(cls, task: str, info: ValidationInfo) -> str:
        tasks = _context(info).get("tasks")
        if tasks is not None and task not in tasks:
            raise problem(
                f"rollback names task {task!r}, which is not a task of an earlier turn; it must "
                "be the id of a task requested before this turn"
            )
        return task

    @model_validator(mode="wrap")
    @classmethod
    def _value_rules(
        cls, data: Any, handler: ModelWrapValidatorHandler[EventDoc], info: ValidationInfo
    ) -> EventDoc:
        """Whether the event needs a value, and the keys its op requires. Read from the raw
        mapping, so that it is reported whatever else is wrong with the event."""
        found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
        op = data.get("op") if isinstance(data, dict) else None
        if op is not None:
            refs, pid = _refs(info), data.get("predicate")
            many = refs is not None and isinstance(pid, str) and pid in refs.many
            for key in _REQUIRED_OF_OP.get(op, ()) if isinstance(op, str) else ():
                if key in data:
                    continue
                if op in FACT_OPS:  # worded as before these keys became op-dependent
                    message = f"missing required key '{key}' in event"
                else:
                    message = (
                        f"a '{op}' event must have '{key}' ({_WHAT.get(key, 'a declared id')})"
                    )
                found.append(((), problem(message)))
            if op in ("assert", "correct") and "value" not in data:
                message = (
                    f"an '{op}' event must have a 'value' (a canonical value of the predicate)"
                )
                found.append(((), problem(message)))
            if op == "retract" and "value" not in data and many:
                message = (
                    f"a 'retract' on the cardinality-many predicate {pid} must name the "
                    "'value' to retract"
                )
                found.append(((), problem(message)))
            if op == "correct" and many:
                message = (
                    f"'correct' is allowed on cardinality-one predicates only; {pid} is "
                    "'many' (retract the wrong value and assert the right one instead)"
                )
                found.append((("op",), problem(message)))
        return _with(found, handler, data)


class _TurnRules(Part):
    """Rules shared by world-a turns and a pair's inserted turns (each declares its keys)."""

    @field_validator("source", mode="before", check_fields=False)
    @classmethod
    def _source_on_tool_turns(cls, source: Any, info: ValidationInfo) -> Any:
        role = info.data.get("role")
        if role in ("user", "assistant"):
            raise problem(
                f"'source' is allowed on tool turns only; this turn's role is {role}", at="key"
            )
        return source

    @field_validator("events", mode="before", check_fields=False)
    @classmethod
    def _events_on_user_turns(cls, events: Any, info: ValidationInfo) -> Any:
        role = info.data.get("role")
        if role in ("assistant", "tool"):
            why = " (untrusted content is never a trusted event)" if role == "tool" else ""
            raise problem(
                f"events are allowed on user turns only; this turn's role is {role}{why}",
                at="key",
            )
        return events

    @model_validator(mode="wrap")
    @classmethod
    def _turn_rules(
        cls, data: Any, handler: ModelWrapValidatorHandler[_TurnRules], info: ValidationInfo
    ) -> _TurnRules:
        """Rules about which keys a turn has, read from the raw mapping so that they are
        reported whatever else is wrong with the turn. (`info` is unused; pydantic's typing
        of wrap validators expects it.)"""
        found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
        if isinstance(data, dict) and data.get("role") == "tool" and "source" not in data:
            message = (
                "a tool turn must have a 'source' naming where the untrusted content came "
                "from (e.g. forwarded-email, sms)"
            )
            found.append(((), problem(message)))
        # Keys this kind of turn does not declare are reported as unknown keys, not here.
        declared = ("events", "query", *cls.model_fields)
        carried = [k for k in _CARRIED if isinstance(data, dict) and k in data and k in declared]
        if carried == ["events", "query"]:
            message = "a turn carries events or a query, never both; split it into two user turns"
            found.append(((), problem(message, at="key", pos_of=("query",))))
        elif len(carried) > 1:
            message = (
                f"a turn carries at most one of events, query, task and run; this one has "
                f"{' and '.join(carried)}: split it into separate user turns"
            )
            found.append(((), problem(message, at="key", pos_of=(carried[1],))))
        if isinstance(data, dict) and "redelivers" in data and "redelivers" in declared:
            for key in (*_CARRIED, "speaker"):
                if key in data:
                    message = (
                        "a redelivery carries nothing of its own: its text, speaker, events, "
                        f"task and run are those of the turn it redelivers; remove '{key}'"
                    )
                    found.append(((), problem(message, at="key", pos_of=(key,))))
        return _with(found, handler, data)


_CARRIED = ("events", "query", "task", "run")
"""What a turn may carry, at most one of them."""


class InsertTurnDoc(_TurnRules):
    NAMES = ("inserted turn", "turn", "an inserted turn")

    role: Role
    text: Text
    source: Text | None = None
    events: Annotated[tuple[EventDoc, ...], MinLen(1)] = ()
    id: Annotated[object, REFUSED] = None
    query: Annotated[object, REFUSED] = None

    @field_validator("events")
    @classmethod
    def _lifecycle_events_only(cls, events: tuple[EventDoc, ...]) -> tuple[EventDoc, ...]:
        found = [
            (
                (i, "op"),
                problem(
                    f"inserted (pair) turns carry lifecycle events only (assert, correct, "
                    f"retract, forget), not '{e.op}': world b has no governance constructs"
                ),
            )
            for i, e in enumerate(events)
            if e.op not in FACT_OPS
        ]
        _fail(found)
        return events

    @field_validator("id", mode="before")
    @classmethod
    def _no_id(cls, value: Any) -> Any:
        raise problem(
            "inserted turns take no 'id': their ids are derived as <query turn id>~b1, "
            "~b2, ...; remove the 'id'",
            at="key",
        )

    @field_validator("query", mode="before")
    @classmethod
    def _no_query(cls, value: Any) -> Any:
        raise problem(
            "inserted (pair) turns may not carry a query; only world-a user turns do", at="key"
        )


class PairDoc(Part):
    NAMES = ("pair", "pair", "pair")

    insert: Annotated[tuple[InsertTurnDoc, ...], MinLen(1)]


class QueryDoc(_SlotDoc):
    NAMES = ("query", "query", "query")

    id: ItemId
    family: Family
    entity: Text
    predicate: Text
    scope: Text = GLOBAL_SCOPE
    as_of: Date | None = None
    gold: tuple[Canonical, ...]
    pair: PairDoc | None = None

    @field_validator("id")
    @classmethod
    def _unique_id(cls, ident: str, info: ValidationInfo) -> str:
        _register(info, "query", ident, "query ids must be unique")
        return ident

    @field_validator("gold")
    @classmethod
    def _gold(cls, gold: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        return _check_gold(gold, info)


class NeedDoc(_SlotDoc):
    NAMES = ("need", "need", "a need")

    entity: Text
    predicate: Text
    scope: Text = GLOBAL_SCOPE


class TaskDoc(Part):
    NAMES = ("task", "task", "a task")

    id: ItemId
    action: Text
    needs: Annotated[tuple[NeedDoc, ...], MinLen(1)]
    permission: Text | None = None
    deferred: Flag = False
    handle: Text | None = None
    expect: Expectation
    reasons: tuple[Reason, ...] | None = None
    args: tuple[tuple[Text, ...], ...] | None = None

    @field_validator("id")
    @classmethod
    def _unique_id(cls, ident: str, info: ValidationInfo) -> str:
        _register(info, "task", ident, "task ids must be unique")
        return ident

    @field_validator("permission")
    @classmethod
    def _declared_permission(cls, permission: str, info: ValidationInfo) -> str:
        refs = _refs(info)
        declared = refs.permissions if refs is not None else None
        if declared is not None and permission not in declared:
            raise problem(
                f"unknown permission {permission!r}; declared permissions: {listing(declared)} "
                "(schema.permissions)"
            )
        return permission

    @field_validator("reasons")
    @classmethod
    def _reasons_once(cls, reasons: tuple[str, ...]) -> tuple[str, ...]:
        found = [
            ((i,), problem(f"reason {r!r} is listed twice"))
            for i, r in enumerate(reasons)
            if r in reasons[:i]
        ]
        _fail(found)
        return reasons

    @field_validator("args")
    @classmethod
    def _one_list_per_need(
        cls, args: tuple[tuple[str, ...], ...], info: ValidationInfo
    ) -> tuple[tuple[str, ...], ...]:
        needs = info.data.get("needs")
        if needs is not None and len(args) != len(needs):
            raise problem(
                f"args has {len(args)} list(s) of values for {len(needs)} need(s); write one "
                "list per need, in the order of needs ([] for a need without values)"
            )
        return args

    @model_validator(mode="after")
    def _unique_handle(self, info: ValidationInfo) -> TaskDoc:
        handle = self.handle or f"h-{self.id}"
        seen = _context(info).get("seen", {}).get("handle")
        if seen is not None:
            if handle in seen:
                where = ("handle",) if self.handle is not None else ("id",)
                message = (
                    f"handle {handle!r} is already the handle of another task; handles must be "
                    "unique (a task's default handle is h-<task id>)"
                )
                _fail([(where, problem(message))])
            seen.add(handle)
        return self


class TurnDoc(_TurnRules):
    NAMES = ("turn", "turn", "a turn")

    id: ItemId
    role: Role
    text: Text
    source: Text | None = None
    events: Annotated[tuple[EventDoc, ...], MinLen(1)] = ()
    query: QueryDoc | None = None
    speaker: Text | None = None
    task: TaskDoc | None = None
    run: Text | None = None
    redelivers: Text | None = None
    restart: Flag = False
    distractor: DistractorKind | None = None

    @field_validator("id")
    @classmethod
    def _unique_id(cls, ident: str, info: ValidationInfo) -> str:
        _register(info, "turn", ident, "turn ids must be unique across the whole trajectory")
        return ident

    @model_validator(mode="after")
    def _distractor_carries_nothing(self) -> TurnDoc:
        """docs/method.md §16: a distractor changes no reference, so it carries nothing that
        could (an event, a query, a task or run, a redelivery, a restart), and it is a user
        turn or the assistant's reply to one."""
        if self.distractor is None:
            return self
        message = (
            "a distractor turn carries no '{}': it must leave S*, Q* and every gold unchanged "
            "(remove the key or the 'distractor')"
        )
        carried = {
            "events": self.events,
            "query": self.query,
            "task": self.task,
            "run": self.run,
            "redelivers": self.redelivers,
            "restart": self.restart,
        }
        found = [
            ((key,), problem(message.format(key), at="key")) for key, v in carried.items() if v
        ]
        if self.role == "tool":
            role = (
                "'distractor' is allowed on user and assistant turns only; this turn's role is tool"
            )
            found.append((("distractor",), problem(role, at="key")))
        if found:
            _fail(found)
        return self

    @field_validator("query", mode="before")
    @classmethod
    def _query_on_user_turns(cls, query: Any, info: ValidationInfo) -> Any:
        role = info.data.get("role")
        if role in ("assistant", "tool"):
            raise problem(
                f"queries are allowed on user turns only; this turn's role is {role}", at="key"
            )
        return query

    @field_validator("speaker", mode="before")
    @classmethod
    def _speaker_on_user_and_tool_turns(cls, speaker: Any, info: ValidationInfo) -> Any:
        if info.data.get("role") == "assistant":
            raise problem(
                "'speaker' is allowed on user and tool turns only; an assistant turn's "
                "speaker is that of the turn it answers",
                at="key",
            )
        return speaker

    @field_validator("speaker")
    @classmethod
    def _speaker_is_principal(cls, speaker: str, info: ValidationInfo) -> str:
        bad = _not_a_principal(speaker, info, "speaker")
        if bad is not None:
            raise bad
        return speaker

    @field_validator("task", "run", "redelivers", mode="before")
    @classmethod
    def _on_user_turns(cls, value: Any, info: ValidationInfo) -> Any:
        role = info.data.get("role")
        if role in ("assistant", "tool"):
            what = {"task": "tasks are", "run": "'run' is", "redelivers": "'redelivers' is"}
            raise problem(
                f"{what[str(info.field_name)]} allowed on user turns only; this turn's role "
                f"is {role}",
                at="key",
            )
        return value

    @field_validator("run")
    @classmethod
    def _runs_a_deferred_task(cls, run: str, info: ValidationInfo) -> str:
        tasks = _context(info).get("tasks")
        if tasks is None:
            return run
        entry = tasks.get(run)
        if entry is None:
            raise problem(
                f"run names task {run!r}, which is not a task of an earlier turn; it must be "
                "the id of a deferred task requested before this turn"
            )
        if not entry["deferred"]:
            raise problem(
                f"task {run!r} is not deferred: it runs at its own turn {entry['turn']}; mark "
                "it 'deferred: true' or remove this 'run'"
            )
        if entry["ran"] is not None:
            raise problem(
                f"task {run!r} already runs at turn {entry['ran']}; a deferred task runs once "
                "(write a repeated delivery of that turn with 'redelivers')"
            )
        entry["ran"] = info.data.get("id", "?")
        return run

    @field_validator("redelivers")
    @classmethod
    def _redelivers_an_earlier_user_turn(cls, original: str, info: ValidationInfo) -> str:
        turns = _context(info).get("turns")
        if turns is None:
            return original
        entry = turns.get(original)
        if entry is None:
            raise problem(
                f"redelivers names turn {original!r}, which is not an earlier turn of the "
                "trajectory; it must be the id of an earlier world-a user turn"
            )
        if entry["role"] not in ("user", "assistant", "tool"):
            return original  # the original's role is reported where it is written
        if entry["role"] != "user":
            raise problem(
                f"redelivers names turn {original!r}, a {entry['role']} turn; only a user turn "
                "is delivered again"
            )
        if entry["redelivers"] is not None:
            raise problem(
                f"turn {original!r} is itself a redelivery of {entry['redelivers']!r}; name the "
                "original turn"
            )
        if entry["query"]:
            raise problem(
                f"turn {original!r} carries a query; a query is an evaluation read, never "
                "delivered again"
            )
        text = info.data.get("text")
        if isinstance(text, str) and isinstance(entry["text"], str) and text != entry["text"]:
            raise problem(
                f"a redelivery repeats the text of the turn it redelivers exactly; turn "
                f"{original!r} says {entry['text']!r}"
            )
        return original

    @model_validator(mode="wrap")
    @classmethod
    def _register_turn(
        cls, data: Any, handler: ModelWrapValidatorHandler[TurnDoc], info: ValidationInfo
    ) -> TurnDoc:
        """Note the turn (and its task), valid or not, for the turns after it: `redelivers`
        and `run` name earlier turns and tasks only."""
        try:
            return handler(data)
        finally:
            _note_turn(data, info)

    @model_validator(mode="after")
    def _speaker_rules(self, info: ValidationInfo) -> TurnDoc:
        """Rules that need the turn's speaker: who may grant, share and run."""
        issuer = self.speaker or _principal(info)
        refs = _refs(info)
        owners = refs.permissions if refs is not None else None
        if owners and refs is not None and refs.principals is not None:
            # An owner that is no principal is reported at the permission, not at its uses.
            owners = {p: o for p, o in owners.items() if o in refs.principals}
        found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
        for i, e in enumerate(self.events):
            owner = owners.get(e.permission) if owners and e.permission else None
            if e.op in EPOCH_OPS and owner is not None and issuer is not None:
                if issuer != owner:
                    message = (
                        f"a '{e.op}' of permission {e.permission!r} is issued by its owner "
                        f"{owner!r}; this turn's speaker is {issuer!r}"
                    )
                    found.append((("events", i), problem(message)))
                elif e.to == owner:
                    message = (
                        f"{owner!r} owns permission {e.permission!r} and always holds it; a "
                        f"'{e.op}' names another principal"
                    )
                    found.append((("events", i, "to"), problem(message)))
            if e.op in SHARE_OPS and e.with_ is not None and e.with_ == issuer:
                message = (
                    f"{issuer!r} is this turn's speaker, who issues the '{e.op}'; a slot is "
                    "shared with another principal"
                )
                found.append((("events", i, "with"), problem(message)))
        tasks = _context(info).get("tasks") or {}
        entry = tasks.get(self.run) if self.run is not None else None
        if entry is not None and issuer is not None and entry["asker"] != issuer:
            message = (
                f"task {self.run!r} was requested by {entry['asker']!r} and runs at a turn of "
                f"{entry['asker']!r}; this turn's speaker is {issuer!r}"
            )
            found.append((("run",), problem(message)))
        _fail(found)
        return self


def _note_turn(data: Any, info: ValidationInfo) -> None:
    context = _context(info)
    turns, tasks = context.get("turns"), context.get("tasks")
    if turns is None or tasks is None or not isinstance(data, dict):
        return
    ident, speaker = data.get("id"), data.get("speaker")
    if not isinstance(ident, str) or ident in turns:
        return
    turns[ident] = {
        "role": data.get("role"),
        "text": data.get("text"),
        "query": "query" in data,
        "redelivers": data.get("redelivers") if isinstance(data.get("redelivers"), str) else None,
    }
    task = data.get("task")
    if isinstance(task, dict) and isinstance(task.get("id"), str) and task["id"] not in tasks:
        tasks[task["id"]] = {
            "deferred": task.get("deferred") is True,
            "turn": ident,
            "asker": speaker if isinstance(speaker, str) else _principal(info),
            "ran": None,
        }


class ConversationDoc(Part):
    NAMES = ("conversation", "conversation", "a conversation")

    id: ItemId
    date: Date
    turns: Annotated[tuple[TurnDoc, ...], MinLen(1)]

    @field_validator("id")
    @classmethod
    def _unique_id(cls, ident: str, info: ValidationInfo) -> str:
        _register(info, "conversation", ident, "conversation ids must be unique")
        return ident

    @field_validator("date")
    @classmethod
    def _in_order(cls, date: dt.date, info: ValidationInfo) -> dt.date:
        cid, context = info.data.get("id"), _context(info)
        if cid is None:
            return date
        previous, context["previous"] = context.get("previous"), (cid, date)
        if previous is not None and date < previous[1]:
            raise problem(
                f"date {date.isoformat()} is earlier than the date {previous[1].isoformat()} "
                f"of the previous conversation {previous[0]}; conversation dates must be "
                "non-decreasing"
            )
        return date


# ---------------------------------------------------------------- probes and the document


class ConflictDoc(Part):
    NAMES = ("conflict", "conflict", "conflict")

    text: Text
    value: Annotated[str, DOMAIN]
    """Checked, and a YAML date converted, by the probe, which knows the predicate."""


class ForgedDoc(Part):
    NAMES = ("forged", "forged", "forged")

    kind: ForgedKind
    value: Annotated[str, DOMAIN]
    """Checked, and a YAML date converted, by the probe, which knows the predicate and gold
    (the probe also checks that the pointer is there exactly when the kind cites a turn)."""
    pointer: Text | None = None

    @field_validator("pointer")
    @classmethod
    def _existing_turn(cls, pointer: str, info: ValidationInfo) -> str:
        turns = _context(info).get("seen", {}).get("turn")
        if turns is not None and pointer not in turns:
            raise problem(
                f"pointer names turn {pointer!r}, which is not a turn of the trajectory; it "
                "must be the id of an existing (world-a) turn"
            )
        return pointer


_FORGED_POINTER = {
    "tool": "the id of the tool turn the record cites",
    "unsupported": "the id of a user turn from which β (the text readback) does not read "
    "the forged fact",
    "stale": "the id of a user turn whose events asserted the forged fact, no longer in the "
    "reference state S* at the probe",
}
"""What the pointer of each kind that has one must name (docs/method.md §12)."""


class ProbeDoc(_SlotDoc):
    NAMES = ("probe", "probe", "a probe")

    id: ItemId
    after: Text
    family: Family
    text: Text
    entity: Text
    predicate: Text
    scope: Text = GLOBAL_SCOPE
    gold: tuple[Canonical, ...]
    conflict: ConflictDoc | None = None
    asker: Text | None = None
    forged: ForgedDoc | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _conflict_or_forged(
        cls, data: Any, handler: ModelWrapValidatorHandler[ProbeDoc], info: ValidationInfo
    ) -> ProbeDoc:
        """A probe is a conflict item or a forged-provenance probe, never both; a forgery has a
        pointer exactly when its kind cites a turn. Read from the raw mapping, so that they
        are reported whatever else is wrong with the probe."""
        found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
        forged = data.get("forged") if isinstance(data, dict) else None
        if forged is not None and data.get("conflict") is not None:
            message = (
                "a probe has at most one of 'conflict' and 'forged'; this one has both (a "
                "forged probe is not a conflict item: write two probes)"
            )
            found.append(((), problem(message, at="key", pos_of=("forged",))))
        raw: dict[Any, Any] = forged if isinstance(forged, dict) else {}
        kind, pointer = raw.get("kind"), raw.get("pointer")
        if kind == "missing" and pointer is not None:
            ident = data.get("id")
            source = f"{ident if isinstance(ident, str) else '<probe id>'}{FORGED_SUFFIX}"
            message = (
                f"a forgery of kind 'missing' has no pointer: its record cites {source!r}, "
                "which no turn has; remove 'pointer' (kinds 'tool', 'unsupported' and 'stale' "
                "cite a turn)"
            )
            found.append((("forged",), problem(message, at="key", pos_of=("pointer",))))
        elif isinstance(kind, str) and kind in _FORGED_POINTER and pointer is None:
            message = (
                f"a forgery of kind {kind!r} must have a 'pointer': {_FORGED_POINTER[kind]} "
                "(only kind 'missing' has none)"
            )
            found.append((("forged",), problem(message)))
        if forged is not None:
            bad = _not_consequential(data, info)
            if bad is not None:
                found.append((("forged",), bad))
        return _with(found, handler, data)

    @field_validator("id")
    @classmethod
    def _unique_id(cls, ident: str, info: ValidationInfo) -> str:
        _register(info, "probe", ident, "probe ids must be unique")
        return ident

    @field_validator("after")
    @classmethod
    def _existing_turn(cls, after: str, info: ValidationInfo) -> str:
        return _existing_turn(after, info)

    @field_validator("asker")
    @classmethod
    def _asker_is_principal(cls, asker: str, info: ValidationInfo) -> str:
        bad = _not_a_principal(asker, info, "asker")
        if bad is not None:
            raise bad
        return asker

    @field_validator("gold")
    @classmethod
    def _gold(cls, gold: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        return _check_gold(gold, info)

    @field_validator("conflict", mode="before")
    @classmethod
    def _conflict_date(cls, conflict: Any, info: ValidationInfo) -> Any:
        if isinstance(conflict, dict) and "value" in conflict:
            return {**conflict, "value": _iso_value(conflict["value"], info)}
        return conflict

    @field_validator("conflict")
    @classmethod
    def _conflicting(cls, conflict: ConflictDoc, info: ValidationInfo) -> ConflictDoc:
        bad = _domain(conflict.value, info, "conflict value")
        if bad is None and conflict.value in info.data.get("gold", ()):
            bad = problem(
                f"conflict value {conflict.value!r} is one of the gold values; conflicting "
                "evidence must name a value that is not gold"
            )
        if bad is not None:
            _fail([(("value",), bad)])
        return conflict

    @field_validator("forged", mode="before")
    @classmethod
    def _forged_date(cls, forged: Any, info: ValidationInfo) -> Any:
        if isinstance(forged, dict) and "value" in forged:
            return {**forged, "value": _iso_value(forged["value"], info)}
        return forged

    @field_validator("forged")
    @classmethod
    def _forging(cls, forged: ForgedDoc, info: ValidationInfo) -> ForgedDoc:
        """The forged value is a value of the slot's domain that is not gold. Whether the
        pointer is there is checked on the raw probe; which turn it may cite needs the replay
        (`place.reference.validate`)."""
        bad = _domain(forged.value, info, "forged value")
        if bad is None and forged.value in info.data.get("gold", ()):
            bad = problem(
                f"forged value {forged.value!r} is one of the gold values; a forged record "
                "must carry a value of the slot that is not gold"
            )
        if bad is not None:
            _fail([(("value",), bad)])
        return forged


def _not_consequential(data: dict[Any, Any], info: ValidationInfo) -> PydanticCustomError | None:
    """A forged probe targets the citation lock, which applies only to cons(m): its predicate
    must be consequential (`place.governance.citation.consequential_predicates`: type money,
    marked consequential, or named in a task's needs). Not checked when the predicate is
    undeclared or its declaration broken: that is reported where it is written."""
    refs, needed = _refs(info), _context(info).get("needed")
    pid, ident = data.get("predicate"), data.get("id")
    if refs is None or needed is None or not isinstance(pid, str) or pid not in refs.sound:
        return None
    declared = refs.sound[pid]
    if declared.type == "money" or declared.consequential or pid in needed:
        return None
    probe = ident if isinstance(ident, str) else "<probe id>"
    return problem(
        f"forged probe {probe!r} is on predicate {pid!r} (type {declared.type}), which is not "
        "consequential; a forged probe tests the citation lock, which applies only to "
        "consequential predicates (type money, marked 'consequential: true', or named in a "
        f"task's needs): mark {pid} 'consequential: true' or forge a record of a consequential "
        "predicate",
        at="key",
    )


def _needed(data: Any) -> frozenset[str]:
    """The predicates the tasks' needs name, read leniently from raw data (the tasks of
    redeliveries are their originals', as in `Trajectory.tasks`)."""

    def items(node: Any, key: str) -> list[Any]:
        part = node.get(key) if isinstance(node, dict) else None
        return [i for i in part if isinstance(i, dict)] if isinstance(part, list) else []

    return frozenset(
        need["predicate"]
        for conv in items(data, "conversations")
        for turn in items(conv, "turns")
        if "redelivers" not in turn
        for need in items(turn.get("task"), "needs")
        if isinstance(need.get("predicate"), str)
    )


def _existing_turn(after: str, info: ValidationInfo) -> str:
    turns = _context(info).get("seen", {}).get("turn")
    if turns is not None and after not in turns:
        raise problem(
            f"'after' names turn {after!r}, which is not a turn of the trajectory; it must "
            "be the id of an existing (world-a) turn"
        )
    return after


class CompactionDoc(_SlotDoc):
    NAMES = ("compaction", "compaction", "a compaction")

    after: Text
    entity: Text
    scope: Text = GLOBAL_SCOPE

    @field_validator("after")
    @classmethod
    def _existing_turn(cls, after: str, info: ValidationInfo) -> str:
        return _existing_turn(after, info)


class TrajectoryDoc(Part):
    NAMES = ("the top level", "the trajectory", "the document")

    format: Format
    id: TrajectoryId
    title: Text | None = None
    principal: Text
    principals: tuple[Text, ...] | None = None
    schema_: SchemaDoc = Field(alias="schema")
    conversations: Annotated[tuple[ConversationDoc, ...], MinLen(1)]
    probes: tuple[ProbeDoc, ...] = ()
    compactions: tuple[CompactionDoc, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _read_declarations(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(info.context, dict):
            kinds = ("conversation", "turn", "query", "probe", "task", "handle")
            info.context.update(
                refs=Refs.read(data),
                seen={kind: set() for kind in kinds},
                principal=data.get("principal") if isinstance(data, dict) else None,
                principals_declared=isinstance(data, dict) and "principals" in data,
                turns={},
                tasks={},
                needed=_needed(data),
            )
        return data

    @field_validator("principals")
    @classmethod
    def _principals_are_entities(
        cls, principals: tuple[str, ...], info: ValidationInfo
    ) -> tuple[str, ...]:
        refs, principal = _refs(info), info.data.get("principal")
        found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
        for i, name in enumerate(principals):
            if refs is not None and name not in refs.entities:
                message = (
                    f"principal {name!r} is not an entity of the schema; declared entities: "
                    f"{listing(refs.entities)} (every principal is a declared entity)"
                )
                found.append(((i,), problem(message)))
            elif name in principals[:i]:
                found.append(((i,), problem(f"principal {name!r} is listed twice")))
        if principal is not None and principal not in principals:
            message = (
                f"principals must include the principal {principal!r} (the default speaker "
                "and asker)"
            )
            found.append(((), problem(message)))
        _fail(found)
        return principals

    @model_validator(mode="after")
    def _deferred_tasks_run(self) -> TrajectoryDoc:
        """A deferred task is decided at the turn that runs it: it must have one."""
        ran = {t.run for c in self.conversations for t in c.turns if t.run is not None}
        found: list[tuple[tuple[Any, ...], PydanticCustomError]] = []
        for ci, conv in enumerate(self.conversations):
            for ti, turn in enumerate(conv.turns):
                task = turn.task
                if task is not None and task.deferred and task.id not in ran:
                    message = (
                        f"deferred task {task.id!r} never runs; add a later user turn of its "
                        f"asker with 'run: {task.id}' (a deferred task is decided where it runs)"
                    )
                    loc = ("conversations", ci, "turns", ti, "task")
                    found.append((loc, problem(message, at="key", pos_of=("deferred",))))
        _fail(found)
        return self

    @field_validator("principal")
    @classmethod
    def _principal_is_entity(cls, principal: str, info: ValidationInfo) -> str:
        refs = _refs(info)
        if refs is not None and principal not in refs.entities:
            raise problem(
                f"principal {principal!r} is not an entity of the schema; declared entities: "
                f"{listing(refs.entities)} (schema.entities must include the principal)"
            )
        return principal

    def to_trajectory(self, source_path: str, sha256: str) -> Trajectory:
        """The immutable in-memory model (derived ids, defaults resolved)."""
        s = self.schema_
        schema = Schema(
            entities={eid: Entity(eid, e.name, e.aliases) for eid, e in s.entities.items()},
            scopes={sid: Scope(sid, sc.aliases) for sid, sc in s.scopes.items()},
            predicates={
                pid: Predicate(
                    id=pid,
                    type=p.type,
                    cardinality=p.cardinality,
                    keywords=p.keywords,
                    values=dict(p.values),
                    default_scope=p.default_scope,
                    template=p.template,
                    consequential=p.consequential,
                    core=p.core,
                )
                for pid, p in s.predicates.items()
            },
            permissions={pid: Permission(pid, p.owner) for pid, p in s.permissions.items()},
        )
        built: dict[str, Turn] = {}  # world-a turns so far, for redeliveries
        conversations = []
        for c in self.conversations:
            turns = []
            for t in c.turns:
                turn = _turn(t, t.id, c.date)
                if t.redelivers is not None:
                    turn = _redelivery(turn, built[t.redelivers])
                built[turn.id] = turn
                turns.append(turn)
            conversations.append(Conversation(c.id, c.date, tuple(turns)))
        return Trajectory(
            id=self.id,
            principal=self.principal,
            schema=schema,
            conversations=tuple(conversations),
            probes=tuple(
                Probe(
                    p.id,
                    p.after,
                    p.family,
                    p.text,
                    p.entity,
                    p.predicate,
                    p.scope,
                    p.gold,
                    Conflict(p.conflict.text, p.conflict.value) if p.conflict else None,
                    p.asker,
                    Forged(p.forged.kind, p.forged.value, p.forged.pointer) if p.forged else None,
                )
                for p in self.probes
            ),
            title=self.title,
            source_path=source_path,
            sha256=sha256,
            principals=self.principals or (),
            compactions=tuple(Compaction(c.after, c.entity, c.scope) for c in self.compactions),
            distractors={
                t.id: t.distractor
                for c in self.conversations
                for t in c.turns
                if isinstance(t, TurnDoc) and t.distractor is not None
            },
        )


def _turn(doc: TurnDoc | InsertTurnDoc, tid: str, date: dt.date) -> Turn:
    events = tuple(
        Event(
            f"{tid}#{i}",
            e.op,
            e.entity or "",
            e.predicate or "",
            e.scope,
            e.value,
            e.valid_from,
            e.valid_until,
            e.with_,
            e.permission,
            e.to,
            e.task,
        )
        for i, e in enumerate(doc.events, 1)
    )
    if not isinstance(doc, TurnDoc):
        return Turn(tid, doc.role, doc.text, doc.source, events)
    q = doc.query
    query = None
    if q is not None:
        insert = None
        if q.pair is not None:
            insert = tuple(_turn(t, f"{tid}~b{i}", date) for i, t in enumerate(q.pair.insert, 1))
        query = Query(
            q.id, q.family, q.entity, q.predicate, q.scope, q.as_of or date, q.gold, insert
        )
    task = None
    if doc.task is not None:
        k = doc.task
        task = Task(
            id=k.id,
            action=k.action,
            needs=tuple(Slot(n.entity, n.predicate, n.scope) for n in k.needs),
            expect=k.expect,
            permission=k.permission,
            deferred=k.deferred,
            handle=k.handle or f"h-{k.id}",
            reasons=k.reasons,
            args=k.args,
        )
    return Turn(
        tid,
        doc.role,
        doc.text,
        doc.source,
        events,
        query,
        speaker=doc.speaker,
        task=task,
        run=doc.run,
        redelivers=doc.redelivers,
        restart=doc.restart,
    )


def _redelivery(turn: Turn, original: Turn) -> Turn:
    """A redelivery carries its original's speaker, events (ids included), task and run."""
    return replace(
        turn,
        speaker=original.speaker,
        events=original.events,
        task=original.task,
        run=original.run,
    )


def parse(data: Any) -> TrajectoryDoc:
    """Validate plain data (from `yaml_source`) as a trajectory; raises ValidationError."""
    return TrajectoryDoc.model_validate(data, context={})
