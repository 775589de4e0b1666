"""The incremental data check's memory: per table (keyed by the table's UUID), the last snapshot
whose rows were checked clean. A JSON file, written atomically:

    {"version": 1, "tables": {"<table uuid>": {"table": "lake.sales.orders", "snapshot_id": 123,
                                               "checked_snapshot_id": 456, "checked_at_ms": 1764000000000}}}

``snapshot_id`` is where the next incremental check starts; ``checked_snapshot_id`` is the last
snapshot scanned. They differ when the scanned rows held duplicates or nulls: the watermark is
held so that those rows are scanned again, and the finding stays until the data is fixed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATE_VERSION = 1


class DataStateError(Exception):
    """The state file exists but cannot be used."""


def load_state(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"version": STATE_VERSION, "tables": {}}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataStateError(f"data state file {path} cannot be read: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tables"), dict):
        raise DataStateError(f"data state file {path} is not a streamwarden data state (no 'tables' mapping)")
    return doc


def last_checked(state: dict[str, Any] | None, key: str) -> int | None:
    entry = (state or {}).get("tables", {}).get(key) or {}
    value = entry.get("snapshot_id")
    return int(value) if isinstance(value, int) else None


def save_state(
    path: Path,
    state: dict[str, Any],
    key: str,
    name: str,
    snapshot_id: int | None,
    facts: dict[str, Any],
    since: int | None,
    now_ms: int,
) -> dict[str, Any]:
    """Advance the table's checked snapshot to ``snapshot_id``, unless the scanned rows held
    duplicates or nulls (then keep ``since``). Returns what was recorded, for the scan facts."""
    dirty = bool((facts.get("unique") or {}).get("duplicate_keys")) or any(
        (v.get("nulls") or 0) > 0 for v in (facts.get("not_null") or {}).values()
    )
    advance_to = since if dirty else snapshot_id
    state.setdefault("tables", {})[key] = {
        "table": name,
        "snapshot_id": advance_to,
        "checked_snapshot_id": snapshot_id,
        "checked_at_ms": now_ms,
    }
    state["version"] = STATE_VERSION
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return {"file": str(path), "snapshot_id": advance_to, "held": dirty}
