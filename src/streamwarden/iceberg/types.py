"""Iceberg types as the contract writes them, and the Iceberg spec's type-evolution rules.

Pure functions over strings (and, for ``normalize_type``, pyiceberg type objects, read by duck
typing so this module never imports pyiceberg). The normalized form is the contract's
(docs/contract-reference.md, ``fieldType``): lower case, no spaces, ``decimal(12,2)``, ``fixed[16]``,
``list<long>``, ``map<string,long>``, ``struct<name:type,...>``. Nested required-ness and field
ids are not part of the form.

Promotions follow the Iceberg spec (format/spec.md, "Schema Evolution"), not pyiceberg, which
accepts a decimal scale change and string<->binary:

=============  ==========================  ==========================
from           v1, v2                      v3+
=============  ==========================  ==========================
int            long                        long
float          double                      double
decimal(P,S)   decimal(P',S), P' > P       decimal(P',S), P' > P
date           (none)                      timestamp, timestamp_ns
unknown        (none)                      any type (nested ones too)
=============  ==========================  ==========================

A decimal's precision is 1 to 38 and its scale at most its precision (spec: "precision must be 38
or less"), so ``decimal(38,2) -> decimal(39,2)`` is no promotion: ``decimal(39,2)`` is no type.
The v3 geospatial types carry parameters: ``geometry(C)`` with a CRS ``C`` and ``geography(C, A)``
with a CRS and an edge-interpolation algorithm ``A`` (spherical, vincenty, thomas, andoyer,
karney); without them they are ``geometry`` / ``geography`` (CRS OGC:CRS84, spherical edges). A
change of CRS or algorithm is no promotion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PRIMITIVES = frozenset(
    {
        "boolean",
        "int",
        "long",
        "float",
        "double",
        "date",
        "time",
        "timestamp",
        "timestamptz",
        "timestamp_ns",
        "timestamptz_ns",
        "string",
        "uuid",
        "binary",
        "unknown",
        "variant",
        "geometry",
        "geography",
    }
)
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
_GEO = re.compile(r"^(geometry|geography)\((.*)\)$")
EDGE_ALGORITHMS = ("spherical", "vincenty", "thomas", "andoyer", "karney")
MAX_DECIMAL_PRECISION = 38
_FIXED = re.compile(r"^fixed\[(\d+)\]$")
_TRANSFORM = re.compile(r"^(identity|year|month|day|hour|void|bucket\[\d+\]|truncate\[\d+\])$")


class TypeSyntaxError(ValueError):
    """A type string that is not an Iceberg type."""


@dataclass(frozen=True)
class IcebergType:
    """A parsed type: ``kind`` is the primitive name, ``decimal``, ``fixed``, ``list``, ``map`` or ``struct``."""

    kind: str
    params: tuple[int, ...] = ()
    children: tuple[IcebergType, ...] = ()
    names: tuple[str, ...] = ()  # struct field names, parallel to children
    args: tuple[str, ...] = ()  # geometry(C) / geography(C, A): CRS and edge algorithm as written

    def render(self) -> str:
        if self.args:
            return f"{self.kind}({','.join(self.args)})"
        if self.kind == "decimal":
            return f"decimal({self.params[0]},{self.params[1]})"
        if self.kind == "fixed":
            return f"fixed[{self.params[0]}]"
        if self.kind == "list":
            return f"list<{self.children[0].render()}>"
        if self.kind == "map":
            return f"map<{self.children[0].render()},{self.children[1].render()}>"
        if self.kind == "struct":
            return (
                "struct<" + ",".join(f"{n}:{c.render()}" for n, c in zip(self.names, self.children, strict=True)) + ">"
            )
        return self.kind


# ------------------------------------------------------------------------------------------ parsing


def _split_top(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside <>, () and []."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
            if depth < 0:
                raise TypeSyntaxError(f"unbalanced brackets in {text!r}")
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise TypeSyntaxError(f"unbalanced brackets in {text!r}")
    parts.append(text[start:])
    return parts


def _strip_nullability(text: str) -> str:
    for word in ("optional ", "required "):
        if text.startswith(word):
            return text[len(word) :].strip()
    return text


def _parse_struct_field(text: str) -> tuple[str, IcebergType]:
    # Contract form ``name:type``; pyiceberg's str() form ``10: name: optional type``.
    parts = [p.strip() for p in _split_top(text, ":")]
    if len(parts) >= 3 and parts[0].isdigit():
        parts = parts[1:]
    if len(parts) < 2 or not parts[0]:
        raise TypeSyntaxError(f"struct field {text.strip()!r} is not name:type")
    name = parts[0]
    return name, _parse(_strip_nullability(":".join(parts[1:]).strip()))


def _parse(text: str) -> IcebergType:
    t = text.strip()
    if t in PRIMITIVES:
        return IcebergType(t)
    compact = re.sub(r"\s+", "", t)
    if m := _DECIMAL.match(compact):
        precision, scale = int(m.group(1)), int(m.group(2))
        if not 1 <= precision <= MAX_DECIMAL_PRECISION:
            raise TypeSyntaxError(f"decimal precision must be 1 to {MAX_DECIMAL_PRECISION}: {text.strip()!r}")
        if scale > precision:
            raise TypeSyntaxError(f"decimal scale cannot exceed its precision: {text.strip()!r}")
        return IcebergType("decimal", (precision, scale))
    if m := _GEO.match(compact):
        return _parse_geo(m.group(1), m.group(2), text)
    if m := _FIXED.match(compact):
        return IcebergType("fixed", (int(m.group(1)),))
    head, _, rest = t.partition("<")
    head = head.strip()
    if not rest.endswith(">") or head not in ("list", "map", "struct"):
        raise TypeSyntaxError(f"not an Iceberg type: {text.strip()!r}")
    inner = rest[:-1]
    if head == "list":
        return IcebergType("list", children=(_parse(_strip_nullability(inner.strip())),))
    if head == "map":
        kv = _split_top(inner, ",")
        if len(kv) != 2:
            raise TypeSyntaxError(f"map needs a key and a value type: {text.strip()!r}")
        return IcebergType("map", children=(_parse(kv[0]), _parse(_strip_nullability(kv[1].strip()))))
    fields = [_parse_struct_field(f) for f in _split_top(inner, ",") if f.strip()]
    return IcebergType("struct", children=tuple(c for _, c in fields), names=tuple(n for n, _ in fields))


def _parse_geo(kind: str, inner: str, text: str) -> IcebergType:
    args = tuple(inner.split(","))
    if not args[0] or len(args) > (2 if kind == "geography" else 1):
        raise TypeSyntaxError(
            f"{kind} takes {'a CRS and an edge algorithm' if kind == 'geography' else 'a CRS'}: {text.strip()!r}"
        )
    if len(args) == 2 and args[1] not in EDGE_ALGORITHMS:
        raise TypeSyntaxError(
            f"unknown edge algorithm {args[1]!r} (one of {', '.join(EDGE_ALGORITHMS)}): {text.strip()!r}"
        )
    return IcebergType(kind, args=args)


def parse_type(value: Any) -> IcebergType:
    """A type string (contract form or pyiceberg's ``str()`` form) or a pyiceberg type object."""
    if isinstance(value, str):
        return _parse(value.lower())
    return _from_object(value)


def _from_object(obj: Any) -> IcebergType:
    # pyiceberg types, by duck typing: StructType.fields, ListType.element_type, MapType.key_type.
    if hasattr(obj, "element_type"):
        return IcebergType("list", children=(_from_object(obj.element_type),))
    if hasattr(obj, "key_type") and hasattr(obj, "value_type"):
        return IcebergType("map", children=(_from_object(obj.key_type), _from_object(obj.value_type)))
    if hasattr(obj, "fields") and not isinstance(obj, str):
        fields = list(obj.fields)
        return IcebergType(
            "struct",
            children=tuple(_from_object(f.field_type) for f in fields),
            names=tuple(str(f.name).lower() for f in fields),
        )
    return _parse(str(obj).lower())


def normalize_type(value: Any) -> str:
    """``"decimal(12, 2)"`` -> ``"decimal(12,2)"``; pyiceberg's ``struct<10: a: optional int>`` ->
    ``struct<a:int>``; a pyiceberg type object -> its normalized string. Raises TypeSyntaxError."""
    return parse_type(value).render()


# --------------------------------------------------------------------------------------- promotions


def _primitive_promotion(old: IcebergType, new: IcebergType, format_version: int) -> bool:
    if (old.kind, new.kind) in (("int", "long"), ("float", "double")):
        return True
    if old.kind == "decimal" and new.kind == "decimal":
        same_scale = new.params[1] == old.params[1]
        return same_scale and old.params[0] < new.params[0] <= MAX_DECIMAL_PRECISION
    if old.kind == "date" and new.kind in ("timestamp", "timestamp_ns"):
        return format_version >= 3
    return False


def _compare(old: IcebergType, new: IcebergType, format_version: int) -> str:
    """One of "same", "promotion" or "incompatible"."""
    if old == new:
        return "same"
    if old.kind == "unknown":  # v3: a field that only held nulls may take any type, nested ones too
        return "promotion" if format_version >= 3 else "incompatible"
    nested = ("list", "map", "struct")
    if old.kind in nested or new.kind in nested:
        if old.kind != new.kind or (old.kind == "struct" and old.names != new.names):
            return "incompatible"
        if old.kind == "map" and old.children[0] != new.children[0]:
            return "incompatible"  # map keys cannot change
        if len(old.children) != len(new.children):
            return "incompatible"
        results = {_compare(a, b, format_version) for a, b in zip(old.children, new.children, strict=True)}
        if "incompatible" in results:
            return "incompatible"
        return "promotion" if "promotion" in results else "same"
    return "promotion" if _primitive_promotion(old, new, format_version) else "incompatible"


def type_change(old: Any, new: Any, format_version: int = 2) -> str:
    """Classify a change of a field's type: ``"same"``, ``"promotion"`` (the spec allows it) or
    ``"incompatible"`` (Iceberg refuses it). Nested types are compared component by component;
    struct fields must keep their names and order here (adds/drops are field changes, not type
    changes), and map keys must not change."""
    return _compare(parse_type(old), parse_type(new), format_version)


def is_promotion(old: Any, new: Any, format_version: int = 2) -> bool:
    """True when ``old -> new`` is a type promotion the Iceberg spec allows on that format
    version. Identical types are not a promotion (nothing changes)."""
    return type_change(old, new, format_version) == "promotion"


def transform_output_changes(transform: str, old: Any, new: Any) -> bool:
    """Would the partition transform produce different values for the same rows after the source
    column's type changes from ``old`` to ``new``? (spec: such a promotion is not allowed).

    Per the spec, bucket hashes ints as longs and decimals by their unscaled value, identity and
    truncate keep values across int->long, float->double and decimal widening, so only
    date -> timestamp/timestamp_ns changes values: under ``identity`` (days become microseconds)
    and ``bucket[N]`` (a different hash input); ``year``/``month``/``day`` give the same output,
    ``void`` is always null. ``hour`` cannot apply to a date. A change that is not a spec
    promotion returns True (no output can be assumed stable); identical types return False.
    """
    t = re.sub(r"\s+", "", transform.lower())
    if not _TRANSFORM.match(t):
        raise TypeSyntaxError(f"not an Iceberg partition transform: {transform!r}")
    a, b = parse_type(old), parse_type(new)
    if a == b or t == "void":
        return False
    if _compare(a, b, 3) != "promotion":
        return True
    if a.kind == "unknown":
        return False  # unknown holds only nulls, and every transform maps null to null
    if a.kind == "date":
        return t == "identity" or t.startswith("bucket") or t == "hour"
    return False


def is_transform(text: str) -> bool:
    return bool(_TRANSFORM.match(re.sub(r"\s+", "", text.lower())))
