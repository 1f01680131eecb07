"""Named registries: one decorated definition registers a producer, a read policy, an LLM
runtime or an endpoint under one name (docs/extending.md).

A `Registry[T]` maps names to declarations of one kind. Everything that lists, checks or
builds that kind (the run configuration and its checks, `docs/configuration.md`, the design,
the tables) reads the registry, so an addition is one module with one decorated definition.
A separate package registers through an entry point of the registry's group (for example
`place.policies`): its module is imported the first time the registry is read, and its
decorators do the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from place.errors import PlaceError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names to declarations of one kind, in registration order."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        """What the registry holds, in words ("read policy"), for messages."""
        self.group = group
        """The entry-point group through which other packages register (`place.policies`)."""
        self._items: dict[str, T] = {}
        self._plugins_loaded = False
        self.version = 0
        """Bumped on every change, so that what is derived from the registry (config
        schemas, validators) can tell it is stale."""

    # -- registering ---------------------------------------------------------------------

    def add(self, name: str, item: T) -> T:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        self.version += 1
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of `add`."""

        def decorate(item: T) -> T:
            return self.add(name, item)

        return decorate

    def remove(self, name: str) -> T:
        item = self._items.pop(name)
        self.version += 1
        return item

    @contextmanager
    def scoped(self) -> Iterator[Registry[T]]:
        """Registrations made inside the block are undone when it ends (tests register their
        own policies, producers and runtimes without leaking them into other tests)."""
        self._load_plugins()
        before = dict(self._items)
        try:
            yield self
        finally:
            self._items = before
            self.version += 1

    # -- reading -------------------------------------------------------------------------

    def _load_plugins(self) -> None:
        # Once per process, on first read: an installed package that declares an entry point
        # in this group is imported, and its decorators register into this registry.
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            try:
                ep.load()
            except Exception as exc:  # a broken plugin must name itself, not crash a run
                raise PlaceError(
                    f"entry point {ep.name} = {ep.value} (group {self.group}) failed to load: "
                    f"{type(exc).__name__}: {exc}"
                ) from None

    def names(self) -> tuple[str, ...]:
        self._load_plugins()
        return tuple(self._items)

    def items(self) -> list[tuple[str, T]]:
        self._load_plugins()
        return list(self._items.items())

    def get(self, name: str) -> T | None:
        self._load_plugins()
        return self._items.get(name)

    def __getitem__(self, name: str) -> T:
        item = self.get(name)
        if item is None:
            raise PlaceError(
                f"unknown {self.kind} {name!r}; registered: {', '.join(self._items) or 'none'}"
            )
        return item

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._items)})"


F = TypeVar("F")
FactoryT = TypeVar("FactoryT", bound=Callable[..., Any])


class Component(Generic[F]):
    """A write producer or read policy as declared: its factory, its parameter set, whether
    its time counts as governance overhead, and its display name in condition names."""

    def __init__(
        self,
        kind: str,
        name: str,
        factory: F,
        params: type | None,
        governance: bool,
        display: str | None,
        max_exposed_chars: Callable[[Any], int | None] | None = None,
        llm: bool = False,
    ) -> None:
        from place.params import check_params_class

        check_params_class(f"{kind} {name!r}", params)
        self.kind = kind
        self.name = name
        self.factory = factory
        self.params = params
        """A dataclass of `Annotated` fields (`place.params`), the `design.<name>` section of
        the run configuration; None when the component takes no parameters."""
        self.governance = governance
        """Its time counts as governance overhead (manifest `timings.governance`)."""
        self.display = display or name
        """How condition names spell it (`Append/QASC`); the registered name by default."""
        self.llm = llm
        """Producers only: it writes through the LLM (Mem0's pipeline), so a run that keeps it
        needs the model server even when no answer is asked (`experiment=state`, docs/method.md
        §15)."""
        self.max_exposed_chars = max_exposed_chars
        """Read policies only: from its parameter set, the most characters of record text one
        read exposes, when that, not the budget k, bounds what the answer prompt shows
        (fullcontext); None: it exposes at most k items. The configuration check sizes the
        answer prompt by it (`place.runner.checks.prompt_needs`)."""

    def make_params(self, values: Any = None) -> Any:
        """Its parameter set from config values, checked (None without parameters)."""
        from place.params import make_params

        return make_params(f"design.{self.name}", self.params, values)

    def __repr__(self) -> str:
        return f"Component({self.kind} {self.name!r})"


def component_decorator(
    registry: Registry[Component[Any]],
    name: str,
    *,
    params: type | None = None,
    governance: bool = False,
    display: str | None = None,
    max_exposed_chars: Callable[[Any], int | None] | None = None,
    llm: bool = False,
) -> Callable[[FactoryT], FactoryT]:
    """The decorator behind `register_policy` and `register_producer`: declares the decorated
    factory as the component `name` of `registry` and returns it unchanged."""

    def decorate(factory: FactoryT) -> FactoryT:
        registry.add(
            name,
            Component(
                registry.kind,
                name,
                factory,
                params,
                governance,
                display,
                max_exposed_chars,
                llm,
            ),
        )
        return factory

    return decorate
