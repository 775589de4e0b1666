"""The Flink REST gatherer against a fake server: every way the API can fail gives explicit
unavailable facts with a clear message (never a traceback, never a secret)."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from tests.fake_flink import (
    CHECKPOINTS,
    JID,
    NOW,
    VID,
    FakeFlink,
    cut_off,
    fake_flink,
    flink_error,
    healthy_routes,
    job,
    overview,
    slow,
)

from streamwarden.facts.flink import gather_flink, gather_flink_one, gather_jobs
from streamwarden.flink.rest import FlinkRestClient, RestError, RestSettings, display_url, settings_from_env

TOKEN = "s3cr3t-t0ken-value"
CONTRACT: dict[str, Any] = {"job": {"name": "orders"}}


@pytest.fixture
def fake() -> Any:
    with fake_flink() as f:
        yield f


def env(fake: FakeFlink, **extra: Any) -> dict[str, Any]:
    return {"rest_url": fake.url, "timeout": 2000, "retries": 2, **extra}


def gather(fake: FakeFlink, environ: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return gather_flink_one(CONTRACT, env(fake, **extra), Path("."), environ or {})


def assert_unavailable(facts: dict[str, Any], *fragments: str) -> str:
    assert facts["available"] is False, facts
    assert facts["configured"] is True
    error = facts["error"]
    for fragment in fragments:
        assert fragment in error, error
    assert "Traceback" not in error
    assert TOKEN not in json.dumps(facts)
    return str(error)


# ------------------------------------------------------------------------- the healthy answer


def test_healthy_fake_gives_every_section(fake: FakeFlink) -> None:
    facts = gather(fake)
    assert facts["available"] is True and facts["job_found"] is True
    assert facts["job_id"] == JID and facts["flink_version"] == "2.3.0" and facts["state"] == "running"
    assert facts["jobs"] == [{"id": JID, "name": "orders", "state": "running", "start_time": NOW - 60000}]
    for section in ("job", "checkpoint_config", "checkpoints", "exceptions", "metrics", "backpressure"):
        assert facts[section]["available"] is True, (section, facts[section])
    assert facts["checkpoint_config"]["externalized"] == "retain_on_cancellation"
    assert facts["backpressure"]["vertices"][VID]["max_busy_ratio"] is None  # "NaN" from Flink
    assert facts["restarts"] == 0 and facts["restarts_source"] == "metrics.numRestarts"


def test_one_overview_call_is_shared_by_all_contracts(fake: FakeFlink) -> None:
    contracts = [{"job": {"name": "orders"}}, {"job": {"name": "orders"}}, {"job": {"name": "other"}}]
    result = gather_flink(contracts, env(fake), Path("."), {})
    assert set(result) == {"orders", "other"}
    assert result["other"]["job_found"] is False
    assert fake.count("/jobs/overview") == 1
    assert fake.count(f"/jobs/{JID}") == 1


# ------------------------------------------------------------------------- proxies and broken answers


def test_html_page_from_a_proxy_is_unavailable_with_a_hint(fake: FakeFlink) -> None:
    page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Corporate SSO</body></html>"
    fake.routes["/jobs/overview"] = (200, page, {"Content-Type": "text/html"})
    error = assert_unavailable(gather(fake), "/jobs/overview answered an HTML page", "proxy or login page")
    assert "Sign in" in error  # a short snippet of what came back


def test_truncated_json_is_unavailable(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = (200, b'{"jobs": [{"jid": "4d98', {"Content-Type": "application/json"})
    assert_unavailable(gather(fake), "answered invalid JSON", "Unterminated string")


def test_connection_cut_off_mid_answer_is_retried_then_unavailable(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = cut_off(5000, b'{"jobs": [')
    assert_unavailable(gather(fake), "closed the connection after 10 of 5000 bytes", "after 3 attempts")
    assert fake.count("/jobs/overview") == 3


def test_5xx_is_retried_with_backoff_then_unavailable(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = flink_error(503, "org.apache.flink.runtime.rest.handler.RestHandlerException: busy")
    assert_unavailable(gather(fake), "answered HTTP 503", "RestHandlerException: busy", "after 3 attempts")
    assert fake.count("/jobs/overview") == 3


def test_a_5xx_that_recovers_within_the_retries_is_not_an_error(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = [
        (502, b"Bad Gateway", {"Content-Type": "text/plain"}),
        fake.routes["/jobs/overview"],
    ]
    facts = gather(fake)
    assert facts["available"] is True and facts["job_found"] is True


def test_4xx_other_than_auth_is_not_retried(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = flink_error(400, "Bad request")
    assert_unavailable(gather(fake), "answered HTTP 400: Bad request")
    assert fake.count("/jobs/overview") == 1


def test_answer_above_the_size_cap_is_refused(fake: FakeFlink) -> None:
    settings = RestSettings(rest_url=fake.url, max_bytes=100, retries=0)
    with FlinkRestClient(settings) as client, pytest.raises(RestError) as exc:
        client.get_json("/jobs/overview")
    assert exc.value.kind == "too_large"


def test_redirect_is_not_followed_and_credentials_stay_home(fake: FakeFlink) -> None:
    with fake_flink() as elsewhere:
        fake.routes["/jobs/overview"] = (302, b"", {"Location": elsewhere.url + "/login?next=/jobs/overview"})
        error = assert_unavailable(
            gather(fake, {"T": TOKEN}, auth={"bearer_token_env": "T"}), "HTTP 302", "redirects are not followed"
        )
        assert elsewhere.hits == []
    assert elsewhere.url + "/login" in error and "next=" not in error


# ------------------------------------------------------------------------- unknown and vanishing jobs


def test_unknown_job_name_is_not_found_with_similar_names(fake: FakeFlink) -> None:
    facts = gather_flink_one({"job": {"name": "order"}}, env(fake), Path("."), {})
    assert facts["available"] is True and facts["job_found"] is False
    assert facts["similar_jobs"] == ["orders"]
    assert fake.count(f"/jobs/{JID}") == 0


def test_404_for_the_job_after_the_overview_and_again_is_unavailable(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}"] = flink_error(
        404, f"org.apache.flink.runtime.rest.NotFoundException: Job {JID} not found"
    )
    facts = gather(fake)
    assert_unavailable(facts, "answered HTTP 404", f"Job {JID} not found", "vanished while its facts were read")
    assert facts["job_id"] == JID and facts["job_found"] is True
    assert fake.count("/jobs/overview") == 2


def test_job_replaced_between_two_calls_is_found_under_its_new_id(fake: FakeFlink) -> None:
    new = "23d63e198e8d6e9b5cf76a7b0c3accc6"
    fake.routes.update({k: v for k, v in healthy_routes(new).items() if new in k})
    fake.routes[f"/jobs/{JID}"] = flink_error(404, f"Job {JID} not found")
    fake.routes["/jobs/overview"] = [
        (200, overview((JID, "orders", "RUNNING", NOW - 60000))),
        (200, overview((new, "orders", "RUNNING", NOW - 1000))),
    ]
    facts = gather(fake)
    assert facts["available"] is True and facts["job_id"] == new
    assert facts["job"]["id"] == new and facts["checkpoints"]["available"] is True


def test_job_gone_from_the_second_overview_is_not_found(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}"] = flink_error(404, f"Job {JID} not found")
    fake.routes["/jobs/overview"] = [(200, overview((JID, "orders", "RUNNING", NOW))), (200, overview())]
    facts = gather(fake)
    assert facts["available"] is True and facts["job_found"] is False


def test_a_section_that_vanishes_is_unavailable_alone(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}/checkpoints"] = flink_error(404, f"Job {JID} not found")
    facts = gather(fake)
    assert facts["available"] is True
    assert facts["checkpoints"]["available"] is False
    assert "answered HTTP 404" in facts["checkpoints"]["error"]
    assert facts["checkpoint_config"]["available"] is True


def test_checkpointing_not_enabled_is_a_fact_not_an_error(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}/checkpoints/config"] = flink_error(404, "Checkpointing is not enabled for this job.")
    facts = gather(fake)
    assert facts["checkpoint_config"]["available"] is True
    assert facts["checkpoint_config"]["enabled"] is False and facts["checkpoint_config"]["interval"] is None


def test_several_running_jobs_with_the_name_are_reported_as_duplicates(fake: FakeFlink) -> None:
    older = "0000000000000000000000000000beef"
    fake.routes["/jobs/overview"] = (
        200,
        overview(
            (older, "orders", "RUNNING", NOW - 90000),
            (JID, "orders", "RUNNING", NOW - 60000),
            ("0000000000000000000000000000dead", "orders", "CANCELED", NOW - 99000),
        ),
    )
    facts = gather(fake)
    assert facts["job_id"] == JID
    assert [d["id"] for d in facts["duplicates"]] == [older]
    assert len(facts["job_ids"]) == 3


def test_a_finished_job_is_chosen_when_none_runs(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = (200, overview((JID, "orders", "CANCELED", NOW - 60000)))
    fake.routes[f"/jobs/{JID}"] = (200, job(state="CANCELED"))
    facts = gather(fake)
    assert facts["job"]["state"] == "canceled" and facts["duplicates"] == []
    assert facts["backpressure"]["available"] is False
    assert fake.count(f"/jobs/{JID}/vertices/{VID}/backpressure") == 0


def test_empty_metric_cache_is_asked_once_more(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}/metrics"] = [(200, []), (200, [{"id": "numRestarts", "value": "4"}])]
    facts = gather(fake)
    assert facts["metrics"]["values"] == {"numRestarts": 4}
    assert facts["restarts"] == 4


def test_metric_cache_that_stays_empty_is_unavailable_and_restarts_come_from_exceptions(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}/metrics"] = (200, [])
    entry = {"exceptionName": "java.lang.RuntimeException", "stacktrace": "java.lang.RuntimeException: boom\n\tat x"}
    fake.routes[f"/jobs/{JID}/exceptions"] = (200, {"exceptionHistory": {"entries": [entry], "truncated": False}})
    facts = gather(fake)
    assert facts["metrics"]["available"] is False and "metric cache" in facts["metrics"]["error"]
    assert facts["restarts"] == 1 and facts["restarts_source"] == "exceptions"
    assert facts["exceptions"]["entries"][0]["message"] == "java.lang.RuntimeException: boom"


def test_flink_1x_shapes_are_read(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}/metrics"] = (200, [{"id": "fullRestarts", "value": "2"}])
    old = {
        "root-exception": "x",
        "all-exceptions": [{"exception": "java.io.IOException: disk\n\tat y", "timestamp": 5}],
    }
    fake.routes[f"/jobs/{JID}/exceptions"] = (200, old)
    legacy = dict(healthy_routes()[f"/jobs/{JID}/checkpoints/config"][1], state_backend="FsStateBackend")
    fake.routes[f"/jobs/{JID}/checkpoints/config"] = (200, legacy)
    facts = gather(fake)
    assert facts["restarts"] == 2 and facts["restarts_source"] == "metrics.fullRestarts"
    assert facts["exceptions"]["entries"][0]["message"] == "java.io.IOException: disk"
    assert facts["checkpoint_config"]["state_backend"] == "hashmap"


def test_answers_of_the_wrong_shape_do_not_crash(fake: FakeFlink) -> None:
    fake.routes[f"/jobs/{JID}/checkpoints"] = (200, ["not", "an", "object"])
    fake.routes[f"/jobs/{JID}/checkpoints/config"] = (200, {"interval": "soon", "mode": 7})
    facts = gather(fake)
    # not Flink's answer: unavailable (SW-FACT-001), never "no checkpoints" (a gate would allow)
    assert facts["checkpoints"]["available"] is False
    assert "no 'counts' and 'latest' objects" in facts["checkpoints"]["error"]
    assert facts["checkpoint_config"]["interval"] is None and facts["checkpoint_config"]["mode"] is None
    fake.routes["/jobs/overview"] = (200, {"status": "ok"})
    assert_unavailable(gather(fake), "answered JSON of an unexpected shape (no jobs list)")


# ------------------------------------------------------------------------- reachability, auth, timeouts


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_closed_port_is_unreachable_with_a_clear_message() -> None:
    port = closed_port()
    flink_env = {"rest_url": f"http://127.0.0.1:{port}", "retries": 1}
    facts = gather_flink_one(CONTRACT, flink_env, Path("."), {})
    assert_unavailable(facts, f"cannot reach http://127.0.0.1:{port} (connection refused)", "after 2 attempts")


def test_wrong_token_is_unauthorized_and_the_token_never_shows(fake: FakeFlink) -> None:
    echo = f"<html>401 for Authorization: Bearer {TOKEN}</html>".encode()
    fake.routes["/jobs/overview"] = (401, echo, {"Content-Type": "text/html"})
    facts = gather(fake, {"FLINK_TOKEN": TOKEN}, auth={"bearer_token_env": "FLINK_TOKEN"})
    assert_unavailable(facts, "answered HTTP 401 (unauthorized)", "flink.auth")
    assert fake.hits[0][1]["Authorization"] == f"Bearer {TOKEN}"
    assert fake.count("/jobs/overview") == 1


def test_error_pages_echoing_secrets_are_scrubbed(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = (
        500,
        f"proxy error; header was Bearer {TOKEN}".encode(),
        {"Content-Type": "text/plain"},
    )
    error = assert_unavailable(gather(fake, {"FLINK_TOKEN": TOKEN}, auth={"bearer_token_env": "FLINK_TOKEN"}))
    assert "Bearer ***" in error


def test_basic_auth_sends_credentials_from_the_environment(fake: FakeFlink) -> None:
    auth = {"basic": {"username_env": "FU", "password_env": "FP"}}
    facts = gather(fake, {"FU": "flink", "FP": TOKEN}, auth=auth)
    assert facts["available"] is True
    expected = "Basic " + base64.b64encode(f"flink:{TOKEN}".encode()).decode()
    assert {h.get("Authorization") for _, h in fake.hits} == {expected}
    assert TOKEN not in json.dumps(facts)


def test_missing_token_variable_is_unavailable_before_any_request(fake: FakeFlink) -> None:
    facts = gather(fake, {}, auth={"bearer_token_env": "FLINK_TOKEN"})
    assert_unavailable(facts, "environment variable FLINK_TOKEN (flink.auth.bearer_token_env) is not set")
    assert fake.hits == []


def test_slow_api_times_out_without_retrying(fake: FakeFlink) -> None:
    fake.routes["/jobs/overview"] = slow(1.5, {"jobs": []})
    facts = gather(fake, timeout=300)
    assert_unavailable(facts, f"no answer from {fake.url}/jobs/overview within 300ms")
    assert fake.count("/jobs/overview") == 1


def test_unreadable_ca_file_is_a_configuration_error(tmp_path: Path) -> None:
    facts = gather_flink_one(CONTRACT, {"rest_url": "https://flink.test", "ca_file": "missing.pem"}, tmp_path, {})
    assert_unavailable(facts, "cannot load flink.ca_file missing.pem", "no such file")


def test_credentials_in_the_url_are_used_but_never_shown() -> None:
    settings = settings_from_env({"rest_url": f"https://admin:{TOKEN}@flink.test:8443/api/"}, Path("."), {})
    assert settings.rest_url == "https://flink.test:8443/api"
    assert settings.headers["Authorization"].startswith("Basic ")
    assert TOKEN not in repr(settings)
    assert display_url(f"https://admin:{TOKEN}@flink.test:8443/api/") == "https://flink.test:8443/api"


# ------------------------------------------------------------------------- concurrency


def test_requests_run_concurrently_within_the_bound(fake: FakeFlink) -> None:
    fake.delay_s = 0.05
    results = gather_jobs(["orders"] * 6, env(fake, concurrency=3), Path("."), {})
    assert all(r["available"] for r in results)
    assert 2 <= fake.max_inflight <= 3


def test_checkpoint_history_is_normalized(fake: FakeFlink) -> None:
    failed = {
        "className": "failed",
        "id": 16,
        "status": "FAILED",
        "is_savepoint": False,
        "trigger_timestamp": NOW - 100,
        "latest_ack_timestamp": -1,
        "end_to_end_duration": 60000,
        "state_size": 0,
        "checkpoint_type": "UNALIGNED_CHECKPOINT",
        "failure_timestamp": NOW,
        "failure_message": "Checkpoint expired before completing.\nmore",
    }
    fake.routes[f"/jobs/{JID}/checkpoints"] = (200, dict(CHECKPOINTS, history=[failed, *CHECKPOINTS["history"]]))
    history = gather(fake)["checkpoints"]["history"]
    assert history[0]["status"] == "failed" and history[0]["checkpoint_type"] == "unaligned_checkpoint"
    assert history[0]["latest_ack_timestamp"] is None
    assert history[0]["failure_message"] == "Checkpoint expired before completing."
    assert history[1]["external_path"].endswith("/chk-15") and history[1]["discarded"] is False


def test_exception_messages_carry_the_root_cause(fake: FakeFlink) -> None:
    trace = (
        "org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy\n"
        "\tat org.apache.flink.runtime.executiongraph.failover.ExecutionFailureHandler.handleFailure(X.java:1)\n"
        "Caused by: java.util.concurrent.CompletionException: wrapped\n"
        "Caused by: org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException: Could not acquire.\n"
    )
    entries = [{"exceptionName": "org.apache.flink.runtime.JobException", "stacktrace": trace, "timestamp": 7}]
    fake.routes[f"/jobs/{JID}/exceptions"] = (200, {"exceptionHistory": {"entries": entries, "truncated": True}})
    exceptions = gather(fake)["exceptions"]
    assert exceptions["truncated"] is True
    assert exceptions["entries"][0]["message"] == (
        "org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy (root cause: "
        "org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException: Could not acquire.)"
    )
