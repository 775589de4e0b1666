"""Snapshots of one branch, read from table metadata: the ancestry, the window, and (capped) the
data files the window's snapshots added. Works on pyiceberg objects by attribute access only; the
one pyiceberg import (for manifest reads) is inside ``added_data_files``.

pyiceberg's ``snapshot.summary`` is a ``Summary`` model, not a dict:
``summary["missing"]`` is None, so ``"x" in summary`` is always true, and ``dict(summary)``
raises. ``summary_dict`` is the one place that turns it into a plain dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from streamwarden.iceberg import MAIN_BRANCH
from streamwarden.iceberg.lineage import CHECKPOINT_ID, JOB_ID, OPERATOR_ID, parse_checkpoint_id

DAY_MS = 86_400_000
MIN_HORIZON_MS = 7 * DAY_MS


@dataclass(frozen=True)
class WindowLimits:
    newest_n: int = 100  # always kept, whatever their age
    max_snapshots: int = 50_000  # hard cap on the window (lineage is linear in it)
    items: int = 500  # snapshots listed in facts.iceberg.snapshots.items (newest first)
    manifests: int = 500  # live data manifests written by window snapshots read for SW-TABLE-011, newest first
    manifest_entries: int = 200_000  # stop reading manifests after this many entries
    manifest_threads: int = 2  # manifests read at once (and held in memory at once)


def summary_dict(snapshot: Any) -> dict[str, str]:
    """A snapshot's summary as a plain ``dict[str, str]``, ``operation`` included as its string.

    Works for pyiceberg's ``Summary`` (whose ``in`` is always true and whose ``dict()`` raises),
    for a summary of None (v1 metadata may omit it) and for a plain mapping.
    """
    summary = getattr(snapshot, "summary", None)
    if summary is None:
        return {}
    extra = getattr(summary, "additional_properties", None)
    if extra is None:  # a plain mapping
        return {str(k): _str(v) for k, v in summary.items() if v is not None}
    out = {k if type(k) is str else str(k): v if type(v) is str else _str(v) for k, v in extra.items() if v is not None}
    op = getattr(summary, "operation", None)
    if op is not None:
        out["operation"] = _str(op)
    return out


def _str(value: Any) -> str:
    return str(getattr(value, "value", value))


def snapshot_item(snapshot: Any) -> dict[str, Any]:
    """The facts entry of one snapshot: ids, sequence, time, operation, summary (minus the
    per-partition ``partitions.*`` keys), and the three Flink lineage keys parsed."""
    summary = {k: v for k, v in summary_dict(snapshot).items() if not k.startswith("partitions.")}
    return {
        "snapshot_id": snapshot.snapshot_id,
        "parent_id": snapshot.parent_snapshot_id,
        "sequence_number": snapshot.sequence_number,
        "timestamp_ms": snapshot.timestamp_ms,
        "operation": summary.get("operation"),
        "schema_id": getattr(snapshot, "schema_id", None),
        "summary": summary,
        "job_id": summary.get(JOB_ID) or None,
        "operator_id": summary.get(OPERATOR_ID) or None,
        "checkpoint_id": parse_checkpoint_id(summary.get(CHECKPOINT_ID)),
    }


def ancestry(by_id: Mapping[int, Any], head_id: int | None, limit: int) -> tuple[list[Any], bool]:
    """Snapshots from ``head_id`` back along parent ids, newest first; stops at an expired
    parent, a cycle, or ``limit`` (then the second value is True)."""
    out: list[Any] = []
    seen: set[int] = set()
    current = head_id
    while current is not None and current in by_id and current not in seen:
        if len(out) >= limit:
            return out, True
        seen.add(current)
        snap = by_id[current]
        out.append(snap)
        current = snap.parent_snapshot_id
    return out, False


MAX_ANCESTRY = 200_000  # snapshots walked back from a branch head (metadata only, in memory)


def branch_ancestry(table: Any, branch: str) -> tuple[list[dict[str, Any]], bool]:
    """Snapshot items of ``branch``, newest first, and whether the walk reached the table's first
    snapshot (False when expiry removed older ones, or the walk hit MAX_ANCESTRY)."""
    md = table.metadata
    by_id = {s.snapshot_id: s for s in md.snapshots}
    refs = md.refs or {}
    head = refs[branch].snapshot_id if branch in refs else (md.current_snapshot_id if branch == MAIN_BRANCH else None)
    chain, capped = ancestry(by_id, head, MAX_ANCESTRY)
    return [snapshot_item(s) for s in chain], not capped and (not chain or _is_first_snapshot(chain[-1]))


def _is_first_snapshot(snap: Any) -> bool:
    """The table's first snapshot: no parent, and (format v2+) sequence number 1. Expiry leaves the
    oldest kept snapshot either with a dangling parent id (Java) or none at all (pyiceberg), but
    its sequence number still tells that older snapshots existed."""
    seq = getattr(snap, "sequence_number", None)
    return snap.parent_snapshot_id is None and (not isinstance(seq, int) or seq <= 1)


def window_horizon_ms(contract: Mapping[str, Any]) -> int:
    """max(retention.snapshots.max_age, retention.rollback_window, 7d), in ms."""
    retention = contract.get("retention") or {}
    snapshots = retention.get("snapshots") or {}
    values = [MIN_HORIZON_MS]
    for v in (snapshots.get("max_age"), retention.get("rollback_window")):
        if isinstance(v, int) and not isinstance(v, bool):
            values.append(v)
    return max(values)


def select_window(ancestors: list[Any], since_ms: int, newest_n: int) -> list[Any]:
    """The newest ``newest_n`` ancestors, plus every further one newer than ``since_ms``
    (stops at the first older one: ancestry runs back in time)."""
    out: list[Any] = []
    for i, snap in enumerate(ancestors):
        if i >= newest_n and (snap.timestamp_ms or 0) < since_ms:
            break
        out.append(snap)
    return out


def protected_ids(metadata: Any, by_id: Mapping[int, Any], default_min_keep: int) -> set[int]:
    """Snapshots that expiry keeps whatever their age: every ref's snapshot, and each branch's
    newest ``min-snapshots-to-keep`` ancestors (the ref's value, else the table's)."""
    keep: set[int] = set()
    for ref in (getattr(metadata, "refs", None) or {}).values():
        keep.add(ref.snapshot_id)
        if _str(getattr(ref, "snapshot_ref_type", "branch")) == "branch":
            n = ref.min_snapshots_to_keep or default_min_keep
            chain, _ = ancestry(by_id, ref.snapshot_id, max(1, n))
            keep.update(s.snapshot_id for s in chain)
    return keep


def added_data_files(table: Any, window: list[Any], limits: WindowLimits) -> dict[str, Any]:
    """Data files live in more than one manifest entry, among the manifests the window's
    snapshots wrote (SW-TABLE-011): a checkpoint committed twice re-adds the same paths.

    Cost: the head snapshot's manifest list (one read), then only the live data manifests whose
    ``added_snapshot_id`` is a window snapshot, newest first, capped by ``limits`` (see
    docs/facts-iceberg.md). Entries of those manifests are recorded whatever their status (ADDED,
    or EXISTING after a manifest merge, which keeps each entry's original snapshot id)."""
    from pyiceberg.manifest import ManifestContent

    io = table.io
    window_ids = {s.snapshot_id for s in window}
    manifests = [
        m for m in window[0].manifests(io) if m.content == ManifestContent.DATA and m.added_snapshot_id in window_ids
    ]
    manifests.sort(key=lambda m: m.sequence_number or 0, reverse=True)
    seen: dict[str, list[Any]] = {}
    read = entries = 0
    truncated = len(manifests) > limits.manifests
    errors: list[dict[str, Any]] = []

    def fetch(m: Any) -> tuple[Any, list[Any] | BaseException]:
        try:
            return m, m.fetch_manifest_entry(io, discard_deleted=True)
        except Exception as exc:  # an unreadable manifest: noted below, the others still count
            return m, exc

    selected = manifests[: limits.manifests]
    # Object stores answer in parallel; batches of `manifest_threads` keep at most that many
    # manifests' entries in memory at once, and stop at the entry cap.
    with ThreadPoolExecutor(max_workers=limits.manifest_threads) as pool:
        for start in range(0, len(selected), limits.manifest_threads):
            if entries >= limits.manifest_entries:
                truncated = True
                break
            for m, found in pool.map(fetch, selected[start : start + limits.manifest_threads]):
                if isinstance(found, BaseException):
                    errors.append({"manifest": m.manifest_path, "error": type(found).__name__})
                    continue
                read += 1
                for e in found:
                    entries += 1
                    sid = e.snapshot_id if e.snapshot_id is not None else m.added_snapshot_id
                    seen.setdefault(e.data_file.file_path, []).append(sid)
    duplicates = []
    for path, ids in seen.items():
        if len(ids) > 1:
            distinct = sorted(set(ids), key=ids.index)
            duplicates.append(
                {
                    "path": path,
                    "snapshot_ids": distinct,
                    "entries": len(ids),
                    "kind": "same_snapshot" if len(distinct) == 1 else "two_snapshots",
                }
            )
    return {
        "scanned": True,
        "manifests_in_window": len(manifests),
        "manifests_read": read,
        "entries_read": entries,
        "truncated": truncated,
        "duplicates": duplicates[:50],
        "duplicates_truncated": max(0, len(duplicates) - 50),
        "errors": errors[:20],
    }
