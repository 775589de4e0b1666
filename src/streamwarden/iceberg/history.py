"""What happened to a branch that its ancestry alone no longer shows: rollbacks (the branch ref
moved back, or onto another lineage), cherry-picks, and deletes of data the Flink sink wrote. Read
from the table's metadata log (the previous metadata files, through the table's FileIO, bounded)
and, for the main branch, its snapshot log; facts only, SW-REC-007 decides.

A previous metadata file is read as JSON for three things only: the branch's head (its ref, or
``current-snapshot-id`` for the main branch of a table without refs), and each snapshot's parent,
time and summary (so a snapshot that left the ancestry and was expired since is still known).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streamwarden.core.serverhttp import InflateError, inflate_capped
from streamwarden.iceberg import MAIN_BRANCH
from streamwarden.iceberg.lineage import JOB_ID

MAX_METADATA_FILES = 50  # newest previous metadata files read
MAX_METADATA_BYTES = 64 * 1024 * 1024  # one metadata file (the same cap as a REST catalog's answer)
MAX_CHANGES = 50  # changes listed, newest first; the rest is counted
MAX_IDS = 20  # snapshot ids named per change
MAX_WALK = 10_000  # parents walked for one ancestry test
SOURCE_SNAPSHOT_ID = "source-snapshot-id"  # the summary key a cherry-pick writes (Java SnapshotSummary)
PUBLISHED_WAP_ID = "published-wap-id"
DELETE_OPERATIONS = frozenset({"delete", "overwrite"})


class MetadataReadError(Exception):
    """A previous metadata file that could not be read (missing, too large, not JSON)."""


@dataclass
class Known:
    """Snapshots known from the current and the previous metadata files: id -> (parent, time, summary)."""

    parents: dict[int, int | None] = field(default_factory=dict)
    times: dict[int, int | None] = field(default_factory=dict)
    summaries: dict[int, dict[str, str]] = field(default_factory=dict)

    def add(self, sid: int, parent: int | None, ts: int | None, summary: Mapping[str, Any]) -> None:
        self.parents.setdefault(sid, parent)
        self.times.setdefault(sid, ts)
        self.summaries.setdefault(sid, {str(k): str(v) for k, v in summary.items() if v is not None})

    def ancestry(self, head: int | None) -> list[int]:
        out: list[int] = []
        seen: set[int] = set()
        while head is not None and head not in seen and len(out) < MAX_WALK:
            seen.add(head)
            out.append(head)
            head = self.parents.get(head)
        return out

    def job(self, sid: int) -> str | None:
        return (self.summaries.get(sid) or {}).get(JOB_ID) or None


def read_metadata_json(io: Any, location: str, cap: int = MAX_METADATA_BYTES) -> dict[str, Any]:
    """One metadata file as JSON (gzip allowed), at most ``cap`` bytes."""
    try:
        with io.new_input(location).open() as stream:
            data = stream.read(cap + 1)
    except Exception as exc:
        raise MetadataReadError(f"{type(exc).__name__}: {exc}") from exc
    if len(data) > cap:
        raise MetadataReadError(f"larger than {cap} bytes")
    if data[:2] == b"\x1f\x8b":
        try:
            data = inflate_capped(data, "gzip", cap)  # a bomb stops at the cap, never inflated whole
        except InflateError as exc:
            if exc.kind == "corrupt":
                raise MetadataReadError("not gzip: the file does not inflate") from None
            raise MetadataReadError(f"larger than {cap} bytes once decompressed") from None
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise MetadataReadError(f"not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise MetadataReadError("not a JSON object")
    return doc


def head_of(doc: Mapping[str, Any], branch: str) -> int | None:
    """The branch's head in one metadata document (None: the branch does not exist there)."""
    refs = doc.get("refs")
    if isinstance(refs, Mapping) and isinstance(refs.get(branch), Mapping):
        sid = refs[branch].get("snapshot-id")
        return sid if isinstance(sid, int) else None
    if branch == MAIN_BRANCH:  # a table without refs (format v1): the current snapshot is main's head
        sid = doc.get("current-snapshot-id")
        return sid if isinstance(sid, int) and sid != -1 else None
    return None


def _learn(known: Known, doc: Mapping[str, Any]) -> None:
    for s in doc.get("snapshots") or []:
        if isinstance(s, Mapping) and isinstance(s.get("snapshot-id"), int):
            parent = s.get("parent-snapshot-id")
            summary = s.get("summary")
            known.add(
                s["snapshot-id"],
                parent if isinstance(parent, int) else None,
                s.get("timestamp-ms") if isinstance(s.get("timestamp-ms"), int) else None,
                summary if isinstance(summary, Mapping) else {},
            )


@dataclass
class Heads:
    """The branch's head over time, oldest first: (time, head, where it was read)."""

    points: list[tuple[int, int | None, str | None]]
    in_log: int
    read: int
    unreadable: list[dict[str, str]]


def branch_heads(table: Any, branch: str, known: Known, limit: int = MAX_METADATA_FILES) -> Heads:
    """The branch's heads from the newest ``limit`` previous metadata files (in the log's order),
    the main branch's snapshot log before them when the log holds more files than were read, and
    the current metadata last."""
    md = table.metadata
    log = list(getattr(md, "metadata_log", None) or [])  # in commit order (times come from writers' clocks)
    chosen = log[-limit:] if limit > 0 else []
    points: list[tuple[int, int | None, str | None]] = []
    unreadable: list[dict[str, str]] = []
    read = 0
    for entry in chosen:
        try:
            doc = read_metadata_json(table.io, entry.metadata_file)
        except MetadataReadError as exc:
            unreadable.append({"file": str(entry.metadata_file), "error": str(exc)[:300]})
            continue
        read += 1
        _learn(known, doc)
        points.append((int(entry.timestamp_ms), head_of(doc, branch), str(entry.metadata_file)))
    if branch == MAIN_BRANCH and len(log) > len(chosen):
        # the snapshot log: main's current snapshot before the oldest metadata file read
        first = points[0][0] if points else None
        older = [
            (int(e.timestamp_ms), int(e.snapshot_id), None)
            for e in getattr(md, "snapshot_log", None) or []
            if first is None or e.timestamp_ms < first
        ]
        points = sorted(older, key=lambda p: p[0]) + points
    refs = md.refs or {}
    current = (
        refs[branch].snapshot_id if branch in refs else (md.current_snapshot_id if branch == MAIN_BRANCH else None)
    )
    points.append((int(md.last_updated_ms), current, getattr(table, "metadata_location", None)))
    return Heads(points, len(log), read, unreadable[:5])


def ref_moves(heads: Sequence[tuple[int, int | None, str | None]], known: Known, branch: str) -> list[dict[str, Any]]:
    """Each time the branch's head moved to a snapshot its previous head does not descend into:
    ``rollback`` (to an ancestor of the previous head) or ``reset`` (onto another lineage). The
    snapshots that left the ancestry are the previous head's ancestors down to the lineage the
    new head shares with it. Oldest first."""
    out: list[dict[str, Any]] = []
    prev: int | None = None
    for ts, head, where in heads:
        if head is None:
            prev = None  # the branch was removed: a later ref starts anew
            continue
        if prev is not None and head != prev:
            new_line = set(known.ancestry(head))
            if prev not in new_line:
                left = [s for s in _until(known.ancestry(prev), new_line)]
                jobs = sorted({j for j in (known.job(s) for s in left) if j})
                out.append(
                    {
                        "kind": "rollback" if head in set(known.ancestry(prev)) else "reset",
                        "branch": branch,
                        "timestamp_ms": ts,
                        "snapshot_id": head,
                        "from_snapshot_id": prev,
                        "removed_snapshot_ids": left[:MAX_IDS],
                        "removed_count": len(left),
                        "flink_job_ids": jobs[:MAX_IDS],
                        "metadata_file": where,
                    }
                )
        prev = head
    return out


def _until(chain: Iterable[int], stop: set[int]) -> Iterable[int]:
    for s in chain:
        if s in stop:
            return
        yield s


def cherry_picks(items: Sequence[Mapping[str, Any]], branch: str) -> list[dict[str, Any]]:
    """Snapshots of the branch's window (facts items, newest first) that a cherry-pick wrote."""
    out = []
    for it in items:
        summary = it.get("summary") or {}
        source = summary.get(SOURCE_SNAPSHOT_ID)
        if source is None:
            continue
        out.append(
            {
                "kind": "cherry_pick",
                "branch": branch,
                "timestamp_ms": it.get("timestamp_ms"),
                "snapshot_id": it.get("snapshot_id"),
                "source_snapshot_id": _int(source),
                "published_wap_id": summary.get(PUBLISHED_WAP_ID),
                "flink_job_ids": [it["job_id"]] if it.get("job_id") else [],
            }
        )
    return out


def delete_candidates(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Window snapshots (newest first) that delete rows and were not committed by a Flink sink
    (the sink's own upsert commits carry its job id): a delete, or an overwrite that removed data
    files, records, or added delete files."""
    out = []
    for it in items:
        if it.get("operation") not in DELETE_OPERATIONS or it.get("job_id"):
            continue
        summary = it.get("summary") or {}
        if any(_int(summary.get(k)) for k in ("deleted-data-files", "deleted-records", "added-delete-files")):
            out.append(it)
    return out


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def summary_counts(summary: Mapping[str, Any]) -> dict[str, int | None]:
    return {
        k.replace("-", "_"): _int(summary.get(k))
        for k in ("deleted-data-files", "deleted-records", "added-delete-files", "added-records")
    }
