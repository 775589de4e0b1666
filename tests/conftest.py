"""Shared fixtures: a clean contract, a CLI runner that never swallows a traceback silently."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from streamwarden.cli import main

REPO = Path(__file__).resolve().parent.parent
# tests/ itself: shared files (fixtures/, golden/, flink_jobs/) are reached from here, never from a
# test file's own __file__, so a test module can move between folders (tests/README.md).
TESTS = REPO / "tests"

# Self-check mode (src/streamwarden/core/selfcheck.py) for every test, CLI subprocesses included: each
# input document must conform to the published input schema, and leaving out the policy files
# whose METADATA declares `custom.requires` must not change a result.
os.environ.setdefault("STREAMWARDEN_SELF_CHECK", "1")

# No test sends OpenLineage events to a backend the developer's shell or ~/.openlineage configures:
# the client's own switch turns it off (tests/test_openlineage.py sets its own configuration).
for _key in [k for k in os.environ if k.startswith("OPENLINEAGE")]:
    del os.environ[_key]
os.environ["OPENLINEAGE_DISABLED"] = "true"

NOW = "2026-11-25T12:00:00Z"

# A contract that every contract-only rule accepts. Tests derive broken variants from it.
CLEAN_CONTRACT = textwrap.dedent(
    """\
    apiVersion: streamwarden/v1
    kind: PipelineContract
    metadata:
      name: orders-enrichment
      owner: payments-data
      consumers:
        - name: finance-dashboard
          freshness: 30m
          contact: "#finance-data"
    job:
      name: orders-enrichment
      parallelism: 4
      max_parallelism: 128
      restart_strategy: exponential-delay
      sources:
        - name: orders-topic
          kind: kafka
          uid: orders-source
          rewindable: true
          retention: 14d
      sinks:
        - name: orders-table
          kind: iceberg
          table: sales.orders
          uid: orders-iceberg-sink
          delivery: exactly_once
    state:
      backend: rocksdb
      incremental: true
      max_size: 50GiB
      auto_generated_uids: forbidden
      allow_non_restored_state: false
      operators:
        - uid: orders-dedup
          kind: keyed
          key: [order_id]
          ttl: 24h
          serializer: avro
          schema_version: 3
    checkpoint:
      mode: exactly_once
      interval: 60s
      timeout: 10m
      min_pause: 30s
      max_concurrent: 1
      storage: s3://lake-checkpoints/orders-enrichment
      externalized: retain_on_cancellation
      num_retained: 3
      unaligned: false
      tolerable_failures: 3
      health:
        max_age: 5m
        max_duration: 60s
        max_failed: 3
    table:
      catalog: lake
      identifier: sales.orders
      format_version: 2
      schema:
        - {name: order_id, type: long, required: true, id: 1}
        - {name: amount, type: "decimal(12,2)", id: 2}
        - {name: event_time, type: timestamptz, required: true, id: 3}
      identifier_fields: [order_id]
      partition_spec:
        - {source: event_time, transform: day}
      properties:
        write.upsert.enabled: "true"
      commit:
        max_interval: 5m
        lineage: required
    retention:
      rollback_window: 3d
      snapshots: {max_age: 7d, min_keep: 20}
      checkpoints: {num_retained: 3}
      savepoints: {max_age: 7d, min_keep: 5}
    schema_evolution:
      compatibility: full
      allow_renames: false
      coordinate_with_state: true
    """
)


def named_contract(name: str, text: str = CLEAN_CONTRACT) -> str:
    """``text`` (CLEAN_CONTRACT) as pipeline ``name``, writing a table of its own (``sales.<name>``):
    two contracts that write one table are SW-TABLE-014, one writer per table."""
    return text.replace("orders-enrichment", name).replace("sales.orders", "sales." + name.replace("-", "_"))


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def invoke(runner: CliRunner, *args: str, cwd: Path | None = None) -> Result:
    """Run the CLI; an uncaught exception is a test failure, not a quiet exit code."""
    if cwd is not None:
        import os

        old = Path.cwd()
        os.chdir(cwd)
        try:
            result = runner.invoke(main, list(args), catch_exceptions=True)
        finally:
            os.chdir(old)
    else:
        result = runner.invoke(main, list(args), catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    def _write(name: str, text: str) -> Path:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p

    return _write


@pytest.fixture(scope="session")
def flink_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One real Flink 2.3.0 standalone cluster for the whole test session (tests/flink_cluster.py),
    shared by every module that needs one; stopped in teardown. Skips only where Java is missing."""
    from tests.flink_cluster import java_missing_reason, running_cluster

    reason = java_missing_reason()
    if reason:
        pytest.skip(reason)
    with running_cluster(tmp_path_factory.mktemp("flink"), slots=8) as cluster:
        yield cluster


# With STREAMWARDEN_REQUIRE_TOOLS=1 (CI), a skipped test is a failure: a broken install (no
# regorus, no pyiceberg, no Java, no OPA engine) must not pass as "N skipped". The one exception is
# what this machine cannot have at all: a running OPA server (no `opa` binary can be downloaded
# here; the GitHub workflow installs it).
_SKIP_ALLOWED = ("needs a running OPA",)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or os.environ.get("STREAMWARDEN_REQUIRE_TOOLS") != "1":
        return
    if hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if any(allowed in reason for allowed in _SKIP_ALLOWED):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped under STREAMWARDEN_REQUIRE_TOOLS=1 (a missing tool must fail CI): {reason}"


@pytest.fixture
def counted_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each load of a table through the real catalog (the real open_table runs; its calls are listed)."""
    pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")
    from streamwarden.iceberg import catalog

    loads: list[str] = []
    real = catalog.open_table

    def open_table(cat: Any, catalog_name: str, identifier: str, props: Any) -> Any:
        loads.append(identifier)
        return real(cat, catalog_name, identifier, props)

    monkeypatch.setattr(catalog, "open_table", open_table)
    return loads
