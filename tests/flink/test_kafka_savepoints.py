"""The offsets a restore starts from, read from real Kafka source savepoints through the CLI.

The savepoints are flink-connector-kafka's own (its migration tests: enumerator state versions 1,
2 and 3; its offsets table function's savepoint) and one recorded here from a real Flink 2.3.0 job
reading a Tansu broker (tests/fixtures/kafka-savepoints, origins in its README). Each one's split
state must resume every partition where the job that wrote it stopped: the records it had read
(connector savepoints) or the offsets its consumer group committed (the recording). The gate
denies a savepoint older than the topic's declared retention (SW-REC-006) and names the offsets;
`evidence` lists them per partition. The slow test at the end records a savepoint afresh.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli import sw
from tests.conftest import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "kafka-savepoints"
CONNECTOR = FIXTURES / "apache__flink-connector-kafka" / "flink-connector-kafka" / "src" / "test" / "resources"
MIGRATION = CONNECTOR / "kafka-source-savepoint"
RECORDED = FIXTURES / "tansu-flink-2.3.0"
NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
NOW = "2026-01-01T00:00:00Z"
DAY_MS = 86_400_000

# (savepoint, enumerator state version, {(topic, partition): restore offset or position})
TEN_PARTITIONS_READ = {("topic", p): 10 for p in range(10)}  # KafkaSourceTestEnv: 10 x 10 records, all read
CONNECTOR_CASES = [
    ("enum1-split0/savepoint-3c7c0a-07c49f841952", 1, TEN_PARTITIONS_READ),
    ("enum2-split0/savepoint-de9fd4-35f289091a1b", 2, TEN_PARTITIONS_READ),
    ("enum3-split0/savepoint-246fa1-85f387ecce0c", 3, TEN_PARTITIONS_READ),
]


def _recorded() -> tuple[Path, dict[str, Any]]:
    origin = json.loads((RECORDED / "origin.json").read_text(encoding="utf-8"))
    return RECORDED / origin["directory"], origin


def inspect(path: Path, *args: str) -> dict[str, Any]:
    p = sw("savepoint", "inspect", str(path), "--format", "json", *args, cwd=path.parent)
    assert p.code == 0, p
    kafka: dict[str, Any] = p.json()["kafka"]
    return kafka


def offsets(kafka: dict[str, Any]) -> dict[tuple[str, int], int | str]:
    return {
        (p["topic"], p["partition"]): p["offset"] if p["offset"] is not None else p["position"]
        for p in kafka["partitions"]
    }


@pytest.mark.parametrize(
    ("directory", "version", "expected"), CONNECTOR_CASES, ids=[c[0].split("/")[0] for c in CONNECTOR_CASES]
)
def test_connector_savepoints_resume_every_partition_where_the_job_stopped(
    directory: str, version: int, expected: dict[tuple[str, int], int]
) -> None:
    kafka = inspect(MIGRATION / directory)
    assert offsets(kafka) == expected
    (source,) = kafka["sources"]
    assert source["complete"] is True and source["splits"] == 10 and source["subtasks_in_state_files"] == 0
    assert source["enumerator"]["version"] == version
    assert {(p["topic"], p["partition"]) for p in source["enumerator"]["partitions"]} == set(expected)
    assert all(p["assigned"] is True for p in source["enumerator"]["partitions"])
    assert {p["subtask"] for p in kafka["partitions"]} == {0, 1, 2}  # parallelism 3
    assert all(p["from"] == "reader" and p["stopping_offset"] is None for p in kafka["partitions"])


def test_the_offsets_table_function_savepoint_reads_as_the_connector_reads_it() -> None:
    # SavepointKafkaOffsetsTableFunctionTest expects "+I[test1, 0, -2, null]", "+I[test1, 1, 1, null]"
    kafka = inspect(CONNECTOR / "table-state-kafka-offsets")
    assert offsets(kafka) == {("test1", 0): "earliest", ("test1", 1): 1}
    assert [p["offset"] for p in kafka["partitions"]] == [None, 1]


def test_the_recorded_savepoint_resumes_at_the_offsets_its_consumer_group_committed() -> None:
    path, origin = _recorded()
    kafka = inspect(path)
    committed = {("orders", int(p)): o for p, o in origin["committed_offsets"].items()}
    assert committed == {("orders", 0): 7, ("orders", 1): 4}  # every record produced (origin.json)
    assert offsets(kafka) == committed
    (source,) = kafka["sources"]
    assert source["uid"] == "orders-source" and source["complete"] is True
    assert source["enumerator"]["version"] == 2  # flink-connector-kafka 4.0.1-2.0


def test_a_contract_names_the_source_each_offset_belongs_to(tmp_path: Path) -> None:
    path, _ = _recorded()
    (tmp_path / "contract.yaml").write_text(contract(retention="7d", max_age="6d"), encoding="utf-8")
    kafka = inspect(path, "--contract", str(tmp_path / "contract.yaml"))
    assert {p["source"] for p in kafka["partitions"]} == {"orders-topic"}
    assert kafka["sources"][0]["source_path"] == "job.sources[0]"


def test_inspect_shows_the_offsets() -> None:
    path, _ = _recorded()
    p = sw("savepoint", "inspect", str(path), cwd=path.parent)
    assert p.code == 0, p
    assert "Kafka source orders-source: 2 partitions to resume, enumerator state v2 (2 partitions)" in p.stdout
    assert "orders[0]  offset 7" in p.stdout and "orders[1]  offset 4" in p.stdout


def test_state_that_is_not_a_kafka_source_is_not_claimed(tmp_path: Path) -> None:
    # the example pipeline's sources are Flink's number sequences: splits of another format
    example = next((REPO / "contracts/examples/orders-enrichment/savepoints").glob("*/*/_metadata"))
    assert inspect(example.parent) == {"sources": [], "partitions": []}
    # one split whose topic length is off by one: its bytes no longer read as a Kafka split, and
    # the operator's splits are not claimed
    path, _ = _recorded()
    original = (path / "_metadata").read_bytes()
    split = b"\x00\x06orders" + (0).to_bytes(4, "big") + (7).to_bytes(8, "big")  # orders[0] at offset 7
    assert original.count(split) == 1
    data = bytearray(original)
    data[original.index(split) + 1] = 7
    (tmp_path / "_metadata").write_bytes(bytes(data))
    assert inspect(tmp_path) == {"sources": [], "partitions": []}


def test_an_enumerator_state_of_another_shape_leaves_the_splits(tmp_path: Path) -> None:
    # the enumerator's state (v2: 2 partitions, each topic, partition, assignment status): the
    # first partition's status 0 (assigned) becomes 7, which no version knows
    path, _ = _recorded()
    original = (path / "_metadata").read_bytes()
    state = b"\x00\x00\x00\x02\x00\x06orders"  # the partition count, then the first topic
    assert original.count(state) == 1
    status = original.index(state) + len(state) + 4
    assert original[status : status + 4] == (0).to_bytes(4, "big")
    data = bytearray(original)
    data[status + 3] = 7
    (tmp_path / "_metadata").write_bytes(bytes(data))
    kafka = inspect(tmp_path)
    assert offsets(kafka) == {("orders", 0): 7, ("orders", 1): 4}
    assert kafka["sources"][0]["enumerator"] is None and kafka["sources"][0]["complete"] is True


# ---------------------------------------------------------------- the gate and the evidence record


def contract(retention: str, max_age: str | None = "30d") -> str:
    savepoints = f"\n  savepoints: {{max_age: {max_age}}}" if max_age else ""
    return f"""\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {{name: orders-enrichment, owner: payments-data}}
job:
  name: orders-enrichment
  max_parallelism: 128
  sources:
    - name: orders-topic
      kind: kafka
      uid: orders-source
      rewindable: true
      retention: {retention}
  sinks: [{{name: discard, uid: discard-sink}}]
retention:
  rollback_window: 1d{savepoints}
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A repository with the orders contract, an environment without live sources, and a copy of
    the recorded savepoint (its age is its _metadata's modification time: set per test)."""
    path, _ = _recorded()
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(contract(retention="21d"), encoding="utf-8")
    (tmp_path / "streamwarden.yaml").write_text("environments:\n  prod: {}\n", encoding="utf-8")
    copy = tmp_path / "savepoints" / path.name
    copy.mkdir(parents=True)
    shutil.copyfile(path / "_metadata", copy / "_metadata")
    yield tmp_path, copy


def _age(savepoint: Path, days: float) -> None:
    when = (NOW_MS - days * DAY_MS) / 1000
    os.utime(savepoint / "_metadata", (when, when))


def test_gate_denies_a_savepoint_older_than_the_topic_keeps_naming_its_offsets(project: tuple[Path, Path]) -> None:
    root, savepoint = project
    # no savepoints.max_age: only the topic's retention bounds the savepoint's age
    (root / "contracts" / "orders.yaml").write_text(contract(retention="7d", max_age=None), encoding="utf-8")
    _age(savepoint, 10)
    p = sw(
        "gate",
        "orders-enrichment",
        "--env",
        "prod",
        "--restore-from",
        str(savepoint),
        "--now",
        NOW,
        "--format",
        "json",
        cwd=root,
    )
    assert p.code == 1, p
    doc = p.json()
    assert doc["decision"] == "deny"
    (reason,) = doc["reasons"]
    assert reason["rule"] == "SW-REC-006"
    assert reason["path"] == "job.sources[0].retention"
    assert "completed 10d ago" in reason["message"]
    assert 'source "orders-topic" (job.sources[0]) keeps 7d, less a margin of 16h48m' in reason["message"]
    assert "is 6d7h12m" in reason["message"]
    assert "it resumes orders[0] at offset 7, orders[1] at offset 4" in reason["message"]
    assert [(x["topic"], x["partition"], x["offset"]) for x in reason["evidence"]["partitions"]] == [
        ("orders", 0, 7),
        ("orders", 1, 4),
    ]
    text = sw("gate", "orders-enrichment", "--env", "prod", "--restore-from", str(savepoint), "--now", NOW, cwd=root)
    assert text.code == 1 and "SW-REC-006" in text.stdout


def test_gate_allows_a_savepoint_the_topic_still_holds(project: tuple[Path, Path]) -> None:
    root, savepoint = project
    (root / "contracts" / "orders.yaml").write_text(contract(retention="7d", max_age="6d"), encoding="utf-8")
    _age(savepoint, 2)
    p = sw(
        "gate",
        "orders-enrichment",
        "--env",
        "prod",
        "--restore-from",
        str(savepoint),
        "--now",
        NOW,
        "--format",
        "json",
        cwd=root,
    )
    assert p.code == 0, p
    assert p.json()["decision"] == "allow"


def test_evidence_lists_the_restore_offset_of_each_partition(project: tuple[Path, Path]) -> None:
    root, savepoint = project
    _age(savepoint, 1)
    md = sw("evidence", "orders-enrichment", "--env", "prod", "--restore-from", str(savepoint), "--now", NOW, cwd=root)
    assert md.code == 0, md
    assert "### Kafka restore offsets" in md.stdout
    assert "| orders-topic | `orders` | 0 | 7 | subtask 1 |" in md.stdout
    assert "| orders-topic | `orders` | 1 | 4 | subtask 0 |" in md.stdout
    js = sw(
        "evidence",
        "orders-enrichment",
        "--env",
        "prod",
        "--restore-from",
        str(savepoint),
        "--now",
        NOW,
        "--format",
        "json",
        cwd=root,
    )
    assert js.code == 0, js
    parts = js.json()["candidate"]["kafka"]["partitions"]
    assert [(x["source"], x["topic"], x["partition"], x["offset"]) for x in parts] == [
        ("orders-topic", "orders", 0, 7),
        ("orders-topic", "orders", 1, 4),
    ]


# ---------------------------------------------------------------- recorded afresh (slow)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.kafka_broker import missing_reason, running_broker

    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    with running_broker(tmp_path_factory.mktemp("tansu")) as b:
        yield b


@pytest.mark.slow
def test_a_savepoint_recorded_now_resumes_where_the_job_committed(
    flink_cluster: Any, broker: Any, tmp_path: Path
) -> None:
    from tests.kafka_savepoint import RECORDS, TOPIC, record

    rec = record(flink_cluster, broker, tmp_path)
    assert rec.committed == RECORDS  # the job read every record and committed it
    assert {p: hi for p, (_, hi) in rec.watermarks.items()} == RECORDS  # one offset per record
    location = Path(rec.location.removeprefix("file://").removeprefix("file:"))
    kafka = inspect(location)
    assert offsets(kafka) == {(TOPIC, p): o for p, o in rec.committed.items()}
    assert kafka["sources"][0]["complete"] is True


def test_a_source_state_of_another_layout_does_not_stop_the_read(tmp_path: Path) -> None:
    # tests/savepoint_files.py writes a SourceReaderState whose offsets point at no byte arrays:
    # the savepoint still reads (its operators, for the gate's other rules), no Kafka source is claimed
    from tests.savepoint_files import orders_job, write_savepoint

    path = write_savepoint(tmp_path / "savepoint-4d986c-1a2b3c4d5e6f", orders_job())
    p = sw("savepoint", "inspect", str(path), "--format", "json", cwd=tmp_path)
    assert p.code == 0, p
    assert len(p.json()["operators"]) > 1
    assert p.json()["kafka"] == {"sources": [], "partitions": []}
