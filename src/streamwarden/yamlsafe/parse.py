"""The YAML parse behind :func:`streamwarden.yamlsafe.read.parse_documents`: libyaml's composer, then
values and line marks built with the limits (depth, aliases, node count, duplicate keys). Imported
on the first parse of a run, with PyYAML.

Three schemas. ``yaml-1.1`` (the default: contracts, ``streamwarden.yaml``) is PyYAML's safe
schema, merge keys (``<<``) applied, a mapping's own keys over merged ones. ``kubectl`` is YAML 1.1
as kubectl reads a manifest before it sends JSON to the API server (sigs.k8s.io/yaml over go-yaml
v2): ``y``/``n`` are booleans too, ``010`` is octal 8, ``1_000`` is 1000, ``12:30`` and dates are
text, keys become the JSON object's strings, merge keys apply in document order; a null key or an
infinite number (which kubectl refuses) is an error. ``core`` is the YAML 1.2 core schema as
snakeyaml-engine 2.6 reads it with the settings of Flink 2.x's ``YamlParserUtils`` (the loader of
``config.yaml``): no merge keys (``<<`` is a key like any other), ``0x10`` and ``0o10`` are
integers and ``010`` is ten, ``yes``/``on``/``1_000``/``12:30``/dates are text, ``1e3`` is a
float. What that loader refuses (a tag it has no constructor for, a value its constructor
rejects, a key that is not a string, a key with no value, more than 50 aliases of collections)
is listed in ``YamlDocument.refusals`` instead of being an error here: the caller says what Flink
does with the file.

Why one module of this size: the three schemas share one composer and one set of limits (depth,
aliases, nodes, duplicate keys), checked while each node is built; apart, a limit could be missed by
one schema.
"""

from __future__ import annotations

import datetime as _dt
import gc
import re
from typing import Any

import yaml

from streamwarden.core.dates import calendar_problem
from streamwarden.core.errors import InputError
from streamwarden.yamlsafe.document import (
    _PLAIN,
    MAX_ALIASES,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    YamlDocument,
    YamlSet,
    join_key,
)

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"

try:  # libyaml's composer is C and fast; the pure-Python one is the fallback
    _CLoader: type | None = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _CLoader = None

_IMPLICIT: dict[Any, list[tuple[str, re.Pattern[str]]]] = yaml.resolver.Resolver.yaml_implicit_resolvers
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_TAGS: dict[str, str] = {}  # plain scalar -> its implicit tag (a run sees the same values again and again)


def _resolve(self: Any, kind: Any, value: Any, implicit: Any) -> str:
    """``Resolver.resolve`` for the safe loader's resolvers (no path resolvers, no wildcard
    resolvers: checked below), with the plain scalars' tags memoized."""
    if kind is yaml.ScalarNode:
        if not implicit[0]:
            return _STR_TAG
        tag = _TAGS.get(value)
        if tag is None:
            tag = _STR_TAG
            for candidate, regexp in _IMPLICIT.get(value[:1], ()):
                if regexp.match(value):
                    tag = candidate
                    break
            if len(value) <= 64:
                if len(_TAGS) >= 16384:
                    _TAGS.clear()
                _TAGS[value] = tag
        return tag
    return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


if _CLoader is not None and None not in _IMPLICIT and not yaml.resolver.Resolver.yaml_path_resolvers:

    class _FastLoader(_CLoader):  # type: ignore[misc,valid-type]
        resolve = _resolve
        # Without path resolvers, descend_resolver(parent, index) and ascend_resolver() do
        # nothing; the C composer calls them around every node, so they are built-ins that
        # return at once (a built-in in a class is not bound: no `self`): no Python frame.
        descend_resolver = slice
        ascend_resolver = tuple

    _BaseLoader: type = _FastLoader
else:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = _CLoader or yaml.SafeLoader


# The YAML 1.2 core schema's implicit types, as snakeyaml-engine's CoreScalarResolver writes them
# (Java's Matcher.matches(): the whole text).
_CORE_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_CORE_BOOL = re.compile(r"true|True|TRUE|false|False|FALSE")
_CORE_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_CORE_FLOAT = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BINARY_TAG = "tag:yaml.org,2002:binary"
_SET_TAG = "tag:yaml.org,2002:set"
_CORE_TAGS: dict[str, str] = {}


def core_tag(value: str) -> str:
    """The implicit tag of a plain scalar in the YAML 1.2 core schema."""
    tag = _CORE_TAGS.get(value)
    if tag is None:
        if value in _CORE_NULLS:
            tag = _NULL_TAG
        elif _CORE_BOOL.fullmatch(value):
            tag = _BOOL_TAG
        elif _CORE_INT.fullmatch(value):
            tag = _INT_TAG
        elif _CORE_FLOAT.fullmatch(value):
            tag = _FLOAT_TAG
        else:
            tag = _STR_TAG
        if len(value) <= 64:
            if len(_CORE_TAGS) >= 16384:
                _CORE_TAGS.clear()
            _CORE_TAGS[value] = tag
    return tag


def _resolve_core(self: Any, kind: Any, value: Any, implicit: Any) -> str:
    if kind is yaml.ScalarNode:
        return core_tag(value) if implicit[0] else _STR_TAG
    return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


class _DepthLimitedLoader(yaml.SafeLoader):
    """Pure-Python composer that refuses deep nesting before Python's recursion limit."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH + 1:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _TooDeep(mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


_CoreLoader: type = type(
    "_CoreLoader",
    (_BaseLoader if _BaseLoader is not yaml.SafeLoader else _DepthLimitedLoader,),
    {"resolve": _resolve_core},
)
# kubectl: sigs.k8s.io/yaml over go-yaml v2, which is YAML 1.1 as Go reads it (y/n are booleans,
# 010 is octal, 1_000 is 1000, no sexagesimal numbers, dates stay text, merge keys applied in order)
_GO_WORDS: dict[str, str] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), _BOOL_TAG),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), _BOOL_TAG),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), _NULL_TAG),
    **dict.fromkeys((".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF"), _FLOAT_TAG),
    **dict.fromkeys(("+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"), _FLOAT_TAG),
    "<<": _MERGE_TAG,
}
_GO_TRUE = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_GO_DIGITS = {
    2: re.compile(r"[01]+"),
    8: re.compile(r"[0-7]+"),
    10: re.compile(r"[0-9]+"),
    16: re.compile(r"[0-9a-fA-F]+"),
}


def go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, else ``ParseUint``: a sign, then ``0x``/``0o``/``0b`` or
    a leading ``0`` (octal) or decimal digits; None when neither takes it."""
    body, sign = text, 1
    if body[:1] in ("-", "+"):
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    base, digits = 10, body
    if len(body) > 1 and body[0] == "0":
        prefix = body[1].lower()
        base, digits = {"x": (16, body[2:]), "o": (8, body[2:]), "b": (2, body[2:])}.get(prefix, (8, body[1:]))
    if not digits or not _GO_DIGITS[base].fullmatch(digits):
        return None
    value = sign * int(digits, base)
    if -(2**63) <= value < 2**63 or (text[:1] not in ("-", "+") and value < 2**64):
        return value
    return None


def go_scalar(text: str) -> tuple[str, Any]:
    """A plain scalar as go-yaml v2 resolves it: (tag, value)."""
    tag = _GO_WORDS.get(text)
    if tag is not None:
        if tag == _BOOL_TAG:
            return tag, text in _GO_TRUE
        if tag == _FLOAT_TAG:
            low = text.lower()
            return tag, float("nan") if "nan" in low else float("-inf") if low[0] == "-" else float("inf")
        return tag, None if tag == _NULL_TAG else text
    first = text[:1]
    if first == "." and _GO_DOT_FLOAT.fullmatch(text):
        return _FLOAT_TAG, float(text)
    if first and first in "0123456789+-":
        plain = text.replace("_", "")
        number = go_int(plain)
        if number is not None:
            return _INT_TAG, number
        if _GO_FLOAT.fullmatch(plain):
            value = float(plain)
            if value not in (float("inf"), float("-inf")):  # out of range: ParseFloat fails, the text stays
                return _FLOAT_TAG, value
    return _STR_TAG, text


def _resolve_kubectl(self: Any, kind: Any, value: Any, implicit: Any) -> str:
    if kind is yaml.ScalarNode:
        return go_scalar(value)[0] if implicit[0] else _STR_TAG
    return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


_KubectlLoader: type = type(
    "_KubectlLoader",
    (_BaseLoader if _BaseLoader is not yaml.SafeLoader else _DepthLimitedLoader,),
    {"resolve": _resolve_kubectl},
)
SCHEMAS = ("yaml-1.1", "core", "kubectl")

_SCALARS = yaml.SafeLoader("")  # a constructor instance for scalar tags
# The scalar tags built without the generic ``construct_object`` (which would also keep every
# node it saw in ``constructed_objects``, for the life of the process): the same functions it
# dispatches to, called directly.
_CONSTRUCT = {
    tag: getattr(_SCALARS, name)
    for tag, name in (
        ("tag:yaml.org,2002:int", "construct_yaml_int"),
        ("tag:yaml.org,2002:bool", "construct_yaml_bool"),
        ("tag:yaml.org,2002:float", "construct_yaml_float"),
        (_TIMESTAMP_TAG, "construct_yaml_timestamp"),
    )
    if _SCALARS.yaml_constructors.get(tag) is getattr(type(_SCALARS), name)
}
_ScalarNode, _SequenceNode, _MappingNode = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode


class _Builder:
    """Values and marks from composed nodes, with the limits. One pass: a scalar leaf (most
    nodes) is taken in its parent's loop, without a call of its own."""

    def __init__(self, file: str, keep_bad_dates: bool = False) -> None:
        self.file = file
        # an impossible date (2027-02-30) stays the text as written: a contract's JSON Schema
        # then names it among the file's other errors (format: date), instead of hiding them
        self.keep_bad_dates = keep_bad_dates
        self.marks: dict[str, int] = {}
        self.written: dict[str, str] = {}
        self.nodes = 0
        self.aliases = 0
        self.seen: set[int] = set()

    def _too_deep(self, node: yaml.Node) -> InputError:
        return InputError(
            f"nesting deeper than {MAX_DEPTH} levels",
            file=self.file,
            line=node.start_mark.line + 1,
            hint="flatten the structure; no contract or Flink file needs this depth",
        )

    def _count(self, node: yaml.Node) -> None:
        """One more value: the node count, and an alias reference when the node was seen before."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self._too_many(node)
        seen = self.seen
        before = len(seen)
        seen.add(id(node))
        if len(seen) == before:  # a node reached twice is an alias reference
            self._alias(node)

    def _too_many(self, node: yaml.Node) -> InputError:
        return InputError(
            f"the document expands to more than {MAX_NODES:,} values",
            file=self.file,
            line=node.start_mark.line + 1,
            hint="remove anchors/aliases that multiply content",
        )

    def _alias(self, node: yaml.Node) -> None:
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            raise InputError(
                f"more than {MAX_ALIASES} alias references (a YAML alias bomb?)",
                file=self.file,
                line=node.start_mark.line + 1,
                hint="write the values out instead of repeating anchors",
            )

    def build(self, node: yaml.Node, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self._too_deep(node)
        self._count(node)
        return self._value(node, path, depth)

    def _value(self, node: Any, path: str, depth: int) -> Any:
        """The value of a counted node."""
        cls = type(node)
        if cls is _ScalarNode:
            return node.value if node.tag == _STR_TAG else self._scalar(node, path)
        if cls is _MappingNode:
            return self._mapping(node, path, depth)
        if cls is _SequenceNode:
            return self._sequence(node, path, depth)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if isinstance(node, yaml.SequenceNode):
            return self._sequence(node, path, depth)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        raise InputError(f"unsupported YAML node {node.tag}", file=self.file, line=node.start_mark.line + 1)

    def _leaf(self, node: yaml.Node, path: str, depth: int) -> Any:
        """``build`` of a child at ``depth``, a string scalar without the call."""
        if depth > MAX_DEPTH:
            raise self._too_deep(node)
        # _count, inlined: most nodes are leaves
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self._too_many(node)
        seen = self.seen
        before = len(seen)
        seen.add(id(node))
        if len(seen) == before:
            self._alias(node)
        if node.__class__ is _ScalarNode and node.tag == _STR_TAG:
            return node.value
        return self._value(node, path, depth)

    def _sequence(self, node: yaml.SequenceNode, path: str, depth: int) -> list[Any]:
        out_list = []
        marks = self.marks
        child_depth = depth + 1
        for i, item in enumerate(node.value):
            p = f"{path}[{i}]"
            if p not in marks:
                marks[p] = item.start_mark.line + 1
            out_list.append(self._leaf(item, p, child_depth))
        return out_list

    def _scalar(self, node: yaml.ScalarNode, path: str = "") -> Any:
        tag = node.tag
        if tag == _STR_TAG:  # the common case, without the constructor's overhead
            return node.value
        if path:
            self.written[path] = node.value
        if tag == _NULL_TAG:
            return None
        try:
            construct = _CONSTRUCT.get(tag)
            value = construct(node) if construct is not None else _generic(node)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            day = calendar_problem(node.value) if tag == _TIMESTAMP_TAG else None
            if day and self.keep_bad_dates:
                return node.value
            raise InputError(
                f"{node.value!r} is not a real calendar date: {day}"
                if day
                else f"invalid value {node.value!r}: {problem}",
                file=self.file,
                line=node.start_mark.line + 1,
                path=path or None,
                hint="write a date that exists (YYYY-MM-DD)" if day else None,
            ) from None
        cls = value.__class__
        if cls is int or cls is bool:
            return value
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
                return value.replace(tzinfo=None).isoformat() + "Z"
            return value.isoformat()
        if isinstance(value, _dt.date):
            return value.isoformat()
        if isinstance(value, bytes):
            return value.decode("latin-1")
        if isinstance(value, float) and value != value:  # NaN is not JSON
            return str(node.value)
        return value

    def _mapping(self, node: yaml.MappingNode, path: str, depth: int) -> dict[str, Any]:
        pairs = node.value
        for key_node, _ in pairs:
            if key_node.tag == _MERGE_TAG:
                return self._merged_mapping(node, path, depth)
        out: dict[str, Any] = {}
        marks = self.marks
        child_depth = depth + 1
        deep = child_depth > MAX_DEPTH
        plain_keys = _PLAIN
        seen = self.seen
        for key_node, value_node in pairs:
            if key_node.tag == _STR_TAG and key_node.__class__ is _ScalarNode:  # _key, inlined
                key = key_node.value
                child = (f"{path}.{key}" if path else key) if plain_keys.get(key) else join_key(path, key)
                line = key_node.start_mark.line + 1
            else:
                key, child, line = self._key(key_node, path)
            if key in out:
                raise self._duplicate(key, marks[child], line, child)
            marks[child] = line
            if value_node.__class__ is _ScalarNode and value_node.tag == _STR_TAG and not deep:
                # _leaf, inlined for a string (most values): the same checks in the same order
                self.nodes += 1
                if self.nodes > MAX_NODES:
                    raise self._too_many(value_node)
                before = len(seen)
                seen.add(id(value_node))
                if len(seen) == before:
                    self._alias(value_node)
                out[key] = value_node.value
            else:
                out[key] = self._leaf(value_node, child, child_depth)
        return out

    def _key(self, key_node: yaml.Node, path: str) -> tuple[str, str, int]:
        """A mapping key as text, its field path and its line."""
        if key_node.tag == _STR_TAG and key_node.__class__ is _ScalarNode:
            key = key_node.value
        elif not isinstance(key_node, yaml.ScalarNode):
            raise InputError(
                "a mapping key must be a plain value, not a list or mapping",
                file=self.file,
                line=key_node.start_mark.line + 1,
                path=path or None,
            )
        else:
            key_value = self._scalar(key_node)
            key = key_value if isinstance(key_value, str) else str(key_node.value)
        child = (f"{path}.{key}" if path else key) if _PLAIN.get(key) else join_key(path, key)
        return key, child, key_node.start_mark.line + 1

    def _duplicate(self, key: str, first: int, line: int, child: str) -> InputError:
        return InputError(
            f"duplicate key {key!r} (first at line {first})",
            file=self.file,
            line=line,
            path=child,
            hint="YAML would silently keep only the last one; keep one of them",
        )

    def _merged_mapping(self, node: yaml.MappingNode, path: str, depth: int) -> dict[str, Any]:
        """A mapping with ``<<: *base`` keys (YAML 1.1): the merged mappings first (the first one
        wins where they share a key), then the mapping's own keys over them. Built in that order,
        a field's line and text are those of the key that gives its value."""
        out: dict[str, Any] = {}
        own: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                own.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for src in sources:
                value = self.build(src, path, depth + 1)
                if not isinstance(value, dict):
                    raise InputError("a merge key (<<) needs a mapping", file=self.file, line=src.start_mark.line + 1)
                for k, v in value.items():
                    out.setdefault(k, v)
        mine: set[str] = set()
        for key_node, value_node in own:
            key, child, line = self._key(key_node, path)
            if key in mine:
                raise self._duplicate(key, self.marks[child], line, child)
            mine.add(key)
            self.marks[child] = line
            out[key] = self._leaf(value_node, child, depth + 1)
        return out


_KINDS = {
    _INT_TAG: "an integer",
    _FLOAT_TAG: "a float",
    _BOOL_TAG: "a boolean",
    _BINARY_TAG: "binary data",
    _NULL_TAG: "null",
}
MAX_COLLECTION_ALIASES = 50  # snakeyaml-engine's maxAliasesForCollections, which Flink does not change
_NUMBER_DIGITS = {16: re.compile(r"[0-9a-fA-F]+"), 8: re.compile(r"[0-7]+")}
_JAVA_DOUBLE = re.compile(r"[+-]?(?:nan|infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?[fd]?)")


def core_int(text: str) -> int:
    """``ConstructYamlCoreInt``: a sign, then ``0x`` hex, ``0o`` octal or decimal digits."""
    body, sign = text, 1
    if body[:1] in ("-", "+"):
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    base = 16 if body.startswith("0x") else 8 if body.startswith("0o") else 10
    digits = body[2:] if base != 10 else body
    ok = _NUMBER_DIGITS[base].fullmatch(digits) if base != 10 else (digits.isdecimal() and digits.isascii())
    if not digits or not ok:
        raise ValueError(f"For input string: {digits!r}")
    return sign * int(digits, base)


def core_float(text: str) -> float:
    """``ConstructYamlCoreFloat``: the text lower-cased, ``.inf``/``-.inf``/``.nan``, else Java's
    ``Double.valueOf`` (so ``+.inf`` is refused, as snakeyaml-engine refuses it)."""
    low = text.lower()
    if low == ".inf":
        return float("inf")
    if low == "-.inf":
        return float("-inf")
    if low == ".nan":
        return float("nan")
    trimmed = low.strip(" \t\n\r\x0b\x0c")
    if not _JAVA_DOUBLE.fullmatch(trimmed) or "nan" in trimmed or "infinity" in trimmed:
        # Double.valueOf takes "NaN" and "Infinity" only as written, and the text was lower-cased
        raise ValueError(f"For input string: {text!r}")
    return float(trimmed.rstrip("fd"))


class _CoreBuilder(_Builder):
    """Values of the YAML 1.2 core schema, as snakeyaml-engine constructs them for Flink: Python
    values standing for the Java ones (int for Integer/Long/BigInteger, float for Double, bytes for
    ``!!binary``'s byte[], :class:`YamlSet` for ``!!set``). The limits are the same as for every
    YAML file; what Flink's loader refuses on top is recorded in ``refusals``, and the plain ``<<``
    keys in ``merge_keys``."""

    def __init__(self, file: str) -> None:
        super().__init__(file)
        self.refusals: list[tuple[int, str]] = []
        self.merge_keys: list[tuple[str, int]] = []
        self.collection_aliases = 0

    def _refuse(self, node: yaml.Node, reason: str) -> None:
        if len(self.refusals) < 100:  # the first ones say it; the file is refused either way
            self.refusals.append((node.start_mark.line + 1, reason))

    def _alias(self, node: yaml.Node) -> None:
        super()._alias(node)
        if not isinstance(node, yaml.ScalarNode):
            self.collection_aliases += 1
            if self.collection_aliases == MAX_COLLECTION_ALIASES + 1:
                self._refuse(
                    node, f"more than {MAX_COLLECTION_ALIASES} aliases of mappings or lists (snakeyaml-engine's limit)"
                )

    def _value(self, node: Any, path: str, depth: int) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        tag = node.tag
        if isinstance(node, yaml.SequenceNode):
            if tag != _SEQ_TAG:
                self._refuse(node, f"no constructor for the tag {tag} on a list")
            return self._sequence(node, path, depth)
        if tag == _SET_TAG:
            return self._set(node, path, depth)
        if tag != _MAP_TAG:
            self._refuse(node, f"no constructor for the tag {tag} on a mapping")
        return self._mapping(node, path, depth)

    def _scalar(self, node: yaml.ScalarNode, path: str = "") -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        text = node.value
        if path:
            self.written[path] = text
        try:
            if tag == _NULL_TAG:
                return None
            if tag == _BOOL_TAG:
                low = text.lower()
                if low not in ("true", "false"):
                    return None  # ConstructYamlCoreBool gives null: a key with no value
                return low == "true"
            if tag == _INT_TAG:
                if not text:
                    raise ValueError("found empty value")
                return core_int(text)
            if tag == _FLOAT_TAG:
                return core_float(text)
            if tag == _BINARY_TAG:
                import base64
                import binascii

                compact = "".join(text.split())
                try:
                    return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
                except binascii.Error:
                    raise ValueError("not base64") from None
        except ValueError as exc:
            self._refuse(node, f"{text!r} is not {_KINDS.get(tag, tag)} ({exc})")
            return text
        self._refuse(node, f"no constructor for the tag {tag}")
        return text

    def _set(self, node: yaml.MappingNode, path: str, depth: int) -> YamlSet:
        members = self._mapping(node, path, depth, values_may_be_null=True)
        return YamlSet(members)

    def _mapping(
        self, node: yaml.MappingNode, path: str, depth: int, *, values_may_be_null: bool = False
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        marks = self.marks
        child_depth = depth + 1
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(
                    "a mapping key must be a plain value, not a list or mapping",
                    file=self.file,
                    line=line,
                    path=path or None,
                )
            key_tag = key_node.tag
            if key_tag == _STR_TAG:
                key = key_node.value
            elif key_tag == _NULL_TAG:
                key = "null"  # Flink joins a null key into the flattened key as "null"
            else:
                self._scalar(key_node)  # a tag or value snakeyaml-engine refuses is refused first
                kind = _KINDS.get(key_tag, key_tag)
                self._refuse(key_node, f"the key {key_node.value!r} is {kind} in YAML 1.2, not a string")
                key = key_node.value
            child = join_key(path, key)
            if key in out:
                raise InputError(
                    f"duplicate key {key!r} (first at line {marks[child]})",
                    file=self.file,
                    line=line,
                    path=child,
                    hint="keep one of them (Flink 2.x refuses a config.yaml with a key written twice too)",
                )
            marks[child] = line
            if key == "<<" and key_tag == _STR_TAG and not key_node.style:  # plain: '' (libyaml) or None
                self.merge_keys.append((child, line))
            value = self.build(value_node, child, child_depth)
            if value is None and not values_may_be_null:
                self._refuse(value_node, f"{key!r} has no value (null): Flink's Configuration takes no null value")
            out[key] = value
        return out


def go_float_key(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 32)``: how sigs.k8s.io/yaml writes a float key."""
    import struct

    single = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        text = f"{single:.{digits}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent = text.split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    exp = int(exponent)
    if exp < -4 or exp >= 6:  # Go's %g for the shortest digits decides with a precision of 6
        return f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return format(single, f".{max(len(mantissa.replace('.', '').lstrip('-')) - 1 - exp, 0)}f")


class _KubectlBuilder(_Builder):
    """A Kubernetes manifest as kubectl reads it before sending JSON to the API server
    (sigs.k8s.io/yaml over go-yaml v2): scalars resolved as :func:`go_scalar`, keys turned into
    the JSON object's strings (``yes:`` is ``"true"``, ``1e3:`` is ``"1000"``), merge keys
    applied in document order (a merge overrides the keys before it, the keys after it override
    the merge, and among merged mappings the first wins). What kubectl refuses (a null key, an
    infinite or NaN number) is an InputError."""

    def _scalar(self, node: yaml.ScalarNode, path: str = "") -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        if path:
            self.written[path] = node.value
        if tag == _BINARY_TAG:
            return super()._scalar(node, path)
        value = go_scalar(node.value)[1]
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            raise InputError(
                f"kubectl cannot send {node.value!r} to the API server: JSON has no infinity or NaN",
                file=self.file,
                line=node.start_mark.line + 1,
                path=path or None,
                hint="quote the value to keep it as text",
            )
        return value

    def _key(self, key_node: yaml.Node, path: str) -> tuple[str, str, int]:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _STR_TAG:
            return super()._key(key_node, path)
        value = go_scalar(key_node.value)[1] if key_node.tag != _BINARY_TAG else key_node.value
        if value is None:
            raise InputError(
                "kubectl refuses a mapping key with no value (null)", file=self.file, line=line, path=path or None
            )
        if isinstance(value, bool):
            key = "true" if value else "false"
        elif isinstance(value, float):
            key = go_float_key(value)
        else:
            key = str(value)
        return key, join_key(path, key), line

    def _mapping(self, node: yaml.MappingNode, path: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        mine: set[str] = set()
        marks = self.marks
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for src in reversed(sources):  # go-yaml merges the last first: the first one wins
                    value = self.build(src, path, depth + 1)
                    if not isinstance(value, dict):
                        raise InputError(
                            "a merge key (<<) needs a mapping", file=self.file, line=src.start_mark.line + 1
                        )
                    out.update(value)
                continue
            key, child, line = self._key(key_node, path)
            if key in mine:
                raise self._duplicate(key, marks[child], line, child)
            mine.add(key)
            marks[child] = line
            out.pop(key, None)  # the key's place is where it is written
            out[key] = self._leaf(value_node, child, depth + 1)
        return out


def _generic(node: yaml.ScalarNode) -> Any:
    """A scalar of another tag, through PyYAML's constructor (which then forgets the node)."""
    try:
        return _SCALARS.construct_object(node, deep=True)
    finally:
        _SCALARS.constructed_objects.clear()
        _SCALARS.recursive_objects.clear()


def parse_stream(text: str, file: str, *, keep_bad_dates: bool = False, schema: str = "yaml-1.1") -> list[YamlDocument]:
    """``yamlsafe.parse_documents``."""
    # The composed nodes (with two marks each) and the values are many small objects that all
    # live until the document is built: the cyclic collector would walk them again and again
    # (about a third of the parse) and find nothing to free. Reference counting still frees
    # everything; a cycle made meanwhile (a recursive alias, refused) waits for the next collection.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return build_documents(compose_documents(text, file, schema), file, schema, keep_bad_dates)
    finally:
        if paused:
            gc.enable()


def compose_documents(text: str, file: str, schema: str = "yaml-1.1") -> list[yaml.Node]:
    """The documents' nodes, tags resolved by ``schema``; a syntax error is an InputError."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise InputError(f"text is larger than {MAX_BYTES // 1024 // 1024} MiB", file=file)
    try:
        loader = {"core": _CoreLoader, "kubectl": _KubectlLoader}.get(schema)
        return _compose_all(text, loader)
    except _TooDeep as exc:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", file=file, line=exc.line) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", file=file) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if "max depth" in problem or "nesting" in problem:
            raise InputError(
                f"nesting deeper than {MAX_DEPTH} levels", file=file, line=mark.line + 1 if mark else None
            ) from None
        tab = _tab_indent(text, mark.line, mark.column) if mark else None
        if tab is not None:
            raise InputError(
                f"not valid YAML: a tab in the indentation (column {tab + 1})",
                file=file,
                line=mark.line + 1 if mark else None,
                hint="YAML does not allow tabs for indentation; use spaces",
            ) from None
        raise InputError(
            f"not valid YAML: {problem}",
            file=file,
            line=(mark.line + 1) if mark else None,
            hint="check indentation and quoting around this line",
        ) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise InputError(
            f"not valid YAML: unacceptable character #x{exc.character:04x} ({exc.reason})"
            if isinstance(exc.character, int)
            else f"not valid YAML: {exc.reason}",
            file=file,
            line=line,
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {str(exc).splitlines()[0]}", file=file) from None


def build_documents(
    nodes: list[yaml.Node], file: str, schema: str = "yaml-1.1", keep_bad_dates: bool = False
) -> list[YamlDocument]:
    """Values and marks of composed documents, with the limits."""
    docs: list[YamlDocument] = []
    for i, node in enumerate(nodes):
        builder = (
            _CoreBuilder(file)
            if schema == "core"
            else _KubectlBuilder(file)
            if schema == "kubectl"
            else _Builder(file, keep_bad_dates)
        )
        data = builder.build(node, "", 0)
        start = node.start_mark.line + 1
        marks = builder.marks
        marks.setdefault("", start)
        doc = YamlDocument(data=data, file=file, marks=marks, index=i, start_line=start, written=builder.written)
        if isinstance(builder, _CoreBuilder):
            doc.refusals, doc.merge_keys = builder.refusals, builder.merge_keys
        docs.append(doc)
    return docs


def _tab_indent(text: str, line: int, column: int) -> int | None:
    """The column of a tab in the indentation of ``line`` (0-based), when the parser stopped
    there: PyYAML calls it "found character that cannot start any token" or similar."""
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return None
    row = lines[line]
    if 0 <= column < len(row) and row[column] == "\t":  # e.g. after a list's "-"
        return column
    indent = row[: len(row) - len(row.lstrip(" \t"))]
    tab = indent.find("\t")
    return tab if tab >= 0 and column <= len(indent) else None


def _compose_all(text: str, loader_cls: type | None = None) -> list[yaml.Node]:
    if loader_cls is None:
        loader_cls = _BaseLoader if _BaseLoader is not yaml.SafeLoader else _DepthLimitedLoader
    loader = loader_cls(text)
    try:
        out = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                out.append(node)
        return out
    finally:
        loader.dispose()
