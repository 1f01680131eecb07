"""Declared parameters: how a configurable thing states its keys, bounds, defaults and meaning.

A parameter set is a dataclass whose fields are `Annotated` with their value rules:
`annotated_types` bounds (`Ge`, `Gt`, `Le`, `Lt`), `Rule` markers for anything else, and a
`Doc` saying what the key changes. The run configuration (`place.runner.config`) is written
this way, and so is every read policy's or producer's parameter set (`params=` of
`register_policy` / `register_producer`). From the one declaration:

- Hydra/OmegaConf enforce the plain type while composing (they strip `Annotated`);
- pydantic checks every value against the bounds and rules before anything runs
  (`place.runner.checks`), and again when a component is built (`make_params`);
- `docs/configuration.md` is generated from the docs, bounds and defaults.

This module sits at the bottom of the package so that producers and policies (layer 4) can
declare parameters without importing the runner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from place.errors import PlaceError


@dataclass(frozen=True)
class Doc:
    """What a key changes (for docs/configuration.md)."""

    text: str


class Rule:
    """A value rule beyond the type and numeric bounds. pydantic runs `check` after the type
    check; `allowed` says, for messages and the docs, which values pass."""

    allowed: str = "a valid value"

    def check(self, value: Any) -> bool:
        raise NotImplementedError

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema

        def validate(value: Any) -> Any:
            if not self.check(value):
                raise ValueError(f"must be {self.allowed}")
            return value

        return core_schema.no_info_after_validator_function(validate, handler(source))


class OneOf(Rule):
    """A string among fixed choices (OmegaConf cannot type a `Literal`, so the key is a `str`
    and this rule names what it may be)."""

    def __init__(self, *choices: str) -> None:
        self.choices = choices
        self.allowed = "one of: " + ", ".join(choices)

    def check(self, value: Any) -> bool:
        return value in self.choices


def check_params_class(owner: str, params: type | None) -> None:
    """Refuse, at registration, a parameter set that is not a dataclass whose every field
    has a default (a design section must compose with no value given)."""
    if params is None:
        return
    if not (isinstance(params, type) and dataclasses.is_dataclass(params)):
        raise TypeError(f"{owner}: params must be a dataclass, got {params!r}")
    for f in dataclasses.fields(params):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise TypeError(f"{owner}: parameter {f.name!r} has no default")


def config_node(params: type) -> type:
    """The parameter set as a Hydra config node: the same fields, annotations and defaults in
    a dataclass that is not frozen (OmegaConf makes a frozen dataclass a read-only node, which
    no override could change); a set that is not frozen is its own node."""
    if not params.__dataclass_params__.frozen:  # type: ignore[attr-defined]  # reason: every dataclass has __dataclass_params__; typeshed does not declare it
        return params
    fields = [
        (f.name, f.type, dataclasses.field(default=f.default, default_factory=f.default_factory))
        if f.default_factory is not dataclasses.MISSING
        else (f.name, f.type, dataclasses.field(default=f.default))
        for f in dataclasses.fields(params)
    ]
    return dataclasses.make_dataclass(
        params.__name__, fields, namespace={"__module__": params.__module__}
    )


def make_params(owner: str, params: type | None, values: Mapping[str, Any] | None) -> Any:
    """An instance of the parameter set from config values, checked against its rules
    (None when the component declares no parameters). The run's checks refuse bad values
    before anything runs; this is the constructor guarding its own input."""
    if params is None:
        if values:
            raise PlaceError(f"{owner} takes no parameters; got {', '.join(values)}")
        return None
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(params).validate_python(dict(values or {}))
    except ValidationError as exc:
        problems = [
            f"{owner}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        ]
        raise PlaceError("; ".join(problems)) from None


def params_dict(params: Any) -> dict[str, Any] | None:
    """A parameter set as a plain mapping (for the manifest); None for no parameters."""
    return None if params is None else dataclasses.asdict(params)
