"""``--engine opa`` against OPA servers that do not give a decision, or give too much of one.

Loopback stand-ins of tests/engine/test_engine_opa_server.py (OPA's REST API, evaluated by the OPA Go
engine), each changed in one way:

- it accepts the policy uploads but answers every query ``{}`` (undefined), as a replica the
  uploads never reached: ``check`` exits 2 and the gate denies, where the embedded engine decides;
- it answers a query with more than the 16 MiB an answer may hold, or drips its answer one byte at
  a time: the run stops with exit 2 and one clear line, after the 30 s deadline at the latest;
- it quotes the bearer token in a 400 answer, or the token is in the ``--opa-url`` path: no output
  shows it (nor a prefix of it longer than 8 characters).

Every run is the installed command in a subprocess (tests/cli.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.test_hostile_servers import assert_no_secret
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.engine.test_engine_opa_server import FakeOpa
from tests.recovery_repo import RecoveryRepo

pytest.importorskip(
    "opa_bindings",
    reason="the stand-in server evaluates with the OPA Go engine: "
    "pip install --ignore-requires-python opa-golib-python-bindings==0.4.4",
)

TOKEN = "opa-tok-7Hq2Lx9Vd4Kp1Zs8"  # what STREAMWARDEN_OPA_TOKEN holds
ENV = {"STREAMWARDEN_OPA_TOKEN": TOKEN}


class UndefinedOpa(FakeOpa):
    """Takes the uploads, answers every query ``{}``: no decision."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                self.body()
                self.reply(200, {})

        return Handler


class HugeOpa(FakeOpa):
    """Answers a query with 40 MiB (more than an answer may hold), written as it is read."""

    SIZE = 40 * 1024 * 1024

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()
        fake = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                self.body()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(fake.SIZE))
                self.end_headers()
                chunk = b"x" * (1024 * 1024)
                try:
                    for _ in range(fake.SIZE // len(chunk)):
                        self.wfile.write(chunk)
                except OSError:
                    fake.cut = True  # the client stopped reading

        return Handler

    cut = False


class DrippingOpa(FakeOpa):
    """Answers a query one byte every 2 s: 200 bytes would take 400 s."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                self.body()
                body = b'{"result": ' + b" " * 186 + b"[]}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(2)
                except OSError:
                    pass

        return Handler


class TokenQuotingOpa(FakeOpa):
    """Refuses every query with a 400 that quotes the token it was sent."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                self.body()
                sent = str(self.headers.get("Authorization") or "").removeprefix("Bearer ")
                self.reply(
                    400,
                    {
                        "code": "invalid_parameter",
                        "message": f"client {sent} may not query this path",
                        "errors": [{"code": "rego_type_error", "message": f"token {sent} rejected"}],
                    },
                )

        return Handler


def _serve(cls: type[FakeOpa]) -> Iterator[FakeOpa]:
    with cls() as server:
        yield server


@pytest.fixture(scope="module")
def undefined_opa() -> Iterator[FakeOpa]:
    """One server for the module: the first run uploads the policies, the next find them there."""
    yield from _serve(UndefinedOpa)


@pytest.fixture(scope="module")
def token_quoting_opa() -> Iterator[FakeOpa]:
    yield from _serve(TokenQuotingOpa)


def _repo(root: Path) -> Path:
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(
        CLEAN_CONTRACT.replace("num_retained: 3", "num_retained: 1"),  # SW-CKPT-006 fires
        encoding="utf-8",
    )
    return root


def _check(root: Path, url: str, *args: str, timeout: float = 120) -> Proc:
    return sw(
        "check", "--no-cache", "--now", NOW, "--engine", "opa", "--opa-url", url, *args, cwd=root, env=ENV,
        timeout=timeout,
    )  # fmt: skip


# ----------------------------------------------------------------------------- undefined decisions


def test_check_exits_2_when_the_server_gives_no_decision(tmp_path: Path, undefined_opa: FakeOpa) -> None:
    root = _repo(tmp_path / "repo")
    decided = sw("check", "--no-cache", "--now", NOW, "--format", "json", cwd=root)
    assert decided.code == 0 and decided.json()["findings"], decided  # the embedded engine finds something
    for fmt in ("text", "json"):
        p = _check(root, undefined_opa.url, "--format", fmt)
        assert p.code == 2, p
        assert f"the OPA server at {undefined_opa.url} gave no decision for pipeline 'orders-enrichment'" in p.stderr
        assert "an undefined decision is not an empty one" in p.stderr
    # the policies were uploaded: the server accepted them and answered undefined anyway
    assert any(pid.startswith("streamwarden/") for pid in undefined_opa.policies)


def test_the_gate_denies_when_the_server_gives_no_decision(tmp_path: Path, undefined_opa: FakeOpa) -> None:
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 20)
    common = ("orders-enrichment", "--env", "prod", "--config", str(repo.root / "streamwarden.yaml"))
    common += ("--now", repo.now_arg())
    good, bad = repo.savepoint(20), repo.root / "not-a-savepoint"
    bad.mkdir()
    allowed = sw("gate", *common, "--restore-from", str(good), "--format", "json", cwd=repo.root)
    assert allowed.code == 0 and allowed.json()["decision"] == "allow", allowed
    opa = ("--engine", "opa", "--opa-url", undefined_opa.url)
    for target, fmt in ((good, "json"), (bad, "json"), (good, "text"), (bad, "markdown")):
        p = sw("gate", *common, "--restore-from", str(target), *opa, "--format", fmt, cwd=repo.root, env=ENV)
        assert p.code == 1, p
        if fmt == "json":
            doc = p.json()
            assert doc["decision"] == "deny" and doc["reasons"] == []
            assert "gave no decision" in doc["undecided"] and "not an empty one" in doc["undecided"]
        elif fmt == "text":
            assert p.stdout.startswith("gate: DENY") and "✗ no decision: the OPA server at" in p.stdout, p
        else:
            assert "the policies gave no decision; the gate fails closed" in p.stdout, p
    record = sw("evidence", *common, "--restore-from", str(good), "--engine", "opa", "--opa-url", undefined_opa.url,
                "--format", "json", cwd=repo.root, env=ENV)  # fmt: skip
    assert record.code == 0, record  # the record was written; its verdict is the gate's
    assert record.json()["verdict"]["decision"] == "deny" and record.json()["verdict"]["undecided"]


# ----------------------------------------------------------------------------- bounded answers


def test_an_answer_larger_than_the_cap_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    for server in _serve(HugeOpa):
        p = _check(root, server.url)
        assert p.code == 2, p
        assert f"{server.url}/v1/data/streamwarden_opa_engine/results answered more than 16 MiB" in p.stderr
        assert "refusing to read it" in p.stderr


def test_a_dripping_answer_ends_at_the_deadline(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    for server in _serve(DrippingOpa):
        # the answer would take 400 s; the deadline covers the whole body (30 s), not one read
        p = _check(root, server.url, timeout=100)
        assert p.code == 2, p
        assert f"no whole answer from {server.url}/v1/data/streamwarden_opa_engine/results within 30s" in p.stderr


# ----------------------------------------------------------------------------- the token


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_400_answer_that_quotes_the_token_never_shows_it(
    tmp_path: Path, token_quoting_opa: FakeOpa, fmt: str
) -> None:
    root = _repo(tmp_path / "repo")
    p = _check(root, token_quoting_opa.url, "--format", fmt)
    assert p.code == 2, p
    assert "answered HTTP 400: client *** may not query this path" in p.stderr
    assert_no_secret(p.output, TOKEN)


def test_a_token_in_the_url_path_is_never_shown(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    for server in _serve(FakeOpa):  # serves /v1 only: a prefix path answers 404
        url = f"{server.url}/{TOKEN}"
        for args in (("--engine", "opa", "--opa-url", url), ("--engine", "opa")):
            env = {**ENV, "STREAMWARDEN_OPA_URL": url}
            p = sw("check", "--no-cache", "--now", NOW, *args, cwd=root, env=env)
            assert p.code == 2, p
            assert f"the OPA server at {server.url}/***" in p.stderr and "answered HTTP 404" in p.stderr
            assert_no_secret(p.output, TOKEN)
