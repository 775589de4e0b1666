"""ARCHITECTURE.md's layers are true of the import graph: no cycle between modules (imports inside
functions included), and each package imports only the packages its section "Layers" puts below
it. The layers are read from that page, so the page and this test cannot drift apart. Read from
the source with ``ast`` (nothing is imported), so a new import that breaks a layer fails here by
name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from tests.conftest import REPO

SRC = REPO / "src"


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in sorted((SRC / "streamwarden").rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Every streamwarden module ``name`` imports, at the top or inside a function."""
    out: set[str] = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in out if m in MODULES and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _area(module: str) -> str:
    """``streamwarden.facts.iceberg`` -> ``facts``; ``streamwarden`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _cycles() -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read() -> None:
    # the reader sees the edges it must (a broken reader would pass every rule below)
    assert "streamwarden.check.run" in GRAPH["streamwarden.verbs.gate"]
    assert "streamwarden.facts.source" in GRAPH["streamwarden.facts.iceberg"]
    assert "streamwarden.engine.rego" in GRAPH["streamwarden.engine.policyset"]  # inside a function


def test_no_import_cycle() -> None:
    assert _cycles() == []


ARCHITECTURE = SRC.parent / "ARCHITECTURE.md"


def _layers() -> tuple[list[list[str]], dict[str, set[str]]]:
    """ARCHITECTURE.md's "Layers" block: one line per layer, top first, peers separated by ``|``;
    then ``only PACKAGE: A, B`` lines narrowing what one package may import."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    layers: list[list[str]] = []
    only: dict[str, set[str]] = {}
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("only "):
            package, allowed = line[len("only ") :].split(":", 1)
            only[package.strip()] = {a.strip() for a in allowed.split(",") if a.strip()}
        elif line:
            layers.append([p.strip() for p in line.split("|")])
    return layers, only


LAYERS, ONLY = _layers()
RANK = {package: i for i, layer in enumerate(LAYERS) for package in layer}


def test_every_package_has_a_layer() -> None:
    packages = {_area(m) for m in MODULES} - {""}
    assert sorted(packages - set(RANK)) == []
    assert sorted(set(RANK) - packages) == []
    assert len(LAYERS) >= 8  # the page was read, not an empty block


def test_the_package_root_holds_packages_only() -> None:
    assert sorted(m for m in MODULES if m.count(".") == 1 and not (SRC / m.replace(".", "/")).is_dir()) == []


@pytest.mark.parametrize("package", sorted(RANK))
def test_each_package_imports_only_the_layers_below_it(package: str) -> None:
    wrong = sorted(
        f"{module} imports {dep}"
        for module, deps in GRAPH.items()
        if _area(module) == package
        for dep in deps
        if _area(dep) not in ("", package) and RANK[_area(dep)] <= RANK[package]
    )
    assert wrong == []


@pytest.mark.parametrize("package", sorted(ONLY))
def test_a_narrowed_package_imports_only_what_it_names(package: str) -> None:
    wrong = sorted(
        f"{module} imports {dep}"
        for module, deps in GRAPH.items()
        if _area(module) == package
        for dep in deps
        if _area(dep) not in ("", package) and _area(dep) not in ONLY[package]
    )
    assert wrong == []


def test_a_layer_rule_fails_on_an_upward_import() -> None:
    # the rule is not vacuous: an import of the command line from the base would be caught
    assert RANK["cli"] < RANK["check"] < RANK["core"]


def _check_order() -> list[str]:
    """The modules of ``check/`` in the order its row of ARCHITECTURE.md's package table names them,
    up to "each imports only the ones after it"; its ``cache/`` package comes after all of them."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    row = text.split("| `check/` |", 1)[1].split("each imports only the ones after it", 1)[0]
    names = list(dict.fromkeys(re.findall(r"`([a-z_]+)\.py`", row)))
    return [f"streamwarden.check.{n}" for n in names]


CHECK_ORDER = _check_order()


def _check_rank(module: str) -> int:
    if module.startswith("streamwarden.check.cache"):
        return len(CHECK_ORDER)
    return CHECK_ORDER.index(module)


def test_the_check_row_names_every_module_of_check() -> None:
    own = {m for m in MODULES if _area(m) == "check" and not m.startswith("streamwarden.check.cache")}
    assert sorted(own - {"streamwarden.check"}) == sorted(CHECK_ORDER)
    assert CHECK_ORDER[0] == "streamwarden.check.run"  # the page was read


def test_a_check_module_imports_only_the_ones_after_it() -> None:
    # run -> workers -> runcache -> evaluation -> context -> options -> cache/: one run's steps, in order
    wrong = sorted(
        f"{module} imports {dep}"
        for module, deps in GRAPH.items()
        if _area(module) == "check" and module != "streamwarden.check"
        for dep in deps
        if _area(dep) == "check"
        and dep != "streamwarden.check"
        and _check_rank(dep) <= _check_rank(module)
        and not (dep.startswith("streamwarden.check.cache") and module.startswith("streamwarden.check.cache"))
    )
    assert wrong == []
