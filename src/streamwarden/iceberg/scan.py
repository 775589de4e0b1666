"""Scan planning for data facts: which files a reader of the current snapshot must read, and which
delete files apply to them. Pure planning over pyiceberg metadata: no Spark here.

pyiceberg 0.12's ``plan_files`` refuses tables with equality deletes, so the manifests of the
snapshot are read directly (``ManifestFile.fetch_manifest_entry``, which applies sequence-number
inheritance) and the Iceberg spec's rules are applied here:

- a position delete file applies to a data file in the same partition (spec and values) whose
  data sequence number is less than or equal to the delete file's;
- an equality delete file applies to a data file whose data sequence number is strictly less than
  the delete file's, in the same partition, or in any partition when the delete file's spec is
  unpartitioned (a global equality delete).

Columns are identified by field id. A data file without field ids in its Parquet schema (imported
with ``add_files``) is read by name through the table's name mapping (``schema.name-mapping.default``);
only tables with a name mapping pay for the footer reads that detect such files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

POSITION_FILE_PATH_ID = 2147483546  # reserved field ids of a position delete file (Iceberg spec)
POSITION_POS_ID = 2147483545
DAY_MS = 86_400_000
TIME_TYPES = ("timestamptz", "timestamp", "date", "long", "int")  # usable as freshness/retention columns


@dataclass(frozen=True)
class FieldInfo:
    field_id: int
    name: str
    type: str  # Iceberg type as pyiceberg prints it: long, timestamptz, decimal(12, 2), ...
    required: bool


@dataclass
class DataFileInfo:
    index: int
    path: str
    data_seq: int
    snapshot_id: int | None  # the snapshot that added the file
    spec_id: int
    partition_key: str
    record_count: int
    size: int
    lower: dict[int, Any] = field(default_factory=dict)  # decoded lower bounds of the fields of interest
    upper: dict[int, Any] = field(default_factory=dict)
    null_counts: dict[int, int] = field(default_factory=dict)
    names: dict[int, str] | None = None  # None: read by field id; else field id -> column name in this file


@dataclass
class DeleteFileInfo:
    path: str
    kind: str  # "position" | "equality"
    seq: int
    snapshot_id: int | None
    spec_id: int
    partition_key: str | None  # None: a global equality delete (unpartitioned spec)
    record_count: int
    size: int
    equality_ids: tuple[int, ...] = ()


@dataclass
class TablePlan:
    snapshot_id: int | None
    sequence_number: int
    timestamp_ms: int | None
    schema_id: int
    format_version: int
    fields: dict[int, FieldInfo]  # top-level fields of the current schema
    types: dict[int, str]  # every field id any schema has known, with its latest type (for equality deletes)
    data_files: list[DataFileInfo]
    delete_files: list[DeleteFileInfo]
    ancestry: list[Any]  # snapshots of the current ancestry, newest first
    name_mapping: dict[int, list[str]] | None = None
    unsupported: list[str] = field(default_factory=list)

    def field_by_name(self, name: str) -> FieldInfo | None:
        return next((f for f in self.fields.values() if f.name == name), None)


def plan_table(table: Any, bound_ids: Iterable[int] = ()) -> TablePlan:
    """Plan a read of ``table`` at its current snapshot. ``bound_ids`` are the field ids whose column
    metrics (bounds, null counts) are decoded for incremental pruning."""
    from pyiceberg.manifest import DataFileContent

    md = table.metadata
    schema = table.schema()
    fields = {f.field_id: FieldInfo(f.field_id, f.name, str(f.field_type), bool(f.required)) for f in schema.fields}
    iceberg_types: dict[int, Any] = {}
    for old in md.schemas:
        for f in old.fields:
            iceberg_types[f.field_id] = f.field_type
    for f in schema.fields:
        iceberg_types[f.field_id] = f.field_type
    snap = table.current_snapshot()
    plan = TablePlan(
        snapshot_id=snap.snapshot_id if snap else None,
        sequence_number=int(snap.sequence_number or 0) if snap else 0,
        timestamp_ms=snap.timestamp_ms if snap else None,
        schema_id=schema.schema_id,
        format_version=int(md.format_version),
        fields=fields,
        types={fid: str(t) for fid, t in iceberg_types.items()},
        data_files=[],
        delete_files=[],
        ancestry=_ancestry(md, snap),
    )
    if snap is None:
        return plan
    specs = md.specs()
    wanted = [fid for fid in bound_ids if fid in iceberg_types]
    for manifest in snap.manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            df = entry.data_file
            spec_id = int(df.spec_id)
            key = _partition_key(spec_id, df.partition)
            seq = int(entry.sequence_number or 0)
            fmt = str(getattr(df.file_format, "value", df.file_format)).upper()
            if df.content == DataFileContent.DATA:
                if fmt != "PARQUET":
                    plan.unsupported.append(f"data file {df.file_path} is {fmt}: only Parquet data files are read")
                    continue
                info = DataFileInfo(
                    len(plan.data_files),
                    df.file_path,
                    seq,
                    entry.snapshot_id,
                    spec_id,
                    key,
                    int(df.record_count),
                    int(df.file_size_in_bytes),
                )
                _decode_metrics(info, df, wanted, iceberg_types)
                plan.data_files.append(info)
            elif fmt != "PARQUET":
                plan.unsupported.append(f"delete file {df.file_path} is {fmt} (deletion vectors are not supported)")
            else:
                is_eq = df.content == DataFileContent.EQUALITY_DELETES
                unpartitioned = specs[spec_id].is_unpartitioned()
                plan.delete_files.append(
                    DeleteFileInfo(
                        df.file_path,
                        "equality" if is_eq else "position",
                        seq,
                        entry.snapshot_id,
                        spec_id,
                        None if (is_eq and unpartitioned) else key,
                        int(df.record_count),
                        int(df.file_size_in_bytes),
                        tuple(df.equality_ids or ()) if is_eq else (),
                    )
                )
    mapping = md.name_mapping()
    if mapping is not None:
        plan.name_mapping = {m.field_id: list(m.names) for m in mapping if m.field_id is not None}
    return plan


def _ancestry(md: Any, snap: Any) -> list[Any]:
    by_id = {s.snapshot_id: s for s in md.snapshots}
    out, seen = [], set()
    cur = snap
    while cur is not None and cur.snapshot_id not in seen:
        out.append(cur)
        seen.add(cur.snapshot_id)
        cur = by_id.get(cur.parent_snapshot_id) if cur.parent_snapshot_id is not None else None
    return out


def _partition_key(spec_id: int, partition: Any) -> str:
    values = [partition[i] for i in range(len(partition))] if partition is not None else []
    return f"{spec_id}:{json.dumps(values, default=str, separators=(',', ':'))}"


def _decode_metrics(info: DataFileInfo, df: Any, wanted: list[int], types: Mapping[int, Any]) -> None:
    from pyiceberg.conversions import from_bytes

    lower, upper, nulls = df.lower_bounds or {}, df.upper_bounds or {}, df.null_value_counts or {}
    for fid in wanted:
        t = types[fid]
        if not t.is_primitive:
            continue
        if fid in nulls and nulls[fid] is not None:
            info.null_counts[fid] = int(nulls[fid])
        try:
            if fid in lower:
                info.lower[fid] = from_bytes(t, lower[fid])
            if fid in upper:
                info.upper[fid] = from_bytes(t, upper[fid])
        except Exception:  # an undecodable bound is a missing bound: the file stays a candidate
            info.lower.pop(fid, None)
            info.upper.pop(fid, None)


def to_epoch_ms(type_str: str, value: Any) -> int | None:
    """A stored value (or decoded bound) of a time column as epoch milliseconds (UTC).
    timestamps are microseconds, dates days; long/int columns are taken as epoch milliseconds."""
    if value is None:
        return None
    if type_str in ("timestamptz", "timestamp"):
        return math.floor(int(value) / 1000)
    if type_str in ("timestamptz_ns", "timestamp_ns"):
        return math.floor(int(value) / 1_000_000)
    if type_str == "date":
        return int(value) * DAY_MS
    if type_str in ("long", "int"):
        return int(value)
    return None


def applicable_deletes(files: list[DataFileInfo], deletes: list[DeleteFileInfo]) -> list[DeleteFileInfo]:
    """The delete files that can apply to at least one of ``files`` (partition and sequence rules)."""
    if not files:
        return []
    min_seq: dict[str, int] = {}
    for f in files:
        min_seq[f.partition_key] = min(f.data_seq, min_seq.get(f.partition_key, f.data_seq))
    overall = min(min_seq.values())
    out = []
    for d in deletes:
        if d.kind == "position":
            lowest = min_seq.get(d.partition_key or "")
            if lowest is not None and lowest <= d.seq:
                out.append(d)
        else:
            lowest = overall if d.partition_key is None else min_seq.get(d.partition_key)
            if lowest is not None and lowest < d.seq:
                out.append(d)
    return out


def snapshots_after(plan: TablePlan, since_id: int) -> list[Any] | None:
    """Snapshots of the current ancestry newer than ``since_id`` (newest first), or None when
    ``since_id`` is not an ancestor of the current snapshot (expired, rolled back, another branch)."""
    out: list[Any] = []
    for s in plan.ancestry:
        if s.snapshot_id == since_id:
            return out
        out.append(s)
    return None


@dataclass
class Pruning:
    """What file metrics say about the old (previously checked) files, per purpose."""

    key_ids: list[int] = field(default_factory=list)
    null_ids: list[int] = field(default_factory=list)
    retention: tuple[int, int] | None = None  # (field id, cutoff ms)
    freshness_id: int | None = None


def old_candidates(
    plan: TablePlan, new: list[DataFileInfo], old: list[DataFileInfo], p: Pruning
) -> dict[int, list[str]]:
    """Old files that file metrics cannot clear, with the reasons: their key range overlaps the new
    keys' range (uniqueness), they may hold nulls, rows older than the retention cutoff, or they lack
    the bound that freshness reads from metadata. Returns {file index: [reasons]}."""
    reasons: dict[int, list[str]] = {}
    hull = _key_hull(new, p.key_ids) if new else None
    for f in old:
        why = []
        if hull is not None and all(_overlaps(f, fid, hull.get(fid)) for fid in p.key_ids):
            why.append("keys")
        if any(f.null_counts.get(fid, 1) > 0 for fid in p.null_ids):
            why.append("nulls")
        if p.retention is not None:
            fid, cutoff = p.retention
            low = to_epoch_ms(plan.types.get(fid, ""), f.lower.get(fid))
            if low is None or low < cutoff:
                why.append("retention")
        if p.freshness_id is not None and f.upper.get(p.freshness_id) is None:
            why.append("freshness")
        if why:
            reasons[f.index] = why
    return reasons


def _key_hull(files: list[DataFileInfo], key_ids: list[int]) -> dict[int, tuple[Any, Any] | None] | None:
    """Per key column, the (min, max) over ``files``' bounds; None for a column some file lacks."""
    if not key_ids:
        return None
    hull: dict[int, tuple[Any, Any] | None] = {}
    for fid in key_ids:
        lows: list[Any] = [f.lower.get(fid) for f in files]
        highs: list[Any] = [f.upper.get(fid) for f in files]
        if any(v is None for v in lows + highs):
            hull[fid] = None
        else:
            try:
                hull[fid] = (min(lows), max(highs))
            except TypeError:
                hull[fid] = None
    return hull


def _overlaps(f: DataFileInfo, fid: int, rng: tuple[Any, Any] | None) -> bool:
    lo, hi = f.lower.get(fid), f.upper.get(fid)
    if rng is None or lo is None or hi is None:
        return True
    try:
        return bool(lo <= rng[1] and hi >= rng[0])
    except TypeError:
        return True


def metadata_max_ms(plan: TablePlan, files: list[DataFileInfo], fid: int) -> int | None:
    values = [to_epoch_ms(plan.types.get(fid, ""), f.upper.get(fid)) for f in files]
    known = [v for v in values if v is not None]
    return max(known) if known else None


def metadata_min_ms(plan: TablePlan, files: list[DataFileInfo], fid: int) -> int | None:
    values = [to_epoch_ms(plan.types.get(fid, ""), f.lower.get(fid)) for f in files]
    known = [v for v in values if v is not None]
    return min(known) if known else None


def detect_name_mapped(table: Any, plan: TablePlan, files: list[DataFileInfo]) -> None:
    """For tables with a name mapping: read the Parquet footers of ``files`` and mark the ones
    without field ids with the column names to read by (their ``names``)."""
    if not plan.name_mapping:
        return
    import pyarrow.parquet as pq

    for f in files:
        with table.io.new_input(f.path).open() as stream:
            arrow_schema = pq.ParquetFile(stream).schema_arrow
        has_ids = any((fld.metadata or {}).get(b"PARQUET:field_id") is not None for fld in arrow_schema)
        if has_ids:
            continue
        present = set(arrow_schema.names)
        f.names = {}
        for fid, names in plan.name_mapping.items():
            hit = next((n for n in names if n in present), None)
            if hit is not None:
                f.names[fid] = hit
