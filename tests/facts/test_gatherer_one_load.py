"""check --env loads a contract's table once for its Iceberg facts and its data scan: the scan
reads the table the Iceberg gatherer opened (GatherContext.table), on a real SQL catalog and a real
local Spark session."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, TimestamptzType
from tests.data_contract import NOW_MS, ago, contract_text
from tests.data_tables import DataLake, append, spark  # noqa: F401  (the session fixture)

from streamwarden.contracts.load import load_contract
from streamwarden.facts import iceberg, spark_data
from streamwarden.facts.source import GatherContext

pytestmark = pytest.mark.usefixtures("spark")


def test_the_data_scan_reads_the_table_the_iceberg_gatherer_opened(tmp_path: Path, counted_loads: list[str]) -> None:
    lake = DataLake(tmp_path)
    table = lake.create(
        "sales.orders",
        Schema(
            NestedField(1, "order_id", LongType(), required=True),
            NestedField(4, "event_time", TimestamptzType(), required=True),
            identifier_field_ids=[1],
        ),
    )
    snapshot = append(table, [{"order_id": i, "event_time": ago(minutes=5)} for i in (1, 2, 2)])
    path = tmp_path / "contracts" / "orders.yaml"
    path.parent.mkdir()
    schema = (
        "- {name: order_id, type: long, required: true, id: 1}\n"
        "- {name: event_time, type: timestamptz, required: true, id: 4}\n"
    )
    path.write_text(contract_text("unique: [order_id]\n", schema=schema), encoding="utf-8")
    contract = load_contract(path, tmp_path).data
    env = lake.environment()

    loads = counted_loads  # each load through the real catalog
    ctx = GatherContext(tmp_path, NOW_MS)
    facts, opened = iceberg.gather_table(contract, env, ctx)
    assert facts["available"] and opened is not None
    [data] = spark_data.gather_many([contract], env, ctx, [opened])
    assert loads == ["sales.orders"]  # one load for both sections
    assert data["available"], data.get("error")
    assert data["snapshot_id"] == snapshot == facts["snapshots"]["head"]["snapshot_id"]
    assert data["unique"]["duplicate_keys"] == 1
    # without the opened table the scan opens it itself, through the same open_contract_table
    [again] = spark_data.gather_many([contract], env, ctx)
    assert loads == ["sales.orders", "sales.orders"]
    assert again["unique"]["duplicate_keys"] == 1
