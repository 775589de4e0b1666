"""Flink commit lineage along one branch of an Iceberg table. Pure: no I/O, no pyiceberg.

The Iceberg Flink sink stamps every snapshot it commits with ``flink.job-id``,
``flink.operator-id`` and ``flink.max-committed-checkpoint-id`` (docs/facts-iceberg.md).
Read along the branch's parent ancestry (oldest first), they tie each table state to the
checkpoint that produced it, and show:

- duplicates: the same (job, operator, checkpoint) committed by two snapshots (duplicate data);
- backwards: a (job, operator)'s checkpoint id below its previous commit (``same_job``: a restore
  from an older checkpoint under a kept job id), or a job that follows another on the same
  operator and starts at or below the checkpoint id its predecessor had committed (``new_job``:
  a restore from an older checkpoint or savepoint; the commits in between are replayed);
- interleavings: two job ids whose commits interleave (A B A): a second writer, which is a fork
  unless a declared backfill covers one of them. A restore (A A B B) is not an interleaving;
- missing lineage: non-maintenance snapshots that lack one of the three keys;
- out of band: non-maintenance snapshots with no ``flink.job-id`` at all (another writer).

Maintenance is the ``replace`` operation (compaction, manifest rewrites); expiry writes no snapshot.
``flink.max-committed-checkpoint-id`` of Long.MAX_VALUE marks a bounded job's end of input and
never counts as a rewind.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

JOB_ID = "flink.job-id"
OPERATOR_ID = "flink.operator-id"
CHECKPOINT_ID = "flink.max-committed-checkpoint-id"
END_INPUT_CHECKPOINT_ID = 9223372036854775807  # Long.MAX_VALUE, IcebergStreamWriter.END_INPUT_CHECKPOINT_ID
MAINTENANCE_OPERATIONS = frozenset({"replace"})
LIST_CAP = 50  # entries per anomaly list; the rest is counted in "truncated"
IDS_CAP = 20  # snapshot ids named per group


@dataclass
class _Group:
    job_id: str
    operator_id: str | None
    positions: list[int] = field(default_factory=list)
    snapshot_ids: list[Any] = field(default_factory=list)
    timestamps: list[Any] = field(default_factory=list)
    checkpoints: list[int | None] = field(default_factory=list)

    def real_checkpoints(self) -> list[int]:
        return [c for c in self.checkpoints if c is not None and c != END_INPUT_CHECKPOINT_ID]


def _summary(snapshot: Mapping[str, Any]) -> Mapping[str, Any]:
    s = snapshot.get("summary")
    if type(s) is dict:  # the common case, without the slower ABC check
        return s
    return s if isinstance(s, Mapping) else {}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def parse_checkpoint_id(value: Any) -> int | None:
    """``"42"`` -> 42; anything that is not a non-negative integer -> None."""
    text = _text(value)
    if text is None or not text.isdigit():
        return None
    return int(text)


def operation_of(snapshot: Mapping[str, Any]) -> str | None:
    op = snapshot.get("operation")
    if op is None:
        op = _summary(snapshot).get("operation")
    op = getattr(op, "value", op)  # tolerate a pyiceberg Operation enum
    return str(op).lower() if op is not None else None


def _capped(items: list[dict[str, Any]], name: str, truncated: dict[str, int]) -> list[dict[str, Any]]:
    if len(items) > LIST_CAP:
        truncated[name] = len(items) - LIST_CAP
        return items[:LIST_CAP]
    return items


def analyze_lineage(
    snapshots: Sequence[Mapping[str, Any]],
    declared_job_ids: Iterable[str] = (),
) -> dict[str, Any]:
    """Lineage facts for snapshots along one branch's ancestry, **oldest first**.

    Each snapshot is a mapping with ``snapshot_id``, ``timestamp_ms``, ``operation`` (or
    ``summary["operation"]``) and ``summary`` (a plain dict of the snapshot summary). A job id in
    ``declared_job_ids`` (the contract's ``backfills[].job_id``) marks the interleavings it is
    part of as declared. Lists are capped at LIST_CAP entries; ``truncated`` counts what was left.
    """
    declared = {j.lower() for j in declared_job_ids if isinstance(j, str)}
    groups: dict[tuple[str, str | None], _Group] = {}
    missing: dict[tuple[Any, ...], dict[str, Any]] = {}
    strangers: dict[tuple[Any, ...], dict[str, Any]] = {}
    lineage_positions: list[tuple[int, str]] = []
    for pos, snap in enumerate(snapshots):
        summary = _summary(snap)
        op = operation_of(snap)
        job, operator = _text(summary.get(JOB_ID)), _text(summary.get(OPERATOR_ID))
        checkpoint = parse_checkpoint_id(summary.get(CHECKPOINT_ID))
        if op not in MAINTENANCE_OPERATIONS:
            absent = [k for k, v in ((JOB_ID, job), (OPERATOR_ID, operator), (CHECKPOINT_ID, checkpoint)) if v is None]
            if absent:
                _add_to_bucket(
                    missing, (tuple(absent), job, op), snap, {"missing": absent, "job_id": job, "operation": op}
                )
            if job is None:
                writer = _text(summary.get("engine-name")) or _text(summary.get("spark.app.id"))
                _add_to_bucket(strangers, (op, writer), snap, {"operation": op, "writer": writer})
        if job is None:
            continue
        g = groups.setdefault((job, operator), _Group(job, operator))
        g.positions.append(pos)
        g.snapshot_ids.append(snap.get("snapshot_id"))
        g.timestamps.append(snap.get("timestamp_ms"))
        g.checkpoints.append(checkpoint)
        lineage_positions.append((pos, job))
    truncated: dict[str, int] = {}
    ordered = sorted(groups.values(), key=lambda g: g.positions[0])
    return {
        "snapshots": len(snapshots),
        "with_lineage": len(lineage_positions),
        "jobs": _jobs_in_order(lineage_positions),
        "groups": [_group_summary(g) for g in ordered],
        "duplicates": _capped(_duplicates(ordered), "duplicates", truncated),
        "backwards": _capped(_backwards(ordered), "backwards", truncated),
        "interleavings": _capped(_interleavings(lineage_positions, snapshots, declared), "interleavings", truncated),
        "missing_lineage": _capped(list(missing.values()), "missing_lineage", truncated),
        "out_of_band": _capped(list(strangers.values()), "out_of_band", truncated),
        "truncated": truncated,
    }


def _add_to_bucket(
    buckets: dict[tuple[Any, ...], dict[str, Any]], key: tuple[Any, ...], snap: Mapping[str, Any], base: dict[str, Any]
) -> None:
    b = buckets.get(key)
    if b is None:
        b = {**base, "count": 0, "snapshot_ids": [], "first_timestamp_ms": snap.get("timestamp_ms")}
        buckets[key] = b
    b["count"] += 1
    if len(b["snapshot_ids"]) < IDS_CAP:
        b["snapshot_ids"].append(snap.get("snapshot_id"))
    b["last_timestamp_ms"] = snap.get("timestamp_ms")


def _jobs_in_order(lineage_positions: list[tuple[int, str]]) -> list[str]:
    seen: dict[str, None] = {}
    for _, job in lineage_positions:
        seen.setdefault(job, None)
    return list(seen)


def _group_summary(g: _Group) -> dict[str, Any]:
    real = [c for c in g.checkpoints if c is not None]
    return {
        "job_id": g.job_id,
        "operator_id": g.operator_id,
        "snapshots": len(g.positions),
        "first_snapshot_id": g.snapshot_ids[0],
        "last_snapshot_id": g.snapshot_ids[-1],
        "first_timestamp_ms": g.timestamps[0],
        "last_timestamp_ms": g.timestamps[-1],
        "first_checkpoint_id": real[0] if real else None,
        "last_checkpoint_id": real[-1] if real else None,
        "max_checkpoint_id": max(real) if real else None,
    }


def _duplicates(groups: list[_Group]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for g in groups:
        by_checkpoint: dict[int, list[int]] = {}
        for i, c in enumerate(g.checkpoints):
            if c is not None:
                by_checkpoint.setdefault(c, []).append(i)
        for c, idxs in by_checkpoint.items():
            if len(idxs) > 1:
                out.append(
                    {
                        "job_id": g.job_id,
                        "operator_id": g.operator_id,
                        "checkpoint_id": c,
                        "snapshot_ids": [g.snapshot_ids[i] for i in idxs][:IDS_CAP],
                        "timestamps_ms": [g.timestamps[i] for i in idxs][:IDS_CAP],
                        "count": len(idxs),
                    }
                )
    return out


def _backwards(groups: list[_Group]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for g in groups:  # within one (job, operator): an id below the previous commit's
        prev: tuple[int, int] | None = None
        for i, c in enumerate(g.checkpoints):
            if c is None or c == END_INPUT_CHECKPOINT_ID:
                continue
            if prev is not None and c < prev[0]:
                out.append(_rewind("same_job", g, i, g, prev[1], prev[0]))
            prev = (c, i)
    by_operator: dict[str | None, list[_Group]] = {}
    for g in groups:
        by_operator.setdefault(g.operator_id, []).append(g)
    for seq in by_operator.values():  # a job taking over an operator from the job before it
        for before, after in itertools.pairwise(seq):
            if before.job_id == after.job_id or after.positions[0] < before.positions[-1]:
                continue  # interleaving writers are SW-TABLE-010's, not a restore
            if before.checkpoints[-1] == END_INPUT_CHECKPOINT_ID:
                continue  # the job before reached the end of its input: nothing to restore from
            b_real, a_real = before.real_checkpoints(), after.real_checkpoints()
            if not b_real or not a_real or a_real[0] > b_real[-1]:
                continue
            last_i = max(i for i, c in enumerate(before.checkpoints) if c == b_real[-1])
            first_i = next(i for i, c in enumerate(after.checkpoints) if c == a_real[0])
            out.append(_rewind("new_job", after, first_i, before, last_i, b_real[-1]))
    return out


def _rewind(kind: str, g: _Group, i: int, pg: _Group, pi: int, prev_checkpoint: int) -> dict[str, Any]:
    checkpoint = g.checkpoints[i]
    return {
        "kind": kind,
        "job_id": g.job_id,
        "operator_id": g.operator_id,
        "snapshot_id": g.snapshot_ids[i],
        "timestamp_ms": g.timestamps[i],
        "checkpoint_id": checkpoint,
        "previous_job_id": pg.job_id,
        "previous_snapshot_id": pg.snapshot_ids[pi],
        "previous_checkpoint_id": prev_checkpoint,
        "replayed_checkpoints": {"from": checkpoint, "to": prev_checkpoint},
    }


def _interleavings(
    lineage_positions: list[tuple[int, str]], snapshots: Sequence[Mapping[str, Any]], declared: set[str]
) -> list[dict[str, Any]]:
    spans: dict[str, list[int]] = {}
    for pos, job in lineage_positions:
        spans.setdefault(job, []).append(pos)
    jobs = sorted(spans, key=lambda j: spans[j][0])
    out: list[dict[str, Any]] = []
    for i, a in enumerate(jobs):
        a_pos = spans[a]
        for b in jobs[i + 1 :]:
            b_first = spans[b][0]
            if b_first > a_pos[-1]:
                break  # b (and every later job) starts after a's last commit: a takeover, not a fork
            k = bisect.bisect_left(a_pos, b_first)  # a commits before and after b's first commit
            declared_by = next((j for j in (a, b) if j.lower() in declared), None)
            out.append(
                {
                    "job_ids": [a, b],
                    "declared_by": declared_by,
                    "pattern": [_point(snapshots[p]) for p in (a_pos[k - 1], b_first, a_pos[k])],
                    "snapshot_counts": [len(a_pos), len(spans[b])],
                }
            )
            if len(out) > LIST_CAP * 4:
                return out  # pathological: hundreds of writers; the cap reports the rest as truncated
    return out


def _point(snap: Mapping[str, Any]) -> dict[str, Any]:
    summary = _summary(snap)
    return {
        "job_id": _text(summary.get(JOB_ID)),
        "snapshot_id": snap.get("snapshot_id"),
        "checkpoint_id": parse_checkpoint_id(summary.get(CHECKPOINT_ID)),
    }
