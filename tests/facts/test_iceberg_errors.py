"""What the Iceberg gatherer does when it cannot read the table: an unavailable source with a clear,
redacted message (SW-FACT-001 reports it), never a traceback and never a secret."""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from tests.iceberg_tables import IDENTIFIER, JOB_A, FlinkSink, Lake

from streamwarden.facts.iceberg import gather_iceberg
from streamwarden.iceberg.catalog import redact, resolve_properties

CONTRACT = {"table": {"catalog": "lake", "identifier": IDENTIFIER}}
NOW = 1_764_000_000_000
TOKEN = "s3cr3t-t0ken-value"


def unavailable(facts: dict[str, Any]) -> str:
    assert facts["available"] is False and facts["configured"] is True, facts
    assert isinstance(facts["error"], str) and facts["error"]
    assert "Traceback" not in facts["error"]
    return facts["error"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Handler(BaseHTTPRequestHandler):
    """A REST catalog that answers /v1/config, then refuses the table with a fixed status."""

    status = 403

    def do_GET(self) -> None:
        if self.path.startswith("/v1/config"):
            self._reply(200, {"defaults": {}, "overrides": {}})
        else:
            kind = {401: "NotAuthorizedException", 403: "ForbiddenException"}.get(self.status, "ServerError")
            self._reply(self.status, {"error": {"message": f"denied for {TOKEN}?", "type": kind, "code": self.status}})

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def rest_catalog(request: pytest.FixtureRequest) -> Iterator[str]:
    handler = type("Handler", (_Handler,), {"status": getattr(request, "param", 403)})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_contract_without_a_table_needs_no_iceberg_facts(tmp_path: Path) -> None:
    assert gather_iceberg({"job": {"name": "x"}}, None, tmp_path, NOW) == {"available": False, "configured": False}


def test_contract_without_identifier_or_catalog_is_a_gap(tmp_path: Path) -> None:
    assert "table.identifier is not declared" in unavailable(
        gather_iceberg({"table": {"catalog": "lake"}}, None, tmp_path, NOW)
    )
    assert "table.catalog is not declared" in unavailable(
        gather_iceberg({"table": {"identifier": "a.b"}}, None, tmp_path, NOW)
    )


def test_catalog_missing_from_the_environment_is_refused_and_named(tmp_path: Path) -> None:
    facts = gather_iceberg(CONTRACT, {"catalogs": {"other": {"type": "sql"}}}, tmp_path, NOW)
    assert facts["refused"] is True  # SW-FACT-002's, not a gap: PyIceberg's own config is opt-in
    msg = unavailable(facts)
    assert "catalog 'lake' is not one this environment configures (iceberg.catalogs: other)" in msg
    assert "iceberg.use_pyiceberg_config" in msg


def test_catalog_missing_everywhere_with_the_opt_in_is_named(tmp_path: Path) -> None:
    env = {"catalogs": {"other": {"type": "sql"}}, "use_pyiceberg_config": True}
    msg = unavailable(gather_iceberg(CONTRACT, env, tmp_path, NOW))
    assert "catalog 'lake' (table.catalog) is not configured" in msg
    assert "environments.<env>.iceberg.catalogs.lake" in msg and "configured: other" in msg
    assert "PYICEBERG_CATALOG__LAKE__" in msg


def test_missing_sqlite_catalog_is_never_created(tmp_path: Path) -> None:
    env = {"catalogs": {"lake": {"type": "sql", "uri": "sqlite:///nowhere/catalog.db", "warehouse": "wh"}}}
    msg = unavailable(gather_iceberg(CONTRACT, env, tmp_path, NOW))
    assert f"the SQLite catalog database {tmp_path / 'nowhere' / 'catalog.db'} does not exist" in msg
    assert not (tmp_path / "nowhere").exists()


def test_missing_table_and_namespace(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    msg = unavailable(gather_iceberg(CONTRACT, lake.environment(), tmp_path, NOW))
    assert msg == f"table {IDENTIFIER} does not exist in catalog 'lake'"
    other = {"table": {"catalog": "lake", "identifier": "nope.orders"}}
    assert "table nope.orders does not exist in catalog 'lake'" in unavailable(
        gather_iceberg(other, lake.environment(), tmp_path, NOW)
    )


def test_corrupt_metadata_file(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    table = lake.create_orders()
    FlinkSink(lake, table, JOB_A).commit(1)
    Path(lake.table().metadata_location.removeprefix("file://")).write_text('{"format-version": 2, "oops": ')
    msg = unavailable(gather_iceberg(CONTRACT, lake.environment(), tmp_path, NOW))
    assert msg.startswith(f"table {IDENTIFIER} in catalog 'lake' could not be loaded: ")
    assert "corrupt or not Iceberg metadata" in msg


def test_metadata_that_is_json_but_not_iceberg(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.create_orders()
    Path(lake.table().metadata_location.removeprefix("file://")).write_text('{"format-version": 2}')
    assert "corrupt or not Iceberg metadata" in unavailable(gather_iceberg(CONTRACT, lake.environment(), tmp_path, NOW))


def test_deleted_metadata_file(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.create_orders()
    Path(lake.table().metadata_location.removeprefix("file://")).unlink()
    assert "a metadata file is missing" in unavailable(gather_iceberg(CONTRACT, lake.environment(), tmp_path, NOW))


def test_unreachable_rest_catalog(tmp_path: Path) -> None:
    env = {"catalogs": {"lake": {"type": "rest", "uri": f"http://127.0.0.1:{free_port()}", "token": TOKEN}}}
    msg = unavailable(gather_iceberg(CONTRACT, env, tmp_path, NOW))
    assert msg.startswith("catalog 'lake' could not be opened: the catalog is unreachable")
    assert TOKEN not in msg


@pytest.mark.parametrize("rest_catalog", [403, 401], indirect=True)
def test_permission_denied_by_the_catalog(tmp_path: Path, rest_catalog: str) -> None:
    env = {"catalogs": {"lake": {"type": "rest", "uri": rest_catalog, "token": TOKEN}}}
    msg = unavailable(gather_iceberg(CONTRACT, env, tmp_path, NOW))
    assert msg.startswith(f"table {IDENTIFIER} in catalog 'lake' could not be loaded: permission denied")
    assert TOKEN not in msg and "***" in msg


def test_bad_catalog_configuration_never_echoes_secrets(tmp_path: Path) -> None:
    env = {"catalogs": {"lake": {"type": "no-such-type", "credential": f"client:{TOKEN}"}}}
    msg = unavailable(gather_iceberg(CONTRACT, env, tmp_path, NOW))
    assert msg.startswith("catalog 'lake' could not be opened: ")
    assert TOKEN not in msg


def test_pyiceberg_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyiceberg.catalog", None)
    env = {"catalogs": {"lake": {"type": "rest", "uri": "http://127.0.0.1:1"}}}
    assert "pyiceberg is not installed (pip install 'streamwarden[iceberg]')" in unavailable(
        gather_iceberg(CONTRACT, env, tmp_path, NOW)
    )


def test_redact_removes_secrets_credentials_and_signed_urls() -> None:
    props = {"credential": "id:verysecret", "s3.secret-access-key": "AKIAXYZ", "uri": "http://h"}
    text = (
        "failed for id:verysecret with AKIAXYZ at postgresql://user:pw@db/cat and "
        "https://b.s3/x?X-Amz-Signature=abc123&part=1; following properties: {'credential': 'id:verysecret'}"
    )
    out = redact(text, props)
    for secret in ("verysecret", "AKIAXYZ", "user:pw", "abc123"):
        assert secret not in out
    assert "postgresql://***@db/cat" in out and "part=1" in out


def test_relative_paths_resolve_against_the_config_directory(tmp_path: Path) -> None:
    props = resolve_properties(
        {"type": "sql", "uri": "sqlite:///lake/catalog.db", "warehouse": "lake/wh", "init_catalog_tables": False},
        tmp_path,
    )
    assert props["uri"] == f"sqlite:///{tmp_path / 'lake' / 'catalog.db'}"
    assert props["warehouse"] == (tmp_path / "lake" / "wh").as_uri()
    assert props["init_catalog_tables"] == "false"
    absolute = resolve_properties({"uri": "sqlite:////abs/c.db", "warehouse": "s3://bucket/wh"}, tmp_path)
    assert absolute == {"uri": "sqlite:////abs/c.db", "warehouse": "s3://bucket/wh"}
