"""Savepoints and a retained checkpoint taken by a real Flink 2.3.0 cluster (tests/flink_cluster.py)
from a DataStream job with known uids: the reader lists the operator ids Flink reports, the uid
hashing gives the same ids, and the gate's SW-STATE-009 names the operator Flink itself refuses."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from streamwarden.contracts.config import Config
from streamwarden.facts.savepoint import load_savepoint, savepoint_facts
from streamwarden.flink.uids import operator_id
from streamwarden.verbs.gate import run_gate

pytestmark = pytest.mark.slow

UIDS = ("orders-source", "to-pair", "orders-dedup", "orders-sink")
SETTINGS = {
    "execution.checkpointing.interval": "2s",
    "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
}
CONTRACT = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {{name: sw-savepoints, owner: data-platform}}
job:
  name: sw-savepoints
  max_parallelism: 128
  sources: [{{name: numbers, uid: orders-source}}]
  sinks: [{{name: discard, uid: orders-sink}}]
state:
  allow_non_restored_state: false
  operators: [{{uid: {dedup}, kind: keyed, key: [k], ttl: 1d}}]
checkpoint: {{interval: 2s, storage: "s3://lake-checkpoints/sw-savepoints"}}
retention:
  savepoints: {{max_age: 1d}}
"""


@pytest.fixture(scope="module")
def cluster(flink_cluster: Any) -> Iterator[Any]:
    """The session's shared cluster (tests/conftest.py); the jobs this module submits are
    cancelled when it ends."""
    mine = len(flink_cluster.submitted)
    yield flink_cluster
    for jid in flink_cluster.submitted[mine:]:
        flink_cluster.cancel(jid, wait=False)


def _post(cluster: Any, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        cluster.rest_url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def trigger_savepoint(cluster: Any, jid: str, target: Path, fmt: str) -> str:
    """POST /jobs/:id/savepoints, poll the trigger; a failed trigger also says COMPLETED
    (its operation holds the failure cause)."""
    trigger = _post(
        cluster,
        f"/jobs/{jid}/savepoints",
        {"target-directory": target.as_uri(), "cancel-job": False, "formatType": fmt},
    )["request-id"]
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        status = cluster.get(f"/jobs/{jid}/savepoints/{trigger}")
        if status["status"]["id"] == "COMPLETED":
            operation = status.get("operation") or {}
            assert "location" in operation, f"savepoint failed: {operation.get('failure-cause')}"
            return str(operation["location"])
        time.sleep(0.5)
    raise AssertionError(f"savepoint of {jid} did not complete")


def _retained_copy(cluster: Any, jid: str, into: Path) -> tuple[dict[str, Any], str]:
    """The job's latest completed checkpoint, copied as Flink wrote it (chk-N/ with its _metadata),
    and the history that names it. The job runs on: its next checkpoint (2 s later) deletes this
    one (the JobManager retains 1), so the tests read the copy, never a directory that may vanish."""
    for _ in range(20):
        history = cluster.get(f"/jobs/{jid}/checkpoints")
        source = Path(urlsplit(history["latest"]["completed"]["external_path"]).path)
        try:
            shutil.copytree(source, into / source.name)
        except (FileNotFoundError, shutil.Error):  # subsumed while copied: take the next one
            shutil.rmtree(into / source.name, ignore_errors=True)
            continue
        return history, (into / source.name).as_uri()
    raise AssertionError(f"no checkpoint of {jid} could be copied before the next one replaced it")


@pytest.fixture(scope="module")
def taken(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    jid = cluster.submit("keyed_uids.py", "--name", "sw-savepoints", dynamic=SETTINGS)
    job = cluster.wait_running(jid, checkpoints=2)
    target = tmp_path_factory.mktemp("savepoints")
    out: dict[str, Any] = {"jid": jid, "job": job, "plan": cluster.get(f"/jobs/{jid}/plan")}
    out["canonical"] = trigger_savepoint(cluster, jid, target, "CANONICAL")
    out["native"] = trigger_savepoint(cluster, jid, target, "NATIVE")
    out["history"], out["checkpoint"] = _retained_copy(cluster, jid, tmp_path_factory.mktemp("retained"))
    return out


@pytest.mark.parametrize("which", ["canonical", "native", "checkpoint"])
def test_reader_lists_the_operator_ids_flink_reports(taken: dict[str, Any], which: str) -> None:
    sp = load_savepoint(taken[which])
    md = sp.metadata
    assert md.version == 6  # what Flink 2.3.0 writes
    ids = {op.operator_id for op in md.operators}
    vertex_ids = {v["id"] for v in taken["job"]["vertices"]}  # chain heads
    plan_ids = {n["id"] for n in taken["plan"]["plan"]["nodes"]}
    assert vertex_ids <= ids and plan_ids <= ids
    assert md.properties["type"] == ("checkpoint" if which == "checkpoint" else "savepoint")
    if which != "checkpoint":
        assert md.properties["format"] == which


@pytest.mark.parametrize("which", ["canonical", "native", "checkpoint"])
def test_uid_hashing_gives_the_ids_flink_wrote(taken: dict[str, Any], which: str) -> None:
    md = load_savepoint(taken[which]).metadata
    by_uid = {op.uid: op for op in md.operators if op.uid}
    assert set(UIDS) <= set(by_uid)
    for uid in UIDS:
        assert by_uid[uid].operator_id == operator_id(uid)
    assert by_uid["orders-source"].coordinator_state_bytes is not None and by_uid["orders-source"].has_state
    dedup = by_uid["orders-dedup"]
    assert dedup.has_state and dedup.keyed and dedup.key_group_ranges == [[0, 127]]
    assert dedup.max_parallelism == 128
    assert not by_uid["to-pair"].has_state
    kinds = set(dedup.handle_kinds)
    assert kinds <= {"savepoint_key_groups", "incremental_v2", "key_groups_v2"}
    if which == "canonical":
        assert kinds == {"savepoint_key_groups"}


def test_retained_checkpoint_names_its_job_and_matches_flinks_history(taken: dict[str, Any]) -> None:
    sp = load_savepoint(taken["checkpoint"])
    flink = {
        "available": True,
        "job_id": taken["jid"],
        "checkpoints": {
            "available": True,
            "latest": {
                "completed": {
                    "id": taken["history"]["latest"]["completed"]["id"],
                    "external_path": taken["checkpoint"],
                    "latest_ack_timestamp": taken["history"]["latest"]["completed"]["latest_ack_timestamp"],
                }
            },
            "history": [],
        },
    }
    facts = savepoint_facts(sp, None, flink)
    assert facts["job_id"] == taken["jid"] and facts["job_id_source"] == "flink"
    assert facts["checkpoint_id"] == facts["directory_checkpoint_id"] == taken["history"]["latest"]["completed"]["id"]


def _config(tmp_path: Path, dedup: str) -> Config:
    (tmp_path / "contracts").mkdir(exist_ok=True)
    (tmp_path / "contracts" / "sw.yaml").write_text(CONTRACT.format(dedup=dedup))
    (tmp_path / "streamwarden.yaml").write_text("environments:\n  prod: {}\n")
    from streamwarden.contracts.config import load_config

    return load_config(str(tmp_path / "streamwarden.yaml"))


def _exceptions(cluster: Any, jid: str) -> str:
    doc = cluster.get(f"/jobs/{jid}/exceptions")
    entries = (doc.get("exceptionHistory") or {}).get("entries") or []
    return "\n".join(str(e.get("stacktrace") or "") for e in entries) + str(doc.get("root-exception") or "")


def _failed_job_exceptions(cluster: Any, name: str) -> str:
    jobs = cluster.get("/jobs/overview").get("jobs") or []
    return "".join(_exceptions(cluster, j["jid"]) for j in jobs if j.get("name") == name)


def test_gate_names_the_operator_flink_refuses_to_restore(taken: dict[str, Any], cluster: Any, tmp_path: Path) -> None:
    savepoint = taken["canonical"]
    result = run_gate(_config(tmp_path, "orders-dedupe"), "sw-savepoints", "prod", savepoint, int(time.time() * 1000))
    assert result.decision == "deny"
    (reason,) = [f for f in result.reasons if f.rule == "SW-STATE-009"]
    orphan = operator_id("orders-dedup")
    assert reason.evidence["operator_id"] == orphan
    assert 'closest declared uid: "orders-dedupe"' in reason.message
    try:  # Flink refuses while it builds the job: `flink run` itself fails, or the job ends FAILED
        jid = cluster.submit(
            "keyed_uids.py",
            "--name",
            "sw-renamed",
            "--dedup-uid",
            "orders-dedupe",
            dynamic={"execution.state-recovery.path": savepoint},
        )
        text = ""
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and "Cannot map checkpoint/savepoint state" not in text:
            time.sleep(1)
            text = _exceptions(cluster, jid)
    except RuntimeError as exc:
        text = str(exc) + _failed_job_exceptions(cluster, "sw-renamed")
    assert f"Cannot map checkpoint/savepoint state for operator {orphan}" in text


def test_gate_allows_the_compatible_restore_flink_performs(taken: dict[str, Any], cluster: Any, tmp_path: Path) -> None:
    savepoint = taken["canonical"]
    result = run_gate(_config(tmp_path, "orders-dedup"), "sw-savepoints", "prod", savepoint, int(time.time() * 1000))
    assert result.decision == "allow", [f.message for f in result.reasons]
    jid = cluster.submit("keyed_uids.py", "--name", "sw-restored", dynamic={"execution.state-recovery.path": savepoint})
    cluster.wait_running(jid)
    restored = cluster.get(f"/jobs/{jid}/checkpoints")["latest"]["restored"]
    assert restored["external_path"].rstrip("/") == savepoint.rstrip("/")
