"""Two boundaries, each at the value where its comparison flips, through the real CLI:

- a job that takes over the sink operator and first commits the SAME checkpoint id its predecessor
  committed last (a committer re-committing that checkpoint under the new job id) is SW-TABLE-009,
  named as a re-commit; one id above it is a clean restore from the latest checkpoint
  (``iceberg/lineage.py``: ``a_real[0] > b_real[-1]``);
- a ``_metadata`` whose checkpoint id is -1 is refused, one whose id is 0 is read
  (``flink/savepoint_metadata.py``: ``checkpoint_id < 0``), on the real savepoint the examples ship.

Real components: a PyIceberg SQLite catalog committed to the way the Iceberg Flink sink commits
(tests/iceberg_tables.py), a savepoint recorded from a real Flink 2.3.0 job."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import sw
from tests.conftest import REPO

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from tests.iceberg_tables import CLEAN_PROPERTIES, JOB_A, JOB_B, FlinkSink, Lake

CONTRACT = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {name: orders-enrichment, owner: payments-data}
job: {name: orders-enrichment}
table: {catalog: lake, identifier: sales.orders}
"""
SAVEPOINT = REPO / "contracts/examples/orders-enrichment/savepoints/before-rename/savepoint-7e820d-9b1ccc78c097"


def check_lineage(lake: Lake) -> list[dict[str, Any]]:
    (lake.root / "contracts").mkdir(exist_ok=True)
    (lake.root / "contracts" / "orders.yaml").write_text(CONTRACT, encoding="utf-8")
    config = {"environments": {"local": {"iceberg": lake.environment()}}}
    (lake.root / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    p = sw("check", "--env", "local", "--format", "json", "--fail-on", "never", cwd=lake.root)
    assert p.code == 0, p
    return [f for f in p.json()["findings"] if f["rule"] == "SW-TABLE-009"]


def test_a_new_job_that_commits_its_predecessors_last_checkpoint_again_is_a_recommit(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = lake.create_orders(CLEAN_PROPERTIES)
    old, new = FlinkSink(lake, table, JOB_A), FlinkSink(lake, table, JOB_B)
    old.commit_range(10, 12)
    again = new.commit(12)  # restored from checkpoint 12, re-committed under the new job id
    new.commit(13)
    [f] = check_lineage(lake)
    assert f["severity"] == "error" and f["evidence"]["kind"] == "new_job"
    assert (f["evidence"]["checkpoint_id"], f["evidence"]["previous_checkpoint_id"]) == (12, 12)
    assert f["evidence"]["snapshot_id"] == again
    assert f"job {JOB_B} committed checkpoint 12 again (snapshot {again}) when it took over operator" in f["message"]
    assert f"from job {JOB_A}, which had committed it (snapshot {old.committed[12]})" in f["message"]
    assert "restored from an older checkpoint" not in f["message"]


def test_a_new_job_that_continues_one_above_its_predecessor_is_clean(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = lake.create_orders(CLEAN_PROPERTIES)
    FlinkSink(lake, table, JOB_A).commit_range(10, 12)
    FlinkSink(lake, table, JOB_B).commit_range(13, 14)  # restored from the latest checkpoint, 12
    assert check_lineage(lake) == []


def test_a_new_job_one_below_its_predecessor_is_restored_from_an_older_checkpoint(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = lake.create_orders(CLEAN_PROPERTIES)
    FlinkSink(lake, table, JOB_A).commit_range(10, 12)
    FlinkSink(lake, table, JOB_B).commit_range(11, 12)
    [f] = check_lineage(lake)
    assert "below checkpoint 12 that job" in f["message"] and "checkpoints 11..12 may be replayed" in f["message"]


def savepoint_with_checkpoint_id(tmp_path: Path, checkpoint_id: int) -> Path:
    data = bytearray((SAVEPOINT / "_metadata").read_bytes())
    assert struct.unpack(">q", data[8:16])[0] > 0  # magic, version, then the checkpoint id (Java long)
    data[8:16] = struct.pack(">q", checkpoint_id)
    d = tmp_path / f"savepoint-{checkpoint_id}"
    d.mkdir()
    (d / "_metadata").write_bytes(bytes(data))
    return d


def test_a_savepoint_with_checkpoint_id_minus_one_is_refused(tmp_path: Path) -> None:
    d = savepoint_with_checkpoint_id(tmp_path, -1)
    p = sw("savepoint", "inspect", str(d), cwd=tmp_path)
    assert p.code == 2, p
    assert "is not a readable Flink _metadata: invalid checkpoint id -1" in p.stderr, p


def test_a_savepoint_with_checkpoint_id_zero_is_read(tmp_path: Path) -> None:
    d = savepoint_with_checkpoint_id(tmp_path, 0)
    p = sw("savepoint", "inspect", str(d), "--format", "json", cwd=tmp_path)
    assert p.code == 0, p
    assert p.json()["checkpoint_id"] == 0
