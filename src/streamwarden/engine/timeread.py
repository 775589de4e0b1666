"""Where a policy file may read the time, and which packages it may read the rules of: from the
syntax tree regorus parses, for the result cache (``check/cache/``), which asks the engine what an
evaluation executed.

A policy has one time, ``input.now_ms`` (the built-ins that would give another are refused in
custom files: policyset.FORBIDDEN_CALLS). A *read site* is an expression that may reach it:

- ``input.now_ms`` or ``input["now_ms"]``;
- ``input`` indexed with anything but a constant (``input[k]``, however ``k`` is computed);
- ``input`` as a value of its own (``some k, v in input``, ``walk(input, ...)``, ``f(input)``,
  ``x := input``, ``object.get(input, ...)``): whatever receives it can reach every field;
- a name an import binds to ``input`` or to ``input.now_ms`` (``import input.now_ms as t``).

``input.contract.x`` and every other constant path that does not start with ``now_ms`` is no read
site: the time is a top-level field of the document. The analysis is deliberately coarse where
it cannot be sure (a local variable that happens to be called like an import alias counts), never
the other way: a file with no read site cannot have read the time, whatever its text spells.

A read site is reported as the line range of what the engine marks when it runs it: the innermost
statement of a rule body (comprehensions and ``every`` included) that holds it, or the whole rule
for one in a rule's head or ``else`` value. regorus's coverage marks the line of every expression
it evaluates; evaluating a statement evaluates one of its expressions, so a statement that ran has
a marked line in its range, and one that did not run read nothing.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

NOW_FIELD = "now_ms"

LineRange = tuple[int, int]


@dataclass(frozen=True)
class Reads:
    """What a module may read: the line ranges of its time read sites (``now``), and the constant
    prefixes of the ``data`` paths it references (``refs``: ``streamwarden.lib``, or ``""`` for
    ``data`` itself or indexed with a computed key)."""

    now: tuple[LineRange, ...]
    refs: tuple[str, ...]


class _Lines:
    """Byte offsets (regorus's spans) to line numbers."""

    def __init__(self, source: str) -> None:
        data = source.encode("utf-8", "surrogatepass")
        self._starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
        self.count = len(self._starts)

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)


def analyze(module: dict[str, Any], source: str) -> Reads:
    """The read sites and ``data`` references of one parsed module (``get_ast_as_json``'s
    ``ast``). Raises LookupError, TypeError or ValueError on a tree it cannot read."""
    lines = _Lines(source)
    whole = {"input"}  # names that stand for the whole input document
    now_names: set[str] = set()  # names bound to input.now_ms (or below it)
    data_names: dict[str, str] = {}  # import alias -> data path prefix
    refs: set[str] = set()
    whole_file = False
    for imp in module.get("imports") or []:
        names = ref_names(imp["refr"])
        alias = _alias(imp, source)
        if names is None:  # an import path with a computed part: no longer a constant path
            whole_file = True
            continue
        if names[0] == "input":
            bound = alias or names[-1]
            if len(names) == 1:
                whole.add(bound)
            elif names[1] == NOW_FIELD:
                now_names.add(bound)
        elif names[0] == "data":
            prefix = ".".join(names[1:])
            refs.add(prefix)
            data_names[alias or names[-1]] = prefix
    ranges: list[LineRange] = []
    for rule in module["rules"]:
        _, body = next(iter(rule.items()))
        unit = _range(body["span"], lines)
        for kind, at in _sites(body, unit, whole, now_names, data_names, lines):
            if kind == "now":
                ranges.append(at)
            else:
                refs.add(kind[len("data:") :])
    if whole_file:
        ranges = [(1, lines.count)]
    return Reads(now=tuple(sorted(set(ranges))), refs=tuple(sorted(refs)))


def _range(span: dict[str, Any], lines: _Lines) -> LineRange:
    first = int(span["line"])
    last = lines.line(max(int(span["end"]) - 1, int(span["start"])))
    if lines.line(int(span["start"])) != first:  # offsets this code does not read as regorus does
        raise ValueError("span offsets")
    return (first, max(first, last))


def _sites(
    node: Any,
    unit: LineRange,
    whole: set[str],
    now_names: set[str],
    data_names: dict[str, str],
    lines: _Lines,
) -> Iterator[tuple[str, LineRange]]:
    """("now", range) for each read site under ``node``, ("data:PREFIX", range) for each data
    reference; ``unit`` is the range of the innermost statement (or rule) around it."""
    if isinstance(node, list):
        for item in node:
            yield from _sites(item, unit, whole, now_names, data_names, lines)
        return
    if not isinstance(node, dict):
        return
    if "literal" in node and "span" in node:  # a statement of a query: the unit the engine marks
        unit = _range(node["span"], lines)
    if len(node) == 1:
        kind, body = next(iter(node.items()))
        if kind in ("RefDot", "RefBrack") and isinstance(body, dict):
            chain: list[tuple[str, dict[str, Any]]] = []  # outermost first
            base: Any = node
            while isinstance(base, dict) and len(base) == 1 and ("RefDot" in base or "RefBrack" in base):
                k, b = next(iter(base.items()))
                chain.append((k, b))
                base = b["refr"]
            chain.reverse()  # as applied: the first accessor of the base first
            root = _var(base)
            if root is not None and root in whole:
                key = _key(*chain[0])
                if key is None or key == NOW_FIELD:
                    yield ("now", unit)
            elif root is not None and root in now_names:
                yield ("now", unit)
            elif root == "data" or (root is not None and root in data_names):
                yield (f"data:{_data_prefix(root, chain, data_names)}", unit)
            elif root is None:  # a call's or a literal's value, indexed
                yield from _sites(base, unit, whole, now_names, data_names, lines)
            for k, b in chain:
                if k == "RefBrack":
                    yield from _sites(b["index"], unit, whole, now_names, data_names, lines)
            return
        if kind == "Call" and isinstance(body, dict) and _object_get_of(body, whole):
            # object.get(input, KEY, default) with a constant KEY (or a path whose first key is
            # constant) reads that field only, as input.KEY does
            params = body["params"]
            key = _first_key(params[1])
            if key is None or key == NOW_FIELD:
                yield ("now", unit)
            yield from _sites(params[1:], unit, whole, now_names, data_names, lines)
            return
        if kind == "Var" and isinstance(body, dict):
            name = body.get("value")
            if name in whole or name in now_names:
                yield ("now", unit)
            elif name == "data":
                yield ("data:", unit)
            elif name in data_names:
                yield (f"data:{data_names[name]}", unit)
            return
    for value in node.values():
        yield from _sites(value, unit, whole, now_names, data_names, lines)


def _key(kind: str, body: dict[str, Any]) -> str | None:
    """The constant key of ``x.key`` / ``x["key"]``; None for a computed index."""
    if kind == "RefDot":
        return str(body["field"][1])
    index = body.get("index")
    if isinstance(index, dict) and "String" in index:
        return str(index["String"]["value"])
    return None


def _object_get_of(call: dict[str, Any], whole: set[str]) -> bool:
    """``object.get(input, ...)`` (three arguments, the first the whole input)."""
    params = call.get("params")
    return (
        ref_names(call.get("fcn")) == ["object", "get"]
        and isinstance(params, list)
        and len(params) == 3
        and _var(params[0]) in whole
    )


def _first_key(node: Any) -> str | None:
    """A constant key (``"facts"``), or the first of a path of keys (``["facts", "deployment"]``)."""
    if isinstance(node, dict) and len(node) == 1:
        kind, body = next(iter(node.items()))
        if kind == "String":
            return str(body["value"])
        if kind == "Array" and body.get("items"):
            return _first_key(body["items"][0])
    return None


def _var(node: Any) -> str | None:
    if isinstance(node, dict) and len(node) == 1 and "Var" in node:
        return str(node["Var"]["value"])
    return None


def _data_prefix(root: str, chain: list[tuple[str, dict[str, Any]]], data_names: dict[str, str]) -> str:
    """The constant part of a reference rooted at ``data`` (or at an alias of a data path), up to
    its first computed index."""
    parts = [] if root == "data" else [data_names[root]]
    for kind, body in chain:
        key = _key(kind, body)
        if key is None:
            break
        parts.append(key)
    return ".".join(p for p in parts if p)


def _alias(imp: dict[str, Any], source: str) -> str | None:
    """The name after ``as`` (the tree has only its span)."""
    alias = imp.get("as")
    if not isinstance(alias, dict) or not alias.get("line"):
        return None
    text = source.splitlines()[int(alias["line"]) - 1][int(alias["col"]) - 1 :]
    name = ""
    for ch in text:
        if ch.isalnum() or ch == "_":
            name += ch
        else:
            break
    return name or None


def ref_names(node: Any) -> list[str] | None:
    """The names of a constant reference in regorus's AST (``a.b["c"]``), None for anything else
    (a package reference, an import, a function's name: policyset.py reads them here too)."""
    if not isinstance(node, dict) or len(node) != 1:
        return None
    kind, body = next(iter(node.items()))
    if kind == "Var":
        return [str(body["value"])]
    if kind not in ("RefDot", "RefBrack"):
        return None
    head = ref_names(body["refr"])
    key = _key(kind, body)
    return None if head is None or key is None else [*head, key]


def may_reference(refs: tuple[str, ...], package: str) -> bool:
    """Whether a module with these ``data`` references may read a rule of ``package``."""
    return any(r == "" or r == package or r.startswith(package + ".") or package.startswith(r + ".") for r in refs)
