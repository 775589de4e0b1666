"""Flink's own namespaces are closed with the real key sets of Flink 1.15-2.3 (keys/flink.txt,
generated from Flink's option classes by scripts/update_flink_keys.py); only namespaces whose key
names the user or another library chooses stay open. A typo under a closed prefix gets a
did-you-mean; a key the job's own code reads is told how to declare it (flink.known_keys).

Before, ``execution.*``, ``sql-client.*`` and many other first segments were open: a typo below
them passed silently, while ``workflow-scheduler.type`` (a real option since Flink 1.20) was called
unknown. Every check runs through the CLI on a flink-conf.yaml that agrees with the contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.deployrepo import CLEAN_FLINK_CONF, check, line_of, make_repo

from streamwarden.flink.config import KEYS_DIR, OPTIONS

CONF = "deploy/flink-conf.yaml"


def _unknown(tmp_path: Path, lines: str, known: list[str] | None = None) -> dict[str, dict[str, object]]:
    repo = make_repo(tmp_path / "repo", [CONF], {CONF: CLEAN_FLINK_CONF + lines})
    if known is not None:
        (repo / "streamwarden.yaml").write_text(f"flink:\n  known_keys: {known}\n", encoding="utf-8")
    _, findings = check(repo)
    out = {}
    for f in findings:
        if f["rule"] == "SW-DEPLOY-001":
            assert f["line"] == line_of(repo / "contracts" / CONF, f"{f['path']}:"), f
            out[str(f["path"])] = f
    return out


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        # not a Flink key: Flink ignores it and the checkpoints get no directory
        ("execution.checkpoints.dir", "execution.checkpointing.dir"),
        # no such option: a namespace put in front of execution.runtime-mode
        ("sql-client.execution.runtime-mode", "execution.runtime-mode"),
        ("execution.runtime-mode.x", "execution.runtime-mode"),
        ("taskmanager.memory.proccess.size", "taskmanager.memory.process.size"),
        ("high-availability.storagedir", "high-availability.storageDir"),
        ("table.exec.state.tll", "table.exec.state.ttl"),
        ("state.backend.rocksdb.localdirs", "state.backend.rocksdb.localdir"),
        ("kubernetes.jobmanager.replica", "kubernetes.jobmanager.replicas"),
    ],
)
def test_a_typo_under_a_flink_namespace_is_named_with_did_you_mean(tmp_path: Path, key: str, suggestion: str) -> None:
    found = _unknown(tmp_path, f"{key}: x\n")
    assert list(found) == [key]
    assert str(found[key]["message"]).endswith(f"did you mean {suggestion}?"), found[key]["message"]


def test_real_keys_of_each_release_are_known(tmp_path: Path) -> None:
    """Keys of Flink 1.15 to 2.3 that the open namespaces let through before, and ones that were
    called unknown: workflow-scheduler.type (Flink 1.20+, FLIP-448), scheduler-mode (no dot)."""
    keys = (
        "workflow-scheduler.type: embedded\n"
        "scheduler-mode: REACTIVE\n"
        "sql-client.execution.result-mode: tableau\n"
        "execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING\n"
        "table.exec.sink.upsert-materialize: NONE\n"
        "table.optimizer.agg-phase-strategy: AUTO\n"
        "state.backend.rocksdb.memory.managed: true\n"
        "kubernetes.operator.savepoint.history.max.count: 5\n"
        "high-availability.storageDir: s3://ha/orders\n"
        "akka.ask.timeout: 10 s\n"
        "pekko.ask.timeout: 10 s\n"
        "jobmanager.adaptive-scheduler.resource-stabilization-timeout: 10 s\n"
        "env.java.opts.all: -XX:+UseG1GC\n"
        "fs.hdfs.hadoopconf: /etc/hadoop/conf\n"
        "table.exec.iceberg.use-v2-sink: true\n"
    )
    assert _unknown(tmp_path, keys) == {}


def test_user_defined_namespaces_stay_open(tmp_path: Path) -> None:
    """Names the user chooses (a reporter, a resource, an environment variable, a map entry) and
    keys passed on to a file system's own library."""
    keys = (
        "metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory\n"
        "metrics.reporter.prom.port: 9249\n"
        "traces.reporter.otel.exporter.endpoint: http://otel:4317\n"
        "external-resource.gpu.amount: 1\n"
        "containerized.master.env.JAVA_TOOL_OPTIONS: -Dx=y\n"
        "kubernetes.jobmanager.annotations.team: payments\n"
        "pipeline.global-job-parameters.owner: payments\n"
        "flink.hadoop.dfs.replication: 2\n"
        "s3.access-key: AKIAEXAMPLE\n"
        "fs.s3a.connection.maximum: 100\n"
        "presto.s3.max-connections: 100\n"
        "gs.writer.chunk.size: 8 mb\n"
        "fs.azure.account.key.acct.blob.core.windows.net: x\n"
        "fs.oss.endpoint: oss-cn-hangzhou.aliyuncs.com\n"
        "fs.s3.limit.total: 20\n"
        "security.delegation.token.provider.hadoopfs.enabled: false\n"
    )
    assert _unknown(tmp_path, keys) == {}


def test_a_key_the_job_reads_is_told_how_to_declare_it(tmp_path: Path) -> None:
    found = _unknown(tmp_path, "acme.lake.commit-retries: 3\n")
    message = str(found["acme.lake.commit-retries"]["message"])
    assert "did you mean" not in message
    assert "if the job's own code or a plugin reads it, declare it in streamwarden.yaml" in message
    assert "flink: {known_keys: [acme.lake.commit-retries]}" in message
    # and the declaration it names is honoured
    assert _unknown(tmp_path / "declared", "acme.lake.commit-retries: 3\n", ["acme.*"]) == {}


def test_the_key_set_is_generated_for_flink_1_15_to_2_3() -> None:
    """flink.txt says how it was made and for which releases, and holds every key (and deprecated
    name) the typed table reads: the table is a subset of what Flink's option classes declare."""
    text = (KEYS_DIR / "flink.txt").read_text(encoding="utf-8")
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert "scripts/update_flink_keys.py" in header and "1.15.4" in header and "2.3.0" in header
    keys = {line.split("#", 1)[0].strip() for line in text.splitlines()} - {""}
    assert len(keys) > 1000
    missing = [k for o in OPTIONS for k in (o.key, *o.aliases) if k not in keys]
    assert missing == []
    assert "workflow-scheduler.type  # 1.20-2.3" in text
