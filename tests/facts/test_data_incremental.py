"""Incremental data checks: remember the last checked snapshot, scan only new files plus the old
files that column metrics cannot clear, and check new keys against the whole table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table import Table
from tests.data_contract import check, contract_text, rules
from tests.data_tables import (
    DataLake,
    append,
    current_id,
    live_files,
    position_delete_file,
    row_delta,
    spark,  # noqa: F401  (the session fixture)
)
from tests.facts.test_data_scan import orders_schema, rows

pytestmark = pytest.mark.usefixtures("spark")

QUALITY = "unique: [order_id]\nnot_null: [customer_id]\nfreshness: {column: event_time, max_lag: 15m}\n"


@pytest.fixture
def lake(tmp_path: Path) -> DataLake:
    return DataLake(tmp_path)


@pytest.fixture
def orders(lake: DataLake) -> Table:
    table = lake.create("sales.orders", orders_schema())
    for batch in range(4):  # four files with disjoint key ranges: 1-500, 501-1000, ...
        append(table, rows(list(range(batch * 500 + 1, batch * 500 + 501)), minutes=30))
    return table


def run(lake: DataLake, state: Path, **kw: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    data, findings = check(lake.root, contract_text(QUALITY), lake.environment(), state_file=state, **kw)
    assert data["available"], data
    return data, rules(findings, "SW-DATA")


def test_incremental_follows_new_data_and_checks_new_keys_against_the_table(lake: DataLake, orders: Table) -> None:
    state = lake.root / ".streamwarden" / "data-state.json"
    data, found = run(lake, state)
    full = data["scan"]
    assert full["mode"] == "full" and full["data_files_scanned"] == 4 and full["rows_read"] == 2000
    assert full["state"] == {"file": str(state), "snapshot_id": current_id(orders), "held": False, "written": True}
    assert found == {"SW-DATA-001": ["quality.freshness.max_lag"]}  # 30 minutes old

    # new rows with new keys: only the new file is read; freshness comes from it
    append(orders, rows(list(range(2001, 2011)), minutes=1))
    data, found = run(lake, state)
    inc = data["scan"]
    assert inc["mode"] == "incremental" and inc["since_source"] == "state"
    assert inc["data_files_new"] == 1 and inc["data_files_scanned"] == 1 and inc["data_files_pruned"] == 4
    assert inc["rows_read"] == 10 and inc["bytes_read"] < full["bytes_read"] / 4
    assert data["freshness"]["max"] == "2026-11-25T11:59:00.000Z" and data["freshness"]["source"] == "scan+metadata"
    assert [s["counted"]["added-records"] for s in data["snapshots"]] == [10]
    assert found == {}

    # a new row repeats key 1234: the old file whose key range holds it is read too, and only that one
    append(orders, rows([1234], minutes=1))
    held_at = data["snapshot_id"]
    data, found = run(lake, state)
    inc = data["scan"]
    assert inc["data_files_scanned"] == 2 and inc["old_files_scanned_for"] == {"keys": 1}
    assert data["unique"]["samples"] == [{"key": {"order_id": 1234}, "count": 2}]
    assert found == {"SW-DATA-002": ["quality.unique"]}
    assert inc["state"]["held"] is True and inc["state"]["snapshot_id"] == held_at

    # nothing new, but the watermark was held: the duplicate is found again
    data, found = run(lake, state)
    assert data["scan"]["since_snapshot_id"] == held_at
    assert found == {"SW-DATA-002": ["quality.unique"]}

    # the writer deletes the duplicate: clean, and the watermark moves to the current snapshot
    newest = live_files(orders)[-1][0]
    row_delta(orders, deletes=[position_delete_file(orders, [(newest, 0)])])
    data, found = run(lake, state)
    assert found == {} and data["unique"]["duplicate_keys"] == 0
    assert data["scan"]["state"] == {
        "file": str(state),
        "snapshot_id": current_id(orders),
        "held": False,
        "written": True,
    }


def test_since_snapshot_argument_and_an_unknown_snapshot(lake: DataLake, orders: Table) -> None:
    since = current_id(orders)
    append(orders, rows([3001], minutes=1))
    data, _ = check(lake.root, contract_text(QUALITY), lake.environment(), since_snapshot=since)
    assert data["scan"]["mode"] == "incremental" and data["scan"]["since_source"] == "argument"
    assert data["scan"]["data_files_scanned"] == 1
    data, _ = check(lake.root, contract_text(QUALITY), lake.environment(), since_snapshot=12345)
    assert data["scan"]["mode"] == "full" and data["scan"]["data_files_scanned"] == 5
    assert "snapshot 12345 is not an ancestor" in data["scan"]["note"]


def test_old_files_with_expired_rows_or_nulls_are_still_read(lake: DataLake, orders: Table) -> None:
    append(orders, rows([5001, 5002], minutes=500 * 24 * 60))  # 500 days old
    append(orders, rows([5003], customer=None, minutes=5))  # a null in an old file
    since = current_id(orders)
    append(orders, rows([6001], minutes=1))
    text = contract_text(QUALITY, "data: {column: event_time, max_age: 400d}\n")
    data, findings = check(lake.root, text, lake.environment(), since_snapshot=since)
    scan = data["scan"]
    assert scan["mode"] == "incremental" and scan["data_files_scanned"] == 3
    assert scan["old_files_scanned_for"] == {"retention": 1, "nulls": 1}
    assert data["retention"]["expired_rows"] == 2 and data["not_null"]["customer_id"]["nulls"] == 1
    assert rules(findings, "SW-DATA") == {"SW-DATA-003": ["quality.not_null[0]"]}
    assert rules(findings, "SW-RET-005") == {"SW-RET-005": ["retention.data.max_age"]}
