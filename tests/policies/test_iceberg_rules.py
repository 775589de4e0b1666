"""End to end on real tables: histories written the way the Iceberg Flink sink writes them, gathered
by the Iceberg gatherer, evaluated by the built-in policies. Each rule fires exactly where it should,
with evidence naming snapshot ids, job ids and checkpoint ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from tests.fake_flink import NOW as FLINK_NOW
from tests.fake_flink import fake_flink, healthy_routes, job, overview
from tests.iceberg_tables import (
    CLEAN_PROPERTIES,
    DAY_MS,
    JOB_A,
    JOB_B,
    JOB_BACKFILL,
    JOB_FORK,
    MINUTE_MS,
    SINK_OP,
    FlinkSink,
    Lake,
    compact,
)

from streamwarden.check.evaluation import evaluate_contract
from streamwarden.contracts.config import Config
from streamwarden.contracts.load import load_contract
from streamwarden.engine import load_policy_set, make_engine
from streamwarden.evaluate.findings import Finding
from streamwarden.evaluate.inputdoc import pipeline as build_input
from streamwarden.facts.iceberg import gather_iceberg
from streamwarden.facts.pipeline import gather_one

CONTRACT = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata:
  name: orders-enrichment
  owner: payments-data
job:
  name: orders-enrichment
  max_parallelism: 128
table:
  catalog: lake
  identifier: sales.orders
  format_version: 2
  schema:
    - {name: order_id, type: long, required: true, id: 1}
    - {name: amount, type: "decimal(12, 2)", id: 2}
    - {name: event_time, type: timestamptz, required: true, id: 3}
  identifier_fields: [order_id]
  partition_spec:
    - {source: event_time, transform: day}
  properties:
    write.upsert.enabled: "true"
  commit:
    max_interval: 5m
    lineage: required
retention:
  rollback_window: 3d
  snapshots: {max_age: 7d, min_keep: 20}
"""
BACKFILL = f"""\
backfills:
  - {{job: orders-backfill, job_id: {JOB_BACKFILL}, branch: main, from: "2025-11-01T00:00:00Z",
     to: "2025-11-08T00:00:00Z", reason: "replay the first week after the enrichment fix"}}
"""


@pytest.fixture(scope="module")
def engine() -> tuple[Any, Any]:
    policy_set = load_policy_set()
    return make_engine("regorus", policy_set), policy_set


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


def check(
    lake: Lake, engine: tuple[Any, Any], text: str = CONTRACT, *, now: int | None = None, flink: dict | None = None
) -> list[Finding]:
    path = lake.root / "contract.yaml"
    path.write_text(text, encoding="utf-8")
    contract = load_contract(path, lake.root)
    now = now if now is not None else lake.clock.now_ms + MINUTE_MS
    facts = gather_one(contract.data, contract.path, lake.root)
    facts["iceberg"] = gather_iceberg(contract.data, lake.environment(), lake.root, now)
    if flink is not None:
        facts["flink"] = flink
    doc = build_input(contract, facts, now, "test", config=Config(root=Path()).policy_settings())
    found = evaluate_contract(engine[0], engine[1], contract, doc)
    return [f for f in found if f.source == "iceberg" or f.rule == "SW-FACT-001"]


def live_flink(lake: Lake, *jobs: tuple[str, str, str]) -> dict[str, Any]:
    """facts.flink as the gatherer reads it from a Flink 2.3.0 REST API (the fake server) that
    lists ``jobs`` (id, name, state), newest first; the first one is the contract's job."""
    from streamwarden.facts.flink import gather_flink_one

    jid, name, state = jobs[0]
    routes = healthy_routes(jid, name)
    routes["/jobs/overview"] = (
        200,
        overview(*[(j, n, s, FLINK_NOW - 60000 * (i + 1)) for i, (j, n, s) in enumerate(jobs)]),
    )
    routes[f"/jobs/{jid}"] = (200, job(jid, name, state))
    with fake_flink() as fake:
        fake.routes = routes
        facts = gather_flink_one({"job": {"name": name}}, {"rest_url": fake.url, "retries": 0}, lake.root, {})
    assert facts["available"] and facts["job_id"] == jid, facts
    return facts


def rules(findings: list[Finding]) -> list[tuple[str, str]]:
    return sorted((f.rule, f.path) for f in findings)


def one(findings: list[Finding], rule: str) -> Finding:
    hits = [f for f in findings if f.rule == rule]
    assert len(hits) == 1, rules(findings)
    return hits[0]


def clean_table(lake: Lake, **props: str) -> Any:
    return lake.create_orders({**CLEAN_PROPERTIES, **props})


# ----------------------------------------------------------------------------- clean histories


def test_clean_history_passes_every_rule(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    FlinkSink(lake, table, JOB_A).commit_range(1, 5)
    compact(lake, table)  # maintenance in between is fine
    FlinkSink(lake, table, JOB_A).commit(6)
    assert rules(check(lake, engine)) == []


def test_restore_from_the_latest_checkpoint_under_a_new_job_id_passes(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    FlinkSink(lake, table, JOB_A).commit_range(1, 3)
    FlinkSink(lake, table, JOB_B).commit_range(4, 6)  # restored from checkpoint 3: ids continue
    assert rules(check(lake, engine)) == []


def test_declared_backfill_may_interleave(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    job, backfill = FlinkSink(lake, table, JOB_A), FlinkSink(lake, table, JOB_BACKFILL)
    job.commit_range(1, 2)
    backfill.commit(1)
    job.commit(3)
    backfill.commit(2)
    assert rules(check(lake, engine, CONTRACT + BACKFILL)) == []


def test_backfill_declared_by_name_resolves_through_flink_facts(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    job, backfill = FlinkSink(lake, table, JOB_A), FlinkSink(lake, table, JOB_BACKFILL)
    job.commit(1)
    backfill.commit(1)
    job.commit(2)
    by_name = CONTRACT + "backfills:\n  - {job: orders-backfill, branch: main, reason: replay}\n"
    assert rules(check(lake, engine, by_name)) == [("SW-TABLE-010", "backfills")]  # no Flink facts: unknown
    flink = live_flink(lake, (JOB_A, "orders-enrichment", "RUNNING"), (JOB_BACKFILL, "orders-backfill", "FINISHED"))
    assert rules(check(lake, engine, by_name, flink=flink)) == []


# ------------------------------------------------------------------------------- lineage anomalies


def test_checkpoint_committed_twice(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    sink = FlinkSink(lake, table, JOB_A)
    sink.commit_range(1, 2)
    again = sink.recommit(2)  # the same WriteResult committed a second time
    sink.commit(3)
    found = check(lake, engine)
    assert rules(found) == [("SW-TABLE-008", "table.identifier"), ("SW-TABLE-011", "table.identifier")]
    dup = one(found, "SW-TABLE-008")
    assert dup.evidence == {
        "job_id": JOB_A,
        "operator_id": SINK_OP,
        "checkpoint_id": 2,
        "snapshot_ids": [sink.committed[2], again],
    }
    assert f"checkpoint 2 of job {JOB_A}" in dup.message and str(again) in dup.message
    files = one(found, "SW-TABLE-011")
    assert sorted(files.evidence["snapshot_ids"]) == sorted([sink.committed[2], again])
    assert files.evidence["kind"] == "two_snapshots"


def test_same_job_restored_from_an_older_checkpoint(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    sink = FlinkSink(lake, table, JOB_A)  # a fixed job id (application mode) keeps its id on restore
    sink.commit(10)
    sink.commit(20)
    sink.commit(30)
    replay = sink.commit(25)  # restored from checkpoint 24: 25..30 are committed again
    found = check(lake, engine)
    assert rules(found) == [("SW-TABLE-009", "table.identifier")]
    f = one(found, "SW-TABLE-009")
    assert f.evidence["kind"] == "same_job"
    assert (f.evidence["snapshot_id"], f.evidence["checkpoint_id"]) == (replay, 25)
    assert (f.evidence["previous_snapshot_id"], f.evidence["previous_checkpoint_id"]) == (sink.committed[30], 30)
    assert "checkpoints 25..30 are replayed" in f.message


def test_new_job_restored_from_an_older_checkpoint(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    old, new = FlinkSink(lake, table, JOB_A), FlinkSink(lake, table, JOB_B)
    old.commit_range(10, 12)
    first = new.commit(11)  # restored from checkpoint 10 of the old job
    new.commit(12)
    found = check(lake, engine)
    f = one(found, "SW-TABLE-009")
    assert f.evidence["kind"] == "new_job"
    assert (f.evidence["job_id"], f.evidence["snapshot_id"], f.evidence["checkpoint_id"]) == (JOB_B, first, 11)
    assert (f.evidence["previous_job_id"], f.evidence["previous_checkpoint_id"]) == (JOB_A, 12)
    assert [r for r, _ in rules(found)] == ["SW-TABLE-009"]  # a takeover, not a fork


def test_undeclared_fork(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    job, fork = FlinkSink(lake, table, JOB_A), FlinkSink(lake, table, JOB_FORK)
    job.commit_range(1, 2)
    forked = fork.commit(3)
    job.commit(3)
    found = check(lake, engine)
    assert rules(found) == [("SW-TABLE-010", "backfills")]
    f = one(found, "SW-TABLE-010")
    assert f.evidence["job_ids"] == [JOB_A, JOB_FORK]
    assert [p["snapshot_id"] for p in f.evidence["pattern"]] == [job.committed[2], forked, job.committed[3]]
    assert [p["checkpoint_id"] for p in f.evidence["pattern"]] == [2, 3, 3]


def test_out_of_band_writer(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    sink = FlinkSink(lake, table, JOB_A)
    sink.commit(1)
    stranger = lake.append(table)  # a batch job appending without Flink lineage
    sink.commit(2)
    found = check(lake, engine)
    assert rules(found) == [("SW-TABLE-007", "table.commit.lineage"), ("SW-TABLE-012", "table.identifier")]
    assert one(found, "SW-TABLE-012").evidence == {
        "operation": "append",
        "writer": None,
        "count": 1,
        "snapshot_ids": [stranger],
    }
    assert one(found, "SW-TABLE-012").severity == "warning"
    assert one(found, "SW-TABLE-007").evidence["snapshot_ids"] == [stranger]


def test_out_of_band_writer_without_required_lineage_is_only_a_warning(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    FlinkSink(lake, table, JOB_A).commit(1)
    lake.append(table)
    optional = CONTRACT.replace("lineage: required", "lineage: optional")
    assert rules(check(lake, engine, optional)) == [("SW-TABLE-012", "table.identifier")]


def test_sink_without_operator_id_breaks_required_lineage(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    ids = FlinkSink(lake, table, JOB_A, operator_id=None).commit_range(1, 2)  # an old sink release
    found = check(lake, engine)
    assert rules(found) == [("SW-TABLE-007", "table.commit.lineage")]
    f = one(found, "SW-TABLE-007")
    assert f.evidence["missing"] == ["flink.operator-id"] and f.evidence["job_id"] == JOB_A
    assert sorted(f.evidence["snapshot_ids"]) == sorted(ids)


# ------------------------------------------------------------------------------------- freshness


def test_stale_table(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake)
    head = FlinkSink(lake, table, JOB_A).commit_range(1, 2)[-1]
    later = lake.clock.now_ms + 2 * 60 * MINUTE_MS
    f = one(check(lake, engine, now=later), "SW-TABLE-005")
    assert f.path == "table.commit.max_interval"
    assert (f.evidence["snapshot_id"], f.evidence["checkpoint_id"], f.evidence["job_id"]) == (head, 2, JOB_A)
    finished = live_flink(lake, (JOB_A, "orders-enrichment", "FINISHED"))
    assert finished["state"] == "finished"
    assert rules(check(lake, engine, now=later, flink=finished)) == []


# ---------------------------------------------------------------------------- table definition


def test_schema_type_and_extra_field_differ(lake: Lake, engine: tuple[Any, Any]) -> None:
    from pyiceberg.types import DecimalType, StringType

    table = clean_table(lake)
    FlinkSink(lake, table, JOB_A).commit(1)
    with table.update_schema() as upd:  # evolved beyond any schema the contract describes
        upd.update_column("amount", DecimalType(14, 2))
        upd.add_column("currency", StringType())
    newer = CONTRACT.replace('"decimal(12, 2)", id: 2}', '"decimal(12,2)", id: 2}\n    - {name: note, type: string}')
    found = check(lake, engine, newer)
    assert rules(found) == [
        ("SW-TABLE-001", "table.schema"),
        ("SW-TABLE-001", "table.schema[1].type"),
        ("SW-TABLE-001", "table.schema[2]"),  # note: declared, not in the table
    ]
    typ = next(f for f in found if f.path == "table.schema[1].type")
    assert (typ.evidence["contract"], typ.evidence["live"]) == ("decimal(12,2)", "decimal(14,2)")
    assert typ.line is not None and typ.line > 1  # points at the contract line


def test_schema_evolved_out_of_band(lake: Lake, engine: tuple[Any, Any]) -> None:
    from pyiceberg.types import StringType

    table = clean_table(lake)
    FlinkSink(lake, table, JOB_A).commit(1)
    with table.update_schema() as upd:
        upd.add_column("currency", StringType())
    found = check(lake, engine)
    assert rules(found) == [("SW-SCHEMA-008", "table.schema")]
    f = one(found, "SW-SCHEMA-008")
    assert f.evidence == {
        "live_schema_id": 1,
        "contract_schema_id": 0,
        "added": ["currency"],
        "removed": [],
        "changed": [],
    }


def test_partition_identifier_format_and_properties(lake: Lake, engine: tuple[Any, Any]) -> None:
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.schema import Schema
    from pyiceberg.types import DecimalType, LongType, NestedField, TimestamptzType

    schema = Schema(
        NestedField(1, "order_id", LongType(), required=True),
        NestedField(2, "amount", DecimalType(12, 2), required=False),
        NestedField(3, "event_time", TimestamptzType(), required=True),
    )
    props = {**CLEAN_PROPERTIES, "write.upsert.enabled": "false"}
    table = lake.create_orders(props, format_version=1, schema=schema, partition_spec=UNPARTITIONED_PARTITION_SPEC)
    FlinkSink(lake, table, JOB_A).commit(1)
    found = check(lake, engine)
    assert rules(found) == [
        ("SW-TABLE-002", "table.partition_spec[0]"),
        ("SW-TABLE-003", "table.format_version"),
        ("SW-TABLE-004", "table.identifier_fields"),
        ("SW-TABLE-013", 'table.properties["write.upsert.enabled"]'),
    ]
    assert one(found, "SW-TABLE-003").evidence == {"contract": 2, "live": 1}
    assert one(found, "SW-TABLE-004").evidence == {"contract": ["order_id"], "live": []}
    assert one(found, "SW-TABLE-013").evidence["live"] == "false"


# ------------------------------------------------------------------------------------- retention


def test_default_retention_breaks_the_contract(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = lake.create_orders()  # Iceberg's defaults: 5 days, keep 1, metadata files kept
    FlinkSink(lake, table, JOB_A).commit(1)
    found = check(lake, engine)
    assert rules(found) == [
        ("SW-RET-001", "retention.snapshots.max_age"),
        ("SW-RET-003", "retention.snapshots.min_keep"),
        ("SW-RET-006", 'table.properties["write.metadata.delete-after-commit.enabled"]'),
    ]
    assert one(found, "SW-RET-001").evidence["source"] == "default"


def test_expiry_not_running(lake: Lake, engine: tuple[Any, Any]) -> None:
    table = clean_table(lake, **{"history.expire.min-snapshots-to-keep": "1"})
    sink = FlinkSink(lake, table, JOB_A)
    first = sink.commit(1)
    sink.commit(2, step_ms=40 * DAY_MS)
    low_keep = CONTRACT.replace("min_keep: 20", "min_keep: 1")
    found = check(lake, engine, low_keep)
    f = one(found, "SW-RET-004")
    assert f.evidence["snapshot_id"] == first and f.evidence["allowed_ms"] == 7 * DAY_MS
    assert rules(found) == [("SW-RET-004", "retention.snapshots.max_age")]


# ----------------------------------------------------------------------------------------- gaps


def test_unreadable_table_is_reported_as_a_gap(lake: Lake, engine: tuple[Any, Any]) -> None:
    found = check(lake, engine)  # the catalog exists, the table does not
    f = one(found, "SW-FACT-001")
    assert f.path == "facts.iceberg"
    assert "table sales.orders does not exist in catalog 'lake'" in f.message
    assert rules(found) == [("SW-FACT-001", "facts.iceberg")]
