"""Secrets of an Iceberg REST catalog and of a savepoint URI through the real CLI: an OAuth error
that quotes the client secret, a catalog that echoes a token kept in its URL path, a file: URI
with user:password@. No secret, nor a prefix of it longer than 8 characters, on stdout or stderr
of any format, of ``facts``, of ``gate`` or of ``savepoint inspect``."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from tests.acceptance.test_hostile_servers import REPORT_FORMATS, assert_no_secret
from tests.cli import Proc, sw

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

CLIENT_SECRET = "cs-Q7wE9rT2yU4iO6pA8sD0"
PATH_TOKEN = "tok3nAbcdef0123456789XYZ"
PASSWORD = "pw-Zq81XkLm0vB7nC4x"

CONTRACT = textwrap.dedent(
    """\
    apiVersion: streamwarden/v1
    kind: PipelineContract
    metadata: {name: orders, owner: payments-data}
    job: {name: orders}
    table: {catalog: lake, identifier: sales.orders}
    """
)


class _Catalog(BaseHTTPRequestHandler):
    """An Iceberg REST catalog that refuses the client credentials quoting them, and answers any
    other request with a 404 that echoes the path it was asked for."""

    posted: ClassVar[list[bytes]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.posted.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self._reply(
            401,
            {
                "error": "invalid_client",
                "error_description": f"secret {CLIENT_SECRET} is not valid (credential client-id:{CLIENT_SECRET})",
            },
        )

    def do_GET(self) -> None:
        self._reply(404, {"error": {"message": f"no route for {self.path}", "type": "NotFoundException", "code": 404}})

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def catalog_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Catalog)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def project(tmp_path: Path, lake: dict[str, str]) -> Path:
    (tmp_path / "contracts").mkdir(exist_ok=True)
    (tmp_path / "contracts" / "orders.yaml").write_text(CONTRACT, encoding="utf-8")
    config = {
        "contracts": ["contracts/*.yaml"],
        "environments": {"prod": {"iceberg": {"catalogs": {"lake": lake}}}},
    }
    (tmp_path / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return tmp_path


def outputs(cwd: Path) -> Iterator[tuple[str, Proc]]:
    env = {"ICEBERG_CREDENTIAL": f"client-id:{CLIENT_SECRET}"}
    for fmt in REPORT_FORMATS:
        yield fmt, sw("check", "--env", "prod", "--format", fmt, cwd=cwd, env=env)
    yield "facts", sw("facts", "orders", "--env", "prod", cwd=cwd, env=env)


def fact_001(p: Proc) -> str:
    found = [f["message"] for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert found, p
    return str(found[0])


def test_an_oauth_error_quoting_the_client_secret_is_scrubbed(tmp_path: Path, catalog_url: str) -> None:
    """PyIceberg's OAuthError quotes the server's error_description, which quoted the secret: the
    redaction replaced only the whole ``client-id:secret`` value, and the secret alone went out."""
    cwd = project(tmp_path, {"type": "rest", "uri": catalog_url, "credential": "${ICEBERG_CREDENTIAL}"})
    for fmt, p in outputs(cwd):
        assert p.code in (0, 1), (fmt, p)
        assert_no_secret(p.output, CLIENT_SECRET, f"client-id:{CLIENT_SECRET}")
        if fmt == "json":
            assert "catalog 'lake' could not be opened: OAuthError: invalid_client" in fact_001(p)
    assert f"client_secret={CLIENT_SECRET}".encode() in _Catalog.posted[-1]  # the configured secret was used


def test_a_token_in_the_rest_url_path_is_scrubbed(tmp_path: Path, catalog_url: str) -> None:
    """A catalog URL that carries a token in its path (``https://host/<token>/``): the catalog's
    404 echoed the path, and so the token, into SW-FACT-001."""
    cwd = project(tmp_path, {"type": "rest", "uri": f"{catalog_url}/{PATH_TOKEN}/"})
    for fmt, p in outputs(cwd):
        assert p.code in (0, 1), (fmt, p)
        assert_no_secret(p.output, PATH_TOKEN)
        if fmt == "json":
            assert "catalog 'lake' could not be opened" in fact_001(p)


@pytest.mark.parametrize("command", ["gate", "inspect"])
def test_a_savepoint_uri_with_user_and_password_is_never_printed(tmp_path: Path, command: str) -> None:
    """``file://admin:<password>@host/...`` was refused naming the URI's netloc, password included."""
    cwd = project(tmp_path, {"type": "sql", "uri": "sqlite:///lake/catalog.db"})
    location = f"file://admin:{PASSWORD}@backup-host/savepoints/savepoint-4d986c-aaaaaaaaaaaa"
    for fmt in ("text", "json"):
        if command == "gate":
            p = sw("gate", "orders", "--env", "prod", "--restore-from", location, "--format", fmt, cwd=cwd)
        else:
            p = sw("savepoint", "inspect", location, "--format", fmt, cwd=cwd)
        assert p.code in (1, 2), p
        assert_no_secret(p.output, PASSWORD)
        assert "backup-host" in p.output, p
