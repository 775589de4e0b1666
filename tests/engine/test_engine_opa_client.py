"""``--engine opa`` goes through opa-python-client on the transport streamwarden puts under it
(engine/opa_http.py). What that transport promises, against loopback servers:

- a redirect is refused, never followed: a second listener, the redirect's target, receives
  nothing (so neither the token nor the input document reaches it);
- one attempt per request: a server that answers 502 is asked once, and a server that never
  answers is connected to once and ends the run at the 30 s deadline (a retry would start a
  second one; the subprocess timeout is the guard);
- TLS is verified against the system's CAs, where ``SSL_CERT_FILE`` or ``REQUESTS_CA_BUNDLE``
  names a private CA, and the certificate must name the host;
- without the client installed, ``--engine opa`` says what to install (exit 2);
- a static ``check`` imports neither the client nor its HTTP stack.

Every run is the installed command in a subprocess (tests/cli.py).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.test_hostile_servers import assert_no_secret
from tests.cli import Proc, sw
from tests.conftest import NOW
from tests.engine.test_engine_opa_hostile import ENV, TOKEN, _check, _repo
from tests.engine.test_engine_opa_server import FakeOpa

pytest.importorskip(
    "opa_bindings",
    reason="the stand-in server evaluates with the OPA Go engine: "
    "pip install --ignore-requires-python opa-golib-python-bindings==0.4.4",
)


class Recorder:
    """A loopback listener that records every request it receives (method, path, headers)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> None:
                seen.append((self.command, self.path, dict(self.headers.items())))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_PUT = do_POST = do_DELETE = _record

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class RedirectingOpa(FakeOpa):
    """OPA's API, except that requests of the ``methods`` are answered 307 to ``target``."""

    def __init__(self, target: str, methods: tuple[str, ...]) -> None:
        self.target = target
        self.methods = methods
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()
        fake = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def redirect(self) -> None:
                self.body()
                fake.requests.append((self.command, self.path, 307))
                self.send_response(307)
                self.send_header("Location", fake.target + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self.redirect() if "GET" in fake.methods else super().do_GET()

            def do_POST(self) -> None:
                self.redirect() if "POST" in fake.methods else super().do_POST()

        return Handler


class BadGatewayOpa(FakeOpa):
    """Answers every request 502, as a proxy in front of an OPA that is down."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_GET(self) -> None:
                self.reply(502, {"code": "bad_gateway", "message": "upstream is down"})

        return Handler


class SilentServer:
    """Accepts connections and never answers; counts the connections."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)  # held open, never read from nor written to

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()


# ----------------------------------------------------------------------------- redirects


@pytest.mark.parametrize(
    ("methods", "asked"),
    [
        (("GET",), "/v1/policies"),  # the first request: the policy list
        (("POST",), "/v1/data/streamwarden_opa_engine/results"),  # the query, carrying the input document
    ],
    ids=["policy-list", "query"],
)
def test_a_redirect_is_refused_and_its_target_receives_nothing(
    tmp_path: Path, methods: tuple[str, ...], asked: str
) -> None:
    root = _repo(tmp_path / "repo")
    target = Recorder()
    try:
        with RedirectingOpa(target.url, methods) as server:
            p = _check(root, server.url)
            assert (methods[0], asked, 307) in server.requests  # the server did redirect
        assert target.seen == []  # not followed: neither the token nor the input reached the target
        assert p.code == 2, p
        assert f"{server.url}{asked} answered HTTP 307, a redirect; redirects are not followed" in p.stderr
        assert_no_secret(p.output, TOKEN)
        # the listener records what reaches it (the assertion above could fail)
        with urllib.request.urlopen(f"{target.url}/probe", timeout=10) as resp:
            assert resp.status == 200
        assert [(m, path) for m, path, _ in target.seen] == [("GET", "/probe")]
    finally:
        target.close()


# ----------------------------------------------------------------------------- one attempt


def test_a_server_error_is_not_retried(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    with BadGatewayOpa() as server:
        p = _check(root, server.url)
    assert server.requests == [("GET", "/v1/policies", 502)]  # asked once
    assert p.code == 2, p
    assert f"{server.url}/v1/policies answered HTTP 502: upstream is down" in p.stderr


def test_a_server_that_never_answers_ends_the_run_at_the_deadline_once(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    server = SilentServer()
    try:
        # the deadline is 30 s; a second attempt would need 30 s more than this timeout allows
        p = _check(root, server.url, timeout=55)
    finally:
        server.close()
    assert len(server.accepted) == 1  # one connection: no retry
    assert p.code == 2, p
    assert f"cannot reach the OPA server at {server.url}: no whole answer from {server.url}/v1/policies within 30s" in (
        p.stderr
    )


# ----------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (and no other name), made by openssl."""
    if not (openssl := shutil.which("openssl")):
        pytest.skip("needs the openssl command to make a certificate")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@pytest.fixture(scope="module")
def tls_opa(certificate: tuple[Path, Path]) -> Iterator[FakeOpa]:
    cert, key = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = FakeOpa()
    server.server.socket = context.wrap_socket(server.server.socket, server_side=True)
    server.url = server.url.replace("http://", "https://")
    with server:
        yield server


@pytest.fixture
def no_ca_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)


def _tls_check(root: Path, url: str, **env: str) -> Proc:
    return sw(
        "check", "--no-cache", "--now", NOW, "--format", "json", "--engine", "opa", "--opa-url", url,
        cwd=root, env={**ENV, **env},
    )  # fmt: skip


@pytest.mark.usefixtures("no_ca_settings")
def test_tls_is_verified_against_the_ca_the_environment_names(
    tmp_path: Path, tls_opa: FakeOpa, certificate: tuple[Path, Path]
) -> None:
    root = _repo(tmp_path / "repo")
    cert = str(certificate[0])
    untrusted = _tls_check(root, tls_opa.url)
    assert untrusted.code == 2, untrusted
    assert f"cannot reach the OPA server at {tls_opa.url}: TLS error talking to {tls_opa.url}:" in untrusted.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted.stderr
    assert not any(r[0] == "POST" for r in tls_opa.requests)  # nothing was asked over it
    for setting in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        trusted = _tls_check(root, tls_opa.url, **{setting: cert})
        assert trusted.code == 0, (setting, trusted)
        assert "SW-CKPT-006" in {f["rule"] for f in trusted.json()["findings"]}, (setting, trusted)
    # the certificate names 127.0.0.1: the same server as localhost is refused, whatever the CA
    port = tls_opa.url.rsplit(":", 1)[1]
    other = _tls_check(root, f"https://localhost:{port}", REQUESTS_CA_BUNDLE=cert)
    assert other.code == 2, other
    assert "TLS error talking to https://localhost:" in other.stderr and "Hostname mismatch" in other.stderr


# ----------------------------------------------------------------------------- installation


def _without(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a process where ``module`` cannot be imported (as where it is not installed)."""
    code = (
        f"import runpy, sys\nsys.modules[{module!r}] = None\nsys.argv = ['streamwarden', *sys.argv[1:]]\n"
        "runpy.run_module('streamwarden.cli', run_name='__main__')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip


def test_engine_opa_without_the_client_says_what_to_install(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    for module in ("opa_client", "requests", "aiohttp"):
        p = _without(module, "check", "--no-cache", "--engine", "opa", "--opa-url", "http://127.0.0.1:9", cwd=root)
        assert p.returncode == 2, (module, p.stdout, p.stderr)
        assert "--engine opa needs the OPA client (opa-python-client), which is not installed" in p.stderr
        assert "pip install 'streamwarden[opa]'" in p.stderr and "Traceback" not in p.stderr


def test_a_static_check_imports_neither_the_client_nor_its_http_stack(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    out = tmp_path / "modules.json"
    stacks = ("opa_client", "requests", "urllib3", "aiohttp")
    code = (
        "import atexit, json, runpy, sys\n"
        f"def report():\n    json.dump(sorted({{m.split('.')[0] for m in sys.modules}} & set({stacks!r})), "
        f"open({str(out)!r}, 'w'))\n"
        "atexit.register(report)\nsys.argv = ['streamwarden', 'check', '--no-cache', '--now', sys.argv[1]]\n"
        "runpy.run_module('streamwarden.cli', run_name='__main__')\n"
    )
    p = subprocess.run([sys.executable, "-c", code, NOW], cwd=root, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text()) == []
    # the probe sees them where they are imported: the OPA engine's run
    probe = code.replace("runpy.run_module", "import streamwarden.engine.opa_server\nrunpy.run_module")
    subprocess.run([sys.executable, "-c", probe, NOW], cwd=root, capture_output=True, timeout=120, check=False)
    assert set(json.loads(out.read_text())) >= {"opa_client", "requests", "urllib3"}
