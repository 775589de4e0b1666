"""ARCHITECTURE.md's flow is true of the import graph: no cycle between modules (imports inside
functions included), and each layer imports only what the page says it may. Read from the source
with ``ast`` (nothing is imported), so a new import that breaks a layer fails here by name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"


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
    """``streamwarden.facts.iceberg`` -> ``facts``; ``streamwarden.run`` -> ``run``."""
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
    assert "streamwarden.run" in GRAPH["streamwarden.gate"]
    assert "streamwarden.facts.source" in GRAPH["streamwarden.facts.iceberg"]
    assert "streamwarden.engine.rego" in GRAPH["streamwarden.engine.policyset"]  # inside a function


def test_no_import_cycle() -> None:
    assert _cycles() == []


# area -> areas it must never import (ARCHITECTURE.md, "The flow")
FORBIDDEN = {
    "engine": {"facts", "report", "run", "cli", "contracts", "gate", "evidence", "diff", "findings"},
    "facts": {"engine", "report", "run", "cli", "findings", "gate", "evidence", "diff", "waivers"},
    "flink": {"facts", "engine", "report", "run", "cli", "contracts", "iceberg"},
    "iceberg": {"facts", "engine", "report", "run", "cli", "contracts", "flink"},
    "report": {"run", "cli", "facts", "pullrequest", "git", "cache", "contracts"},
    "run": {"report", "cli"},
    "gate": {"report", "cli"},
    "evidence": {"report", "cli"},
    "diff": {"report", "cli"},
    "init": {"report", "cli"},
    "cli": {"flink", "iceberg", "contracts", "yamlsafe", "inputdoc", "pullrequest"},
}


@pytest.mark.parametrize("area", sorted(FORBIDDEN))
def test_each_layer_imports_only_what_the_architecture_allows(area: str) -> None:
    wrong = sorted(
        f"{module} imports {dep}"
        for module, deps in GRAPH.items()
        if _area(module) == area
        for dep in deps
        if _area(dep) in FORBIDDEN[area]
    )
    assert wrong == []


def test_nothing_outside_the_command_line_imports_it() -> None:
    wrong = sorted(
        f"{m} imports {d}" for m, deps in GRAPH.items() if _area(m) != "cli" for d in deps if _area(d) == "cli"
    )
    assert wrong == []
