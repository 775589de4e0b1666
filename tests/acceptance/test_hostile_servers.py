"""Hostile servers through the real CLI: a Flink REST API (tests/fake_flink.py) that echoes the
token, copies credentials into job names and exception texts, drips its answer a byte at a time,
nests JSON 200,000 deep, answers the wrong shape or lists 5,000 vertices. Every case ends with
exit 0/1, SW-FACT-001 or the facts it could read, one clear line, no traceback, and no secret (nor
a prefix of it longer than 8 characters) on stdout or stderr in any format."""

from __future__ import annotations

import gzip
import json
import textwrap
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import Proc, sw
from tests.fake_flink import BACKPRESSURE, JID, VID, FakeFlink, fake_flink, job, overview

from streamwarden.report import FORMATS as REPORT_FORMATS

TOKEN = "tok-9f8e7d6c5b4a39281706"  # the bearer token the environment gives
PASSWORD = "pw-Zq81XkLm0vB7nC4x"  # a password some server puts in a URL

CONTRACT = textwrap.dedent(
    """\
    apiVersion: streamwarden/v1
    kind: PipelineContract
    metadata: {name: orders, owner: payments-data}
    job: {name: orders}
    """
)


def assert_no_secret(text: str, *secrets: str) -> None:
    """Neither a secret nor any prefix of it longer than 8 characters occurs in ``text``."""
    for secret in secrets:
        for n in range(9, len(secret) + 1):
            assert secret[:n] not in text, f"{secret[:n]!r} leaked:\n{text}"


def project(tmp_path: Path, fake: FakeFlink, **flink: Any) -> Path:
    (tmp_path / "contracts").mkdir(exist_ok=True)
    (tmp_path / "contracts" / "orders.yaml").write_text(CONTRACT, encoding="utf-8")
    env = {
        "rest_url": fake.url,
        "timeout": "2s",
        "retries": 0,
        "auth": {"bearer_token_env": "FLINK_TOKEN"},
        **flink,
    }
    config = {"contracts": ["contracts/*.yaml"], "environments": {"prod": {"flink": env}}}
    (tmp_path / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return tmp_path


def run(*args: str, cwd: Path, timeout: float = 120) -> Proc:
    return sw(*args, cwd=cwd, env={"FLINK_TOKEN": TOKEN}, timeout=timeout)


def every_output(cwd: Path) -> Iterator[tuple[str, Proc]]:
    """``check --env prod`` in every report format, then ``facts --env prod``."""
    for fmt in REPORT_FORMATS:
        yield fmt, run("check", "--env", "prod", "--format", fmt, "--verbose", cwd=cwd)
    yield "facts", run("facts", "orders", "--env", "prod", cwd=cwd)


def fact_001(p: Proc) -> str:
    """The SW-FACT-001 message of a json report."""
    found = [f for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert found, p
    return str(found[0]["message"])


@pytest.fixture
def fake() -> Iterator[FakeFlink]:
    with fake_flink() as f:
        yield f


# ----------------------------------------------------------------------------- no secret out


@pytest.mark.parametrize("where", ["flink_errors_300", "snippet_120"])
def test_a_token_echoed_at_the_cut_of_an_error_body_never_shows(tmp_path: Path, fake: FakeFlink, where: str) -> None:
    """The message was cut (300 / 120 characters) before it was scrubbed: the echoed token lost
    its last character and so no longer matched. It is scrubbed first now."""
    if where == "flink_errors_300":
        pad = "x" * (300 - len("Authorization: Bearer ") - len(TOKEN) + 1)
        fake.routes["/jobs/overview"] = (500, {"errors": [f"{pad}Authorization: Bearer {TOKEN}"]})
    else:
        pad = "y" * (120 - len("header was ") - len(TOKEN) + 1)
        fake.routes["/jobs/overview"] = (500, f"{pad}header was {TOKEN}".encode(), {"Content-Type": "text/plain"})
    cwd = project(tmp_path, fake)
    for fmt, p in every_output(cwd):
        assert p.code in (0, 1), (fmt, p)
        assert_no_secret(p.output, TOKEN)
        if fmt == "json":
            assert "answered HTTP 500" in fact_001(p)
        if fmt == "facts":
            assert p.json()["facts"]["flink"]["available"] is False


def test_server_strings_in_the_facts_are_scrubbed(tmp_path: Path, fake: FakeFlink) -> None:
    """Job and vertex names, exception texts, tasks, failure labels and checkpoint paths come from
    the server: each passes the scrubber before it reaches the facts or a report."""
    details = job()
    details["vertices"][0]["name"] = f"Source: kafka (sasl.jaas.config password={PASSWORD})"
    fake.routes[f"/jobs/{JID}"] = (200, details)
    fake.routes["/jobs/overview"] = (
        200,
        overview((JID, "orders", "RUNNING", 1), ("0" * 32, f"backfill Bearer {TOKEN}", "RUNNING", 2)),
    )
    trace = f"java.io.IOException: Authorization: Bearer {TOKEN[:-2]}\n\tat x\nCaused by: s3://svc:{PASSWORD}@minio/b"
    entry = {
        "exceptionName": "java.io.IOException",
        "stacktrace": trace,
        "timestamp": 7,
        "taskName": f"Sink {TOKEN}",
        "failureLabels": {"credential": f"{TOKEN}", f"k-{TOKEN}": "v"},
    }
    fake.routes[f"/jobs/{JID}/exceptions"] = (200, {"exceptionHistory": {"entries": [entry], "truncated": False}})
    fake.routes[f"/jobs/{JID}/metrics"] = (
        200,
        [
            {"id": "numRestarts", "value": "1"},
            {"id": "lastCheckpointExternalPath", "value": f"s3://svc:{PASSWORD}@minio:9000/chk/{JID}/chk-3"},
        ],
    )
    cwd = project(tmp_path, fake)
    for fmt, p in every_output(cwd):
        assert p.code in (0, 1), (fmt, p)
        assert_no_secret(p.output, TOKEN, PASSWORD)
    flink = run("facts", "orders", "--env", "prod", cwd=cwd).json()["facts"]["flink"]
    assert flink["available"] is True and flink["job"]["vertices"][0]["name"].startswith("Source: kafka")
    assert flink["metrics"]["values"]["lastCheckpointExternalPath"].startswith("s3://***@minio:9000/chk/")
    assert flink["exceptions"]["entries"][0]["message"].startswith("java.io.IOException: Authorization: Bearer ***")


# ----------------------------------------------------------------------------- no stall, no exhaustion


def drip(h: BaseHTTPRequestHandler, status: int = 200) -> None:
    """Headers at once, then one byte every 0.5 s for at most 40 s (or until the client hangs up)."""
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "80")
    h.end_headers()
    body = b'{"jobs": [' + b" " * 69 + b"]}"
    end = time.monotonic() + 40
    for i in range(len(body)):
        if time.monotonic() > end:
            return
        try:
            h.wfile.write(body[i : i + 1])
            h.wfile.flush()
        except OSError:
            return
        time.sleep(0.5)


@pytest.mark.parametrize("status", [200, 500])
def test_a_server_that_drips_its_answer_is_cut_at_the_request_deadline(
    tmp_path: Path, fake: FakeFlink, status: int
) -> None:
    """``timeout`` bounds the whole answer, not each read: a byte every 0.5 s never let a 2 s
    socket timeout expire, and the run lasted as long as the server dripped. An error's body (500)
    too: the deadline was cancelled before it was read (~18 hours at a byte a second)."""
    fake.routes["/jobs/overview"] = lambda h: drip(h, status)
    cwd = project(tmp_path, fake)
    started = time.monotonic()
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    elapsed = time.monotonic() - started
    assert p.code in (0, 1), p
    assert elapsed < 20, f"the run took {elapsed:.1f}s with a 2s timeout"
    assert f"no answer from {fake.url}/jobs/overview within 2s" in fact_001(p)


def deep(h: BaseHTTPRequestHandler) -> None:
    raw = b"[" * 200_000
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(raw)))
    h.end_headers()
    h.wfile.write(raw)


@pytest.mark.parametrize("depth", [200_000, 100])
def test_json_nested_too_deep_is_unavailable(tmp_path: Path, fake: FakeFlink, depth: int) -> None:
    """200,000 ``[`` was a RecursionError (an internal error, exit 2); 100 levels of valid JSON
    parse, yet no Flink answer nests that deep: both are refused as SW-FACT-001."""
    if depth == 200_000:
        fake.routes["/jobs/overview"] = deep
    else:
        fake.routes["/jobs/overview"] = (200, {"jobs": [], "x": json.loads("[" * depth + "]" * depth)})
    cwd = project(tmp_path, fake)
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    assert p.code in (0, 1), p
    assert "answered JSON nested more than 64 deep" in fact_001(p)
    text = run("check", "--env", "prod", cwd=cwd)
    assert [ln for ln in text.output.splitlines() if "nested more than 64 deep" in ln][:1], text


def encoded(body: bytes, coding: str) -> Any:
    def write(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Encoding", coding)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return write


def test_a_compressed_answer_is_inflated_under_the_cap(tmp_path: Path, fake: FakeFlink) -> None:
    """A proxy that gzips Flink's answer: the compressed bytes were parsed as JSON and quoted in
    SW-FACT-001 as mojibake. They are inflated (the job is read); a gzip bomb past the size cap is
    refused once inflated, not inflated whole; a coding that is not read is named."""
    fake.routes["/jobs/overview"] = encoded(gzip.compress(json.dumps(overview()).encode()), "gzip")
    cwd = project(tmp_path, fake)
    facts = run("facts", "orders", "--env", "prod", cwd=cwd)
    assert facts.code == 0 and facts.json()["facts"]["flink"]["available"] is True, facts

    bomb = gzip.compress(b'{"jobs": [' + b" " * (80 * 1024 * 1024) + b"]}", compresslevel=9)
    fake.routes["/jobs/overview"] = encoded(bomb, "gzip")
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    assert p.code in (0, 1), p
    assert "once inflated; refusing to read it" in fact_001(p)

    fake.routes["/jobs/overview"] = encoded(b"\x28\xb5\x2f\xfd garbage", "zstd")
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    assert "answered with Content-Encoding zstd, which is not read" in fact_001(p)


@pytest.mark.parametrize("answer", [{}, {"jid": JID, "name": "orders", "state": 7, "vertices": "many"}, []])
def test_a_job_answer_of_the_wrong_shape_is_unavailable_not_a_policy_crash(
    tmp_path: Path, fake: FakeFlink, answer: Any
) -> None:
    """``/jobs/<jid>`` answering ``{}`` gave the policies a null state (``upper expects string
    argument``, exit 2). The gatherer checks the shape and reports SW-FACT-001."""
    fake.routes[f"/jobs/{JID}"] = (200, answer)
    cwd = project(tmp_path, fake)
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    assert p.code in (0, 1), p
    message = fact_001(p)
    assert f"/jobs/{JID} answered JSON of an unexpected shape" in message, message
    facts = run("facts", "orders", "--env", "prod", cwd=cwd)
    assert facts.code == 0 and facts.json()["facts"]["flink"]["available"] is False, facts


def test_the_fan_out_per_job_is_bounded(tmp_path: Path, fake: FakeFlink) -> None:
    """5,000 vertices made 5,007 requests (one backpressure call each). The vertices listed in the
    facts, and so the backpressure calls, are capped; the facts say so and give the count."""
    details = job()
    details["vertices"] = [
        {"id": f"{i:032x}", "name": f"v{i}", "maxParallelism": 128, "parallelism": 1, "status": "RUNNING"}
        for i in range(5000)
    ]
    fake.routes[f"/jobs/{JID}"] = (200, details)

    def backpressure(h: BaseHTTPRequestHandler) -> None:
        raw = json.dumps(BACKPRESSURE).encode()
        h.send_response(200 if "/backpressure" in h.path else 404)
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    fake.fallback = backpressure
    del fake.routes[f"/jobs/{JID}/vertices/{VID}/backpressure"]
    cwd = project(tmp_path, fake)
    p = run("facts", "orders", "--env", "prod", cwd=cwd)
    assert p.code == 0, p
    flink = p.json()["facts"]["flink"]
    assert flink["job"]["vertex_count"] == 5000 and flink["job"]["vertices_truncated"] is True
    kept = len(flink["job"]["vertices"])
    assert 0 < kept <= 200
    assert len(flink["backpressure"]["vertices"]) == kept
    assert len(fake.hits) <= 7 + kept, len(fake.hits)
    checked = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    assert checked.code in (0, 1), checked
