"""Regenerate the normalized-contract part of the policy input schema from the contract schema.

``contracts/schema/streamwarden-input.v1.schema.json`` describes the document every policy sees as
``input``. Its ``input.contract`` (and ``input.base.contract``) is the contract after
``streamwarden.contracts.normalize``, so that part is derived here from
``pipeline-contract.v1.schema.json`` rather than written by hand: every ``$defs`` entry whose name
starts with ``contract`` is rewritten by this script; the rest of the file (the facts, the base
document, the repository document) is hand-written and left as it is.

What normalization changes, and so what the derived part says:

- ``$defs/duration`` values become integer milliseconds, ``$defs/size`` values integer bytes;
- ``job.deployment`` is always a list of paths;
- ``table.properties`` values are Iceberg's strings (``true`` -> ``"true"``, ``5`` -> ``"5"``);
- ``table.schema[].type`` loses every space (``decimal(12, 2)`` -> ``decimal(12,2)``);
- ``waivers[]`` gain ``expires_end_ms``;
- enum values are lower case (the contract schema's enums already are; they are kept);
- what the schema gives a ``default`` is filled in when absent: ``schema_evolution`` and each of
  its keys are always present (``required``), so the input says which values are in force.

``contractHistory`` is what ``input.base.history[].contract`` keeps of an earlier version (the keys
``streamwarden.repo.pullrequest`` trims it to).

    python scripts/update_input_schema.py           # rewrite the derived part
    python scripts/update_input_schema.py --check   # exit 1 when it is stale (scripts/generate.py --check)
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

from generated import ROOT, write_or_check

from streamwarden.repo.pullrequest import _HISTORY_TABLE_KEYS

SCHEMA_DIR = ROOT / "contracts" / "schema"
CONTRACT = SCHEMA_DIR / "pipeline-contract.v1.schema.json"
INPUT = SCHEMA_DIR / "streamwarden-input.v1.schema.json"
PREFIX = "contract"  # every derived $defs entry's name starts with it; no hand-written one does

Schema = dict[str, Any]

UNIT_DEFS: dict[str, Schema] = {
    "duration": {
        "type": "integer",
        "minimum": 0,
        "description": "A duration in integer milliseconds (the contract's 90s is 90000, 7d is 604800000).",
        "examples": [500, 90000, 600000, 86400000, 604800000],
    },
    "size": {
        "type": "integer",
        "minimum": 0,
        "description": "A size in integer bytes (the contract's 512MiB is 536870912; binary multiples).",
        "examples": [536870912, 53687091200],
    },
}
UNIT_WORDS = {"duration": "In integer milliseconds.", "size": "In integer bytes."}


def _def_name(name: str) -> str:
    return f"{PREFIX}.{name}"


def _rewrite(node: Any) -> Any:
    """Every local ``$ref`` points at the prefixed copy; a duration or size says its unit."""
    if isinstance(node, list):
        return [_rewrite(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _rewrite(v) for k, v in node.items()}
    target = node.get("$ref")
    if isinstance(target, str) and target.startswith("#/$defs/"):
        name = target.rsplit("/", 1)[1]
        out["$ref"] = f"#/$defs/{_def_name(name)}"
        if name in UNIT_WORDS and isinstance(out.get("description"), str):
            out["description"] = f"{out['description']} {UNIT_WORDS[name]}"
    return out


def _field_type(original: Schema) -> Schema:
    return {
        "type": "string",
        "description": original["description"] + " Normalized: lower case, every space removed (decimal(12,2)).",
        "allOf": [{"pattern": original["pattern"]}, {"pattern": "^\\S+$"}],
        "examples": original.get("examples", []),
    }


def _require_defaults(node: Schema) -> None:
    """A property with a ``default`` is always present after normalization: required where it lives
    (and so are the objects above it that have one)."""
    props = node.get("properties")
    if not isinstance(props, dict):
        return
    filled = [k for k, sub in props.items() if isinstance(sub, dict) and "default" in sub]
    if filled:
        node["required"] = [*node.get("required", []), *(k for k in filled if k not in node.get("required", []))]
    for sub in props.values():
        if isinstance(sub, dict) and sub.get("type") == "object":
            _require_defaults(sub)


def normalized_defs(contract_schema: Schema) -> dict[str, Schema]:
    """The ``$defs`` entries of the input schema that describe the normalized contract."""
    src = copy.deepcopy(contract_schema)
    defs: dict[str, Schema] = {}
    for name, sub in src.get("$defs", {}).items():
        if name in UNIT_DEFS:
            defs[_def_name(name)] = UNIT_DEFS[name]
        elif name == "fieldType":
            defs[_def_name(name)] = _field_type(sub)
        else:
            defs[_def_name(name)] = _rewrite(sub)

    # no "type": input.contract and input.base.contract are object-or-null, and say so where they refer here
    root = {k: v for k, v in src.items() if k not in ("$schema", "$id", "$defs", "title", "type")}
    root = _rewrite(root)
    root["description"] = (
        "The pipeline contract as policies see it (input.contract): the YAML contract validated against "
        "pipeline-contract.v1.schema.json and normalized: durations in integer milliseconds, sizes in integer "
        "bytes, enum values lower case, job.deployment always a list, table.properties values strings, "
        "table.schema[].type without spaces, waivers[] with expires_end_ms, and the schema's defaults filled "
        "in: schema_evolution and each of its keys are always present (absent in the contract means "
        "compatibility backward, allow_renames false, coordinate_with_state false, protect_consumers true). "
        "Every other absent optional field stays absent: use object.get."
    )
    props = root["properties"]
    _require_defaults(root)

    deployment = props["job"]["properties"]["deployment"]
    props["job"]["properties"]["deployment"] = {
        "type": "array",
        "description": deployment["description"],
        "minItems": deployment["minItems"],
        "uniqueItems": deployment["uniqueItems"],
        "items": deployment["items"],
    }

    table_props = props["table"]["properties"]["properties"]
    table_props["additionalProperties"] = {"type": "string"}
    table_props["description"] = (
        "Iceberg table properties (string -> string); YAML booleans and numbers are normalized to "
        'Iceberg\'s string form (true -> "true", 5 -> "5").'
    )

    waiver = props["waivers"]["items"]["properties"]
    waiver["expires_end_ms"] = {
        "type": "integer",
        "description": (
            "Epoch ms of the first instant after the expires day in UTC: the waiver holds while "
            "input.now_ms < expires_end_ms. Present whenever expires is a real calendar date."
        ),
    }
    defs[PREFIX] = root

    table = props["table"]
    defs[f"{PREFIX}History"] = {
        "type": "object",
        "description": (
            "An earlier version of the base contract, as input.base.history[] keeps it: only what the schema "
            "compatibility rules read (table identifier, schema, format_version, partition_spec; schema_evolution), "
            "normalized like input.contract. Its table.schema lists only the fields whose state (name, id, type, "
            "required, ...) no newer version had."
        ),
        "additionalProperties": False,
        "required": ["table", "schema_evolution"],
        "properties": {
            "table": {
                "type": "object",
                "description": "The version's table section, trimmed.",
                "additionalProperties": False,
                "properties": {k: table["properties"][k] for k in _HISTORY_TABLE_KEYS},
            },
            "schema_evolution": props["schema_evolution"],
        },
    }
    return dict(sorted(defs.items()))


def updated(current: Schema, contract_schema: Schema) -> Schema:
    """``current`` with its derived ``$defs`` replaced (hand-written entries keep their order, first)."""
    out = dict(current)
    kept = {k: v for k, v in current.get("$defs", {}).items() if not k.startswith(PREFIX)}
    out["$defs"] = {**kept, **normalized_defs(contract_schema)}
    return out


def render(schema: Schema) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    contract_schema = json.loads(CONTRACT.read_text(encoding="utf-8"))
    current = json.loads(INPUT.read_text(encoding="utf-8"))
    new = updated(current, contract_schema)
    return 0 if write_or_check(INPUT, render(new), "update_input_schema.py", "--check" in argv) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
