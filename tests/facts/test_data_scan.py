"""Data facts on real Iceberg tables read by a real local Spark session: duplicates, deletes
(position and equality, with the sequence-number and partition rules), nulls, stale data, expired
rows, a renamed column, name-mapped files, and snapshot summaries that lie."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType
from tests.data_contract import ago, check, contract_text, rules
from tests.data_tables import (
    DataLake,
    append,
    data_file,
    equality_delete_file,
    live_files,
    position_delete_file,
    row_delta,
    spark,  # noqa: F401  (the session fixture)
)

pytestmark = pytest.mark.usefixtures("spark")

UNIQUE = "unique: [order_id]\n"


def orders_schema() -> Schema:
    return Schema(
        NestedField(1, "order_id", LongType(), required=True),
        NestedField(2, "customer_id", LongType(), required=False),
        NestedField(3, "region", StringType(), required=False),
        NestedField(4, "event_time", TimestamptzType(), required=True),
        identifier_field_ids=[1],
    )


def rows(ids: list[int], *, minutes: float = 5, customer: int | None = 7, region: str = "eu") -> list[dict[str, Any]]:
    return [{"order_id": i, "customer_id": customer, "region": region, "event_time": ago(minutes=minutes)} for i in ids]


@pytest.fixture
def lake(tmp_path: Path) -> DataLake:
    return DataLake(tmp_path)


@pytest.fixture
def orders(lake: DataLake) -> Table:
    return lake.create("sales.orders", orders_schema())


def test_duplicates_fire_and_a_position_delete_removes_them(lake: DataLake, orders: Table) -> None:
    append(orders, rows(list(range(1, 101))))
    append(orders, rows([42, 43]))  # a replayed commit: two keys live twice
    data, findings = check(lake.root, contract_text(UNIQUE), lake.environment())
    assert data["available"], data
    assert data["unique"]["duplicate_keys"] == 2 and data["unique"]["duplicate_rows"] == 2
    assert data["unique"]["samples"] == [{"key": {"order_id": 42}, "count": 2}, {"key": {"order_id": 43}, "count": 2}]
    assert rules(findings, "SW-DATA") == {"SW-DATA-002": ["quality.unique"]}
    dup = next(f for f in findings if f.rule == "SW-DATA-002")
    assert "2 value(s) of (order_id) occur more than once" in dup.message and dup.line is not None

    # the writer deletes its replayed rows with a position delete file (row 0 and 1 of the second file)
    second = live_files(orders)[1][0]
    row_delta(orders, deletes=[position_delete_file(orders, [(second, 0), (second, 1)])])
    data, findings = check(lake.root, contract_text(UNIQUE), lake.environment())
    assert data["unique"]["duplicate_keys"] == 0
    assert data["scan"]["rows_read"] == 102 and data["scan"]["rows_live"] == 100
    assert data["scan"]["position_delete_files"] == 1
    assert "SW-DATA-002" not in rules(findings)
    newest = data["snapshots"][0]
    assert newest["operation"] == "delete" and newest["comparable"]
    assert newest["summary"]["added-position-deletes"] == newest["counted"]["added-position-deletes"] == 2


def test_position_delete_applies_only_to_older_or_same_sequence_files(lake: DataLake, orders: Table) -> None:
    append(orders, rows([1, 2, 3]))
    first = live_files(orders)[0][0]
    # a delete of (first file, pos 0) committed together with a NEW file: same sequence number as the
    # new file, but it names the first file by path, so only that row goes
    row_delta(orders, data=[data_file(orders, rows([1]))], deletes=[position_delete_file(orders, [(first, 0)])])
    data, findings = check(lake.root, contract_text(UNIQUE), lake.environment())
    assert data["scan"]["rows_live"] == 3
    assert data["unique"]["duplicate_keys"] == 0
    assert "SW-DATA-002" not in rules(findings)


def test_a_checkpoint_committed_twice_is_read_twice(lake: DataLake, orders: Table) -> None:
    append(orders, rows([1, 2, 3]))
    path = live_files(orders)[0][0]
    orders.add_files([path], check_duplicate_files=False)  # a committer replaying its WriteResult
    data, findings = check(lake.root, contract_text(UNIQUE), lake.environment())
    assert data["scan"]["rows_read"] == 6 and data["scan"]["rows_live"] == 6
    assert data["unique"]["duplicate_keys"] == 3
    assert rules(findings, "SW-DATA") == {"SW-DATA-002": ["quality.unique"]}
    assert data["snapshots"][0]["counted"]["added-records"] == 3 and data["snapshots"][0]["mismatches"] == []


def test_equality_deletes_follow_the_sequence_number_rule(lake: DataLake, orders: Table) -> None:
    append(orders, rows([1, 2, 3, 4, 5]))  # seq 1
    append(orders, rows([5]))  # seq 2: order 5 is now live twice
    # an upsert of order 5, as Flink's upsert sink commits it: an equality delete on order_id and
    # the new row in ONE snapshot (seq 3). The delete removes both older copies (seq 1, 2 < 3) and
    # must not remove the new row (same sequence number).
    upsert = rows([5], customer=99)
    row_delta(
        orders,
        data=[data_file(orders, upsert)],
        deletes=[equality_delete_file(orders, ["order_id"], [{"order_id": 5}])],
    )
    data, findings = check(lake.root, contract_text(UNIQUE + "not_null: [customer_id]\n"), lake.environment())
    assert data["available"], data
    assert data["scan"]["equality_delete_files"] == 1
    assert data["scan"]["rows_read"] == 7 and data["scan"]["rows_live"] == 5
    assert data["unique"]["duplicate_keys"] == 0
    assert not rules(findings, "SW-DATA")
    newest = data["snapshots"][0]
    assert newest["operation"] == "overwrite"
    assert newest["counted"] == {"added-records": 1, "added-position-deletes": 0, "added-equality-deletes": 1}
    assert newest["mismatches"] == []


def test_equality_delete_stays_in_its_partition(lake: DataLake) -> None:
    spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=IdentityTransform(), name="region"))
    table = lake.create("sales.orders", orders_schema(), spec)
    append(table, rows([1, 2], region="eu") + rows([1], region="us"))  # order 1 in both partitions
    data, _ = check(lake.root, contract_text(UNIQUE), lake.environment())
    assert data["unique"]["duplicate_keys"] == 1
    # delete order 1 in partition region=eu only: the us row must survive
    eq = equality_delete_file(table, ["order_id"], [{"order_id": 1}], spec_id=0, partition=Record("eu"))
    row_delta(table, deletes=[eq])
    data, findings = check(lake.root, contract_text(UNIQUE + "not_null: [region]\n"), lake.environment())
    assert data["scan"]["rows_live"] == 2
    assert data["unique"]["duplicate_keys"] == 0
    assert not rules(findings, "SW-DATA")


def test_nulls_in_not_null_and_required_columns(lake: DataLake, orders: Table) -> None:
    append(orders, rows([1, 2, 3]) + rows([4, 5], customer=None))
    data, findings = check(lake.root, contract_text("not_null: [region, customer_id]\n"), lake.environment())
    assert data["not_null"]["customer_id"]["nulls"] == 2
    assert data["not_null"]["region"]["nulls"] == 0
    assert data["not_null"]["order_id"] == {
        "field_id": 1,
        "missing": False,
        "nulls": 0,
        "declared_in": ["table.schema"],
    }
    assert rules(findings, "SW-DATA") == {"SW-DATA-003": ["quality.not_null[1]"]}
    f = next(f for f in findings if f.rule == "SW-DATA-003")
    assert "holds 2 null(s)" in f.message


def test_stale_data_fires_and_fresh_data_does_not(lake: DataLake, orders: Table) -> None:
    fresh_q = "freshness: {column: event_time, max_lag: 15m}\n"
    append(orders, rows([1, 2], minutes=120) + rows([3], minutes=40))
    data, findings = check(lake.root, contract_text(fresh_q), lake.environment())
    assert data["freshness"]["max"] == "2026-11-25T11:20:00.000Z"
    assert rules(findings, "SW-DATA") == {"SW-DATA-001": ["quality.freshness.max_lag"]}
    assert "40m before now" in next(f for f in findings if f.rule == "SW-DATA-001").message
    append(orders, rows([4], minutes=14))
    data, findings = check(lake.root, contract_text(fresh_q), lake.environment())
    assert data["freshness"]["max"] == "2026-11-25T11:46:00.000Z"
    assert "SW-DATA-001" not in rules(findings)


def test_expired_rows_fire_until_deleted(lake: DataLake, orders: Table) -> None:
    ret = "data: {column: event_time, max_age: 400d}\n"
    append(orders, rows([1, 2, 3], minutes=60))
    append(orders, rows([4, 5], minutes=500 * 24 * 60))  # 500 days old
    data, findings = check(lake.root, contract_text(retention=ret), lake.environment())
    assert data["retention"]["expired_rows"] == 2
    assert data["retention"]["min"] == "2025-07-13T12:00:00.000Z"
    assert rules(findings, "SW-RET-005") == {"SW-RET-005": ["retention.data.max_age"]}
    old = live_files(orders)[1][0]
    row_delta(orders, deletes=[position_delete_file(orders, [(old, 0), (old, 1)])])
    data, findings = check(lake.root, contract_text(retention=ret), lake.environment())
    assert data["retention"]["expired_rows"] == 0
    assert data["retention"]["min"] == "2026-11-25T11:00:00.000Z"
    assert "SW-RET-005" not in rules(findings)


def test_renamed_column_is_read_by_field_id(lake: DataLake, orders: Table, spark: Any) -> None:  # noqa: F811
    append(orders, rows([1, 2], minutes=30))
    with orders.update_schema() as update:
        update.rename_column("event_time", "event_ts")
    append(orders, [{"order_id": 3, "customer_id": 7, "region": "eu", "event_ts": ago(minutes=10)}])
    schema = """\
        - {name: order_id, type: long, required: true, id: 1}
        - {name: customer_id, type: long, id: 2}
        - {name: region, type: string, id: 3}
        - {name: event_ts, type: timestamptz, required: true, id: 4}
    """
    text = contract_text("not_null: [event_ts]\n", "data: {column: event_ts, max_age: 20m}\n", schema)
    data, findings = check(lake.root, text, lake.environment())
    # the first file calls the column event_time: by name it would read as null
    first = live_files(orders)[0][0]
    assert "event_ts" not in spark.read.parquet(first).columns
    assert data["not_null"]["event_ts"]["nulls"] == 0
    assert data["retention"]["min"] == "2026-11-25T11:30:00.000Z"  # a value from the old file
    assert data["retention"]["expired_rows"] == 2
    assert rules(findings, "SW-DATA") == {}
    assert rules(findings, "SW-RET-005") == {"SW-RET-005": ["retention.data.max_age"]}


def test_files_without_field_ids_are_read_through_the_name_mapping(lake: DataLake, orders: Table) -> None:
    append(orders, rows([1, 2]))
    schema = pa.schema(
        [  # no field ids, as a file written outside Iceberg
            pa.field("order_id", pa.int64(), nullable=False),
            pa.field("customer_id", pa.int64()),
            pa.field("region", pa.string()),
            pa.field("event_time", pa.timestamp("us", tz="UTC"), nullable=False),
        ]
    )
    plain = pa.Table.from_pylist(
        [
            {"order_id": 3, "customer_id": None, "region": "us", "event_time": ago(minutes=3)},
            {"order_id": 4, "customer_id": 8, "region": "us", "event_time": ago(minutes=3)},
        ],
        schema=schema,
    )
    path = lake.root / "imported.parquet"
    pq.write_table(plain, path)
    orders.add_files([path.as_uri()])
    data, findings = check(lake.root, contract_text(UNIQUE + "not_null: [customer_id, region]\n"), lake.environment())
    assert data["scan"]["rows_live"] == 4
    assert data["not_null"]["customer_id"]["nulls"] == 1
    assert data["not_null"]["region"]["nulls"] == 0
    assert rules(findings, "SW-DATA") == {"SW-DATA-003": ["quality.not_null[0]"]}


def test_snapshot_summary_that_disagrees_with_its_files_warns(lake: DataLake, orders: Table) -> None:
    append(orders, rows([1, 2, 3]))
    row_delta(orders, data=[data_file(orders, rows([4, 5]), record_count=7)])  # the manifest says 7 rows
    data, findings = check(lake.root, contract_text(UNIQUE), lake.environment())
    bad = data["snapshots"][0]
    assert bad["summary"]["added-records"] == 7 and bad["counted"]["added-records"] == 2
    assert bad["mismatches"] == ["added-records"]
    assert data["record_count_mismatches"]["count"] == 1
    assert rules(findings, "SW-DATA") == {"SW-DATA-004": ["table.identifier"]}
    warn = next(f for f in findings if f.rule == "SW-DATA-004")
    assert warn.severity == "warning"
    assert "added-records = 7 in its summary, but the files it added hold 2" in warn.message


def test_missing_column_and_empty_table(lake: DataLake, orders: Table) -> None:
    quality = "freshness: {column: event_time, max_lag: 15m}\nunique: [order_no]\n"
    data, findings = check(lake.root, contract_text(quality), lake.environment())
    assert data["snapshot_id"] is None and data["scan"]["rows_live"] == 0
    assert data["unique"]["missing"] == ["order_no"]
    assert sorted(rules(findings, "SW-DATA")) == ["SW-DATA-001", "SW-DATA-002"]
    assert rules(findings, "SW-DATA")["SW-DATA-001"] == ["quality.freshness.column"]


def test_catalog_read_without_an_iceberg_catalog_in_spark_is_a_clear_gap(lake: DataLake, orders: Table) -> None:
    append(orders, rows([1, 2]))
    env = lake.environment({"master": "local[2]", "read": "catalog"})
    data, findings = check(lake.root, contract_text(UNIQUE), env)
    assert data["available"] is False and data["configured"] is True
    assert "spark.read is 'catalog' but Spark cannot read lake.sales.orders" in data["error"]
    assert "SW-FACT-001" in rules(findings) and "SW-DATA-002" not in rules(findings)
