"""Validation of a policy input document against its JSON Schema.

``contracts/schema/streamwarden-input.v1.schema.json`` describes the document every policy sees as
``input`` (docs/input-document.md): the normalized contract, the base-branch document, the facts of
every source, ``now_ms``, ``environment``, ``mode``; or the repository document of a pull-request
check. :func:`input_schema_errors` checks a document against it, as the engine will see it (after
a JSON round trip: tuples are arrays, keys strings), and says what does not conform.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from streamwarden.core.resources import load_schema
from streamwarden.core.secrets import scrub

INPUT_SCHEMA = "streamwarden-input.v1.schema.json"
MESSAGE_LIMIT = 300


@functools.cache
def input_validator() -> jsonschema.Draft202012Validator:
    """The compiled validator of the input schema (built once per process; the schema itself is
    checked against the metaschema by tests/core/test_input_schema.py, not on every start)."""
    return jsonschema.Draft202012Validator(load_schema(INPUT_SCHEMA))


def input_schema_errors(doc: dict[str, Any]) -> list[str]:
    """Every way ``doc`` departs from the input schema, as ``"$.json.path: message"``; empty when it conforms."""
    try:
        as_seen = json.loads(json.dumps(doc, allow_nan=False))
    except (TypeError, ValueError) as exc:
        return [f"$: not a JSON document ({_clip(str(exc))})"]
    errors = sorted(input_validator().iter_errors(as_seen), key=lambda e: [str(p) for p in e.absolute_path])
    return [_render(e) for e in errors]


def json_path(parts: Iterable[Any]) -> str:
    """``["facts", "flink", "jobs", 0]`` -> ``$.facts.flink.jobs[0]`` (odd keys quoted)."""
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif isinstance(p, str) and p.isidentifier():
            out += f".{p}"
        else:
            out += f"[{json.dumps(str(p))}]"
    return out


def _render(error: ValidationError) -> str:
    message = _clip(error.message)
    if error.context:  # anyOf / oneOf: say what the closest alternative wanted
        inner = best_match(error.context)
        if inner is not None:
            message += f" (closest: {json_path(inner.absolute_path)}: {_clip(inner.message)})"
    return f"{json_path(error.absolute_path)}: {message}"


def _clip(text: str) -> str:
    text = scrub(text)  # before the cut: a value quoted in the message may hold a credential
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"
