"""The package's layers, asserted from its source: no module imports from a layer above its
own, and the packages import one another without cycles.

records → trajectory → reference/lexicon → memory/runtime → governance → runner → report/cli
(issue #14). Every import counts, lazy ones inside functions and `TYPE_CHECKING` ones too: a
lazy import is still a dependency, only a later one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "place"

LAYERS: list[tuple[str, ...]] = [
    # 0. Foundations: the records format, errors and small utilities every layer may use.
    ("__init__", "data", "records", "errors", "atomic", "faults", "timing", "determinism"),
    # The records archive of a run (reads records, writes atomically).
    ("archive",),
    # Declarations every layer may use: named registries and declared parameters.
    ("registry", "params", "mappings"),
    # 1. The public input format.
    ("trajectory",),
    # 2. What the trajectory means: the reference replay, the lexicon, eligibility, β.
    ("reference", "lexicon", "eligibility", "readback"),
    # 3. The stack under governance: memory (Mem0 on Qdrant), LLM runtimes, the answer
    #    agent, and the trajectory generator (which checks what it writes with layer 2).
    ("memory", "runtime", "agent", "generate"),
    # 4. Governance and what is built from it: certifier/authorizer, producers, read
    #    policies, the design that crosses them, and the metrics over records.
    ("governance", "producers", "policies", "design", "metrics"),
    # 5. Running the experiment (and the model-free drift experiment of §13).
    ("runner", "drift"),
    # 6. Reading results and the command line.
    ("report", "results", "validation", "view", "cli", "__main__"),
]
LAYER_OF = {unit: n for n, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    """`place.runner.stack` -> `runner`; `place` -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported `place.*` module) for every import in the file, wherever it is."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("place")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "place" or target.startswith("place."):
                if target == "place":  # `from place import x`: a module, or a name of place
                    out += [(node.lineno, _from_place(a.name)) for a in node.names]
                else:
                    out.append((node.lineno, target))
    return out


def _from_place(name: str) -> str:
    is_module = (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()
    return f"place.{name}" if is_module else "place"


SOURCES = sorted(PACKAGE.rglob("*.py"))
EDGES = [
    (path, line, unit_of(module_name(path)), unit_of(target))
    for path in SOURCES
    for line, target in imports_of(path)
]


def test_every_package_and_module_has_a_layer() -> None:
    units = {unit_of(module_name(p)) for p in SOURCES}
    assert units - set(LAYER_OF) == set(), "give these a layer in LAYERS"
    assert set(LAYER_OF) - units == set(), "LAYERS names units that do not exist"


def test_the_import_scan_sees_lazy_and_type_checking_imports() -> None:
    """The scan is not vacuous: it finds imports at every depth of the source."""
    assert len(EDGES) > 200
    scanned = {(unit_of(module_name(p)), target) for p, _, _, target in EDGES}
    assert ("policies", "memory") in scanned  # a TYPE_CHECKING import in policies/registry.py
    assert ("cli", "report") in scanned  # lazy imports inside the command functions


@pytest.mark.parametrize(("layer", "units"), list(enumerate(LAYERS)), ids=lambda x: str(x))
def test_no_module_imports_from_a_layer_above_its_own(layer: int, units: tuple[str, ...]) -> None:
    upward = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {source} (layer {layer}) imports "
        f"{target} (layer {LAYER_OF[target]})"
        for path, line, source, target in EDGES
        if source in units and LAYER_OF[target] > layer
    ]
    assert upward == []


def test_packages_import_one_another_without_cycles() -> None:
    graph: dict[str, set[str]] = {}
    for _, _, source, target in EDGES:
        if source != target:
            graph.setdefault(source, set()).add(target)
    seen: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(unit: str, path: list[str]) -> None:
        seen[unit] = 1
        for nxt in sorted(graph.get(unit, ())):
            if seen.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*path, unit, nxt]))
            if nxt not in seen:
                visit(nxt, [*path, unit])
        seen[unit] = 2

    for unit in sorted(graph):
        if unit not in seen:
            visit(unit, [])


MODULES = {module_name(p) for p in SOURCES}


def _module(target: str) -> str | None:
    """The module an import names: itself, or for `from place.a import b` where `place.a.b`
    is not a module, `place.a`."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` (a path that ends where it started), or None."""
    seen: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, path: list[str]) -> list[str] | None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in seen and (found := visit(nxt, [*path, node])):
                return found
        seen[node] = 2
        return None

    for node in sorted(graph):
        if node not in seen and (found := visit(node, [])):
            return found
    return None


def module_imports_of(path: Path) -> set[str]:
    """The `place` modules a file imports: `from place.a import b` names `place.a.b` when
    that is a module, else `place.a`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for a in node.names:
                out.add(_module(f"{node.module}.{a.name}") or "")
        elif isinstance(node, ast.Import):
            out |= {_module(a.name) or "" for a in node.names}
    return {m for m in out if m.startswith("place")}


def test_modules_import_one_another_without_cycles() -> None:
    """Within a package too: no module imports (at any depth, lazily or not) a module that
    imports it back, directly or through others. A package importing its own modules in
    `__init__` is not an edge back from them, since they name the module they use."""
    graph: dict[str, set[str]] = {}
    for path in SOURCES:
        source = module_name(path)
        graph[source] = module_imports_of(path) - {source}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
