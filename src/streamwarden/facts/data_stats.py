"""The measurements of a data scan, over a DataFrame of live rows (columns ``c<field id>``), and the
per-snapshot row counts compared with the snapshot summaries (SW-DATA-004).

One Spark action computes everything but the duplicate samples: with a uniqueness key, rows are
grouped by the key and the per-key partial aggregates are aggregated again (one shuffle); without a
key, one global aggregate (no shuffle). Samples are a second action, run only when duplicates exist.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamwarden.iceberg.scan import TIME_TYPES, DataFileInfo, DeleteFileInfo, TablePlan

MAX_SAMPLES = 10
MAX_MISMATCHES = 10
SUMMARY_COUNTS = {  # summary key -> what the scan counts for it
    "added-records": "data",
    "added-position-deletes": "position",
    "added-equality-deletes": "equality",
}


@dataclass
class Measures:
    fresh: tuple[int, str] | None = None  # (field id, Iceberg type)
    retention: tuple[int, str, int] | None = None  # (field id, Iceberg type, cutoff ms)
    null_ids: list[int] = field(default_factory=list)
    key_ids: list[int] = field(default_factory=list)

    def read_ids(self) -> list[int]:
        ids = [*self.key_ids, *self.null_ids]
        if self.fresh:
            ids.append(self.fresh[0])
        if self.retention:
            ids.append(self.retention[0])
        return list(dict.fromkeys(ids))


# --- what to measure, from the contract ------------------------------------------------------


def not_null_columns(contract: Mapping[str, Any]) -> list[str]:
    declared = list((contract.get("quality") or {}).get("not_null") or [])
    for f in (contract.get("table") or {}).get("schema") or []:
        if isinstance(f, Mapping) and f.get("required") is True and isinstance(f.get("name"), str):
            declared.append(f["name"])
    return list(dict.fromkeys(declared))


def time_column(
    plan: TablePlan, spec: Mapping[str, Any] | None, m: Measures, kind: str, now_ms: int
) -> dict[str, Any] | None:
    if not spec or not spec.get("column"):
        return None
    name = str(spec["column"])
    info = plan.field_by_name(name)
    out: dict[str, Any] = {
        "column": name,
        "field_id": info.field_id if info else None,
        "type": info.type if info else None,
        "missing": info is None,
    }
    if info is None:
        return out
    if info.type not in TIME_TYPES:
        out["error"] = f"column {name} is {info.type}: use timestamptz, timestamp, date or an epoch-millisecond long"
        return out
    if kind == "fresh":
        m.fresh = (info.field_id, info.type)
    else:
        cutoff = now_ms - int(spec.get("max_age") or 0)
        out["cutoff_ms"], out["cutoff"] = cutoff, iso_ms(cutoff)
        m.retention = (info.field_id, info.type, cutoff)
    return out


def keys_and_nulls(
    plan: TablePlan, quality: Mapping[str, Any], contract: Mapping[str, Any], m: Measures
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    unique = None
    if quality.get("unique"):
        cols = [str(c) for c in quality["unique"]]
        missing = [c for c in cols if plan.field_by_name(c) is None]
        unique = {"columns": cols, "missing": missing, "duplicate_keys": None, "duplicate_rows": None, "samples": []}
        if not missing:
            m.key_ids = [plan.field_by_name(c).field_id for c in cols]  # type: ignore[union-attr]
    in_quality = {str(c) for c in quality.get("not_null") or []}
    nulls: dict[str, Any] = {}
    for name in not_null_columns(contract):
        info = plan.field_by_name(name)
        declared = (["quality.not_null"] if name in in_quality else []) + (
            ["table.schema"] if name in _required_names(contract) else []
        )
        nulls[name] = {
            "field_id": info.field_id if info else None,
            "missing": info is None,
            "nulls": None,
            "declared_in": declared,
        }
        if info is not None:
            m.null_ids.append(info.field_id)
    return unique, nulls


def _required_names(contract: Mapping[str, Any]) -> set[str]:
    return {
        str(f.get("name"))
        for f in (contract.get("table") or {}).get("schema") or []
        if isinstance(f, Mapping) and f.get("required") is True
    }


# --- measuring ---------------------------------------------------------------------------------


def empty_result(m: Measures) -> dict[str, Any]:
    return {
        "rows": 0,
        "nulls": dict.fromkeys(m.null_ids, 0),
        "fresh_max": None,
        "ret_min": None,
        "expired": 0,
        "dup_keys": 0,
        "dup_rows": 0,
    }


def aggregate(live: Any, m: Measures) -> dict[str, Any]:
    """One action over the live rows: row count, nulls per column, max of the freshness column,
    min of the retention column and rows before its cutoff, duplicate keys and surplus rows."""
    return result_for(aggregate_all(live, [m]), m)


def aggregate_all(live: Any, needs: list[Measures]) -> dict[str, Any]:
    """What every contract of a shared scan measures, over one DataFrame of live rows: the union of
    their columns, time columns (with each retention cutoff) and uniqueness keys. The first key is
    grouped together with every other measure (one shuffle, one action); each further distinct key
    is one more grouping action. :func:`result_for` picks one contract's measures from the result."""
    from pyspark.sql import functions as F

    from streamwarden.iceberg.deletes import col_name, epoch_ms

    def one(c: Any) -> Any:
        return F.when(c, F.lit(1)).otherwise(F.lit(0))

    null_ids = list(dict.fromkeys(fid for m in needs for fid in m.null_ids))
    fresh = list(dict.fromkeys(m.fresh for m in needs if m.fresh))
    retention = list(dict.fromkeys(m.retention for m in needs if m.retention))
    keys = list(dict.fromkeys(tuple(m.key_ids) for m in needs if m.key_ids))
    parts: dict[str, Any] = {"_n": F.count(F.lit(1))}
    for fid in null_ids:
        parts[f"_null{fid}"] = F.sum(one(F.col(col_name(fid)).isNull()))
    for fid, ftype in fresh:
        parts[f"_fmax{fid}"] = F.max(epoch_ms(F.col(col_name(fid)), ftype))
    for i, (rid, rtype, cutoff) in enumerate(retention):
        ms = epoch_ms(F.col(col_name(rid)), rtype)
        parts[f"_rmin{rid}"] = F.min(ms)
        parts[f"_expired{i}"] = F.sum(one(ms < F.lit(cutoff)))
    dups: dict[tuple[int, ...], tuple[int, int]] = {}
    if keys:
        first = [col_name(fid) for fid in keys[0]]
        grouped = live.groupBy(*first).agg(*[v.alias(k) for k, v in parts.items()])
        dup = _dup_condition(F, first)
        final = [F.sum("_n").alias("_n")]
        final += [F.sum(k).alias(k) for k in parts if k.startswith(("_null", "_expired"))]
        final += [F.max(k).alias(k) for k in parts if k.startswith("_fmax")]
        final += [F.min(k).alias(k) for k in parts if k.startswith("_rmin")]
        final += [F.sum(one(dup)).alias("_dupkeys"), F.sum(F.when(dup, F.col("_n") - 1).otherwise(0)).alias("_duprows")]
        got = grouped.agg(*final).collect()[0].asDict()
        dups[keys[0]] = (int(got.get("_dupkeys") or 0), int(got.get("_duprows") or 0))
        for key in keys[1:]:
            cols = [col_name(fid) for fid in key]
            per_key = live.groupBy(*cols).agg(F.count(F.lit(1)).alias("_n"))
            cond = _dup_condition(F, cols)
            row = per_key.agg(
                F.sum(one(cond)).alias("_dupkeys"), F.sum(F.when(cond, F.col("_n") - 1).otherwise(0)).alias("_duprows")
            ).collect()[0]
            dups[key] = (int(row["_dupkeys"] or 0), int(row["_duprows"] or 0))
    else:
        got = live.agg(*[v.alias(k) for k, v in parts.items()]).collect()[0].asDict()
    return {
        "rows": int(got.get("_n") or 0),
        "nulls": {fid: int(got.get(f"_null{fid}") or 0) for fid in null_ids},
        "fresh_max": {fid: _int_or_none(got.get(f"_fmax{fid}")) for fid, _ in fresh},
        "ret_min": {rid: _int_or_none(got.get(f"_rmin{rid}")) for rid, _, _ in retention},
        "expired": {r: int(got.get(f"_expired{i}") or 0) for i, r in enumerate(retention)},
        "dups": dups,
    }


def _dup_condition(F: Any, cols: list[str]) -> Any:
    """A key (of the per-key counts ``_n``) that occurs more than once, with no null part."""
    cond = F.lit(True)
    for k in cols:
        cond = cond & F.col(k).isNotNull()
    return cond & (F.col("_n") > 1)


def empty_all(needs: list[Measures]) -> dict[str, Any]:
    """:func:`aggregate_all`'s result for no rows."""
    return {
        "rows": 0,
        "nulls": {fid: 0 for m in needs for fid in m.null_ids},
        "fresh_max": {m.fresh[0]: None for m in needs if m.fresh},
        "ret_min": {m.retention[0]: None for m in needs if m.retention},
        "expired": {m.retention: 0 for m in needs if m.retention},
        "dups": {tuple(m.key_ids): (0, 0) for m in needs if m.key_ids},
    }


def result_for(shared: Mapping[str, Any], m: Measures) -> dict[str, Any]:
    """One contract's measures out of a shared result, in the shape the facts are built from."""
    dup_keys, dup_rows = shared["dups"].get(tuple(m.key_ids), (0, 0)) if m.key_ids else (0, 0)
    return {
        "rows": shared["rows"],
        "nulls": {fid: shared["nulls"].get(fid, 0) for fid in m.null_ids},
        "fresh_max": shared["fresh_max"].get(m.fresh[0]) if m.fresh else None,
        "ret_min": shared["ret_min"].get(m.retention[0]) if m.retention else None,
        "expired": shared["expired"].get(m.retention, 0) if m.retention else 0,
        "dup_keys": dup_keys,
        "dup_rows": dup_rows,
    }


def duplicate_samples(live: Any, key_ids: list[int], names: Mapping[int, str]) -> list[dict[str, Any]]:
    """Up to ten duplicated keys, most repeated first: [{"key": {column: value}, "count": n}]."""
    from pyspark.sql import functions as F

    from streamwarden.iceberg.deletes import col_name

    keys = [col_name(fid) for fid in key_ids]
    cond = F.col("_n") > 1
    for k in keys:
        cond = cond & F.col(k).isNotNull()
    rows = (
        live.groupBy(*keys)
        .agg(F.count(F.lit(1)).alias("_n"))
        .where(cond)
        .orderBy(F.col("_n").desc(), *keys)
        .limit(MAX_SAMPLES)
        .collect()
    )
    return [{"key": {names[fid]: json_value(r[col_name(fid)]) for fid in key_ids}, "count": int(r["_n"])} for r in rows]


def _int_or_none(v: Any) -> int | None:
    return None if v is None else int(v)


def json_value(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dt.datetime):
        return (v if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)).isoformat()
    if isinstance(v, (dt.date, decimal.Decimal)):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    return str(v)


def iso_ms(ms: int | None) -> str | None:
    if ms is None:
        return None
    return (
        dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _summary_props(snap: Any) -> dict[str, str]:
    summary = snap.summary
    if summary is None:
        return {}
    return {str(k): str(v) for k, v in (summary.additional_properties or {}).items()}


def _operation(snap: Any) -> str | None:
    op = getattr(snap.summary, "operation", None) if snap.summary is not None else None
    return None if op is None else str(getattr(op, "value", op))


def _as_int(text: str | None) -> int | None:
    if text is None:
        return 0  # Iceberg writes added/removed counts only when above zero
    try:
        return int(text)
    except ValueError:
        return None


def snapshot_window(plan: TablePlan, snapshots: list[Any], counts: Mapping[str, int]) -> list[dict[str, Any]]:
    """Per snapshot of the window: its summary's added record counts and what the scan counted in
    the files it added. Comparable only when every file it added is still live (a later compaction
    or overwrite removes files, and their rows are no longer there to count)."""
    data_by_snap: dict[int | None, list[DataFileInfo]] = {}
    for f in plan.data_files:
        data_by_snap.setdefault(f.snapshot_id, []).append(f)
    dels_by_snap: dict[int | None, list[DeleteFileInfo]] = {}
    for d in plan.delete_files:
        dels_by_snap.setdefault(d.snapshot_id, []).append(d)
    out = []
    for snap in snapshots:
        props = _summary_props(snap)
        data = data_by_snap.get(snap.snapshot_id, [])
        dels = dels_by_snap.get(snap.snapshot_id, [])
        counted = {
            "added-records": sum(counts.get(f.path, 0) for f in data),
            "added-position-deletes": sum(counts.get(d.path, 0) for d in dels if d.kind == "position"),
            "added-equality-deletes": sum(counts.get(d.path, 0) for d in dels if d.kind == "equality"),
        }
        summary = {k: _as_int(props.get(k)) for k in SUMMARY_COUNTS}
        want_data, want_dels = _as_int(props.get("added-data-files")), _as_int(props.get("added-delete-files"))
        comparable = want_data == len(data) and want_dels == len(dels) and None not in summary.values()
        item: dict[str, Any] = {
            "snapshot_id": snap.snapshot_id,
            "timestamp_ms": snap.timestamp_ms,
            "operation": _operation(snap),
            "summary": summary,
            "counted": counted,
            "comparable": comparable,
            "mismatches": [k for k in SUMMARY_COUNTS if comparable and summary[k] != counted[k]],
        }
        if not comparable:
            item["note"] = (
                f"{len(data)} of {want_data} data files and {len(dels)} of {want_dels} delete files added by this "
                "snapshot are still live: rows of removed files cannot be counted"
                if None not in (want_data, want_dels)
                else "the snapshot summary holds a count that is not a number"
            )
        out.append(item)
    return out


def record_count_mismatches(
    files: list[DataFileInfo] | list[DeleteFileInfo], counts: Mapping[str, int]
) -> tuple[int, list[dict[str, Any]]]:
    """Files whose Parquet row count differs from the manifest's record_count."""
    bad = [
        {"file": f.path, "manifest_records": f.record_count, "parquet_rows": counts.get(f.path, 0)}
        for f in files
        if counts.get(f.path, 0) != f.record_count
    ]
    return len(bad), bad[:MAX_MISMATCHES]
