"""The ledger table's schema (docs/ledger.md documents it column by column) and the decision id.

Field ids are fixed here; PyIceberg assigns the table's own on creation. pyiceberg is imported
inside the functions: importing this module costs nothing on the static path."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

# the columns, in order: (name, kind, required). kind: string | long | timestamptz | list<string> |
# list<long> | consumers
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("decision_id", "string", True),
    ("recorded_at", "timestamptz", True),
    ("tool_version", "string", False),
    ("repo_commit", "string", False),
    ("pipeline", "string", True),
    ("environment", "string", True),
    ("verb", "string", True),
    ("decision", "string", True),
    ("reasons", "list<string>", False),
    ("savepoint_path", "string", False),
    ("checkpoint_id", "long", False),
    ("job_id", "string", False),
    ("table_identifier", "string", False),
    ("restore_snapshot_id", "long", False),
    ("replay_from_checkpoint", "long", False),
    ("replay_to_checkpoint", "long", False),
    ("replay_snapshot_ids", "list<long>", False),
    ("duplicate_risk", "string", False),
    ("rollback_target_snapshot_id", "long", False),
    ("consumers", "consumers", False),
    ("notified", "list<string>", False),
    ("note", "string", False),
    ("evidence_json", "string", False),
)
CONSUMER_FIELDS: tuple[tuple[str, str], ...] = (
    ("name", "string"),
    ("contact", "string"),
    ("freshness", "string"),
    ("freshness_lost_ms", "long"),
)
# what decides a decision's id: its content, never the time it was taken or recorded
ID_FIELDS: tuple[str, ...] = (
    "pipeline",
    "environment",
    "verb",
    "decision",
    "reasons",
    "savepoint_path",
    "checkpoint_id",
    "job_id",
    "table_identifier",
    "restore_snapshot_id",
    "replay_from_checkpoint",
    "replay_to_checkpoint",
    "replay_snapshot_ids",
    "rollback_target_snapshot_id",
    "note",
)
ID_LENGTH = 20  # hex digits of SHA-256 (80 bits): a tag name stays short, collisions stay out of reach


def decision_id(row: Mapping[str, Any]) -> str:
    """The id of the decision a row records: SHA-256 over the canonical JSON of its ``ID_FIELDS``
    (pipeline, environment, verb, decision, reasons, restore source, snapshot, replay range,
    rollback target, note). A retry of the same decision has the same id."""
    content = {k: row.get(k) for k in ID_FIELDS}
    content["reasons"] = sorted(str(r) for r in row.get("reasons") or [])
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_LENGTH]


def iceberg_schema() -> Any:
    """The ledger's ``pyiceberg.schema.Schema``."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import (
        IcebergType,
        ListType,
        LongType,
        NestedField,
        StringType,
        StructType,
        TimestamptzType,
    )

    next_id = len(COLUMNS) + 1

    def fresh() -> int:
        nonlocal next_id
        next_id += 1
        return next_id - 1

    def plain(kind: str) -> IcebergType:
        return {"string": StringType(), "long": LongType(), "timestamptz": TimestamptzType()}[kind]

    def typed(kind: str) -> IcebergType:
        if kind.startswith("list<"):
            return ListType(element_id=fresh(), element_type=plain(kind[5:-1]), element_required=False)
        if kind == "consumers":
            struct = StructType(*(NestedField(fresh(), n, plain(k), required=False) for n, k in CONSUMER_FIELDS))
            return ListType(element_id=fresh(), element_type=struct, element_required=False)
        return plain(kind)

    fields = [NestedField(i, name, typed(kind), required=req) for i, (name, kind, req) in enumerate(COLUMNS, 1)]
    return Schema(*fields, identifier_field_ids=[])


# what the read side keeps of a row (input.ledger.rows): the columns a rule can use
READ_COLUMNS: tuple[str, ...] = (
    "decision_id",
    "recorded_at",
    "verb",
    "decision",
    "pipeline",
    "environment",
    "table_identifier",
    "restore_snapshot_id",
    "rollback_target_snapshot_id",
    "replay_snapshot_ids",
    "checkpoint_id",
    "savepoint_path",
)
