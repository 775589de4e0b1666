"""`streamwarden gate` without --restore-from when the checkpoint Flink names is already gone: Flink
keeps only the newest execution.checkpointing.num-retained completed checkpoints, and its REST API
reports checkpoint statistics cached for a few seconds, so the "latest completed checkpoint" it
names can have been deleted by a newer one. The gate denies (it fails closed) and says what
happened and which checkpoint is the newest retained, never "check the path for a typo".

Flink's REST API is the loopback stand-in (tests/fake_flink.py): the race between a checkpoint
completing and the REST cache cannot be produced on purpose on the real test cluster. The
checkpoints on disk are real ``_metadata`` files (tests/savepoint_files.py) in Flink's layout,
``<dir>/<job id>/chk-<n>``; the table is a real PyIceberg SQLite catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import sw
from tests.fake_flink import CHECKPOINTS, fake_flink, healthy_routes
from tests.iceberg_tables import JOB_A
from tests.recovery_repo import RecoveryRepo
from tests.savepoint_files import orders_job, write_savepoint

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")


def checkpoint_entry(path: Path, cid: int) -> dict[str, Any]:
    return {**CHECKPOINTS["history"][0], "id": cid, "external_path": path.as_uri()}


def gate_without_restore_from(repo: RecoveryRepo, named: int, on_disk: list[int]) -> dict[str, Any]:
    job_dir = repo.root / "checkpoints" / JOB_A
    for cid in on_disk:
        write_savepoint(job_dir / f"chk-{cid}", orders_job(), checkpoint_id=cid)
    routes = healthy_routes(JOB_A, "orders-enrichment")
    entry = checkpoint_entry(job_dir / f"chk-{named}", named)
    routes[f"/jobs/{JOB_A}/checkpoints"] = (
        200,
        {**CHECKPOINTS, "latest": {**CHECKPOINTS["latest"], "completed": entry}, "history": [entry]},
    )
    with fake_flink() as fake:
        fake.routes = routes
        config = yaml.safe_load((repo.root / "streamwarden.yaml").read_text(encoding="utf-8"))
        config["environments"]["prod"]["flink"] = {"rest_url": fake.url, "retries": 0}
        (repo.root / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        p = sw("gate", "orders-enrichment", "--env", "prod", "--now", repo.now_arg(), "--format", "json", cwd=repo.root)
    assert p.code == 1, p  # deny: the gate fails closed
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def fact_messages(doc: dict[str, Any]) -> list[str]:
    return [r["message"] for r in doc["reasons"] if r["rule"] == "SW-FACT-001" and "savepoint" in r["message"]]


def test_a_checkpoint_flink_names_that_a_newer_one_deleted_names_the_newest_retained(tmp_path: Path) -> None:
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 20)
    doc = gate_without_restore_from(repo, named=15, on_disk=[16, 17])
    [message] = fact_messages(doc)
    gone, newest = repo.root / "checkpoints" / JOB_A / "chk-15", repo.root / "checkpoints" / JOB_A / "chk-17"
    said = f"Flink named checkpoint 15 ({gone.as_uri()}) as the latest completed checkpoint, but it no longer exists"
    assert said in message, message
    assert "Flink deletes a completed checkpoint when a newer one completes" in message
    assert f"the newest retained checkpoint is 17 ({newest}): restore from it with --restore-from {newest}" in message
    assert "typo" not in message


def test_with_no_newer_checkpoint_beside_it_the_gate_says_so(tmp_path: Path) -> None:
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 20)
    doc = gate_without_restore_from(repo, named=15, on_disk=[])
    [message] = fact_messages(doc)
    assert "but it no longer exists" in message and "no newer retained checkpoint was found beside it" in message
    assert "typo" not in message
