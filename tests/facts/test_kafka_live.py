"""Live Kafka facts (``facts.kafka``) through the real CLI, against a real Kafka-compatible broker
(Tansu, tests/kafka_broker.py): what ``facts --env`` shows of a topic (its retention settings from
DescribeConfigs, each partition's earliest and latest offset from ListOffsets), and a broker that
cannot be read (down, a topic it does not know, a password variable not set): SW-FACT-001, an
error in the gate, which denies. No configured secret appears in any output. The rules on those
facts: drift and a compacted topic (SW-SRC-002) on Tansu's memory storage; a restore from below
the earliest offset (SW-REC-006, on the recorded savepoint of tests/fixtures/kafka-savepoints) and
records deleted by size (SW-SRC-003) on Tansu's S3 storage, whose records the harness deletes as
retention would (Tansu never expires records itself): the broker's answers are real, the state
of its storage is constructed; no recorded answer is used. Not tested against a broker: a refused
SASL login (Tansu's --authentication refused even a correct SCRAM login from this client).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli import sw
from tests.flink.test_kafka_savepoints import NOW, _age, _recorded
from tests.kafka_broker import S3TansuBroker, TansuBroker, free_port, missing_reason, running_broker, running_s3_broker

WEEK_MS = 7 * 86_400_000
PRODUCED_AFTER_MS: list[int] = []  # when the module's broker was filled
SECRET = "kafka-s3cr3t-Pa55w0rd-never-shown"
SASL = (
    "      security_protocol: SASL_PLAINTEXT\n"
    "      sasl: {mechanism: PLAIN, username: sw, password_env: SW_TEST_KAFKA_PASSWORD}\n"
)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TansuBroker]:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    with running_broker(tmp_path_factory.mktemp("tansu")) as b:
        PRODUCED_AFTER_MS.append(int(time.time() * 1000))
        b.create_topic("orders", 2, {"retention.ms": str(WEEK_MS), "retention.bytes": "1073741824"})
        b.produce("orders", 0, [b"o1", b"o2", b"o3", b"o4", b"o5", b"o6", b"o7"])
        b.produce("orders", 1, [b"p1", b"p2", b"p3", b"p4"])
        yield b


def contract(topic: str = "orders", retention: str = "7d", extra: str = "") -> str:
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
      topic: {topic}
      uid: orders-source
      rewindable: true
      retention: {retention}{extra}
  sinks: [{{name: discard, uid: discard-sink}}]
retention:
  rollback_window: 1d
"""


def project(root: Path, kafka: str, body: str | None = None) -> Path:
    """A repository with the orders contract and an environment ``prod`` whose kafka section is
    ``kafka`` (YAML, indented under it)."""
    (root / "contracts").mkdir(parents=True, exist_ok=True)
    (root / "contracts" / "orders.yaml").write_text(body or contract(), encoding="utf-8")
    (root / "streamwarden.yaml").write_text(f"environments:\n  prod:\n    kafka:\n{kafka}", encoding="utf-8")
    return root


def kafka_section(bootstrap: str, timeout: str = "10s", more: str = "") -> str:
    return f"      bootstrap_servers: ['{bootstrap}']\n      timeout: {timeout}\n{more}"


def facts(root: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    p = sw("facts", "orders-enrichment", "--env", "prod", "--now", NOW, cwd=root, env=env)
    assert p.code == 0, p
    kafka: dict[str, Any] = p.json()["facts"]["kafka"]
    return kafka


def down() -> str:
    return f"127.0.0.1:{free_port()}"  # nothing listens there


def test_facts_show_the_topic_settings_and_offsets_the_broker_answers(broker: TansuBroker, tmp_path: Path) -> None:
    root = project(tmp_path, kafka_section(broker.bootstrap))
    kafka = facts(root)
    assert kafka["available"] is True and kafka["bootstrap_servers"] == [broker.bootstrap]
    topic = kafka["topics"]["orders"]
    assert topic["sources"] == ["orders-topic"]
    assert topic["retention_ms"] == WEEK_MS and topic["retention_bytes"] == 1073741824
    marks = broker.watermarks("orders", 2)
    assert marks == {0: (0, 7), 1: (0, 4)}  # one record per request: 7 and 4 records
    assert [(p["partition"], p["earliest"], p["latest"]) for p in topic["partitions"]] == [
        (p, lo, hi) for p, (lo, hi) in sorted(marks.items())
    ]
    stamps = [p["earliest_timestamp_ms"] for p in topic["partitions"]]
    assert all(PRODUCED_AFTER_MS[0] <= t <= time.time() * 1000 for t in stamps), stamps  # produced by the fixture


def test_the_bootstrap_servers_may_come_from_the_environment(broker: TansuBroker, tmp_path: Path) -> None:
    root = project(tmp_path, "      bootstrap_servers: ['${SW_TEST_KAFKA_BOOTSTRAP}']\n")
    kafka = facts(root, env={"SW_TEST_KAFKA_BOOTSTRAP": broker.bootstrap})
    assert kafka["available"] is True and kafka["bootstrap_servers"] == [broker.bootstrap]
    assert [p["latest"] for p in kafka["topics"]["orders"]["partitions"]] == [7, 4]


def test_a_contract_without_a_kafka_source_does_not_read_the_broker(tmp_path: Path) -> None:
    body = contract().replace("kind: kafka", "kind: kinesis")
    root = project(tmp_path, kafka_section(down()), body)
    assert facts(root) == {"available": False, "configured": False}


def test_a_broker_that_is_down_is_a_gap_in_the_facts_and_the_gate_denies(tmp_path: Path) -> None:
    address = down()
    root = project(tmp_path, kafka_section(address, timeout="2s"))
    kafka = facts(root)
    assert kafka["available"] is False and kafka["configured"] is True
    assert kafka["error"].startswith(f"the Kafka broker at {address} did not answer within 2s")
    check = sw("check", "--env", "prod", "--now", NOW, "--format", "json", cwd=root)
    assert check.code == 0, check
    found = [f for f in check.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert [(f["path"], f["severity"]) for f in found] == [("facts.kafka", "warning")]
    savepoint, _ = _recorded()
    copy = tmp_path / "savepoint"
    copy.mkdir()
    (copy / "_metadata").write_bytes((savepoint / "_metadata").read_bytes())
    _age(copy, 1)
    gate = sw(
        "gate",
        "orders-enrichment",
        "--env",
        "prod",
        "--restore-from",
        str(copy),
        "--now",
        NOW,
        "--format",
        "json",
        cwd=root,
    )
    assert gate.code == 1, gate
    doc = gate.json()
    assert doc["decision"] == "deny"
    assert [(r["rule"], r["path"]) for r in doc["reasons"]] == [("SW-FACT-001", "facts.kafka")]
    assert address in doc["reasons"][0]["message"]


def test_a_topic_the_broker_does_not_know_is_a_gap_in_the_facts(broker: TansuBroker, tmp_path: Path) -> None:
    root = project(tmp_path, kafka_section(broker.bootstrap), contract(topic="no-such-topic"))
    kafka = facts(root)
    assert kafka["available"] is False
    assert kafka["error"].startswith(f"topic 'no-such-topic' is not known to the Kafka broker at {broker.bootstrap}")


def test_a_password_variable_that_is_not_set_is_named(tmp_path: Path) -> None:
    root = project(tmp_path, kafka_section(down(), more=SASL))
    kafka = facts(root)  # SW_TEST_KAFKA_PASSWORD is not set in the test's environment
    assert kafka == {
        "available": False,
        "configured": True,
        "error": "environment variable SW_TEST_KAFKA_PASSWORD (kafka.sasl.password_env) is not set",
        "bootstrap_servers": kafka["bootstrap_servers"],
    }


def test_the_password_never_appears_in_any_output(tmp_path: Path) -> None:
    root = project(tmp_path, kafka_section(down(), timeout="2s", more=SASL))
    env = {"SW_TEST_KAFKA_PASSWORD": SECRET}
    for args in (
        ("facts", "orders-enrichment", "--env", "prod", "--now", NOW),
        ("check", "--env", "prod", "--now", NOW),
        ("check", "--env", "prod", "--now", NOW, "--format", "json"),
        ("gate", "orders-enrichment", "--env", "prod", "--restore-from", str(_savepoint(tmp_path)), "--now", NOW),
    ):
        p = sw(*args, cwd=root, env=env)
        assert SECRET[:9] not in p.output, p
        assert "did not answer within 2s" in p.output


def test_the_kafka_section_is_validated(tmp_path: Path) -> None:
    root = project(tmp_path, "      bootstrap_servers: ['http://broker:9092']\n")
    p = sw("facts", "orders-enrichment", "--env", "prod", "--now", NOW, cwd=root)
    assert p.code == 2, p
    assert "bootstrap_servers" in p.output and "streamwarden.yaml" in p.output


# ---------------------------------------------------------------- the rules, through the CLI


def rules(root: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    p = sw("check", "--env", "prod", "--now", NOW, "--format", "json", *args, cwd=root)
    assert p.code in (0, 1), p
    return p.code, [f for f in p.json()["findings"] if f["rule"].startswith(("SW-SRC-", "SW-REC-006", "SW-FACT-"))]


def test_check_reports_drift_between_the_declared_retention_and_the_broker(broker: TansuBroker, tmp_path: Path) -> None:
    root = project(tmp_path, kafka_section(broker.bootstrap), contract(retention="3d"))
    code, found = rules(root)
    assert code == 1
    assert [(f["rule"], f["severity"], f["path"]) for f in found] == [
        ("SW-SRC-002", "error", "job.sources[0].retention")
    ]
    assert (
        'declares retention 3d, but the broker keeps topic "orders" for 7d (retention.ms 604800000)'
        in (found[0]["message"])
    )
    agreeing = project(tmp_path / "agree", kafka_section(broker.bootstrap), contract(retention="7d"))
    assert rules(agreeing) == (0, [])


def test_check_reports_a_compacted_topic_declared_rewindable(broker: TansuBroker, tmp_path: Path) -> None:
    broker.create_topic("customers", 1, {"cleanup.policy": "compact", "retention.ms": str(WEEK_MS)})
    root = project(tmp_path, kafka_section(broker.bootstrap), contract(topic="customers"))
    code, found = rules(root)
    assert code == 1
    assert [(f["rule"], f["path"]) for f in found] == [("SW-SRC-002", "job.sources[0].rewindable")]
    assert 'its topic "customers" is compacted (cleanup.policy compact)' in found[0]["message"]


def _savepoint(tmp_path: Path, days: float = 1) -> Path:
    savepoint, _ = _recorded()
    copy = tmp_path / "savepoint"
    copy.mkdir()
    (copy / "_metadata").write_bytes((savepoint / "_metadata").read_bytes())
    _age(copy, days)
    return copy


def gate(root: Path, savepoint: Path) -> tuple[int, dict[str, Any]]:
    args = ("gate", "orders-enrichment", "--env", "prod", "--restore-from", str(savepoint), "--now", NOW)
    p = sw(*args, "--format", "json", cwd=root)
    assert p.code in (0, 1), p
    return p.code, p.json()


def test_gate_allows_a_savepoint_whose_offsets_the_broker_still_holds(broker: TansuBroker, tmp_path: Path) -> None:
    # the recorded savepoint resumes orders[0] at 7 and orders[1] at 4; the broker holds both from 0
    root = project(tmp_path, kafka_section(broker.bootstrap))
    code, doc = gate(root, _savepoint(tmp_path))
    assert (code, doc["decision"]) == (0, "allow"), doc
    assert doc["sources"]["kafka"] == {"configured": True, "available": True}


# Records that expired: the S3-backed broker, whose storage the harness edits as retention would
# (tests/kafka_broker.py); the broker's own ListOffsets answers the earliest offsets.


@pytest.fixture(scope="module")
def expiring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3TansuBroker]:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    pytest.importorskip("moto.server", reason="the S3 storage for this broker is moto: pip install 'moto[server]'")
    with running_s3_broker(tmp_path_factory.mktemp("tansu-s3")) as b:
        b.create_topic("orders", 2, {"retention.ms": str(WEEK_MS), "retention.bytes": "1048576"})
        b.produce("orders", 0, [b"o%d" % i for i in range(12)])
        b.produce("orders", 1, [b"p%d" % i for i in range(12)])
        b.expire("orders", 0, 9)  # the savepoint resumes at 7: offsets 7 and 8 are gone
        b.expire("orders", 1, 3)  # it resumes at 4: still held
        assert b.earliest("orders", 2) == {0: 9, 1: 3}
        yield b


def test_gate_denies_a_restore_from_below_the_earliest_offset_naming_the_records_lost(
    expiring: S3TansuBroker, tmp_path: Path
) -> None:
    root = project(tmp_path, kafka_section(expiring.bootstrap))
    savepoint = _savepoint(tmp_path)
    code, doc = gate(root, savepoint)
    assert (code, doc["decision"]) == (1, "deny"), doc
    (reason,) = [r for r in doc["reasons"] if r["rule"] == "SW-REC-006"]
    assert reason["path"] == "job.sources[0]"
    assert (
        'resumes "orders-topic" (job.sources[0]) below the earliest offset the broker still holds: '
        "orders[0] at offset 7, the broker's earliest is 9 (2 records lost); the restored job would skip 2 records"
    ) in reason["message"]
    windows = [
        (w["partition"], w["restore_offset"], w["earliest"], w["lost"]) for w in reason["evidence"]["partitions"]
    ]
    assert windows == [(0, 7, 9, 2), (1, 4, 3, 0)]
    evidence = sw(
        "evidence", "orders-enrichment", "--env", "prod", "--restore-from", str(savepoint), "--now", NOW, cwd=root
    )
    assert evidence.code == 0, evidence  # the record of a decision: it renders the gate's deny
    assert "**Verdict: DENY" in evidence.stdout and "SW-REC-006" in evidence.stdout, evidence
    # the window of each partition: where the restore resumes, what the broker holds
    assert "| restore offset | held by | broker earliest | broker latest |" in evidence.stdout
    assert "| orders-topic | `orders` | 0 | 7 | subtask 1 | 9 |" in evidence.stdout


def test_check_warns_when_retention_bytes_expired_records_younger_than_the_retention(
    expiring: S3TansuBroker, tmp_path: Path
) -> None:
    # the records were produced moments ago and the broker already deleted some: by size, not time
    root = project(tmp_path, kafka_section(expiring.bootstrap))
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    p = sw("check", "--env", "prod", "--now", now, "--format", "json", cwd=root)
    assert p.code == 0, p
    found = [f for f in p.json()["findings"] if f["rule"].startswith("SW-SRC-")]
    assert [(f["rule"], f["severity"], f["path"]) for f in found] == [
        ("SW-SRC-003", "warning", "job.sources[0].retention")
    ]
    assert "retention.bytes is 1MiB, and orders[0] has deleted 9 records yet holds only 1h" in found[0]["message"]
    assert [w["partition"] for w in found[0]["evidence"]["partitions"]] == [0, 1]


def test_a_kafka_section_without_the_kafka_extra_is_a_setup_error(tmp_path: Path) -> None:
    # confluent-kafka is installed in this venv: a package that fails to import stands for its absence
    shadow = tmp_path / "shadow" / "confluent_kafka"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'confluent_kafka'\")\n")
    root = project(tmp_path / "repo", kafka_section(down()))
    p = sw("check", "--env", "prod", "--now", NOW, cwd=root, env={"PYTHONPATH": str(shadow.parent)})
    assert p.code == 2, p
    assert "pip install 'streamwarden[kafka]'" in p.stderr and "confluent_kafka" in p.stderr, p
    assert "SW-FACT-001" not in p.output, p
    # a contract without a Kafka source needs no extra
    (root / "contracts" / "orders.yaml").write_text(contract().replace("kind: kafka", "kind: kinesis"))
    p = sw("check", "--env", "prod", "--now", NOW, cwd=root, env={"PYTHONPATH": str(shadow.parent)})
    assert p.code in (0, 1) and "confluent_kafka" not in p.output, p


def test_contracts_reading_one_topic_are_each_judged_against_it(broker: TansuBroker, tmp_path: Path) -> None:
    root = project(tmp_path, kafka_section(broker.bootstrap), contract(retention="7d"))
    drifting = contract(retention="2d").replace("orders-enrichment", "orders-audit").replace("orders-topic", "audit")
    (root / "contracts" / "audit.yaml").write_text(drifting, encoding="utf-8")
    code, found = rules(root)
    assert code == 1
    assert [(f["pipeline"], f["rule"], f["path"]) for f in found] == [
        ("orders-audit", "SW-SRC-002", "job.sources[0].retention")
    ]
    audit = sw("facts", "orders-audit", "--env", "prod", "--now", NOW, cwd=root)
    assert audit.json()["facts"]["kafka"]["topics"]["orders"]["sources"] == ["audit"]


def test_a_broker_that_is_down_is_reported_for_every_contract(tmp_path: Path) -> None:
    address = down()
    root = project(tmp_path, kafka_section(address, timeout="2s"))
    other = contract().replace("orders-enrichment", "orders-audit").replace("topic: orders", "topic: audit")
    (root / "contracts" / "audit.yaml").write_text(other, encoding="utf-8")
    code, found = rules(root)
    assert code == 0
    assert sorted((f["pipeline"], f["rule"], f["path"]) for f in found) == [
        ("orders-audit", "SW-FACT-001", "facts.kafka"),
        ("orders-enrichment", "SW-FACT-001", "facts.kafka"),
    ]
    assert all(f"the Kafka broker at {address} did not answer within 2s" in f["message"] for f in found)


def test_the_gate_reads_the_topics_the_savepoint_resumes_even_when_the_contract_names_none(
    expiring: S3TansuBroker, tmp_path: Path
) -> None:
    root = project(tmp_path, kafka_section(expiring.bootstrap), contract().replace("      topic: orders\n", ""))
    code, doc = gate(root, _savepoint(tmp_path))
    assert (code, doc["decision"]) == (1, "deny"), doc
    (reason,) = [r for r in doc["reasons"] if r["rule"] == "SW-REC-006"]
    assert "orders[0] at offset 7, the broker's earliest is 9 (2 records lost)" in reason["message"]
