"""Rollbacks and clean-ups leave a trace (SW-REC-007), through the real CLI on real PyIceberg tables
(SQLite catalog) written the way the Iceberg Flink sink writes them: a rollback no ledger row
explains is found by ``check --env`` and shown by ``evidence``; a clean-up after a checkpoint
committed twice that removed both copies of a row is data loss, one that kept a copy is not; a
metadata log whose files cannot be read is SW-FACT-001."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from tests.cli import Proc, sw

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from tests.iceberg_tables import CLEAN_PROPERTIES, JOB_A, FlinkSink, Lake

CONTRACT = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata:
  name: orders-enrichment
  owner: payments-data
{consumers}
job:
  name: orders-enrichment
  max_parallelism: 128
table:
  catalog: lake
  identifier: sales.orders
  format_version: 2
  identifier_fields: [order_id]
  commit:
    max_interval: 5m
    lineage: required
retention:
  rollback_window: 3d
  snapshots: {{max_age: 7d, min_keep: 20}}
{recovery}
"""
CONSUMERS = """\
  consumers:
    - {name: finance-bi, contact: bi@example.com, freshness: 1h}"""


def _setup(lake: Lake, *, consumers: bool = False, require: bool = False) -> None:
    root = lake.root
    config = {"contracts": ["contracts/*.yaml"], "environments": {"lake": {"iceberg": lake.environment()}}}
    (root / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (root / "contracts").mkdir(exist_ok=True)
    text = CONTRACT.format(
        consumers=CONSUMERS if consumers else "",
        recovery="recovery:\n  require_ledger: true" if require else "",
    )
    (root / "contracts" / "orders.yaml").write_text(text, encoding="utf-8")


def _now(lake: Lake) -> str:
    return dt.datetime.fromtimestamp(lake.clock.now_ms / 1000 + 60, tz=dt.timezone.utc).isoformat()


def _check(lake: Lake) -> tuple[Proc, list[dict[str, Any]]]:
    r = sw("check", "--env", "lake", "--now", _now(lake), "--format", "json", cwd=lake.root)
    assert r.code in (0, 1), r
    return r, [f for f in r.json()["findings"] if f["rule"] in ("SW-REC-007", "SW-FACT-001")]


def _rolled_back(lake: Lake) -> list[int]:
    table = lake.create_orders(dict(CLEAN_PROPERTIES))
    ids = FlinkSink(lake, table, JOB_A).commit_range(1, 3)
    lake.clock.tick()
    with lake.frozen_clock():
        table.manage_snapshots().rollback_to_snapshot(ids[0]).commit()
    return ids


def _committed_twice(lake: Lake) -> Any:
    """Checkpoints 1..3 (rows 1..6, checkpoint 2 holds rows 3 and 4), checkpoint 2 committed again
    with the same data file: rows 3 and 4 are in the table twice."""
    table = lake.create_orders(dict(CLEAN_PROPERTIES))
    sink = FlinkSink(lake, table, JOB_A)
    sink.commit_range(1, 3)
    sink.recommit(2)
    assert sorted(r["order_id"] for r in table.scan().to_arrow().to_pylist()) == [1, 2, 3, 3, 4, 4, 5, 6]
    lake.clock.tick()
    return table


def test_an_unexplained_rollback_is_found_by_check_and_shown_by_evidence(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    ids = _rolled_back(lake)
    _setup(lake)
    r, found = _check(lake)
    [f] = found
    assert f["severity"] == "warning", r
    assert f["evidence"]["kind"] == "rollback"
    assert f["evidence"]["snapshot_id"] == ids[0]
    assert f["evidence"]["from_snapshot_id"] == ids[2]
    assert f["evidence"]["removed_snapshot_ids"] == [ids[2], ids[1]]
    assert f["evidence"]["flink_job_ids"] == [JOB_A]
    assert f"rolled back from snapshot {ids[2]} to snapshot {ids[0]}" in f["message"]
    assert "no recovery ledger row explains it" in f["message"]

    record = sw("evidence", "orders-enrichment", "--env", "lake", "--now", _now(lake), "--format", "json", cwd=tmp_path)
    assert record.code == 0, record
    history = record.json()["history"]
    assert history["available"] is True
    [change] = history["changes"]
    assert (change["kind"], change["snapshot_id"], change["removed_snapshot_ids"]) == ("rollback", ids[0], ids[:0:-1])
    assert "SW-REC-007" in [w["rule"] for w in record.json()["verdict"]["warnings"]]
    md = sw("evidence", "orders-enrichment", "--env", "lake", "--now", _now(lake), cwd=tmp_path)
    assert md.code == 0, md
    section = md.stdout.split("## Rollback history", 1)[1]
    assert f"| rolled back | `main` | {ids[0]} | {ids[2]} | {ids[2]}, {ids[1]} | {JOB_A} |" in section, md.stdout


def test_a_clean_history_has_no_trace_to_explain(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = lake.create_orders(dict(CLEAN_PROPERTIES))
    FlinkSink(lake, table, JOB_A).commit_range(1, 3)
    _setup(lake, consumers=True, require=True)
    r, found = _check(lake)
    assert found == [], r


def test_with_consumers_and_require_ledger_the_rollback_is_an_error(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    _rolled_back(lake)
    _setup(lake, consumers=True, require=True)
    r, found = _check(lake)
    [f] = found
    assert f["severity"] == "error"
    assert "recovery.require_ledger: the table has consumers finance-bi" in f["message"]
    assert r.code == 1


def test_a_clean_up_that_removed_both_copies_of_a_row_is_data_loss(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = _committed_twice(lake)
    with lake.frozen_clock():
        table.delete("order_id == 3")  # meant to remove the duplicate; removes both copies
    cleanup = table.current_snapshot()
    _setup(lake)
    r, found = _check(lake)
    loss = [f for f in found if f["evidence"].get("kind") == "data_loss"]
    [f] = loss
    assert f["severity"] == "error"
    assert f["evidence"]["snapshot_id"] == cleanup.snapshot_id
    assert f["evidence"]["lost"] == [{"key": {"order_id": 3}, "copies_before": 2}]
    assert "removed every copy of 1 row(s)" in f["message"]
    assert r.code == 1
    # the clean-up deleted Flink-written data and no ledger row explains it: reported too
    assert [x["evidence"]["kind"] for x in found if x is not f] == ["delete"]


def test_a_clean_up_that_kept_one_copy_is_no_data_loss(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = _committed_twice(lake)
    rows = table.scan(row_filter="order_id == 3 or order_id == 4").to_arrow().to_pylist()
    once = list({r["order_id"]: r for r in rows}.values())
    with lake.frozen_clock():
        table.overwrite(
            pa.Table.from_pylist(once, schema=table.schema().as_arrow()),
            overwrite_filter="order_id == 3 or order_id == 4",
        )
    assert sorted(r["order_id"] for r in table.scan().to_arrow().to_pylist()) == [1, 2, 3, 4, 5, 6]
    _setup(lake)
    r, found = _check(lake)
    assert [f["evidence"]["kind"] for f in found] == ["delete"], r  # Flink data rewritten, not lost
    assert all(f["severity"] == "warning" for f in found)


def test_unreadable_metadata_log_files_are_a_gap(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = lake.create_orders(dict(CLEAN_PROPERTIES))
    FlinkSink(lake, table, JOB_A).commit_range(1, 3)
    gone = table.metadata.metadata_log[-1].metadata_file
    Path(gone.removeprefix("file://")).unlink()
    _setup(lake)
    _, found = _check(lake)
    [f] = found
    assert f["rule"] == "SW-FACT-001"
    assert f["path"] == "facts.iceberg.history"
    assert "1 previous metadata file(s) could not be read" in f["message"]
    assert gone in f["message"]


def test_a_rollback_the_ledger_explains_is_not_reported(tmp_path: Path) -> None:
    """The operator's flow: ``evidence --rollback-to S --record`` keeps the decision to roll the
    table back to S in the recovery ledger; after the rollback, ``check --env`` reads the ledger's
    rows (input.ledger) and SW-REC-007 stays silent, even where the ledger is required. Without
    the row (the same table, the same rollback) it is an error: the ledger row is what explains it."""
    lake = Lake(tmp_path)
    ids = _rolled_back(lake)
    _setup(lake, consumers=True, require=True)
    config = yaml.safe_load((lake.root / "streamwarden.yaml").read_text(encoding="utf-8"))
    config["ledger"] = {"catalog": "lake", "table": "ops.recovery_ledger"}
    (lake.root / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    r, found = _check(lake)
    assert [(f["rule"], f["severity"]) for f in found] == [("SW-REC-007", "error")], r

    recorded = sw(
        "evidence", "orders-enrichment", "--env", "lake", "--now", _now(lake),
        "--rollback-to", str(ids[0]), "--record", "--note", "rolled back the duplicate commits",
        "--format", "json", cwd=lake.root,
    )  # fmt: skip
    assert recorded.code == 0, recorded
    assert "recorded decision" in recorded.stderr, recorded
    named = recorded.json()["table"]["rollback"]["named"]
    assert (named["snapshot_id"], named["valid"]) == (ids[0], None), named
    md = sw(
        "evidence",
        "orders-enrichment",
        "--env",
        "lake",
        "--now",
        _now(lake),
        "--rollback-to",
        str(ids[0]),
        cwd=lake.root,
    )
    assert f"Rollback target named: `{ids[0]}`: snapshot **{ids[0]}** (snapshot id)" in md.stdout, md.stdout

    r, found = _check(lake)
    assert found == [], r
