"""``facts.iceberg.history``: the branch's rollbacks, cherry-picks and deletes of Flink-written data,
and what each clean-up after a duplicate did to the duplicated rows (docs/facts-iceberg.md).
Facts only: SW-REC-007 decides, SW-FACT-001 reports what could not be read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streamwarden.iceberg.catalog import describe
from streamwarden.iceberg.cleanup import data_loss, removed_entries
from streamwarden.iceberg.history import (
    MAX_CHANGES,
    MAX_IDS,
    MAX_METADATA_FILES,
    Known,
    branch_heads,
    cherry_picks,
    delete_candidates,
    ref_moves,
    summary_counts,
)
from streamwarden.iceberg.snapshots import summary_dict

MAX_CLEANUPS = 5  # newest clean-ups after a duplicate whose rows are compared
MAX_DELETES = 10  # newest deletes whose removed files are attributed to their writers


def history_facts(
    table: Any,
    contract: Mapping[str, Any],
    branch: str,
    head_id: int | None,
    items: Sequence[Mapping[str, Any]],
    lineage: Mapping[str, Any],
    files: Mapping[str, Any],
) -> dict[str, Any]:
    """``items``: the window's snapshot items, newest first."""
    known = Known()
    for s in table.metadata.snapshots:
        known.add(s.snapshot_id, s.parent_snapshot_id, s.timestamp_ms, summary_dict(s))
    heads = branch_heads(table, branch, known)
    changes = ref_moves(heads.points, known, branch) + cherry_picks(items, branch)
    deletes = delete_candidates(items)
    errors: list[dict[str, Any]] = []
    for i, it in enumerate(deletes):
        changes.append(_delete_change(table, it, branch, known, attribute=i < MAX_DELETES, errors=errors))
    changes.sort(key=lambda c: c.get("timestamp_ms") or 0, reverse=True)
    cleanups = []
    if head_id is not None:
        for it in [d for d in deletes if _after_duplicates(d, lineage, files, known)][:MAX_CLEANUPS]:
            try:
                cleanups.append(data_loss(table, it, head_id, contract))
            except Exception as exc:  # an unreadable file or scan: a gap SW-FACT-001 reports
                errors.append({"snapshot_id": it.get("snapshot_id"), "error": describe(exc)})
    unreadable = heads.unreadable
    error = None
    if unreadable:
        first = unreadable[0]
        error = (
            f"{len(unreadable)} previous metadata file(s) could not be read, first {first['file']}: {first['error']}"
        )
    elif errors:
        error = f"the files of snapshot {errors[0]['snapshot_id']} could not be read: {errors[0]['error']}"
    return {
        "available": error is None,
        "error": error,
        "metadata_files": {"in_log": heads.in_log, "read": heads.read, "limit": MAX_METADATA_FILES},
        "unreadable": unreadable,
        "changes": changes[:MAX_CHANGES],
        "changes_truncated": max(0, len(changes) - MAX_CHANGES),
        "cleanups": cleanups,
    }


def _delete_change(
    table: Any, it: Mapping[str, Any], branch: str, known: Known, *, attribute: bool, errors: list[dict[str, Any]]
) -> dict[str, Any]:
    """A delete or overwrite with the writers of the data files it removed: ``flink_written`` is
    True when a removed file was added by a Flink commit, False when every removed file is known
    and none was, None when that cannot be told (delete files only, format v1, not read)."""
    change: dict[str, Any] = {
        "kind": "delete",
        "branch": branch,
        "timestamp_ms": it.get("timestamp_ms"),
        "snapshot_id": it.get("snapshot_id"),
        "operation": it.get("operation"),
        **summary_counts(it.get("summary") or {}),
        "removed_from_snapshot_ids": [],
        "flink_job_ids": [],
        "flink_written": None,
    }
    if not attribute:
        return change
    try:
        removed = removed_entries(table, int(it["snapshot_id"]))
    except Exception as exc:
        errors.append({"snapshot_id": it.get("snapshot_id"), "error": describe(exc)})
        return change
    adders = [f["added_snapshot_id"] for f in removed["files"]]
    known_adders = sorted({a for a in adders if a is not None})
    jobs = sorted({j for j in (known.job(a) for a in known_adders) if j})
    change["removed_from_snapshot_ids"] = known_adders[:MAX_IDS]
    change["flink_job_ids"] = jobs[:MAX_IDS]
    if jobs:
        change["flink_written"] = True
    elif adders and None not in adders and not removed["delete_files_added"]:
        change["flink_written"] = False
    return change


def _after_duplicates(
    it: Mapping[str, Any], lineage: Mapping[str, Any], files: Mapping[str, Any], known: Known
) -> bool:
    """A clean-up follows a duplicate: a checkpoint committed twice before it (facts.iceberg.lineage),
    or a data file still live twice (facts.iceberg.files) added before it."""
    ts = it.get("timestamp_ms") or 0
    for d in lineage.get("duplicates") or []:
        if any((t or 0) <= ts for t in d.get("timestamps_ms") or []):
            return True
    for d in files.get("duplicates") or []:
        if any((known.times.get(s) or 0) <= ts for s in d.get("snapshot_ids") or []):
            return True
    return False
