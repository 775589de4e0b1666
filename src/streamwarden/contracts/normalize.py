"""Normalization of a validated document: durations to ms, sizes to bytes, enums lower-case, and
the defaults the schema declares filled in.

The JSON Schema says which field is which (``$ref: #/$defs/duration`` / ``size``, enum defs,
``default``), so this module holds no list of fields.
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from typing import Any

from streamwarden.contracts.schemawalk import Schema, SchemaWalker, walker_for
from streamwarden.core.units import parse_duration, parse_size
from streamwarden.yamlsafe.read import join_index, join_key

_DAY_MS = 86_400_000


_LEAVES = (int, float, bool, type(None))  # values no walk changes


def lower_enums(walker: SchemaWalker, schema: Schema | None, value: Any) -> Any:
    """Before validation: enum strings lower-cased (``EXACTLY_ONCE`` -> ``exactly_once``)."""
    if isinstance(value, dict):
        child = walker.child
        string_child = walker.string_child
        out = {}
        for k, v in value.items():
            cls = v.__class__
            if cls is str:  # the common case, without a call of its own
                enums = string_child(schema, k)[0]
                if enums is not None:
                    low = v.strip().lower()
                    if low in enums:
                        v = low
                out[k] = v
            elif cls in _LEAVES:  # a number, boolean or null is kept as it is
                out[k] = v
            else:
                out[k] = lower_enums(walker, child(schema, k, v), v)
        return out
    if isinstance(value, list):
        item = walker.item(schema, value)
        enums = walker.string_leaf(item)[0] if item is not None else None
        out_list = []
        for v in value:
            cls = v.__class__
            if cls is str:
                if enums is not None:
                    low = v.strip().lower()
                    if low in enums:
                        v = low
                out_list.append(v)
            else:
                out_list.append(v if cls in _LEAVES else lower_enums(walker, item, v))
        return out_list
    if isinstance(value, str) and schema is not None:
        enums = walker.string_leaf(schema)[0]
        if enums is not None:
            low = value.strip().lower()
            if low in enums:
                return low
    return value


class UnitError(ValueError):
    """A duration or size the schema let through but the parser refuses (e.g. a trailing newline)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class _UnitFail(Exception):
    """A unit that does not parse, on its way up: each level adds its key (the path is written
    only for an error, not for every value)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.parts: list[str | int] = []


def convert_units(walker: SchemaWalker, schema: Schema | None, value: Any, path: str = "") -> Any:
    """After validation: durations to ms and sizes to bytes, wherever the schema says so."""
    try:
        return _convert(walker, schema, value)
    except _UnitFail as fail:
        for part in reversed(fail.parts):
            path = join_index(path, part) if isinstance(part, int) else join_key(path, part)
        raise UnitError(path, fail.message) from None


def _convert(walker: SchemaWalker, schema: Schema | None, value: Any) -> Any:
    if isinstance(value, str):
        name = walker.string_leaf(schema)[1]
        try:
            if name == "duration":
                return parse_duration(value)
            if name == "size":
                return parse_size(value)
        except ValueError as exc:
            raise _UnitFail(str(exc)) from None
        return value
    if isinstance(value, dict):
        child = walker.child
        string_child = walker.string_child
        out = {}
        for k, v in value.items():
            cls = v.__class__
            if cls in _LEAVES or (cls is str and string_child(schema, k)[1] is None):
                out[k] = v  # no unit here: kept as it is
                continue
            try:
                out[k] = _convert(walker, child(schema, k, v), v)
            except _UnitFail as fail:
                fail.parts.append(k)
                raise
        return out
    if isinstance(value, list):
        item = walker.item(schema, value)
        unit = walker.string_leaf(item)[1]
        items = []
        for i, v in enumerate(value):
            cls = v.__class__
            if cls in _LEAVES or (cls is str and unit is None):
                items.append(v)
                continue
            try:
                items.append(_convert(walker, item, v))
            except _UnitFail as fail:
                fail.parts.append(i)
                raise
        return items
    return value


def normalize_type(text: str) -> str:
    """``Decimal(12, 2)`` -> ``decimal(12,2)``; nested types lose their spaces too."""
    return re.sub(r"\s+", "", text).lower()


def end_of_day_ms(day: str) -> int:
    """``2027-12-31`` -> the first instant of 2028-01-01 UTC, in epoch ms (expiry is inclusive)."""
    d = _dt.date.fromisoformat(day)
    start = _dt.datetime(d.year, d.month, d.day, tzinfo=_dt.timezone.utc)
    return int(start.timestamp() * 1000) + _DAY_MS


# A property the schema gives no default (its mapping may still hold properties that have one).
_NO_DEFAULT = object()
DefaultsTree = dict[str, tuple[Any, "DefaultsTree"]]
_DEFAULTS: dict[int, tuple[Schema, DefaultsTree]] = {}


def defaults_tree(walker: SchemaWalker, schema: Schema, depth: int = 0) -> DefaultsTree:
    """The properties (of objects, through nested objects, not list items) that the schema gives a
    ``default``: {key: (default or _NO_DEFAULT, the tree below it)}; only the branches that hold one."""
    out: DefaultsTree = {}
    if depth > 16:
        return out
    for key, sub in (walker.resolve(schema).get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        below = defaults_tree(walker, sub, depth + 1)
        if "default" in sub or below:
            out[key] = (sub.get("default", _NO_DEFAULT), below)
    return out


def _tree_for(walker: SchemaWalker, schema: Schema) -> DefaultsTree:
    hit = _DEFAULTS.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = _DEFAULTS[id(schema)] = (schema, defaults_tree(walker, schema))
    return hit[1]


def with_defaults(value: dict[str, Any], tree: DefaultsTree) -> dict[str, Any]:
    """``value`` with every absent property of ``tree`` that has a default filled in (a copy of
    it), and those below filled in the same way; ``value`` itself is not changed."""
    out = dict(value)
    for key, (default, below) in tree.items():
        if key not in out:
            if default is _NO_DEFAULT:
                continue
            out[key] = copy.deepcopy(default)
        if below and isinstance(out[key], dict):
            out[key] = with_defaults(out[key], below)
    return out


def normalize_contract(data: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """A validated contract -> the ``input.contract`` document (see docs/input-document.md)."""
    walker = walker_for(schema)
    # the schema's defaults first (a default is written as the contract would write it)
    out: dict[str, Any] = convert_units(walker, schema, with_defaults(data, _tree_for(walker, schema)))
    job = out.get("job")
    if isinstance(job, dict) and isinstance(job.get("deployment"), str):
        job["deployment"] = [job["deployment"]]
    table = out.get("table")
    if isinstance(table, dict):
        props = table.get("properties")
        if isinstance(props, dict):  # Iceberg properties are strings: `true` -> "true"
            table["properties"] = {k: _iceberg_string(v) for k, v in props.items()}
        for field in table.get("schema") or []:
            if isinstance(field, dict) and isinstance(field.get("type"), str):
                field["type"] = normalize_type(field["type"])
    for waiver in out.get("waivers") or []:
        if isinstance(waiver, dict) and isinstance(waiver.get("expires"), str):
            # validation refused a day that does not exist (2026-02-31), so this cannot fail
            waiver["expires_end_ms"] = end_of_day_ms(waiver["expires"])
    return out


def _iceberg_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value
