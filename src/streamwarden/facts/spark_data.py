"""Data facts (``facts.data``): what a scan of the table's live rows proves about the contract's
``quality`` and ``retention.data`` promises. Shape and cost model: docs/facts-data.md.

The table is planned with PyIceberg (streamwarden.iceberg.scan) and read with Spark
(streamwarden.iceberg.deletes): Parquet by field id, position and equality deletes applied. The
Spark session is created lazily, once per run (:func:`get_spark`), only when a contract declares a
data promise; :func:`stop_spark` ends it. Nothing here imports pyspark at module level, and a
contract without data promises never reaches Spark, so a static check never starts a JVM.

Incremental mode (``since_snapshot`` or a ``state_file``) scans the data files added after the
checked snapshot plus the old files that their column metrics cannot clear; see the doc.

Why one module of this size: the data source, its grouping of a run's contracts into one scan per
table and snapshot, and that scan's steps share one plan; the statistics (data_stats.py), the state
file (data_state.py) and the session (spark_session.py) are apart.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.core import progress
from streamwarden.facts.data_run import DataFactsError, DataRun
from streamwarden.facts.data_state import DataStateError, last_checked, record, state_key, write_state
from streamwarden.facts.data_stats import (
    Measures,
    aggregate_all,
    duplicate_samples,
    empty_all,
    iso_ms,
    keys_and_nulls,
    not_null_columns,
    record_count_mismatches,
    result_for,
    snapshot_window,
    time_column,
)
from streamwarden.facts.source import GatherContext, Subject, available, not_configured, refused, unavailable
from streamwarden.facts.spark_session import JAVA_MISSING, get_spark, spark_problem, stop_spark
from streamwarden.iceberg.access import AccessRefused, Reader, access_of
from streamwarden.iceberg.catalog import (
    ContractTable,
    IcebergFactsError,
    declared_table,
    describe,
    open_contract_table,
)
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


__all__ = [
    "JAVA_MISSING",
    "DataFactsError",
    "DataRun",
    "DataSettings",
    "DataSource",
    "gather_data",
    "gather_many",
    "get_spark",
    "scan_table",
    "scan_tables",
    "spark_problem",
    "stop_spark",
]


# --- the gatherer -------------------------------------------------------------------------------


def data_promises(contract: Mapping[str, Any]) -> bool:
    """Does the contract declare anything only a data scan proves (quality, retention.data)?"""
    quality = contract.get("quality") or {}
    retention = contract.get("retention") or {}
    return bool(quality.get("freshness") or quality.get("unique") or quality.get("not_null") or retention.get("data"))


@dataclass(frozen=True)
class DataSettings:
    """The data source's settings: the run's state file, scan budget and spend (``data_run``: one
    per run, so the budget spans its contracts), an incremental scan from ``since_snapshot``, the
    state file, and how many snapshots are compared with their summaries (None: the default)."""

    data_run: DataRun | None = None
    since_snapshot: int | None = None
    state_file: Path | None = None
    window: int | None = None


class DataSource:
    """``facts.data``: what a Spark scan of the contract's table proves (quality, retention.data):
    the environment's ``spark`` section runs it (the ``spark`` extra), through the table the Iceberg
    source opened (or opens it: the ``iceberg`` extra too). The contracts on one table at one
    snapshot share one scan. Not configured when the contract declares no data promise; refused
    when the environment does not grant the table (the Iceberg source decided)."""

    name = "data"
    section = "spark"
    extra = "spark"
    phase = "Spark scan: reading tables' data"
    recovery = False  # a scan of the live table proves nothing about a restore; a gate starts no JVM

    def needed(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> bool:
        return data_promises(contract)

    def modules(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> Sequence[tuple[str, str, str]]:
        if env.get("spark") and data_promises(contract):
            return (("spark", "spark", "pyspark"), ("spark", "iceberg", "pyiceberg"))
        return ()

    def gather(self, subjects: Sequence[Subject], env: Mapping[str, Any], ctx: GatherContext) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [not_configured() for _ in subjects]
        todo: list[int] = []
        for i, s in enumerate(subjects):
            iceberg = s.facts.get("iceberg") or {}
            if iceberg.get("refused") and data_promises(s.data):  # nothing of the table is read
                out[i] = refused(str(iceberg.get("error")))
            elif data_promises(s.data):
                todo.append(i)
        if not todo:
            return out
        try:
            tables, readers = [subjects[i].table for i in todo], [subjects[i].reader for i in todo]
            for i, section in zip(
                todo, gather_many([subjects[i].data for i in todo], env, ctx, tables, readers), strict=True
            ):
                out[i] = section
                progress.advance()
        finally:
            stop_spark()
        return out


@dataclass
class _Member:
    index: int
    contract: Mapping[str, Any]
    table: ContractTable


def gather_many(
    contracts: Sequence[Mapping[str, Any]],
    env: Mapping[str, Any],
    ctx: GatherContext,
    tables: Sequence[ContractTable | None] | None = None,
    readers: Sequence[Reader | None] | None = None,
) -> list[dict[str, Any]]:
    """``facts.data`` for several contracts: the contracts on one table at one snapshot share one
    scan, which measures what each of them declares (the union of their columns, keys and time
    columns); each gets its own facts from it. ``tables``: the tables the iceberg gatherer opened
    (None where it did not); ``readers``: who reads, for the access rules."""
    spark_env = env.get("spark") or {}
    settings = ctx.settings(DataSettings)
    run = settings.data_run or DataRun(settings.state_file)
    show_values = access_of(env.get("iceberg")).show_values
    out: list[dict[str, Any] | None] = [None] * len(contracts)
    groups: dict[tuple[str, str, int | None], list[_Member]] = {}
    for i, contract in enumerate(contracts):
        if not data_promises(contract):
            out[i] = not_configured()
            continue
        identifier: str | None = None
        props: Mapping[str, str] = {}
        try:
            if declared_table(contract) is None:
                out[i] = unavailable("table.catalog and table.identifier must be declared to scan the table's data")
                continue
            problem = spark_problem(spark_env)
            if problem:
                out[i] = unavailable(problem)
                continue
            reader = readers[i] if readers is not None else None
            ct = (tables[i] if tables is not None else None) or open_contract_table(
                contract, env.get("iceberg"), ctx.root, reader
            )
            assert ct is not None  # declared_table said a table is declared
            identifier, props = ct.identifier, ct.props
            md = ct.table.metadata
            groups.setdefault((ct.catalog, str(md.table_uuid), md.current_snapshot_id), []).append(
                _Member(i, contract, ct)
            )
        except AccessRefused as exc:
            out[i] = refused(str(exc))
        except (IcebergFactsError, DataFactsError) as exc:
            out[i] = unavailable(str(exc))
        except Exception as exc:  # a gap, never a traceback
            out[i] = unavailable(f"data scan of {identifier} failed: {describe(exc, props)}")
    for members in groups.values():
        first = members[0].table
        try:
            for member, facts in zip(members, _scan_shared(members, spark_env, ctx, run, show_values), strict=True):
                out[member.index] = facts
        except (IcebergFactsError, DataFactsError, DataStateError) as exc:
            for member in members:
                out[member.index] = unavailable(str(exc))
        except Exception as exc:  # Spark or storage failure: a gap, never a traceback
            for member in members:
                out[member.index] = unavailable(f"data scan of {first.identifier} failed: {describe(exc, first.props)}")
    return [o if o is not None else not_configured() for o in out]


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
    """One contract's ``facts.data`` with its context spelled out (``env``: the environment mapping of
    streamwarden.yaml; tools and tests call it)."""
    ctx = GatherContext.of(
        root, now_ms, [DataSettings(since_snapshot=since_snapshot, state_file=state_file, window=window)]
    )
    return gather_many([contract], env or {}, ctx)[0]


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
    show_values: bool = True,
) -> dict[str, Any]:
    """Facts for an already loaded pyiceberg table (split out for tests and the benchmark)."""
    return scan_tables(
        table,
        [contract],
        spark_env,
        now_ms,
        catalog=catalog,
        identifier=identifier,
        since_snapshot=since_snapshot,
        state_file=state_file,
        window=window,
        show_values=show_values,
    )[0]


def scan_tables(
    table: Any,
    contracts: Sequence[Mapping[str, Any]],
    spark_env: Mapping[str, Any],
    now_ms: int,
    *,
    catalog: str,
    identifier: str,
    since_snapshot: int | None = None,
    state_file: Path | None = None,
    window: int = DEFAULT_WINDOW,
    show_values: bool = True,
    run: DataRun | None = None,
) -> list[dict[str, Any]]:
    """Facts for several contracts on one already loaded table, from one shared scan (the benchmark)."""
    ct = ContractTable(catalog, identifier, table, {})
    settings = DataSettings(since_snapshot=since_snapshot, state_file=state_file, window=window)
    ctx = GatherContext.of(Path("."), now_ms, [settings])
    members = [_Member(i, c, ct) for i, c in enumerate(contracts)]
    return _scan_shared(members, spark_env, ctx, run or DataRun(state_file), show_values)


def _rules(contract: Mapping[str, Any]) -> dict[str, Any]:
    """What the contract checks on the table's rows, by column name: the key of its state."""
    quality = contract.get("quality") or {}
    ret = (contract.get("retention") or {}).get("data") or {}
    return {
        "unique": [str(c) for c in quality.get("unique") or []],
        "not_null": not_null_columns(contract),
        "freshness": (quality.get("freshness") or {}).get("column"),
        "retention": ret.get("column"),
    }


@dataclass
class _Need:
    """One contract's share of a shared scan."""

    facts: dict[str, Any]
    m: Measures
    rules: dict[str, Any]
    since: int | None
    since_source: str | None
    key: str
    pipeline: str


def _scan_shared(
    members: Sequence[_Member], spark_env: Mapping[str, Any], ctx: GatherContext, run: DataRun, show_values: bool
) -> list[dict[str, Any]]:
    """One scan of one table at one snapshot for every member contract; each gets its own facts."""
    started = time.perf_counter()
    ct = members[0].table
    table, now_ms = ct.table, ctx.now_ms
    schema = table.schema()
    names = {f.name: f.field_id for f in schema.fields}
    wanted: list[int] = []
    for member in members:
        r = _rules(member.contract)
        for n in [*r["unique"], *r["not_null"], r["freshness"], r["retention"]]:
            if n in names and names[n] not in wanted:
                wanted.append(names[n])
    plan = plan_table(table, wanted)
    if plan.unsupported:
        raise DataFactsError("; ".join(plan.unsupported[:3]))
    uuid = str(table.metadata.table_uuid)
    state = run.state()
    needs: list[_Need] = []
    for member in members:
        contract, mct = member.contract, member.table
        quality = contract.get("quality") or {}
        ret = (contract.get("retention") or {}).get("data") or {}
        facts = available(
            catalog=mct.catalog,
            table=mct.identifier,
            table_uuid=uuid,
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
        rules = _rules(contract)
        pipeline = str((contract.get("metadata") or {}).get("name") or "")
        key = state_key(uuid, pipeline, rules)
        since_snapshot = ctx.settings(DataSettings).since_snapshot
        since, source = (since_snapshot, "argument") if since_snapshot is not None else (None, None)
        if since is None and last_checked(state, key) is not None:
            since, source = last_checked(state, key), "state"
        needs.append(_Need(facts, m, rules, since, source, key, pipeline))

    read_mode = str(spark_env.get("read") or "files")
    since = _shared_since(plan, [n.since for n in needs])
    ms = [n.m for n in needs]
    scope, unscanned, window_snaps, scan = _scope(
        plan, ms, since, read_mode, ctx.settings(DataSettings).window or DEFAULT_WINDOW
    )
    what = f"{ct.catalog}.{ct.identifier}"
    deletes: list[Any] = []
    paths: list[str] = []
    if read_mode == "catalog":
        planned = {
            "files": len(plan.data_files) + len(plan.delete_files),
            "bytes": sum(f.size for f in plan.data_files) + sum(d.size for d in plan.delete_files),
            "rows": sum(f.record_count for f in plan.data_files) + sum(d.record_count for d in plan.delete_files),
        }
    else:
        detect_name_mapped(table, plan, scope)
        deletes = applicable_deletes(scope, plan.delete_files)
        window_ids = {s.snapshot_id for s in window_snaps}
        window_dels = [d for d in plan.delete_files if d.snapshot_id in window_ids]
        paths = list(dict.fromkeys([f.path for f in scope] + [d.path for d in deletes + window_dels]))
        by_path = {f.path: (f.size, f.record_count) for f in scope}
        by_path.update({d.path: (d.size, d.record_count) for d in [*deletes, *window_dels]})
        planned = {
            "files": len(paths),
            "bytes": sum(by_path[p][0] for p in paths),
            "rows": sum(by_path[p][1] for p in paths),
        }
    run.charge(planned, what)

    spark = get_spark(spark_env)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    engine = _engine(spark, spark_env, read_mode)
    mapping: dict[str, str] = {}
    counts: dict[str, int] = {}
    if read_mode == "catalog":
        shared = _read_catalog(spark, spark_env, plan, ms, ct)
    else:
        counts, mapping, shared = _read_files(spark, plan, scope, deletes, paths, ms)
    samples: dict[tuple[int, ...], list[dict[str, Any]]] = {}
    if show_values:
        for key_ids, (dup_keys, _) in shared["dups"].items():
            if not dup_keys:
                continue
            key_names = {fid: plan.fields[fid].name for fid in key_ids}
            if read_mode == "catalog":
                frame = _catalog_frame(spark, spark_env, plan, list(key_ids), ct)
            else:
                from streamwarden.iceberg.deletes import live_rows

                frame = live_rows(spark, scope, list(key_ids), plan.types, deletes, mapping)
            samples[key_ids] = duplicate_samples(frame, list(key_ids), key_names)
    scan.update(
        {
            "delete_files": len(plan.delete_files),
            "delete_files_applied": len(deletes),
            "position_delete_files": sum(1 for d in deletes if d.kind == "position"),
            "equality_delete_files": sum(1 for d in deletes if d.kind == "equality"),
            "rows_read": sum(counts.get(f.path, 0) for f in scope) if read_mode != "catalog" else None,
            "rows_live": shared["rows"],
            "bytes_read": sum(f.size for f in scope) + sum(d.size for d in deletes),
            "contracts": len(members),
        }
    )
    scan["rows_deleted"] = None if scan["rows_read"] is None else scan["rows_read"] - shared["rows"]
    snapshots = snapshot_window(plan, window_snaps, counts) if read_mode != "catalog" else []
    n_bad, bad = record_count_mismatches(scope, counts) if counts else (0, [])
    out: list[dict[str, Any]] = []
    for need in needs:
        facts = need.facts
        facts["engine"] = dict(engine)
        _finish(facts, plan, need.m, result_for(shared, need.m), unscanned)
        if facts["unique"] is not None:
            facts["unique"]["samples"] = samples.get(tuple(need.m.key_ids), []) if need.m.key_ids else []
            facts["unique"]["values_shown"] = show_values
        facts["snapshots"] = [dict(s) for s in snapshots]
        facts["record_count_mismatches"] = {"count": n_bad, "files": list(bad)}
        own = dict(scan)
        own["since_source"] = need.since_source if scan["mode"] == "incremental" else None
        if run.state_file is not None and state is not None:
            # held at the contract's own watermark: a failed fallback (not an ancestor) starts over in full
            held = need.since if need.since is not None and snapshots_after(plan, need.since) is not None else None
            recorded = record(
                state,
                need.key,
                name=what,
                pipeline=need.pipeline,
                rules=need.rules,
                snapshot_id=plan.snapshot_id,
                facts=facts,
                since=held,
                now_ms=now_ms,
            )
            own["state"] = {"file": str(run.state_file), **recorded, "written": not run.read_only}
        own["elapsed_ms"] = int((time.perf_counter() - started) * 1000)
        facts["scan"] = own
        out.append(facts)
    if run.state_file is not None and state is not None and not run.read_only:
        write_state(run.state_file, state)
    return out


def _shared_since(plan: TablePlan, sinces: Sequence[int | None]) -> int | None:
    """The snapshot a shared scan starts after: every contract's rows are checked when it starts
    after the earliest of their watermarks (a full scan when one of them has none, or when one is
    not an ancestor of the current snapshot: _scope says so in scan.note)."""
    if not sinces or any(s is None for s in sinces):
        return None
    distinct = list(dict.fromkeys(s for s in sinces if s is not None))
    if len(distinct) == 1:
        return distinct[0]
    afters = [(snapshots_after(plan, s), s) for s in distinct]
    if any(a is None for a, _ in afters):
        return None
    return max(afters, key=lambda pair: len(pair[0] or []))[1]


def _scope(
    plan: TablePlan, ms: Sequence[Measures], since: int | None, read_mode: str, window: int
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
    reasons: dict[int, list[str]] = {}
    for m in ms:  # an old file stays a candidate when any contract's metrics cannot clear it
        pruning = Pruning(
            key_ids=m.key_ids,
            null_ids=m.null_ids,
            retention=(m.retention[0], m.retention[2]) if m.retention else None,
            freshness_id=m.fresh[0] if m.fresh else None,
        )
        for index, why in old_candidates(plan, new, old, pruning).items():
            have = reasons.setdefault(index, [])
            have += [w for w in why if w not in have]
    scope = new + [f for f in old if f.index in reasons]
    unscanned = [f for f in old if f.index not in reasons]
    counted: dict[str, int] = {}
    for rs in reasons.values():
        for r in rs:
            counted[r] = counted.get(r, 0) + 1
    scan.update(
        {
            "mode": "incremental",
            "since_snapshot_id": since,
            "new_snapshots": len(after),
            "data_files_scanned": len(scope),
            "data_files_new": len(new),
            "data_files_pruned": len(unscanned),
            "old_files_scanned_for": counted,
        }
    )
    return scope, unscanned, after[:MAX_INCREMENTAL_WINDOW], scan


def _read_files(
    spark: Any,
    plan: TablePlan,
    scope: list[DataFileInfo],
    deletes: list[Any],
    paths: list[str],
    ms: Sequence[Measures],
) -> tuple[dict[str, int], dict[str, str], dict[str, Any]]:
    """Rows per file (footer-level, also the path mapping), then the aggregate over live rows."""
    from streamwarden.iceberg.deletes import file_counts, live_rows, match_paths

    spark_counts = file_counts(spark, paths)
    mapping = match_paths(paths, spark_counts)
    counts = {p: spark_counts.get(mapping[p], 0) for p in paths}
    if not scope:
        return counts, mapping, empty_all(list(ms))
    read_ids = list(dict.fromkeys(fid for m in ms for fid in m.read_ids()))
    live = live_rows(spark, scope, read_ids, plan.types, deletes, mapping)
    return counts, mapping, aggregate_all(live, list(ms))


def spark_table_name(spark_catalog: str, table: ContractTable) -> str:
    """The table's name for Spark's parser, every part quoted (backticks doubled inside): Spark
    reads exactly the namespace and table PyIceberg opened, whatever characters they hold; a
    ``.``, a quote, a comment marker or a ``/`` in a part is a character of that part, never
    syntax or a path."""
    name = getattr(table.table, "name", None)
    parts = list(name()) if callable(name) else table.identifier.split(".")
    if len(parts) > 1 and parts[0] == table.catalog and len(parts) > len(table.identifier.split(".")):
        parts = parts[1:]  # some catalogs put their own name first
    return ".".join("`" + str(p).replace("`", "``") + "`" for p in [spark_catalog, *parts])


def _catalog_frame(spark: Any, spark_env: Mapping[str, Any], plan: TablePlan, ids: list[int], ct: ContractTable) -> Any:
    from pyspark.sql import functions as F

    from streamwarden.iceberg.deletes import col_name

    name = spark_table_name(str(spark_env.get("catalog") or ct.catalog), ct)
    reader = spark.read
    if plan.snapshot_id is not None:  # the snapshot PyIceberg planned, even if a commit lands meanwhile
        reader = reader.option("snapshot-id", str(plan.snapshot_id))
    df = reader.table(name)  # a table name, never a path: DataFrameReader.load would read one with a '/'
    quoted = ["`" + plan.fields[fid].name.replace("`", "``") + "`" for fid in ids]
    return df.select(*[F.col(q).alias(col_name(fid)) for q, fid in zip(quoted, ids, strict=True)])


def _read_catalog(
    spark: Any, spark_env: Mapping[str, Any], plan: TablePlan, ms: Sequence[Measures], ct: ContractTable
) -> dict[str, Any]:
    if plan.snapshot_id is None:
        return empty_all(list(ms))
    name = str(spark_env.get("catalog") or ct.catalog)
    read_ids = list(dict.fromkeys(fid for m in ms for fid in m.read_ids()))
    try:
        frame = _catalog_frame(spark, spark_env, plan, read_ids, ct)
    except Exception as exc:
        raise DataFactsError(
            f"spark.read is 'catalog' but Spark cannot read {name}.{ct.identifier} through an Iceberg catalog "
            f"(configure spark.sql.catalog.{name} and the iceberg-spark-runtime jar in spark.conf): "
            f"{describe(exc)}"
        ) from None
    return aggregate_all(frame, list(ms))


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
