"""OpenLineage run events of `gate`, `evidence` and `check --env`, through the real CLI and the
openlineage-python client's own configuration and transports (docs/openlineage.md).

Every event is validated against OpenLineage's JSON Schema (tests/fixtures/openlineage: the spec
and its facet schemas, with their origin), each facet against the schema its ``_schemaURL`` names,
resolved locally (an unknown URL fails: no network), the ``streamwarden`` facet against the schema
the package ships. The http transport posts to a loopback receiver (a real HTTP server on
127.0.0.1: the stand-in for a lineage backend such as Marquez, which cannot run here)."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from tests.cli import Proc, sw
from tests.conftest import REPO
from tests.recovery_repo import RecoveryRepo

pytest.importorskip("openlineage.client")

SPEC = REPO / "tests" / "fixtures" / "openlineage"
FACET_SCHEMA = REPO / "contracts" / "schema" / "streamwarden-openlineage-run-facet.v1.schema.json"
SECRET = "hunter2-s3cr3t-value"


def _registry() -> Registry:  # type: ignore[type-arg]
    resources = []
    for path in [*SPEC.glob("*.json"), *SPEC.glob("facets/*.json"), FACET_SCHEMA]:
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


REGISTRY = _registry()
KNOWN = {json.loads(p.read_text(encoding="utf-8"))["$id"] for p in [*SPEC.glob("**/*.json"), FACET_SCHEMA]}
SPEC_ID = json.loads((SPEC / "OpenLineage.json").read_text(encoding="utf-8"))["$id"]


def _validator(url: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": url}, registry=REGISTRY, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _facets(event: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield from (event.get("run") or {}).get("facets", {}).items()
    yield from (event.get("job") or {}).get("facets", {}).items()
    for ds in [*event.get("inputs", []), *event.get("outputs", [])]:
        for key in ("facets", "inputFacets", "outputFacets"):
            yield from (ds.get(key) or {}).items()


def validate(event: dict[str, Any]) -> None:
    """The event against the spec's RunEvent, each facet against the schema its _schemaURL names."""
    errors = [e.message for e in _validator(SPEC_ID + "#/$defs/RunEvent").iter_errors(event)]
    assert not errors, errors
    for name, facet in _facets(event):
        url = facet["_schemaURL"]
        assert url.split("#")[0] in KNOWN, f"facet {name}: {url} is not a vendored schema"
        errors = [e.message for e in _validator(url).iter_errors(facet)]
        assert not errors, (name, errors)


def file_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _file_config(path: Path, events: Path) -> Path:
    path.write_text(yaml.safe_dump({"transport": {"type": "file", "log_file_path": str(events), "append": True}}))
    return path


@pytest.fixture
def incident(tmp_path: Path) -> RecoveryRepo:
    """A job committed checkpoints 1..20 into an append-only table; it is restored from 12 (deny, SW-REC-002)."""
    (tmp_path / "repo").mkdir()
    r = RecoveryRepo(tmp_path / "repo", upsert=False)
    r.commit(1, 20)
    return r


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's shell with no OpenLineage configuration: no OPENLINEAGE_* variable (conftest sets
    OPENLINEAGE_DISABLED for every other test) and a HOME without ~/.openlineage."""
    for key in [k for k in os.environ if k.startswith("OPENLINEAGE")]:
        monkeypatch.delenv(key)
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    return h


def _run(repo: RecoveryRepo, verb: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Proc:
    sp = repo.savepoint(12)
    return sw(
        verb,
        "orders-enrichment",
        "--env",
        "prod",
        "--config",
        str(repo.root / "streamwarden.yaml"),
        "--now",
        repo.now_arg(),
        "--restore-from",
        str(sp),
        "--format",
        "json",
        *args,
        cwd=cwd or repo.root,
        env=env,
    )


def _pair(events: list[dict[str, Any]], final: str = "COMPLETE") -> tuple[dict[str, Any], dict[str, Any]]:
    assert [e["eventType"] for e in events] == ["START", final], events
    start, end = events
    assert start["run"]["runId"] == end["run"]["runId"]
    assert start["job"] == {**start["job"], "namespace": end["job"]["namespace"], "name": end["job"]["name"]}
    assert start["eventTime"] <= end["eventTime"]
    for e in events:
        validate(e)
    return start, end


# --- the file transport -------------------------------------------------------------------------


def test_gate_writes_start_and_complete_through_openlineage_yml_in_the_working_directory(
    incident: RecoveryRepo, home: Path
) -> None:
    events_file = incident.root.parent / "events.jsonl"
    _file_config(incident.root / "openlineage.yml", events_file)
    p = _run(incident, "gate")
    assert p.code == 1, p  # the decision (deny) and its exit code are lineage's to record, not to change
    assert p.json()["decision"] == "deny"
    start, end = _pair(file_events(events_file))
    assert end["job"] == {**end["job"], "namespace": "default", "name": "orders-enrichment"}
    assert end["job"]["facets"]["jobType"]["jobType"] == "GATE"
    assert end["job"]["facets"]["ownership"]["owners"] == [{"name": "payments-data"}]

    facet = end["run"]["facets"]["streamwarden"]
    committed = incident.sink.committed
    assert (facet["verb"], facet["environment"], facet["decision"], facet["reasons"]) == (
        "gate",
        "prod",
        "deny",
        ["SW-REC-002"],
    )
    point = facet["restore_point"]
    assert (point["checkpoint_id"], point["kind"], point["snapshot_id"]) == (12, "savepoint", committed[12])
    assert facet["replay"] == {
        "snapshots": 8,
        "first_checkpoint_id": 13,
        "last_checkpoint_id": 20,
        "first_snapshot_id": committed[13],
        "last_snapshot_id": committed[20],
    }
    assert facet["rollback_target"] == committed[12]

    [table] = end["outputs"]
    warehouse = incident.root / "lake" / "warehouse"
    assert (table["namespace"], table["name"]) == ("file", str(warehouse / "sales" / "orders"))
    assert [f["name"] for f in table["facets"]["schema"]["fields"]][:2] == ["order_id", "amount"]
    assert table["facets"]["version"]["datasetVersion"] == str(committed[20])
    assertions = {a["assertion"]: a for a in table["facets"]["dataQualityAssertions"]["assertions"]}
    assert assertions["SW-REC-002"]["success"] is False and assertions["SW-REC-002"]["severity"] == "error"
    assert assertions["SW-REC-001"]["success"] is True
    decided = p.json()  # the assertions that failed are exactly the rules the gate reports, errors and warnings
    assert {a for a, v in assertions.items() if not v["success"]} == {
        f["rule"] for f in [*decided["reasons"], *decided["warnings"]]
    }
    assert "streamwarden" not in start["run"]["facets"]


def test_evidence_reads_the_configuration_openlineage_config_names(incident: RecoveryRepo, home: Path) -> None:
    events_file = incident.root.parent / "evidence-events.jsonl"
    config = _file_config(incident.root.parent / "lineage-elsewhere.yml", events_file)
    p = _run(incident, "evidence", env={"OPENLINEAGE_CONFIG": str(config)})
    assert p.code == 0, p
    assert p.json()["verdict"]["decision"] == "deny"
    _, end = _pair(file_events(events_file))
    assert end["job"]["facets"]["jobType"]["jobType"] == "EVIDENCE"
    assert end["run"]["facets"]["streamwarden"]["verb"] == "evidence"
    assert end["run"]["facets"]["streamwarden"]["decision"] == "deny"


def test_a_run_that_errors_emits_start_and_fail_with_the_error(incident: RecoveryRepo, home: Path) -> None:
    events_file = incident.root.parent / "events.jsonl"
    _file_config(incident.root / "openlineage.yml", events_file)
    p = sw(
        "gate",
        "orders-enrichment",
        "--env",
        "staging",
        "--config",
        str(incident.root / "streamwarden.yaml"),
        cwd=incident.root,
    )
    assert p.code == 2, p
    _, end = _pair(file_events(events_file), "FAIL")
    assert "unknown environment 'staging'" in end["run"]["facets"]["errorMessage"]["message"]
    assert "decision" not in end["run"]["facets"]["streamwarden"]
    assert end["job"]["name"] == "orders-enrichment"


def test_the_console_transport_prints_events_on_stderr_and_leaves_stdout_the_report(
    incident: RecoveryRepo, home: Path
) -> None:
    p = _run(incident, "gate", env={"OPENLINEAGE__TRANSPORT__TYPE": "console"})
    assert p.code == 1, p
    assert p.json()["decision"] == "deny"  # stdout parses whole: the report alone
    events = [json.loads(line) for line in p.stderr.splitlines() if line.startswith('{"eventTime"')]
    _, end = _pair(events)
    assert end["run"]["facets"]["streamwarden"]["decision"] == "deny"


# --- the http transport -------------------------------------------------------------------------


class Receiver:
    """A lineage backend's HTTP endpoint on loopback: records every connection and every POST."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, Any]]] = []
        self.connections = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.posts.append((self.path, json.loads(body)))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def get_request(self) -> tuple[socket.socket, Any]:
                outer.connections += 1
                return super().get_request()

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def test_gate_posts_its_events_to_openlineage_url(incident: RecoveryRepo, home: Path, receiver: Receiver) -> None:
    p = _run(incident, "gate", env={"OPENLINEAGE_URL": receiver.url, "OPENLINEAGE_NAMESPACE": "lake-prod"})
    assert p.code == 1, p
    assert {path for path, _ in receiver.posts} == {"/api/v1/lineage"}
    _, end = _pair([event for _, event in receiver.posts])
    assert end["job"]["namespace"] == "lake-prod"
    assert end["run"]["facets"]["streamwarden"]["decision"] == "deny"


def test_check_env_posts_one_run_per_pipeline_through_the_transport_variables(
    incident: RecoveryRepo, home: Path, receiver: Receiver
) -> None:
    p = sw(
        "check",
        "--env",
        "prod",
        "--now",
        incident.now_arg(),
        "--format",
        "json",
        cwd=incident.root,
        env={
            "OPENLINEAGE__TRANSPORT__TYPE": "http",
            "OPENLINEAGE__TRANSPORT__URL": receiver.url,
            "OPENLINEAGE__TRANSPORT__ENDPOINT": "api/v1/lineage",
        },
    )
    assert p.code in (0, 1), p
    failing = {f["rule"] for f in p.json()["findings"] if f["severity"] == "error" and not f.get("waived")}
    _, end = _pair([event for _, event in receiver.posts])
    facet = end["run"]["facets"]["streamwarden"]
    assert facet["verb"] == "check" and "restore_point" not in facet and "replay" not in facet
    assert facet["decision"] == ("fail" if failing else "pass")
    assert facet["reasons"] == sorted(failing)
    assert end["job"]["facets"]["jobType"]["jobType"] == "CHECK"
    assert end["outputs"][0]["namespace"] == "file"


def test_a_receiver_that_is_down_costs_a_warning_not_the_decision(incident: RecoveryRepo, home: Path) -> None:
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (incident.root / "openlineage.yml").write_text(
        yaml.safe_dump(
            {"transport": {"type": "http", "url": f"http://127.0.0.1:{port}", "timeout": 2, "retry": {"total": 0}}}
        )
    )
    p = _run(incident, "gate")
    assert p.code == 1, p
    assert p.json()["decision"] == "deny"
    assert "OpenLineage: the START event of orders-enrichment could not be sent" in p.stderr


@pytest.mark.slow
def test_the_kafka_transport_publishes_the_events_to_a_topic(
    incident: RecoveryRepo, home: Path, tmp_path: Path
) -> None:
    """The client's kafka transport, on a real Kafka-compatible broker (tests/kafka_broker.py)."""
    from confluent_kafka import Consumer
    from tests.kafka_broker import missing_reason, running_broker

    if missing_reason():
        pytest.skip(missing_reason() or "")
    (tmp_path / "tansu").mkdir()
    with running_broker(tmp_path / "tansu") as broker:
        broker.create_topic("lineage", 1)
        (incident.root / "openlineage.yml").write_text(
            yaml.safe_dump(
                {
                    "transport": {
                        "type": "kafka",
                        "topic": "lineage",
                        "config": {"bootstrap.servers": broker.bootstrap, "acks": "all"},
                        "flush": True,
                    }
                }
            )
        )
        p = _run(incident, "gate")
        assert p.code == 1, p
        assert "OpenLineage" not in p.stderr, p.stderr
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "t", "auto.offset.reset": "earliest"})
        consumer.subscribe(["lineage"])
        events: list[dict[str, Any]] = []
        try:
            for _ in range(60):  # the broker's first fetch is slow (tests/kafka_broker.py)
                message = consumer.poll(1.0)
                if message is not None and not message.error():
                    events.append(json.loads(message.value()))
                if len(events) == 2:
                    break
        finally:
            consumer.close()
    _, end = _pair(events)
    assert end["run"]["facets"]["streamwarden"]["decision"] == "deny"


# --- off unless configured ----------------------------------------------------------------------


def test_not_configured_emits_nothing_and_never_imports_the_client(
    incident: RecoveryRepo, home: Path, receiver: Receiver
) -> None:
    p = _run(incident, "gate", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert p.code == 1, p
    assert p.json()["decision"] == "deny"
    imported = [line for line in p.stderr.splitlines() if line.startswith("import time:")]
    assert imported, "the import trace is on"
    assert not [line for line in imported if "openlineage" in line]
    assert "eventType" not in p.output
    assert receiver.connections == 0 and receiver.posts == []
    assert not list(incident.root.parent.glob("**/*.jsonl"))


def test_the_import_trace_sees_the_client_when_configured(incident: RecoveryRepo, home: Path) -> None:
    """The probe of the previous test works: a configured run imports the client."""
    _file_config(incident.root / "openlineage.yml", incident.root.parent / "events.jsonl")
    p = _run(incident, "gate", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert any("openlineage.client" in line for line in p.stderr.splitlines() if line.startswith("import time:"))


def test_a_static_check_never_imports_the_client_even_when_configured(incident: RecoveryRepo, home: Path) -> None:
    """Lineage is about runs against an environment: a repository check emits nothing and loads nothing."""
    events_file = incident.root.parent / "events.jsonl"
    _file_config(incident.root / "openlineage.yml", events_file)
    p = sw("check", "--now", incident.now_arg(), cwd=incident.root, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert p.code in (0, 1), p
    imported = [line for line in p.stderr.splitlines() if line.startswith("import time:")]
    assert imported and not [line for line in imported if "openlineage" in line]
    assert not events_file.exists()


def test_openlineage_disabled_wins_over_a_configuration(incident: RecoveryRepo, home: Path, receiver: Receiver) -> None:
    p = _run(incident, "gate", env={"OPENLINEAGE_URL": receiver.url, "OPENLINEAGE_DISABLED": "true"})
    assert p.code == 1, p
    assert receiver.connections == 0 and receiver.posts == []


def test_a_configuration_without_a_transport_emits_nothing(incident: RecoveryRepo, home: Path) -> None:
    """An openlineage.yml that configures no transport (only filters, say): the client would print
    events on the console; streamwarden emits nothing, as with no configuration."""
    (incident.root / "openlineage.yml").write_text(yaml.safe_dump({"filters": []}))
    p = _run(incident, "gate")
    assert p.code == 1, p
    assert "eventType" not in p.output
    assert p.json()["decision"] == "deny"


def test_configured_without_the_client_installed_warns_and_keeps_the_decision(
    incident: RecoveryRepo, home: Path, tmp_path: Path
) -> None:
    """The extra not installed: a package ``openlineage`` that cannot be imported stands in for it."""
    shadow = tmp_path / "shadow" / "openlineage"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not installed')\n")
    _file_config(incident.root / "openlineage.yml", tmp_path / "events.jsonl")
    path = os.pathsep.join(x for x in (str(shadow.parent), os.environ.get("PYTHONPATH")) if x)
    p = _run(incident, "gate", env={"PYTHONPATH": path})
    assert p.code == 1, p
    assert p.json()["decision"] == "deny"
    assert "pip install 'streamwarden[openlineage]'" in p.stderr
    assert not (tmp_path / "events.jsonl").exists()


# --- what the events carry ----------------------------------------------------------------------


def test_contract_strings_are_scrubbed_of_secrets(incident: RecoveryRepo, home: Path) -> None:
    incident.edit_contract(
        "  owner: payments-data\n",
        f"  owner: payments-data password={SECRET}\n  description: 'Enriches orders; token={SECRET}'\n",
    )
    events_file = incident.root.parent / "events.jsonl"
    _file_config(incident.root / "openlineage.yml", events_file)
    p = _run(incident, "gate")
    assert p.code == 1, p
    text = events_file.read_text(encoding="utf-8")
    assert SECRET not in text and SECRET[:9] not in text
    _, end = _pair(file_events(events_file))
    assert end["job"]["facets"]["ownership"]["owners"][0]["name"].startswith("payments-data password=***")
    assert "token=***" in end["job"]["facets"]["documentation"]["description"]


def test_a_kafka_source_is_named_by_the_environments_bootstrap_server(incident: RecoveryRepo, home: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    incident.edit_contract("      kind: kafka\n", "      kind: kafka\n      topic: orders\n")
    config = yaml.safe_load((incident.root / "streamwarden.yaml").read_text())
    config["environments"]["prod"]["kafka"] = {"bootstrap_servers": [f"127.0.0.1:{port}"], "timeout": "1s"}
    (incident.root / "streamwarden.yaml").write_text(yaml.safe_dump(config))
    events_file = incident.root.parent / "events.jsonl"
    _file_config(incident.root / "openlineage.yml", events_file)
    p = _run(incident, "gate")
    assert p.code == 1, p
    _, end = _pair(file_events(events_file))
    assert [(i["namespace"], i["name"]) for i in end["inputs"]] == [(f"kafka://127.0.0.1:{port}", "orders")]


def test_the_shipped_facet_schema_is_the_one_the_facet_names(tmp_path: Path) -> None:
    p = sw("schema", "openlineage", cwd=tmp_path)
    assert p.code == 0, p
    schema = p.json()
    from streamwarden.lineage.emit import FACET_SCHEMA_URL

    assert schema["$id"] + "#/$defs/StreamwardenRunFacet" == FACET_SCHEMA_URL
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(
    ("location", "namespace", "name"),
    [
        ("s3://bucket/warehouse/sales/orders", "s3://bucket", "warehouse/sales/orders"),
        ("s3a://bucket/warehouse/sales/orders/", "s3://bucket", "warehouse/sales/orders"),
        ("gs://bucket/wh/t", "gs://bucket", "wh/t"),
        ("abfs://lake@account.dfs.core.windows.net/wh/t", "abfss://lake@account.dfs.core.windows.net", "wh/t"),
        ("file:/tmp/warehouse/db/sink", "file", "/tmp/warehouse/db/sink"),
        ("file:///tmp/warehouse/db/sink", "file", "/tmp/warehouse/db/sink"),
        ("/tmp/warehouse/db/sink/", "file", "/tmp/warehouse/db/sink"),
        ("hdfs://namenode:8020/warehouse/t", "hdfs://namenode:8020", "/warehouse/t"),
        ("s3://user:pass@bucket/t", "s3://bucket", "t"),
    ],
)
def test_table_locations_are_named_as_openlineage_integrations_name_them(
    location: str, namespace: str, name: str
) -> None:
    """The Java client's FilesystemDatasetUtils (what OpenLineage's Flink and Spark integrations
    name Iceberg tables with): e.g. its Flink test expects file + /tmp/warehouse/db/sink."""
    from streamwarden.lineage.naming import DatasetName, location_name

    assert location_name(location) == DatasetName(namespace, name)
