"""Hostile Flink REST answers an audit found the CLI mishandling, each through the real CLI against
the stand-in server of tests/fake_flink.py (a real Flink cannot be made to answer these):
``NaN``/``Infinity``/``1e999`` and integers beyond Java's ``long`` (an internal error, or
``facts`` printing invalid JSON), a lone surrogate escape in a string (``facts`` crashed; every
live check refused), a checkpoints or overview answer of the wrong shape (read as "no
checkpoints" / "not running": the gate allowed), an unparseable redirect target and a
5,000-digit number (Python's internals in the message), a checkpoint location that names the
object store's endpoint. An error body dripped a byte at a time is tests/acceptance/test_hostile_servers.py's
dripping-server test at status 500. Each test fails on the build before this one, but the
backpressure test, which guards NaN ratios that were read right before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.test_hostile_servers import fact_001, project, run
from tests.fake_flink import JID, VID, FakeFlink, fake_flink


@pytest.fixture
def fake() -> Iterator[FakeFlink]:
    with fake_flink() as f:
        yield f


def _strict(text: str) -> Any:
    """JSON as the standard allows it: no NaN or Infinity literals."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "1" + "0" * 30])
def test_non_finite_and_oversized_numbers_are_missing_values(tmp_path: Path, fake: FakeFlink, literal: str) -> None:
    metrics = f'[{{"id": "numRestarts", "value": {literal}}}, {{"id": "uptime", "value": {literal}}}]'
    fake.routes[f"/jobs/{JID}/metrics"] = (200, metrics.encode())
    config = json.loads(json.dumps({"mode": "exactly_once", "interval": 60000, "timeout": 1}))
    raw_config = json.dumps(config).replace('"timeout": 1', f'"timeout": {literal}')
    fake.routes[f"/jobs/{JID}/checkpoints/config"] = (200, raw_config.encode())
    cwd = project(tmp_path, fake)
    for fmt in ("json", "text"):
        p = run("check", "--env", "prod", "--format", fmt, cwd=cwd)
        assert p.code in (0, 1), p
        assert "internal error" not in p.stderr and "policy evaluation failed" not in p.stderr, p
    facts = run("facts", "orders", "--env", "prod", cwd=cwd)
    assert facts.code == 0, facts
    doc = _strict(facts.stdout)
    assert doc["facts"]["flink"]["available"] is True


def test_a_lone_surrogate_in_a_server_string_is_shown_as_a_replacement_character(
    tmp_path: Path, fake: FakeFlink
) -> None:
    job = json.loads(json.dumps(fake.routes[f"/jobs/{JID}"][1]))  # type: ignore[index]
    job["vertices"][0]["name"] = "Source: orders SURROGATE"
    fake.routes[f"/jobs/{JID}"] = (200, json.dumps(job).replace("SURROGATE", "\\ud800").encode())
    cwd = project(tmp_path, fake)
    facts = run("facts", "orders", "--env", "prod", cwd=cwd)
    assert facts.code == 0, facts
    names = [v["name"] for v in _strict(facts.stdout)["facts"]["flink"]["job"]["vertices"]]
    assert "Source: orders \ufffd" in names, names
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    assert p.code in (0, 1), p  # not exit 2 "not valid Unicode"


@pytest.mark.parametrize("answer", [[1, 2], {}, {"counts": {}, "latest": "15"}])
def test_a_checkpoints_answer_of_the_wrong_shape_is_unavailable_and_the_gate_denies(
    tmp_path: Path, fake: FakeFlink, answer: Any
) -> None:
    fake.routes[f"/jobs/{JID}/checkpoints"] = (200, answer)
    cwd = project(tmp_path, fake)
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    messages = [f["message"] for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert any("an answer of an unexpected shape: no 'counts' and 'latest' objects" in m for m in messages), p
    gate = run("gate", "orders", "--env", "prod", cwd=cwd)
    assert gate.code == 1, gate  # deny: nothing "allows" a restore on an answer that is not Flink's


@pytest.mark.parametrize("entry", [None, {"jid": 7, "name": "orders", "state": "RUNNING"}, {"jid": JID}])
def test_an_overview_entry_of_the_wrong_shape_makes_the_source_unavailable(
    tmp_path: Path, fake: FakeFlink, entry: Any
) -> None:
    fake.routes["/jobs/overview"] = (200, {"jobs": [entry]})
    cwd = project(tmp_path, fake)
    p = run("check", "--env", "prod", "--format", "json", cwd=cwd)
    assert "/jobs/overview answered JSON of an unexpected shape (jobs[0] is not a job" in fact_001(p), p
    assert run("gate", "orders", "--env", "prod", cwd=cwd).code == 1


def test_python_internals_never_reach_the_message(tmp_path: Path, fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = (302, b"", {"Location": "http://127.0.0.1:99999999/x"})
    fake.routes["/config"] = (200, ('{"flink-version": "2.3.0", "n": ' + "9" * 5000 + "}").encode())
    cwd = project(tmp_path, fake)
    message = fact_001(run("check", "--env", "prod", "--format", "json", cwd=cwd))
    assert "a redirect to a URL that does not parse" in message, message
    assert "ValueError" not in message and "int_max_str_digits" not in message


def test_a_vertex_backpressure_answer_keeps_working_with_nan_ratios(tmp_path: Path, fake: FakeFlink) -> None:
    # the backpressure of a healthy job carries "NaN" strings and NaN literals from Jackson
    body = json.dumps(fake.routes[f"/jobs/{JID}/vertices/{VID}/backpressure"][1])  # type: ignore[index]
    fake.routes[f"/jobs/{JID}/vertices/{VID}/backpressure"] = (200, body.replace('"NaN"', "NaN").encode())
    cwd = project(tmp_path, fake)
    facts = run("facts", "orders", "--env", "prod", cwd=cwd)
    assert facts.code == 0, facts
    assert _strict(facts.stdout)["facts"]["flink"]["backpressure"]["available"] is True


def test_a_checkpoint_location_cannot_choose_the_object_stores_endpoint(tmp_path: Path, fake: FakeFlink) -> None:
    checkpoints = json.loads(json.dumps(fake.routes[f"/jobs/{JID}/checkpoints"][1]))  # type: ignore[index]
    evil = "s3://AKIAEVIL:evil-secret@bucket/chk-15?endpoint_override=127.0.0.2:9&scheme=http"
    checkpoints["latest"]["completed"]["external_path"] = evil
    fake.routes[f"/jobs/{JID}/checkpoints"] = (200, checkpoints)
    facts = run("facts", "orders", "--env", "prod", cwd=project(tmp_path, fake))
    completed = facts.json()["facts"]["flink"]["checkpoints"]["latest"]["completed"]
    assert completed["external_path"] == "s3://bucket/chk-15"  # what gate and evidence would read
    assert "endpoint_override" not in facts.stdout and "AKIAEVIL" not in facts.stdout
