"""JSON Schema validation with messages a person can act on: file:line, field path, did-you-mean."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from streamwarden.contracts.fastcheck import Check, compile_schema
from streamwarden.contracts.formats import FORMATS, format_checker
from streamwarden.contracts.schemawalk import Schema, SchemaWalker, walker_for
from streamwarden.core.dates import calendar_problem
from streamwarden.core.errors import InputError
from streamwarden.core.escape import terminal
from streamwarden.core.secrets import scrub
from streamwarden.core.units import parse_duration, parse_size, suggest_duration, suggest_size
from streamwarden.yamlsafe.read import YamlDocument, join_index, join_key

if TYPE_CHECKING:  # jsonschema is imported when a document is invalid (for its messages), not before
    import jsonschema
    from jsonschema.exceptions import ValidationError

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


_VALIDATORS: dict[int, tuple[Schema, jsonschema.Draft202012Validator]] = {}
_FAST: dict[int, tuple[Schema, Check | None]] = {}


def validator_for(schema: Schema) -> jsonschema.Draft202012Validator:
    """A compiled validator per schema object (schemas are loaded once and cached). It asserts the
    ``date`` and ``date-time`` formats: a date must be a real calendar day (formats.py)."""
    hit = _VALIDATORS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(inline_refs(schema), format_checker=format_checker())
    _VALIDATORS[id(schema)] = (schema, validator)
    return validator


def fast_check_for(schema: Schema) -> Check | None:
    """The compiled yes/no check of ``schema`` (fastcheck.py), or None when it cannot be compiled."""
    hit = _FAST.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    # the shipped schemas are checked against the metaschema by the tests (tests/check/test_warm_path.py), not
    # on every run: a run whose documents are valid never imports jsonschema
    check = compile_schema(inline_refs(schema), formats=FORMATS)
    _FAST[id(schema)] = (schema, check)
    return check


def inline_refs(schema: Schema) -> Schema:
    """The schema with every local ``$ref`` replaced by its target: validation without reference
    lookups is several times faster (1,000 contracts are validated per run in the benchmark)."""
    defs = schema.get("$defs", {})

    def expand(node: Any, depth: int = 0) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and depth < 16:
                target = defs.get(ref.rsplit("/", 1)[1], {})
                merged = {k: v for k, v in node.items() if k != "$ref"}
                for k, v in target.items():
                    merged.setdefault(k, v)
                return expand(merged, depth + 1)
            return {k: expand(v, depth) for k, v in node.items()}
        if isinstance(node, list):
            return [expand(v, depth) for v in node]
        return node

    return {k: expand(v) for k, v in schema.items() if k != "$defs"} | {"$defs": defs}


def path_of(parts: Iterable[Any]) -> str:
    p = ""
    for part in parts:
        p = join_index(p, part) if isinstance(part, int) else join_key(p, str(part))
    return p


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "empty" if value is None else type(value).__name__


def _suggest(word: str, choices: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def validate_document(doc: YamlDocument, data: Any, schema: Schema, what: str = "contract") -> list[InputError]:
    """Every schema error of ``data`` (the prepared document) as an InputError with file:line.

    A valid document is recognised by the compiled fast check; jsonschema runs for the messages."""
    fast = fast_check_for(schema)
    if fast is not None and fast(data):
        return []
    validator = validator_for(schema)
    walker = walker_for(schema)
    defs = schema.get("$defs", {})
    duration_pattern = defs.get("duration", {}).get("pattern")
    size_pattern = defs.get("size", {}).get("pattern")
    errors: list[InputError] = []
    for err in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        errors.extend(_convert(err, doc, walker, duration_pattern, size_pattern, what))
    # one error per field: keep the first message for each (path, message)
    unique: dict[tuple[str | None, str], InputError] = {}
    for e in errors:
        unique.setdefault((e.path, e.message), e)
    return sorted(unique.values(), key=lambda e: (e.line or 0, e.path or ""))


def _leaf(err: ValidationError) -> ValidationError:
    """For anyOf/oneOf, the most specific sub-error."""
    if err.validator in ("anyOf", "oneOf") and err.context:
        from jsonschema.exceptions import best_match

        best = best_match(err.context)
        if best is not None:
            return _leaf(best)
    return err


def _convert(
    err: ValidationError,
    doc: YamlDocument,
    walker: SchemaWalker,
    duration_pattern: str | None,
    size_pattern: str | None,
    what: str,
) -> list[InputError]:
    err = _leaf(err)
    path = path_of(err.absolute_path)
    shown = path or "(top level)"
    file = doc.file
    v = err.validator
    inst = err.instance

    def here(message: str, hint: str | None = None) -> list[InputError]:
        """One error at the failing field."""
        return [InputError(message, file=file, line=doc.line_of(path), path=shown, hint=hint)]

    if v == "additionalProperties" and isinstance(inst, dict):
        allowed = list((err.schema.get("properties") or {}).keys())
        patterns = list((err.schema.get("patternProperties") or {}).keys())
        out = []
        for key in inst:
            if key in allowed or any(re.search(p, key) for p in patterns):
                continue
            child = join_key(path, key)
            hint = None
            guess = _suggest(key, allowed)
            elsewhere = [p for p in _property_paths(walker.root).get(key, []) if p != child]
            if guess:
                hint = f"did you mean '{guess}'?"
            elif elsewhere:  # a key at the wrong level: `interval:` at the top of a contract
                hint = _belongs_elsewhere(key, elsewhere[:3], path, allowed)
            elif allowed:
                hint = "allowed here: " + ", ".join(allowed)
            out.append(InputError(f"unknown key '{key}'", file=file, line=doc.line_of(child), path=child, hint=hint))
        return out
    if v == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        name = missing[0] if missing else str(err.validator_value)
        child = join_key(path, name)
        where = f"in {path}" if path else f"at the top of the {what}"
        return [
            InputError(
                f"missing required field '{name}' {where}",
                file=file,
                line=doc.line_of(path),
                path=child,
                hint=_required_hint(child),
            )
        ]
    if v == "type":
        expected = err.validator_value
        names = expected if isinstance(expected, list) else [expected]
        words = " or ".join(_TYPE_WORDS.get(str(n), str(n)) for n in names)
        return here(
            f"must be {words}, not {_describe(inst)} ({_short(inst)})",
        )
    if v == "pattern" and isinstance(inst, str):
        control = _control_char(inst, str(err.validator_value))
        if control is not None:
            return here(
                f"contains the control character {terminal(inst[control])} at character {control + 1}",
                hint=_CONTROL_HINT,
            )
        if err.validator_value == duration_pattern:
            return [_unit_error(parse_duration, inst, file, doc.line_of(path), shown)]
        if err.validator_value == size_pattern:
            return [_unit_error(parse_size, inst, file, doc.line_of(path), shown)]
        desc = err.schema.get("description")
        return here(
            f"{_short(inst)} is not a valid value"
            + (f": {desc}" if desc else f" (expected pattern {err.validator_value})"),
        )
    if v == "maxLength" and isinstance(inst, str):
        return here(
            f"is {len(inst):,} characters long, more than the {err.validator_value:,} allowed",
            hint="shorten it: contract text reaches CI logs and pull-request comments "
            "(link to a longer document instead)",
        )
    if v == "format" and isinstance(inst, str):
        pattern = err.schema.get("pattern")
        if isinstance(pattern, str) and re.search(pattern, inst) is None:
            return []  # not even the shape of a date: the pattern's error says so
        problem = calendar_problem(inst)
        return here(
            f"{inst!r} is not a real calendar date: {problem}" if problem else _plain(err),
            hint="write a date that exists (YYYY-MM-DD)",
        )
    if v == "enum":
        choices = [str(c) for c in err.validator_value]
        guess = _suggest(str(inst).lower().replace("-", "_"), choices) if isinstance(inst, str) else None
        return here(
            f"{_short(inst)} is not one of: {', '.join(choices)}",
            hint=f"did you mean '{guess}'?" if guess else None,
        )
    if v == "const":
        return here(
            f"must be {err.validator_value!r}, not {_short(inst)}",
            hint=f"did you mean '{err.validator_value}'?" if isinstance(err.validator_value, str) else None,
        )
    return here(_plain(err))


_CONTROL_HINT = (
    "remove it: contract text reaches CI logs, terminals and pull-request comments, so terminal escapes, "
    "carriage returns and other control characters are not allowed (free text such as a reason may span lines)"
)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _control_char(text: str, pattern: str) -> int | None:
    """Where ``text`` holds a control character the field's pattern refuses, or None."""
    for m in _CONTROL.finditer(text):
        if re.search(pattern, f"a{m.group()}a") is None:
            return m.start()
    return None


def _required_hint(child: str) -> str | None:
    if child in ("apiVersion", "kind"):
        return "a contract starts with `apiVersion: streamwarden/v1` and `kind: PipelineContract`"
    return None


def _unit_error(parse: Any, text: str, file: str, line: int, path: str) -> InputError:
    try:
        parse(text)
        message = f"{text!r} is not valid here"
    except ValueError as exc:
        message = str(exc)
    if text.strip().startswith("-"):
        message = f"{text!r} is negative; " + message.split(": ", 1)[-1]
    return InputError(message, file=file, line=line, path=path, hint=_unit_hint(parse, text))


def _unit_hint(parse: Any, text: str) -> str | None:
    """did you mean `10m` (for 10min), `512MiB` (for 512MB, with a word on binary units)?"""
    if parse is parse_duration:
        guess = suggest_duration(text)
        return f"did you mean '{guess}'?" if guess else None
    sized = suggest_size(text)
    if sized is None:
        return None
    guess, decimal = sized
    note = " (the contract uses binary units: 1KiB = 1024 bytes, 1MiB = 1024 KiB, 1GiB = 1024 MiB)"
    return f"did you mean '{guess}'?" + (note if decimal else "")


_PROPERTY_PATHS: dict[int, tuple[Schema, dict[str, list[str]]]] = {}


def _belongs_elsewhere(key: str, paths: list[str], here: str, allowed: list[str]) -> str:
    """Where a key written at the wrong level is allowed (``'interval' is allowed in checkpoint,
    not at the top level: did you mean 'checkpoint.interval'?``), and what is allowed here."""

    def place(path: str) -> str:
        parent = path.rpartition(".")[0]
        return f"in {parent}" if parent else "at the top level"

    hint = (
        f"'{key}' is allowed {' and '.join(dict.fromkeys(place(p) for p in paths))}, not {place(join_key(here, key))}"
    )
    nested = [p for p in paths if p != key]  # a path other than the key itself says where to move it
    if nested:
        return hint + ": did you mean " + " or ".join(f"'{p}'" for p in nested) + "?"
    return hint + (f"; allowed {place(join_key(here, key))}: " + ", ".join(allowed) if allowed else "")


def _property_paths(schema: Schema) -> dict[str, list[str]]:
    """Every property name of the schema -> the field paths it has (``interval`` ->
    ``checkpoint.interval``, ...; list items as ``[]``), shortest first: where a key written at
    the wrong level belongs."""
    hit = _PROPERTY_PATHS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    walker = walker_for(schema)
    out: dict[str, list[str]] = {}
    seen: set[tuple[int, str]] = set()

    def walk(node: Any, path: str, depth: int) -> None:
        node = walker.resolve(node) if isinstance(node, dict) else node
        if not isinstance(node, dict) or depth > 12 or (id(node), path) in seen:
            return
        seen.add((id(node), path))
        for name, sub in (node.get("properties") or {}).items():
            child = join_key(path, name)
            out.setdefault(name, []).append(child)
            walk(sub, child, depth + 1)
        items = node.get("items")
        if isinstance(items, dict):
            walk(items, path + "[]", depth + 1)
        for key in ("anyOf", "oneOf", "allOf"):
            for option in node.get(key) or []:
                walk(option, path, depth + 1)

    walk(schema, "", 0)
    for paths in out.values():
        paths.sort(key=lambda p: (p.count(".") + p.count("["), p))
    _PROPERTY_PATHS[id(schema)] = (schema, out)
    return out


def _short(value: Any) -> str:
    """A value quoted in a message: scrubbed before it is cut (a cut could split a credential and
    let its first part through), at most 60 characters."""
    text = scrub(repr(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _plain(err: ValidationError) -> str:
    msg = scrub(str(err.message))  # the validator's message quotes the value: scrubbed, then cut
    return msg if len(msg) <= 200 else msg[:197] + "..."
