"""``--engine opa``: the policies pushed to an OPA server and queried there give the same findings
as the embedded regorus engine.

Two servers:
- a real ``opa run --server`` when the ``opa`` binary is on PATH (the GitHub workflow installs it)
  or STREAMWARDEN_TEST_OPA_URL points at one; skipped with that reason otherwise;
- a stand-in that speaks OPA's REST API (the policy, data and query endpoints the engine uses)
  and evaluates with the OPA Go engine itself (opa-golib-python-bindings), so the HTTP protocol
  and the findings are checked on every machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from tests.conftest import NOW, REPO
from tests.reporting import EXAMPLES
from tests.reporting import run_check as cli_check

from streamwarden.check.options import RunOptions
from streamwarden.check.run import run_check
from streamwarden.contracts.config import Config
from streamwarden.core.errors import PolicyError, UsageError
from streamwarden.engine import load_policy_set, make_engine
from streamwarden.engine.opa_server import (
    ENV_URL,
    POLICY_PREFIX,
    OpaServerEngine,
    dependency_order,
    parse_url,
    policy_id,
)

NOW_MS = 1795608000000  # NOW as epoch ms


class FakeOpa:
    """OPA's REST API for policies, data and queries, evaluated by the OPA Go engine."""

    def __init__(self) -> None:
        self.policies: dict[str, str] = {}
        self.data: dict[str, Any] = {}
        self.requests: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()
        self.engine: Any = None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def compile(self, policies: dict[str, str], data: dict[str, Any]) -> tuple[Any, str | None]:
        from opa_bindings import OpaEngine, OpaError

        engine = OpaEngine()
        try:
            for pid, source in policies.items():
                engine.add_policy(pid, source)
            for key, value in data.items():
                engine.add_data(value, key)
            engine.eval_query("x := 1")  # compiles every module
        except OpaError as exc:
            engine.close()
            return None, exc.message
        return engine, None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def reply(self, status: int, body: Any = None) -> None:
                fake.requests.append((self.command, self.path, status))
                raw = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def route(self) -> tuple[str, str]:
                path = unquote(urlsplit(self.path).path)
                for prefix in ("/v1/policies", "/v1/data"):
                    if path == prefix or path.startswith(prefix + "/"):
                        return prefix, path[len(prefix) :].strip("/")
                return path, ""

            def do_GET(self) -> None:
                kind, rest = self.route()
                if kind == "/health":
                    return self.reply(200, {})
                if kind == "/v1/policies" and not rest:
                    return self.reply(200, {"result": [{"id": k, "raw": v} for k, v in fake.policies.items()]})
                if kind == "/v1/policies" and rest in fake.policies:
                    return self.reply(200, {"result": {"id": rest, "raw": fake.policies[rest]}})
                return self.reply(404, {"code": "resource_not_found", "message": f"storage_not_found_error: {rest}"})

            def change(self, policies: dict[str, str], data: dict[str, Any], ok: int) -> None:
                engine, error = fake.compile(policies, data)
                if error is not None:
                    return self.reply(
                        400,
                        {
                            "code": "invalid_parameter",
                            "message": "error(s) occurred while compiling module(s)",
                            "errors": [{"code": "rego_compile_error", "message": error}],
                        },
                    )
                fake.policies, fake.data, fake.engine = policies, data, engine
                return self.reply(ok, {} if ok == 200 else None)

            def do_PUT(self) -> None:
                kind, rest = self.route()
                with fake.lock:
                    if kind == "/v1/policies":
                        return self.change({**fake.policies, rest: self.body().decode()}, fake.data, 200)
                    if kind == "/v1/data":
                        return self.change(
                            fake.policies, {**fake.data, rest.replace("/", "."): json.loads(self.body())}, 204
                        )
                return self.reply(404, {})

            def do_DELETE(self) -> None:
                kind, rest = self.route()
                with fake.lock:
                    if kind == "/v1/policies" and rest in fake.policies:
                        return self.change({k: v for k, v in fake.policies.items() if k != rest}, fake.data, 200)
                return self.reply(404, {"code": "resource_not_found", "message": rest})

            def do_POST(self) -> None:
                kind, rest = self.route()
                doc = json.loads(self.body() or b"{}")
                if kind != "/v1/data" or fake.engine is None:
                    return self.reply(404, {})
                rows = fake.engine.eval_query(f"x := data.{rest.replace('/', '.')}", doc.get("input"))
                return self.reply(200, {"result": rows[0]["x"]} if rows else {})

        return Handler

    def __enter__(self) -> FakeOpa:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _stand_in() -> Iterator[FakeOpa]:
    pytest.importorskip(
        "opa_bindings",
        reason="the stand-in server evaluates with the OPA Go engine: "
        "pip install --ignore-requires-python opa-golib-python-bindings==0.4.4",
    )
    with FakeOpa() as server:
        yield server


@pytest.fixture
def fake_opa() -> Iterator[FakeOpa]:
    """A fresh server for tests that change what it holds."""
    yield from _stand_in()


@pytest.fixture(scope="module")
def shared_opa() -> Iterator[FakeOpa]:
    """One server for the comparisons: the first loads the policies, the next finds them there."""
    yield from _stand_in()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def real_opa() -> Iterator[str]:
    url = os.environ.get("STREAMWARDEN_TEST_OPA_URL")
    if url:
        yield url
        return
    opa = shutil.which("opa")
    if opa is None:
        pytest.skip(
            "needs a running OPA: no `opa` binary on PATH and STREAMWARDEN_TEST_OPA_URL is not set "
            "(the GitHub workflow installs OPA; this machine cannot download it)"
        )
    port = _free_port()
    proc = subprocess.Popen([opa, "run", "--server", "--addr", f"127.0.0.1:{port}", "--log-level", "error"])
    try:
        import urllib.request

        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("opa run --server did not become healthy") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def findings_with(engine: str, monkeypatch: pytest.MonkeyPatch, url: str | None = None) -> list[tuple[Any, ...]]:
    if url:
        monkeypatch.setenv(ENV_URL, url)
    result = run_check(Config(root=REPO), RunOptions(paths=EXAMPLES, engine=engine, now_ms=NOW_MS))
    assert not result.errors, [e.render() for e in result.errors]
    return [
        (f.pipeline, f.rule, f.severity, f.path, f.file, f.line, f.message, f.fingerprint, f.waived)
        for f in result.findings
    ]


def test_the_opa_engine_gives_the_same_findings_as_regorus(
    shared_opa: FakeOpa, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = findings_with("regorus", monkeypatch)
    assert expected, "the examples must produce findings for the comparison to mean something"
    shared_opa.requests.clear()
    assert findings_with("opa", monkeypatch, shared_opa.url) == expected
    queries = [r for r in shared_opa.requests if r[0] == "POST"]
    assert len(queries) == 4  # one query per contract: every deny/warn/info set at once


def test_cli_check_with_engine_opa_prints_the_same_report(shared_opa: FakeOpa) -> None:
    regorus = cli_check(*EXAMPLES, "--format", "json")
    opa = cli_check(*EXAMPLES, "--format", "json", "--engine", "opa", "--opa-url", shared_opa.url)
    assert opa.exit_code == regorus.exit_code == 1, (regorus.stderr, opa.stderr)
    assert json.loads(opa.stdout) == json.loads(regorus.stdout)


def test_the_server_holds_exactly_the_policy_set_and_unchanged_files_are_not_pushed_again(shared_opa: FakeOpa) -> None:
    ps = load_policy_set()
    shared_opa.policies["streamwarden/policies/old_area.rego"] = "package streamwarden.old_area\n"
    shared_opa.policies["team/own.rego"] = "package team.own\n"  # not ours: left alone
    OpaServerEngine(ps, shared_opa.url)
    ours = {k for k in shared_opa.policies if k.startswith(POLICY_PREFIX)}
    assert ours == {policy_id(f.display) for f in ps.runtime_files} | {POLICY_PREFIX + "_engine/entrypoints.rego"}
    assert "team/own.rego" in shared_opa.policies
    assert shared_opa.data["catalog"]["rule_ids"] == sorted(ps.known_ids)
    shared_opa.requests.clear()
    OpaServerEngine(ps, shared_opa.url)
    assert [r for r in shared_opa.requests if r[0] in ("PUT", "DELETE") and "/policies/" in r[1]] == []


def test_a_policy_that_does_not_compile_on_opa_is_a_policy_error_naming_the_file(
    fake_opa: FakeOpa, tmp_path: Path
) -> None:
    rego = (
        'package acme\n\nimport rego.v1\n\ndeny contains {"rule": "ACME-1", "message": m} if m := no_such_function(1)\n'
    )
    (tmp_path / "acme.rego").write_text(rego, encoding="utf-8")
    ps = load_policy_set([tmp_path], builtin=False, root=tmp_path)
    with pytest.raises(PolicyError) as info:
        OpaServerEngine(ps, fake_opa.url)
    assert info.value.file == "acme.rego"
    assert "does not compile on OPA" in info.value.message and "no_such_function" in info.value.message


def test_engine_opa_without_a_url_or_with_an_unreachable_one_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_URL, raising=False)
    missing = cli_check(*EXAMPLES, "--engine", "opa")
    assert missing.exit_code == 2 and "needs the URL of an OPA server" in missing.stderr
    down = cli_check(*EXAMPLES, "--engine", "opa", "--opa-url", f"http://127.0.0.1:{_free_port()}")
    assert down.exit_code == 2 and "cannot reach the OPA server" in down.stderr
    assert "Traceback" not in down.output


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://localhost:8181", "http://localhost:8181"),
        ("https://opa.example.internal", "https://opa.example.internal"),
        ("http://gw:9000/opa/", "http://gw:9000/opa"),
        (" http://[::1]:8181/ ", "http://[::1]:8181"),
    ],
)
def test_opa_urls_become_the_servers_base_url(url: str, expected: str) -> None:
    assert parse_url(url) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("localhost:8181", "is not an http(s) URL"),
        ("http://u:secret@opa:8181", "must not carry credentials"),
        ("http://opa:99999999", "is not an http(s) URL with a valid port"),
    ],
)
def test_bad_opa_urls_are_usage_errors(url: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_url(url)


def test_policy_ids_are_url_safe_and_namespaced() -> None:
    assert policy_id("policies/streamwarden/checkpoint.rego") == "streamwarden/policies/streamwarden/checkpoint.rego"
    assert policy_id("/abs/my policies/../x.rego") == "streamwarden/abs/my_policies/_/x.rego"


def test_modules_are_pushed_after_the_packages_they_import() -> None:
    modules = {
        "streamwarden/a.rego": "package acme.a\nimport data.acme.lib\n",
        "streamwarden/lib.rego": "package acme.lib\n",
        "streamwarden/z.rego": "package acme.z\nimport data.acme.a.rule\n",
        "streamwarden/cycle1.rego": "package acme.c1\nimport data.acme.c2\n",
        "streamwarden/cycle2.rego": "package acme.c2\nimport data.acme.c1\n",
    }
    order = dependency_order(modules)
    assert sorted(order) == sorted(modules)
    assert (
        order.index("streamwarden/lib.rego") < order.index("streamwarden/a.rego") < order.index("streamwarden/z.rego")
    )


def test_make_engine_knows_opa_and_names_the_engines_on_a_typo() -> None:
    with pytest.raises(UsageError, match="unknown engine 'opa2'") as info:
        make_engine("opa2", load_policy_set(builtin=False))
    assert info.value.hint == "use one of: regorus, opa"


@pytest.mark.opa
def test_real_opa_server_gives_the_same_findings_as_regorus(real_opa: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = findings_with("regorus", monkeypatch)
    assert findings_with("opa", monkeypatch, real_opa) == expected
    # a second run against the same server (policies already there) agrees too
    assert findings_with("opa", monkeypatch, real_opa) == expected


def test_now_constant_matches_the_shared_now() -> None:
    from streamwarden.cli.common import parse_now

    assert parse_now(NOW) == NOW_MS


def test_a_lone_surrogate_is_refused_as_the_embedded_engine_refuses_it(shared_opa: FakeOpa) -> None:
    # An OPA server would read "\udc80" (JSON's escape of a lone surrogate) as U+FFFD and evaluate
    # an altered text; the embedded engine refuses it. Both engines give the same InputError, and
    # the document never reaches the server.
    from streamwarden.core.errors import InputError
    from streamwarden.engine.regorus_engine import RegorusEngine

    doc = {
        "contract": {"metadata": {"name": "orders-enrichment"}},
        "base": None,
        "facts": {"flink": {"configured": True, "available": False, "error": "refused by \udc80server"}},
        "now_ms": 0,
        "environment": None,
        "mode": "check",
    }

    def refusal(engine: Any) -> dict[str, object]:
        # the error as data, not pytest.raises: its traceback would hold the regorus engine in a
        # cycle, which the collector may then free on the stand-in server's thread (regorus
        # engines may only be dropped on the thread that made them)
        try:
            engine.evaluate(doc)
        except InputError as exc:
            return exc.to_dict()
        raise AssertionError(f"{engine.name} evaluated a lone surrogate")

    ps = load_policy_set()
    opa_engine = OpaServerEngine(ps, shared_opa.url)
    shared_opa.requests.clear()
    opa = refusal(opa_engine)
    assert [r for r in shared_opa.requests if r[0] == "POST"] == []
    assert opa == refusal(RegorusEngine(ps))
    assert "not valid Unicode (at input.facts.flink.error)" in str(opa["message"])


def test_check_engine_opa_reads_a_servers_lone_surrogate_as_regorus_does(shared_opa: FakeOpa, tmp_path: Path) -> None:
    # a Flink REST answer with JSON's escape of a lone surrogate in a vertex name, through the CLI:
    # the gatherer reads it as U+FFFD (serverhttp.loads_server_json), so neither engine has an
    # invalid document to refuse, and both give the same findings (it was exit 2 for both)
    from tests.acceptance.test_hostile_servers import project, run
    from tests.fake_flink import JID, fake_flink, job

    with fake_flink() as fake:
        details = job()
        details["vertices"][0]["name"] = "Source: \udc80kafka"
        fake.routes[f"/jobs/{JID}"] = (200, details)
        cwd = project(tmp_path, fake)
        regorus = run("check", "--env", "prod", "--format", "json", cwd=cwd)
        opa = run("check", "--env", "prod", "--format", "json", "--engine", "opa", "--opa-url", shared_opa.url, cwd=cwd)
    assert regorus.code == opa.code and regorus.code in (0, 1), (regorus, opa)
    assert sorted(f["rule"] for f in opa.json()["findings"]) == sorted(f["rule"] for f in regorus.json()["findings"])
    assert "not valid Unicode" not in opa.output + regorus.output
    assert "internal error" not in opa.output
