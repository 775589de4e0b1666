"""A yes/no JSON Schema check compiled into closures: the fast path of contract validation.

Most contracts in a repository are valid, and jsonschema spends about a millisecond per contract
finding that out (a validator object per node it descends into). This module compiles a schema
once into plain Python predicates that answer only "valid or not". When the answer is "not",
``validate.validate_document`` runs jsonschema for the messages; when the schema uses a keyword
this module does not know, ``compile_schema`` returns None and jsonschema does all the work.

It implements the Draft 2020-12 keywords our schemas use, with jsonschema's semantics (booleans
are not numbers, 1.0 is an integer, ``pattern`` is ``re.search``, ``format`` is an annotation
unless ``formats`` gives a check for it, as jsonschema's format checker does).
``tests/contracts/test_fastcheck.py`` holds it to jsonschema's verdict on every fixture and on thousands of
mutated contracts and configs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]
Formats = Mapping[str, Callable[[object], bool]]

# keywords that never change the verdict (format is an annotation unless a format checker is set)
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "examples", "default", "format", "deprecated"}
)


class Unsupported(Exception):
    """The schema uses something this module does not implement: use jsonschema alone."""


def compile_schema(schema: Any, formats: Formats | None = None) -> Check | None:
    """A predicate equal to ``Draft202012Validator(schema, format_checker=...).is_valid`` (the
    checker asserting ``formats``), or None when unsupported."""
    try:
        return _compile(schema, formats or {})
    except Unsupported:
        return None


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}


def equal(a: Any, b: Any) -> bool:
    """jsonschema's equality: true is not 1, 1 is 1.0, containers compare deeply."""
    if isinstance(a, str) or isinstance(b, str):
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    return bool(a == b)


def _all(checks: list[Check]) -> Check:
    """Every check holds (plain loops and fixed arities: a generator per call costs more than
    the checks themselves)."""
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)
    if len(checks) == 3:
        c1, c2, c3 = checks
        return lambda x: c1(x) and c2(x) and c3(x)
    fixed = tuple(checks)

    def every(x: Any) -> bool:
        for c in fixed:  # noqa: SIM110 (a loop: all() would make a generator per call)
            if not c(x):
                return False
        return True

    return every


def _any(checks: list[Check]) -> Check:
    fixed = tuple(checks)

    def some(x: Any) -> bool:
        for c in fixed:  # noqa: SIM110 (a loop: all() would make a generator per call)
            if c(x):
                return True
        return False

    return some


def _compile(schema: Any, formats: Formats) -> Check:
    if schema is True or schema == {}:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, dict):
        raise Unsupported(f"schema node {schema!r}")
    checks: list[Check] = []
    for key in schema:
        if key in _ANNOTATIONS or key in _HANDLED:
            continue
        raise Unsupported(key)

    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        try:
            preds = [_TYPES[n] for n in names]
        except (KeyError, TypeError):
            raise Unsupported(f"type {schema['type']!r}") from None
        checks.append(preds[0] if len(preds) == 1 else _any(preds))
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda x: equal(x, const))
    if "enum" in schema:
        options = list(schema["enum"])
        checks.append(lambda x: any(equal(x, o) for o in options))
    _numbers(schema, checks)
    _strings(schema, checks, formats)
    _arrays(schema, checks, formats)
    _objects(schema, checks, formats)
    if "allOf" in schema:
        checks.append(_all([_compile(s, formats) for s in schema["allOf"]]))
    if "anyOf" in schema:
        checks.append(_any([_compile(s, formats) for s in schema["anyOf"]]))
    if "oneOf" in schema:
        one = [_compile(s, formats) for s in schema["oneOf"]]
        checks.append(lambda x: sum(1 for f in one if f(x)) == 1)
    if "not" in schema:
        negated = _compile(schema["not"], formats)
        checks.append(lambda x: not negated(x))
    return _all(checks)


def _numbers(schema: dict[str, Any], checks: list[Check]) -> None:
    bounds: list[Callable[[Any], bool]] = []
    if "minimum" in schema:
        lo = schema["minimum"]
        bounds.append(lambda x: x >= lo)
    if "maximum" in schema:
        hi = schema["maximum"]
        bounds.append(lambda x: x <= hi)
    if "exclusiveMinimum" in schema:
        xlo = schema["exclusiveMinimum"]
        bounds.append(lambda x: x > xlo)
    if "exclusiveMaximum" in schema:
        xhi = schema["exclusiveMaximum"]
        bounds.append(lambda x: x < xhi)
    if bounds:
        bound = _all(bounds)
        checks.append(lambda x: not _is_number(x) or bound(x))


def _strings(schema: dict[str, Any], checks: list[Check], formats: Formats) -> None:
    preds: list[Callable[[str], bool]] = []
    fmt = formats.get(schema["format"]) if isinstance(schema.get("format"), str) else None
    if fmt is not None:
        preds.append(fmt)
    if "pattern" in schema:
        rx = re.compile(schema["pattern"])
        preds.append(lambda s: rx.search(s) is not None)
    if "minLength" in schema:
        n = schema["minLength"]
        preds.append(lambda s: len(s) >= n)
    if "maxLength" in schema:
        m = schema["maxLength"]
        preds.append(lambda s: len(s) <= m)
    if preds:
        text = _all(preds)
        checks.append(lambda x: not isinstance(x, str) or text(x))


def _unique(items: list[Any]) -> bool:
    return all(not equal(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items)))


def _arrays(schema: dict[str, Any], checks: list[Check], formats: Formats) -> None:
    preds: list[Callable[[list[Any]], bool]] = []
    if "items" in schema:
        item = _compile(schema["items"], formats)

        def items(xs: list[Any]) -> bool:
            for v in xs:  # noqa: SIM110 (a loop: all() would make a generator per call)
                if not item(v):
                    return False
            return True

        preds.append(items)
    if "minItems" in schema:
        n = schema["minItems"]
        preds.append(lambda xs: len(xs) >= n)
    if "maxItems" in schema:
        m = schema["maxItems"]
        preds.append(lambda xs: len(xs) <= m)
    if schema.get("uniqueItems") is True:
        preds.append(_unique)
    if preds:
        array = _all(preds)
        checks.append(lambda x: not isinstance(x, list) or array(x))


def _objects(schema: dict[str, Any], checks: list[Check], formats: Formats) -> None:
    preds: list[Callable[[dict[str, Any]], bool]] = []
    props = {k: _compile(v, formats) for k, v in (schema.get("properties") or {}).items()}
    patterns = [(re.compile(k), _compile(v, formats)) for k, v in (schema.get("patternProperties") or {}).items()]
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is True or extra == {} else _compile(extra, formats)
    if props or patterns or extra_check is not None:

        def members(obj: dict[str, Any]) -> bool:
            for k, v in obj.items():
                check = props.get(k)
                if check is not None and not patterns:  # the common case: a named property
                    if not check(v):
                        return False
                    continue
                known = False
                if check is not None:
                    known = True
                    if not check(v):
                        return False
                for rx, pcheck in patterns:
                    if rx.search(k) is not None:
                        known = True
                        if not pcheck(v):
                            return False
                if not known and extra_check is not None and not extra_check(v):
                    return False
            return True

        preds.append(members)
    if "required" in schema:
        required = list(schema["required"])

        def present(o: dict[str, Any]) -> bool:
            for k in required:  # noqa: SIM110 (a loop: all() would make a generator per call)
                if k not in o:
                    return False
            return True

        preds.append(present)
    if "propertyNames" in schema:
        names = _compile(schema["propertyNames"], formats)
        preds.append(lambda o: all(names(k) for k in o))
    if "minProperties" in schema:
        n = schema["minProperties"]
        preds.append(lambda o: len(o) >= n)
    if "maxProperties" in schema:
        m = schema["maxProperties"]
        preds.append(lambda o: len(o) <= m)
    if "dependentRequired" in schema:
        deps = {k: list(v) for k, v in schema["dependentRequired"].items()}
        preds.append(lambda o: all(all(d in o for d in ds) for k, ds in deps.items() if k in o))
    if preds:
        obj = _all(preds)
        checks.append(lambda x: not isinstance(x, dict) or obj(x))


_HANDLED = frozenset(
    {
        "type",
        "const",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "pattern",
        "minLength",
        "maxLength",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
    }
)
