"""Data facts (``facts.data``): what a scan of the table's live rows proves about the contract's
``quality`` and ``retention.data`` promises. Shape and cost model: docs/facts-data.md.

The table is planned with PyIceberg (streamwarden.iceberg.scan) and read with Spark
(streamwarden.iceberg.deletes): Parquet by field id, position and equality deletes applied. The
Spark session is created lazily, once per run (:func:`get_spark`), only when a contract declares a
data promise; :func:`stop_spark` ends it. Nothing here imports pyspark at module level, and a
contract without data promises never reaches Spark, so a static check never starts a JVM.

Incremental mode (``since_snapshot`` or a ``state_file``) scans the data files added after the
checked snapshot plus the old files that their column metrics cannot clear; see the doc.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from streamwarden.facts.data_state import DataStateError, last_checked, load_state, save_state
from streamwarden.facts.data_stats import (
    Measures,
    aggregate,
    duplicate_samples,
    empty_result,
    iso_ms,
    keys_and_nulls,
    not_null_columns,
    record_count_mismatches,
    snapshot_window,
    time_column,
)
from streamwarden.facts.source import GatherContext, available, not_configured, unavailable
from streamwarden.facts.spark_session import JAVA_MISSING, get_spark, spark_problem, stop_spark
from streamwarden.iceberg.catalog import IcebergFactsError, declared_table, describe, open_contract_table
from streamwarden.iceberg.scan import (
    DataFileInfo,
    Pruning,
    TablePlan,
    applicable_deletes,
    detect_name_mapped,
    metadata_max_ms,
    metadata_min_ms,
    old_candidates,
    plan_table,
    snapshots_after,
)

DEFAULT_WINDOW = 20  # snapshots compared with their summaries in a full scan
MAX_INCREMENTAL_WINDOW = 200


__all__ = ["JAVA_MISSING", "gather", "gather_data", "get_spark", "scan_table", "spark_problem", "stop_spark"]


class DataFactsError(Exception):
    """A gap in the data facts, with a message ready for SW-FACT-001."""


# --- the gatherer -------------------------------------------------------------------------------


def data_promises(contract: Mapping[str, Any]) -> bool:
    """Does the contract declare anything only a data scan proves (quality, retention.data)?"""
    quality = contract.get("quality") or {}
    retention = contract.get("retention") or {}
    return bool(quality.get("freshness") or quality.get("unique") or quality.get("not_null") or retention.get("data"))


def gather(contract: Mapping[str, Any], env: Mapping[str, Any], ctx: GatherContext) -> dict[str, Any]:
    """The ``facts.data`` section for one normalized contract (the gatherer protocol,
    facts/source.py): the environment's ``spark`` section runs the scan, its ``iceberg`` section
    opens the table (unless ``ctx.table`` holds it already). Not configured when the contract
    declares no data promise. Never raises for a gathering problem: that is an unavailable fact."""
    if not data_promises(contract):
        return not_configured()
    identifier = None
    props: Mapping[str, str] = {}
    try:
        if declared_table(contract) is None:
            return unavailable("table.catalog and table.identifier must be declared to scan the table's data")
        spark_env = env.get("spark") or {}
        problem = spark_problem(spark_env)
        if problem:
            return unavailable(problem)
        ct = ctx.table or open_contract_table(contract, env.get("iceberg"), ctx.root)
        assert ct is not None  # declared_table said a table is declared
        identifier, props = ct.identifier, ct.props
        return scan_table(
            ct.table,
            contract,
            spark_env,
            ctx.now_ms,
            catalog=ct.catalog,
            identifier=ct.identifier,
            since_snapshot=ctx.since_snapshot,
            state_file=ctx.state_file,
            window=ctx.data_window or DEFAULT_WINDOW,
        )
    except (IcebergFactsError, DataFactsError, DataStateError) as exc:
        return unavailable(str(exc))
    except Exception as exc:  # Spark or storage failure: a gap, never a traceback
        return unavailable(f"data scan of {identifier} failed: {describe(exc, props)}")


def gather_data(
    contract: Mapping[str, Any],
    env: Mapping[str, Any] | None,
    root: Path,
    now_ms: int,
    *,
    since_snapshot: int | None = None,
    state_file: Path | None = None,
    window: int = DEFAULT_WINDOW,
) -> dict[str, Any]:
    """:func:`gather` with its context spelled out (``env``: the environment mapping of
    streamwarden.yaml; tools and tests call it)."""
    ctx = GatherContext(root, now_ms, since_snapshot=since_snapshot, state_file=state_file, data_window=window)
    return gather(contract, env or {}, ctx)


def scan_table(
    table: Any,
    contract: Mapping[str, Any],
    spark_env: Mapping[str, Any],
    now_ms: int,
    *,
    catalog: str,
    identifier: str,
    since_snapshot: int | None = None,
    state_file: Path | None = None,
    window: int = DEFAULT_WINDOW,
) -> dict[str, Any]:
    """Facts for an already loaded pyiceberg table (split out for tests and the benchmark)."""
    started = time.perf_counter()
    quality = contract.get("quality") or {}
    ret = (contract.get("retention") or {}).get("data") or {}
    schema = table.schema()
    names = {f.name: f.field_id for f in schema.fields}
    wanted_names = [
        *(quality.get("unique") or []),
        *not_null_columns(contract),
        (quality.get("freshness") or {}).get("column"),
        ret.get("column"),
    ]
    plan = plan_table(table, [names[n] for n in wanted_names if n in names])
    if plan.unsupported:
        raise DataFactsError("; ".join(plan.unsupported[:3]))
    facts = available(
        catalog=catalog,
        table=identifier,
        table_uuid=str(table.metadata.table_uuid),
        snapshot_id=plan.snapshot_id,
        sequence_number=plan.sequence_number,
        snapshot_timestamp_ms=plan.timestamp_ms,
        schema_id=plan.schema_id,
        format_version=plan.format_version,
    )
    m = Measures()
    facts["freshness"] = time_column(plan, quality.get("freshness"), m, "fresh", now_ms)
    facts["retention"] = time_column(plan, ret or None, m, "retention", now_ms)
    facts["unique"], facts["not_null"] = keys_and_nulls(plan, quality, contract, m)

    key = str(table.metadata.table_uuid)
    state = load_state(state_file) if state_file is not None else None
    since, since_source = (since_snapshot, "argument") if since_snapshot is not None else (None, None)
    if since is None and last_checked(state, key) is not None:
        since, since_source = last_checked(state, key), "state"
    read_mode = str(spark_env.get("read") or "files")
    scope, unscanned, window_snaps, scan = _scope(plan, m, since, read_mode, window)
    scan["since_source"] = since_source if scan["mode"] == "incremental" else None

    spark = get_spark(spark_env)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    facts["engine"] = _engine(spark, spark_env, read_mode)
    mapping: dict[str, str] = {}
    counts: dict[str, int] = {}
    if read_mode == "catalog":
        result, counts, deletes = _read_catalog(spark, spark_env, plan, m, catalog, identifier), {}, []
    else:
        detect_name_mapped(table, plan, scope)
        deletes = applicable_deletes(scope, plan.delete_files)
        window_ids = {s.snapshot_id for s in window_snaps}
        window_dels = [d for d in plan.delete_files if d.snapshot_id in window_ids]
        paths = list(dict.fromkeys([f.path for f in scope] + [d.path for d in deletes + window_dels]))
        counts, mapping, result = _read_files(spark, plan, scope, deletes, paths, m)
    if result["dup_keys"] and facts["unique"] is not None:
        names = {fid: plan.fields[fid].name for fid in m.key_ids}
        if read_mode == "catalog":
            frame = _catalog_frame(spark, spark_env, plan, m, catalog, identifier)
        else:
            from streamwarden.iceberg.deletes import live_rows

            frame = live_rows(spark, scope, m.key_ids, plan.types, deletes, mapping)
        facts["unique"]["samples"] = duplicate_samples(frame, m.key_ids, names)
    _finish(facts, plan, m, result, unscanned)
    scan.update(
        {
            "delete_files": len(plan.delete_files),
            "delete_files_applied": len(deletes),
            "position_delete_files": sum(1 for d in deletes if d.kind == "position"),
            "equality_delete_files": sum(1 for d in deletes if d.kind == "equality"),
            "rows_read": sum(counts.get(f.path, 0) for f in scope) if read_mode != "catalog" else None,
            "rows_live": result["rows"],
            "bytes_read": sum(f.size for f in scope) + sum(d.size for d in deletes),
        }
    )
    scan["rows_deleted"] = None if scan["rows_read"] is None else scan["rows_read"] - result["rows"]
    facts["snapshots"] = snapshot_window(plan, window_snaps, counts) if read_mode != "catalog" else []
    n_bad, bad = record_count_mismatches(scope, counts) if counts else (0, [])
    facts["record_count_mismatches"] = {"count": n_bad, "files": bad}
    if state_file is not None and state is not None:
        held = since if scan["mode"] == "incremental" else None  # a failed fallback starts over in full
        scan["state"] = save_state(
            state_file, state, key, f"{catalog}.{identifier}", plan.snapshot_id, facts, held, now_ms
        )
    scan["elapsed_ms"] = int((time.perf_counter() - started) * 1000)
    facts["scan"] = scan
    return facts


def _scope(
    plan: TablePlan, m: Measures, since: int | None, read_mode: str, window: int
) -> tuple[list[DataFileInfo], list[DataFileInfo], list[Any], dict[str, Any]]:
    """Files to scan, old files left to their metrics, the snapshot window, and the scan facts."""
    scan: dict[str, Any] = {"mode": "full", "since_snapshot_id": None, "note": None, "data_files": len(plan.data_files)}
    after = snapshots_after(plan, since) if since is not None else None
    if since is not None and read_mode == "catalog":
        scan["note"] = "incremental checks need spark.read: files; the table was scanned in full"
    elif since is not None and after is None:
        scan["note"] = (
            f"snapshot {since} is not an ancestor of the current snapshot (expired, rolled back or "
            "on another branch): the table was scanned in full"
        )
    if since is None or after is None or read_mode == "catalog":
        scan.update({"data_files_scanned": len(plan.data_files), "data_files_new": None, "data_files_pruned": 0})
        return plan.data_files, [], plan.ancestry[:window], scan
    new_ids = {s.snapshot_id for s in after}
    new = [f for f in plan.data_files if f.snapshot_id in new_ids]
    old = [f for f in plan.data_files if f.snapshot_id not in new_ids]
    pruning = Pruning(
        key_ids=m.key_ids,
        null_ids=m.null_ids,
        retention=(m.retention[0], m.retention[2]) if m.retention else None,
        freshness_id=m.fresh[0] if m.fresh else None,
    )
    reasons = old_candidates(plan, new, old, pruning)
    scope = new + [f for f in old if f.index in reasons]
    unscanned = [f for f in old if f.index not in reasons]
    why: dict[str, int] = {}
    for rs in reasons.values():
        for r in rs:
            why[r] = why.get(r, 0) + 1
    scan.update(
        {
            "mode": "incremental",
            "since_snapshot_id": since,
            "new_snapshots": len(after),
            "data_files_scanned": len(scope),
            "data_files_new": len(new),
            "data_files_pruned": len(unscanned),
            "old_files_scanned_for": why,
        }
    )
    return scope, unscanned, after[:MAX_INCREMENTAL_WINDOW], scan


def _read_files(
    spark: Any, plan: TablePlan, scope: list[DataFileInfo], deletes: list[Any], paths: list[str], m: Measures
) -> tuple[dict[str, int], dict[str, str], dict[str, Any]]:
    """Rows per file (footer-level, also the path mapping), then the one aggregate over live rows."""
    from streamwarden.iceberg.deletes import file_counts, live_rows, match_paths

    spark_counts = file_counts(spark, paths)
    mapping = match_paths(paths, spark_counts)
    counts = {p: spark_counts.get(mapping[p], 0) for p in paths}
    if not scope:
        return counts, mapping, empty_result(m)
    live = live_rows(spark, scope, m.read_ids(), plan.types, deletes, mapping)
    return counts, mapping, aggregate(live, m)


def _catalog_frame(
    spark: Any, spark_env: Mapping[str, Any], plan: TablePlan, m: Measures, catalog: str, identifier: str
) -> Any:
    from pyspark.sql import functions as F

    from streamwarden.iceberg.deletes import col_name

    name = str(spark_env.get("catalog") or catalog)
    reader = spark.read.format("iceberg")
    if plan.snapshot_id is not None:  # the snapshot PyIceberg planned, even if a commit lands meanwhile
        reader = reader.option("snapshot-id", str(plan.snapshot_id))
    df = reader.load(f"{name}.{identifier}")
    return df.select(*[F.col(f"`{plan.fields[fid].name}`").alias(col_name(fid)) for fid in m.read_ids()])


def _read_catalog(
    spark: Any, spark_env: Mapping[str, Any], plan: TablePlan, m: Measures, catalog: str, identifier: str
) -> dict[str, Any]:
    if plan.snapshot_id is None:
        return empty_result(m)
    name = str(spark_env.get("catalog") or catalog)
    try:
        frame = _catalog_frame(spark, spark_env, plan, m, catalog, identifier)
    except Exception as exc:
        raise DataFactsError(
            f"spark.read is 'catalog' but Spark cannot read {name}.{identifier} through an Iceberg catalog "
            f"(configure spark.sql.catalog.{name} and the iceberg-spark-runtime jar in spark.conf): "
            f"{describe(exc)}"
        ) from None
    return aggregate(frame, m)


def _finish(
    facts: dict[str, Any], plan: TablePlan, m: Measures, result: dict[str, Any], unscanned: list[DataFileInfo]
) -> None:
    fresh, ret, unique = facts["freshness"], facts["retention"], facts["unique"]
    if fresh is not None and m.fresh:
        meta = metadata_max_ms(plan, unscanned, m.fresh[0]) if unscanned else None
        best = max((v for v in (result["fresh_max"], meta) if v is not None), default=None)
        fresh.update({"max_ms": best, "max": iso_ms(best), "source": "scan+metadata" if unscanned else "scan"})
    if ret is not None and m.retention:
        meta = metadata_min_ms(plan, unscanned, m.retention[0]) if unscanned else None
        low = min((v for v in (result["ret_min"], meta) if v is not None), default=None)
        ret.update(
            {
                "min_ms": low,
                "min": iso_ms(low),
                "expired_rows": result["expired"],
                "source": "scan+metadata" if unscanned else "scan",
            }
        )
    if unique is not None and m.key_ids:
        unique["duplicate_keys"], unique["duplicate_rows"] = result["dup_keys"], result["dup_rows"]
    for info in facts["not_null"].values():
        if info["field_id"] is not None:
            info["nulls"] = result["nulls"].get(info["field_id"], 0)


def _engine(spark: Any, spark_env: Mapping[str, Any], read_mode: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": "spark",
        "version": spark.version,
        "read": read_mode,
        "remote": bool(spark_env.get("remote")),
        "master": None,
        "parallelism": None,
    }
    if not out["remote"]:
        try:
            out["master"] = spark.sparkContext.master
            out["parallelism"] = spark.sparkContext.defaultParallelism
        except Exception:
            pass
    return out
