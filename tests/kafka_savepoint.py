"""Record a savepoint of a real Flink 2.3.0 job reading a real Kafka-compatible broker.

A two-partition topic on a Tansu broker (tests/kafka_broker.py) gets a known number of records per
partition; tests/flink_jobs/kafka_orders.py reads it with flink-connector-kafka's KafkaSource on the
Flink test cluster (tests/flink_cluster.py), committing its offsets to a consumer group on each
checkpoint. Once the group's committed offsets reach the end of both partitions (the job read
everything and a checkpoint completed), the job is stopped with a canonical savepoint: its split
state must resume each partition exactly where the group's committed offset says.

Used by scripts/record_kafka_savepoint.py (the committed recording) and by the slow test that
records afresh (tests/flink/test_kafka_savepoints.py).
"""

from __future__ import annotations

import json
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.flink_cluster import FlinkCluster, kafka_connector_jars
from tests.kafka_broker import TansuBroker

TOPIC = "orders"
GROUP = "orders-enrichment"
JOB_NAME = "orders-enrichment"
RECORDS = {0: 7, 1: 4}  # records per partition: different, so a swapped partition shows
TOPIC_RETENTION_MS = 7 * 86_400_000
SETTINGS = {"execution.checkpointing.interval": "1s"}


@dataclass
class Recording:
    location: str  # the savepoint directory Flink wrote (file: URI)
    job_id: str
    committed: dict[int, int]  # the consumer group's committed offsets when the job was stopped
    watermarks: dict[int, tuple[int, int]]  # (earliest, latest) per partition, from the broker

    def origin(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "job_name": JOB_NAME,
            "topic": TOPIC,
            "consumer_group": GROUP,
            "records": {str(p): n for p, n in RECORDS.items()},
            "committed_offsets": {str(p): o for p, o in self.committed.items()},
            "broker_offsets": {str(p): {"earliest": lo, "latest": hi} for p, (lo, hi) in self.watermarks.items()},
        }


def _post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def stop_with_savepoint(cluster: FlinkCluster, jid: str, target: Path, timeout_s: float = 120) -> str:
    """POST /jobs/:id/stop (canonical, no drain), polled until the savepoint completes."""
    body = {"targetDirectory": target.as_uri(), "drain": False, "formatType": "CANONICAL"}
    trigger = _post(f"{cluster.rest_url}/jobs/{jid}/stop", body)["request-id"]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = cluster.get(f"/jobs/{jid}/savepoints/{trigger}")
        if status["status"]["id"] == "COMPLETED":
            operation = status.get("operation") or {}
            if "location" not in operation:
                raise RuntimeError(f"stop-with-savepoint of {jid} failed: {operation.get('failure-cause')}")
            return str(operation["location"])
        time.sleep(0.5)
    raise RuntimeError(f"stop-with-savepoint of {jid} did not complete in {timeout_s:.0f}s")


def record(cluster: FlinkCluster, broker: TansuBroker, target: Path, timeout_s: float = 180) -> Recording:
    """Produce, run the job until its group committed every record, stop it with a savepoint."""
    broker.create_topic(TOPIC, len(RECORDS), {"retention.ms": str(TOPIC_RETENTION_MS)})
    for partition, n in RECORDS.items():
        broker.produce(TOPIC, partition, [f"order-{partition}-{i}".encode() for i in range(n)])
    jars = ",".join(j.as_uri() for j in kafka_connector_jars())
    args = ["--name", JOB_NAME, "--bootstrap", broker.bootstrap, "--topic", TOPIC, "--group", GROUP, "--jars", jars]
    jid = cluster.submit("kafka_orders.py", *args, dynamic=SETTINGS)
    cluster.wait_running(jid)
    deadline = time.monotonic() + timeout_s
    committed: dict[int, int] = {}
    while time.monotonic() < deadline:  # Tansu's first fetch takes about 10 s
        committed = broker.committed(GROUP, TOPIC, len(RECORDS))
        if committed == RECORDS:
            break
        time.sleep(1)
    else:
        raise RuntimeError(f"the job's group committed {committed} within {timeout_s:.0f}s, expected {RECORDS}")
    location = stop_with_savepoint(cluster, jid, target)
    cluster.wait_state(jid, ("FINISHED", "CANCELED", "FAILED"))
    committed = broker.committed(GROUP, TOPIC, len(RECORDS))
    return Recording(location, jid, committed, broker.watermarks(TOPIC, len(RECORDS)))
