"""The incremental data check's memory: per contract and rule set on a table, the last snapshot
whose rows were checked clean for those rules. A JSON file, written atomically:

    {"version": 2, "checks": {"<table uuid>/<pipeline>/<rules digest>": {
        "table": "lake.sales.orders", "pipeline": "orders-enrichment",
        "rules": {"unique": ["order_id"], "not_null": [...], "freshness": "updated_at", "retention": "order_ts"},
        "snapshot_id": 123, "checked_snapshot_id": 456, "checked_at_ms": 1764000000000}}}

``snapshot_id`` is where the next incremental check of that contract starts; ``checked_snapshot_id``
is the last snapshot scanned. They differ when the scanned rows held duplicates or nulls: the
watermark is held so that those rows are scanned again, and the finding stays until the data is
fixed. One contract's run never moves another contract's watermark, nor the same contract's under
other rules (a changed ``quality.unique`` starts over in full). Version 1 files (one watermark per
table, shared by every contract on it) are not used: their entries are dropped, and the first run
scans in full.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

STATE_VERSION = 2


class DataStateError(Exception):
    """The state file exists but cannot be used."""


def load_state(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"version": STATE_VERSION, "checks": {}}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataStateError(f"data state file {path} cannot be read: {exc}") from None
    if isinstance(doc, dict) and doc.get("version") == 1 and isinstance(doc.get("tables"), dict):
        return {"version": STATE_VERSION, "checks": {}}  # per table: cannot tell whose watermark it was
    if not isinstance(doc, dict) or not isinstance(doc.get("checks"), dict):
        raise DataStateError(f"data state file {path} is not a streamwarden data state (no 'checks' mapping)")
    return doc


def rules_of(rules: Mapping[str, Any]) -> str:
    """A short digest of what a contract checks on the table (its columns per rule)."""
    text = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def state_key(table_uuid: str, pipeline: str, rules: Mapping[str, Any]) -> str:
    return f"{table_uuid}/{pipeline}/{rules_of(rules)}"


def last_checked(state: dict[str, Any] | None, key: str) -> int | None:
    entry = (state or {}).get("checks", {}).get(key) or {}
    value = entry.get("snapshot_id")
    return int(value) if isinstance(value, int) else None


def record(
    state: dict[str, Any],
    key: str,
    *,
    name: str,
    pipeline: str,
    rules: Mapping[str, Any],
    snapshot_id: int | None,
    facts: dict[str, Any],
    since: int | None,
    now_ms: int,
) -> dict[str, Any]:
    """Advance the contract's checked snapshot to ``snapshot_id``, unless the scanned rows held
    duplicates or nulls (then keep ``since``), in ``state`` (in memory: :func:`write_state` saves
    it). Returns what was recorded, for the scan facts."""
    dirty = bool((facts.get("unique") or {}).get("duplicate_keys")) or any(
        (v.get("nulls") or 0) > 0 for v in (facts.get("not_null") or {}).values()
    )
    advance_to = since if dirty else snapshot_id
    state.setdefault("checks", {})[key] = {
        "table": name,
        "pipeline": pipeline,
        "rules": dict(rules),
        "snapshot_id": advance_to,
        "checked_snapshot_id": snapshot_id,
        "checked_at_ms": now_ms,
    }
    state["version"] = STATE_VERSION
    state.pop("tables", None)
    return {"snapshot_id": advance_to, "held": dirty}


def write_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
