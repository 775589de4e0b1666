"""Live Iceberg facts (``facts.iceberg``) for one contract: the table's schema, partitioning,
properties with Iceberg's defaults made explicit, refs, the checked branch's snapshots within a
window, their Flink lineage, and (capped) the data files they added.

Reads table metadata only, except for SW-TABLE-011's added data files (manifests of the newest
window snapshots, capped) and a declared backfill's added files (the manifests its snapshots
wrote, capped; SW-TABLE-015). The shape and the cost model are documented in docs/facts-iceberg.md.
Never raises for a catalog or table problem: that is ``{"available": false, "configured": true,
"error": ...}``, which SW-FACT-001 reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.core import progress
from streamwarden.facts.iceberg_history import history_facts
from streamwarden.facts.source import (
    GatherContext,
    Subject,
    available,
    checked_branch,
    not_configured,
    refused,
    unavailable,
)
from streamwarden.facts.spark_data import data_promises
from streamwarden.iceberg import MAIN_BRANCH
from streamwarden.iceberg.access import AccessRefused, Reader
from streamwarden.iceberg.backfill import BackfillLimits, backfill_facts
from streamwarden.iceberg.catalog import ContractTable, IcebergFactsError, describe, open_contract_table, table_decision
from streamwarden.iceberg.lineage import analyze_lineage
from streamwarden.iceberg.snapshots import (
    WindowLimits,
    added_data_files,
    ancestry,
    protected_ids,
    select_window,
    snapshot_item,
    window_horizon_ms,
)
from streamwarden.iceberg.types import TypeSyntaxError, normalize_type

# Iceberg's defaults for the properties the rules read (core TableProperties).
PROPERTY_DEFAULTS: dict[str, str] = {
    "history.expire.max-snapshot-age-ms": "432000000",
    "history.expire.min-snapshots-to-keep": "1",
    "history.expire.max-ref-age-ms": "9223372036854775807",
    "write.metadata.delete-after-commit.enabled": "false",
    "write.metadata.previous-versions-max": "100",
    "commit.retry.num-retries": "4",
    "commit.retry.min-wait-ms": "100",
    "commit.retry.max-wait-ms": "60000",
    "commit.retry.total-timeout-ms": "1800000",
    "write.format.default": "parquet",
    "write.upsert.enabled": "false",
    "write.target-file-size-bytes": "536870912",
    "gc.enabled": "true",
    "commit.manifest-merge.enabled": "true",
    "commit.manifest.min-count-to-merge": "100",
    "flink.max-continuous-empty-commits": "10",
}
MAX_SCHEMAS = 50  # historical schemas listed (newest first), for SW-SCHEMA-008


@dataclass(frozen=True)
class IcebergSettings:
    """The Iceberg source's settings: the branch read (None: :func:`checked_branch` decides), how
    many snapshots and files are read, whether the window's manifests are read (SW-TABLE-011), and
    whether the table was named on the command line (``init``) rather than by a contract."""

    branch: str | None = None
    limits: WindowLimits | None = None
    read_files: bool = True
    command_line: bool = False


class IcebergSource:
    """``facts.iceberg`` (and ``facts.access``, the environment's decision on the table): the
    table a contract's ``table`` section names, through the catalog of the environment's
    ``iceberg`` section (the ``iceberg`` extra). The opened table stays on the subject for the
    sources after it (one load per run)."""

    name = "iceberg"
    section = "iceberg"
    extra = "iceberg"
    phase = "Iceberg: reading tables"
    recovery = True

    def needed(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> bool:
        return isinstance(contract.get("table"), dict)

    def modules(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> Sequence[tuple[str, str, str]]:
        # a data scan reads the table through the catalog too
        if env.get("iceberg") and (self.needed(contract, env) or data_promises(contract)):
            return (("iceberg", "iceberg", "pyiceberg"),)
        return ()

    def gather(self, subjects: Sequence[Subject], env: Mapping[str, Any], ctx: GatherContext) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for s in subjects:
            decision = table_decision(s.data, env.get("iceberg"), s.reader)
            if decision is not None:
                s.facts["access"] = decision.section()
            if decision is not None and not decision.allowed:  # nothing of the table is read (SW-FACT-002)
                out.append(refused(decision.reason))
            elif self.needed(s.data, env):
                section, s.table = gather_table(s.data, env, ctx, s.reader, flink=s.facts.get("flink"))
                out.append(section)
            else:
                out.append(not_configured())
                continue
            progress.advance()
        return out


def gather_table(
    contract: Mapping[str, Any],
    env: Mapping[str, Any],
    ctx: GatherContext,
    reader: Reader | None = None,
    *,
    flink: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], ContractTable | None]:
    """One contract's ``facts.iceberg``, with the opened table (None when it could not be read)
    for the sources that need more of it than the facts keep (the data scan, the branch's whole
    ancestry): the table is opened once. ``flink``: the contract's Flink facts, gathered before
    (a declared backfill's job name resolves to its ids there)."""
    settings = ctx.settings(IcebergSettings)
    try:
        ct = open_contract_table(contract, env.get("iceberg"), ctx.root, reader, command_line=settings.command_line)
    except AccessRefused as exc:
        return refused(str(exc)), None
    except IcebergFactsError as exc:
        return unavailable(str(exc)), None
    if ct is None:
        return not_configured(), None
    try:
        facts = table_facts(
            ct.table,
            contract,
            ctx.now_ms,
            catalog=ct.catalog,
            identifier=ct.identifier,
            branch=settings.branch or checked_branch(contract, env),
            limits=settings.limits,
            read_files=settings.read_files,
            flink=flink,
        )
    except Exception as exc:  # a metadata shape no rule expected: still a gap, never a traceback
        return unavailable(
            f"table {ct.identifier} in catalog '{ct.catalog}' could not be read: {describe(exc, ct.props)}"
        ), None
    if ct.adapted:  # metadata the spec allows and PyIceberg refuses: what the compatibility reading adapted
        facts["metadata_adapted"] = list(ct.adapted)
    return facts, ct


def gather_iceberg(
    contract: Mapping[str, Any],
    iceberg_env: Mapping[str, Any] | None,
    root: Path,
    now_ms: int,
    *,
    branch: str | None = None,
    limits: WindowLimits | None = None,
    read_files: bool = True,
    command_line: bool = False,
) -> dict[str, Any]:
    """One contract's ``facts.iceberg`` with its context spelled out (``iceberg_env``: the environment's ``iceberg``
    section; ``init`` and tools call it; ``command_line``: the table was named on the command line,
    not by a contract, so the environment's grants do not apply, its catalogs do)."""
    settings = IcebergSettings(branch, limits, read_files, command_line)
    return gather_table(contract, {"iceberg": iceberg_env}, GatherContext.of(root, now_ms, [settings]))[0]


def table_facts(
    table: Any,
    contract: Mapping[str, Any],
    now_ms: int,
    *,
    catalog: str,
    identifier: str,
    branch: str = MAIN_BRANCH,
    limits: WindowLimits | None = None,
    read_files: bool = True,
    flink: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Facts of an already loaded pyiceberg table (split out so tests and tools can reuse it)."""
    limits = limits or WindowLimits()
    md = table.metadata
    props = {str(k): str(v) for k, v in (md.properties or {}).items()}
    effective = {**PROPERTY_DEFAULTS, **props}
    schema = table.schema()
    by_id = {s.snapshot_id: s for s in md.snapshots}
    refs = {name: _ref(ref) for name, ref in (md.refs or {}).items()}
    head_id = (
        refs[branch]["snapshot_id"] if branch in refs else (md.current_snapshot_id if branch == MAIN_BRANCH else None)
    )
    retention = _retention(refs.get(branch), effective)
    horizon = window_horizon_ms(contract)
    ancestors, capped = ancestry(by_id, head_id, limits.max_snapshots)
    window = select_window(ancestors, now_ms - horizon, limits.newest_n)
    items = [snapshot_item(s) for s in window]  # newest first
    backfill_ids = [b.get("job_id") for b in contract.get("backfills") or [] if isinstance(b, Mapping)]
    lineage = analyze_lineage(items[::-1], [j for j in backfill_ids if isinstance(j, str)])
    facts = available(
        catalog=catalog,
        identifier=identifier,
        table_uuid=str(md.table_uuid),
        location=md.location,
        metadata_location=getattr(table, "metadata_location", None),
        format_version=int(md.format_version),
        last_updated_ms=md.last_updated_ms,
        schema=_schema(schema),
        schemas=[_schema(s) for s in sorted(md.schemas, key=lambda s: s.schema_id, reverse=True)[:MAX_SCHEMAS]],
        partition_spec=_spec(table.spec(), schema),
        partition_specs=len(md.partition_specs),
        sort_order=_sort_order(table.sort_order(), schema),
        properties=effective,
        properties_defaulted=sorted(k for k in PROPERTY_DEFAULTS if k not in props),
        refs=refs,
        branch=branch,
        branch_exists=head_id is not None,
        retention=retention,
        snapshots=_snapshots_section(md, by_id, items, ancestors, capped, window, now_ms, horizon, limits, retention),
        lineage=lineage,
    )
    if read_files and window:
        try:
            facts["files"] = added_data_files(table, window, limits)
        except Exception as exc:
            facts["files"] = {"scanned": False, "error": describe(exc)}
    else:
        facts["files"] = {"scanned": False, "error": None if not window else "manifest reads were turned off"}
    backfills = backfill_facts(table, contract, flink, BackfillLimits())
    if backfills is not None:  # a declared backfill: where its commits landed, what it wrote (SW-TABLE-015)
        facts["backfills"] = backfills
    if read_files:
        try:
            facts["history"] = history_facts(table, contract, branch, head_id, items, lineage, facts["files"])
        except Exception as exc:
            facts["history"] = {"available": False, "error": describe(exc), "changes": [], "cleanups": []}
    return facts


def _snapshots_section(
    md: Any,
    by_id: Mapping[int, Any],
    items: list[dict[str, Any]],
    ancestors: list[Any],
    capped: bool,
    window: list[Any],
    now_ms: int,
    horizon: int,
    limits: WindowLimits,
    retention: Mapping[str, Any],
) -> dict[str, Any]:
    all_snaps = list(by_id.values())
    oldest = min(all_snaps, key=lambda s: s.timestamp_ms, default=None)
    keep = protected_ids(md, by_id, retention["min_snapshots_to_keep"] or 1)
    unprotected = [s for s in all_snaps if s.snapshot_id not in keep]
    oldest_free = min(unprotected, key=lambda s: s.timestamp_ms, default=None)
    return {
        "total": len(all_snaps),
        "head": items[0] if items else None,
        "oldest": _point(oldest),
        "oldest_unprotected": _point(oldest_free),
        "window": {
            "since_ms": now_ms - horizon,
            "horizon_ms": horizon,
            "newest_n": limits.newest_n,
            "ancestors_read": len(ancestors),
            "size": len(window),
            "truncated": capped,
        },
        "items": items[: limits.items],
        "items_truncated": max(0, len(items) - limits.items),
    }


def _point(snap: Any) -> dict[str, Any] | None:
    return None if snap is None else {"snapshot_id": snap.snapshot_id, "timestamp_ms": snap.timestamp_ms}


def _ref(ref: Any) -> dict[str, Any]:
    kind = getattr(ref.snapshot_ref_type, "value", ref.snapshot_ref_type)
    return {
        "type": str(kind),
        "snapshot_id": ref.snapshot_id,
        "min_snapshots_to_keep": ref.min_snapshots_to_keep,
        "max_snapshot_age_ms": ref.max_snapshot_age_ms,
        "max_ref_age_ms": ref.max_ref_age_ms,
    }


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def _retention(ref: Mapping[str, Any] | None, effective: Mapping[str, str]) -> dict[str, Any]:
    """What snapshot expiry keeps on the checked branch: the ref's own values override the
    table's ``history.expire.*`` properties (which fall back to Iceberg's defaults)."""
    out: dict[str, Any] = {}
    for name, key, ref_key in (
        ("max_snapshot_age_ms", "history.expire.max-snapshot-age-ms", "max_snapshot_age_ms"),
        ("min_snapshots_to_keep", "history.expire.min-snapshots-to-keep", "min_snapshots_to_keep"),
    ):
        if ref is not None and ref.get(ref_key) is not None:
            out[name], out[name + "_source"] = ref[ref_key], "ref"
        else:
            value = _int_or_none(effective.get(key))
            out[name] = value
            out[name + "_source"] = "default" if effective.get(key) == PROPERTY_DEFAULTS[key] else "property"
            if value is None:
                out[name + "_source"] = "invalid"
    return out


def _type(field_type: Any) -> str:
    try:
        return normalize_type(field_type)
    except TypeSyntaxError:
        return str(field_type).replace(" ", "").lower()


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _schema(schema: Any) -> dict[str, Any]:
    fields = []
    for f in schema.fields:
        entry: dict[str, Any] = {"id": f.field_id, "name": f.name, "type": _type(f.field_type), "required": f.required}
        if f.doc:
            entry["doc"] = f.doc
        if getattr(f, "initial_default", None) is not None:
            entry["initial_default"] = _json_value(f.initial_default)
        fields.append(entry)
    ids = list(schema.identifier_field_ids or [])
    names = {f.field_id: f.name for f in schema.fields}
    return {
        "schema_id": schema.schema_id,
        "fields": fields,
        "identifier_field_ids": ids,
        "identifier_fields": [names.get(i) or _column_name(schema, i) for i in ids],
    }


def _column_name(schema: Any, field_id: int) -> str | None:
    try:
        return str(schema.find_column_name(field_id))
    except Exception:
        return None


def _source_field(schema: Any, field: Any) -> dict[str, Any]:
    """What a partition field and a sort field share: the source column and the transform."""
    return {
        "source": _column_name(schema, field.source_id),
        "source_id": field.source_id,
        "transform": str(field.transform).replace(" ", "").lower(),
    }


def _spec(spec: Any, schema: Any) -> dict[str, Any]:
    return {
        "spec_id": spec.spec_id,
        "fields": [{**_source_field(schema, pf), "name": pf.name, "field_id": pf.field_id} for pf in spec.fields],
    }


def _sort_order(order: Any, schema: Any) -> dict[str, Any]:
    return {
        "order_id": order.order_id,
        "fields": [
            {
                **_source_field(schema, sf),
                "direction": str(getattr(sf.direction, "value", sf.direction)),
                "null_order": str(getattr(sf.null_order, "value", sf.null_order)),
            }
            for sf in order.fields
        ],
    }
