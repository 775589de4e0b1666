"""The Flink REST gatherer and the live policies against a real Flink 2.3.0 cluster.

One standalone cluster per session (tests/flink_cluster.py): apache-flink is installed into its
own venv under a cache dir on first use (``python tests/flink_cluster.py --install`` does it ahead
of time), and everything started is stopped in teardown. Skips only where Java is missing.
"""

from __future__ import annotations

import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.fake_flink import fake_flink
from tests.flink_cluster import FlinkCluster, java_missing_reason

from streamwarden.check.evaluation import evaluate_contract
from streamwarden.contracts.config import Config
from streamwarden.contracts.load import load_contract
from streamwarden.engine import load_policy_set, make_engine
from streamwarden.evaluate.findings import Finding
from streamwarden.evaluate.inputdoc import pipeline as build_input
from streamwarden.facts.flink import gather_flink, gather_flink_one
from streamwarden.facts.pipeline import gather_one

pytestmark = pytest.mark.slow

ORDERS = "sw-orders"
SQL = "sw-sql-agg"
ORDERS_SETTINGS = {
    "execution.checkpointing.interval": "2s",
    "execution.checkpointing.mode": "EXACTLY_ONCE",
    "execution.checkpointing.timeout": "1min",
    "execution.checkpointing.min-pause": "500ms",
    "execution.checkpointing.tolerable-failed-checkpoints": "3",
    "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
}


@pytest.fixture(scope="session")
def cluster(flink_cluster: FlinkCluster) -> FlinkCluster:
    """The session's shared cluster (tests/conftest.py)."""
    return flink_cluster


STALLED = "sw-stalled"
CANCELLED = "sw-cancelled"
STALLED_SETTINGS = {
    "execution.checkpointing.interval": "1s",
    "execution.checkpointing.timeout": "2s",
    "execution.checkpointing.min-pause": "500ms",
    "execution.checkpointing.tolerable-failed-checkpoints": "1000",
}


@pytest.fixture(scope="session")
def jobs(cluster: FlinkCluster) -> dict[str, str]:
    """Four jobs, submitted side by side (a loaded machine takes minutes per submission): a
    DataStream job with uid'ed operators, a SQL GROUP BY job, a SQL job for the cancel test, and
    a DataStream job whose stateful operator sleeps on every record so checkpoints expire."""
    submissions = {
        ORDERS: ("stateful_datastream.py", ["--name", ORDERS], ORDERS_SETTINGS, 2),
        SQL: ("sql_groupby.py", ["--name", SQL], {"execution.checkpointing.interval": "3s"}, 1),
        CANCELLED: ("sql_groupby.py", ["--name", CANCELLED], {"execution.checkpointing.interval": "2s"}, 1),
        STALLED: ("stateful_datastream.py", ["--name", STALLED, "--stall-seconds", "30"], STALLED_SETTINGS, 0),
    }

    def submit(name: str) -> str:
        driver, args, settings, checkpoints = submissions[name]
        jid = cluster.submit(driver, *args, dynamic=settings)
        cluster.wait_running(jid, checkpoints=checkpoints)
        return jid

    with ThreadPoolExecutor(max_workers=len(submissions)) as pool:
        return dict(zip(submissions, pool.map(submit, submissions), strict=True))


@pytest.fixture(scope="module")
def policies() -> Any:
    policy_set = load_policy_set()
    return policy_set, make_engine("regorus", policy_set)


CONTRACT = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {{name: {name}, owner: data-platform}}
job: {{name: {job}}}
state: {{max_size: 1GiB}}
checkpoint:
  mode: {mode}
  interval: {interval}
  timeout: {timeout}
  min_pause: 500ms
  max_concurrent: 1
  unaligned: false
  tolerable_failures: {tolerable}
  externalized: retain_on_cancellation
  storage: s3://ckpt/{name}
  health: {{max_age: {max_age}, max_duration: 30s, max_failed: {max_failed}}}
"""


def check(
    tmp_path: Path, policies: Any, rest_url: str, environ: dict[str, str] | None = None, **fields: Any
) -> tuple[list[Finding], dict[str, Any]]:
    """Write a contract, gather its live facts and evaluate every policy on them."""
    values = {
        "name": "orders",
        "job": ORDERS,
        "mode": "exactly_once",
        "interval": "2s",
        "timeout": "1m",
        "tolerable": 3,
        "max_age": "1m",
        "max_failed": 3,
        **fields,
    }
    path = tmp_path / f"{values['name']}.yaml"
    path.write_text(CONTRACT.format(**values))
    contract = load_contract(path, tmp_path)
    facts = gather_one(contract.data, contract.path, tmp_path)
    flink_env = {"rest_url": rest_url, "timeout": 5000, "retries": 1, **fields.get("flink_extra", {})}
    facts["flink"] = gather_flink_one(contract.data, flink_env, tmp_path, environ or {})
    policy_set, engine = policies
    doc = build_input(contract, facts, int(time.time() * 1000), "local", config=Config(root=Path()).policy_settings())
    return evaluate_contract(engine, policy_set, contract, doc), facts["flink"]


def live(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.source == "flink" or f.rule == "SW-FACT-001"]


# ------------------------------------------------------------------------- SW-CKPT-003


def test_contract_matching_the_running_job_gives_no_live_finding(
    tmp_path: Path, cluster: FlinkCluster, jobs: dict[str, str], policies: Any
) -> None:
    findings, facts = check(tmp_path, policies, cluster.rest_url)
    assert facts["available"] and facts["job_id"] == jobs[ORDERS]
    assert live(findings) == [], [f.message for f in live(findings)]


@pytest.mark.parametrize(
    ("field", "value", "path", "fragment"),
    [
        (
            "interval",
            "5s",
            "checkpoint.interval",
            "contract checkpoint.interval 5s vs running job sw-orders (jid {jid8}…) 2s",
        ),
        ("mode", "at_least_once", "checkpoint.mode", "contract checkpoint.mode at_least_once vs running job sw-orders"),
        ("tolerable", 1, "checkpoint.tolerable_failures", "contract checkpoint.tolerable_failures 1 vs running job"),
    ],
)
def test_a_different_setting_gives_one_finding_naming_both_values_and_sources(
    tmp_path: Path,
    cluster: FlinkCluster,
    jobs: dict[str, str],
    policies: Any,
    field: str,
    value: Any,
    path: str,
    fragment: str,
) -> None:
    findings, _ = check(tmp_path, policies, cluster.rest_url, **{field: value})
    ckpt003 = [f for f in findings if f.rule == "SW-CKPT-003"]
    assert len(ckpt003) == 1, [f.message for f in ckpt003]
    f = ckpt003[0]
    jid = jobs[ORDERS]
    assert f.path == path and f.source == "flink" and f.severity == "error"
    assert fragment.format(jid8=jid[:8]) in f.message
    assert f"from /jobs/{jid}/checkpoints/config" in f.message
    assert f.line is not None and f.file.endswith("orders.yaml")


# ------------------------------------------------------------------------- SW-CKPT-010, 011, 013


def test_cancelled_job_gives_ckpt013(
    tmp_path: Path, cluster: FlinkCluster, jobs: dict[str, str], policies: Any
) -> None:
    jid = jobs[CANCELLED]
    cluster.cancel(jid)
    findings, facts = check(tmp_path, policies, cluster.rest_url, job=CANCELLED)
    assert facts["job"]["state"] == "canceled" and facts["job_id"] == jid
    ckpt013 = [f for f in findings if f.rule == "SW-CKPT-013"]
    assert [f.path for f in ckpt013] == ["job.name"]
    assert f"job {CANCELLED} (jid {jid[:8]}…) is CANCELED, not running" in ckpt013[0].message
    assert not [f for f in findings if f.rule == "SW-CKPT-010"]


def test_stalled_checkpoints_give_ckpt010_and_ckpt011(
    tmp_path: Path, cluster: FlinkCluster, jobs: dict[str, str], policies: Any
) -> None:
    jid = jobs[STALLED]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        history = cluster.get(f"/jobs/{jid}/checkpoints").get("history") or []
        if sum(1 for h in history if h.get("status") == "FAILED") >= 3:
            break
        time.sleep(1)
    findings, facts = check(
        tmp_path, policies, cluster.rest_url, job=STALLED, interval="1s", timeout="2s",
        tolerable=1000, max_age="2s", max_failed=1,
    )  # fmt: skip
    rules = {f.rule: f for f in findings if f.source == "flink"}
    assert "SW-CKPT-010" in rules, [f.message for f in findings]
    assert "SW-CKPT-011" in rules, [f.message for f in findings]
    assert rules["SW-CKPT-010"].path == "checkpoint.health.max_age"
    assert "Checkpoint expired before completing" in rules["SW-CKPT-011"].message
    assert facts["checkpoints"]["counts"]["failed"] >= 3
    assert "SW-CKPT-003" not in rules


def test_unknown_job_name_gives_ckpt013_with_similar_names(
    tmp_path: Path, cluster: FlinkCluster, jobs: dict[str, str], policies: Any
) -> None:
    findings, facts = check(tmp_path, policies, cluster.rest_url, job="sw-order")
    assert facts["job_found"] is False and facts["similar_jobs"][0] == ORDERS
    assert [f.rule for f in live(findings)] == ["SW-CKPT-013"]


# ------------------------------------------------------------------------- SW-FACT-001


def test_closed_port_gives_fact001_with_a_clear_message(tmp_path: Path, policies: Any) -> None:
    from tests.facts.test_flink_rest_errors import closed_port

    port = closed_port()
    findings, _ = check(tmp_path, policies, f"http://127.0.0.1:{port}")
    fact = [f for f in findings if f.rule == "SW-FACT-001"]
    assert len(fact) == 1 and fact[0].path == "facts.flink"
    assert (
        f"flink facts could not be gathered: cannot reach http://127.0.0.1:{port} (connection refused)"
        in fact[0].message
    )
    assert not [f for f in findings if f.source == "flink"]


def _forwarding_to(cluster: FlinkCluster, token: str) -> Any:
    """A reverse proxy that lets a request through only with the right bearer token."""

    def forward(h: BaseHTTPRequestHandler) -> None:
        if h.headers.get("Authorization") != f"Bearer {token}":
            body = b'{"error": "invalid token"}'
            status = 401
        else:
            with urllib.request.urlopen(cluster.rest_url + h.path, timeout=10) as resp:
                body, status = resp.read(), resp.status
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return forward


def test_token_through_an_auth_proxy_right_and_wrong(
    tmp_path: Path, cluster: FlinkCluster, jobs: dict[str, str], policies: Any
) -> None:
    auth = {"flink_extra": {"auth": {"bearer_token_env": "FLINK_TOKEN"}}}
    with fake_flink() as proxy:
        proxy.routes.clear()
        proxy.fallback = _forwarding_to(cluster, "good-token")
        findings, facts = check(tmp_path, policies, proxy.url, {"FLINK_TOKEN": "good-token"}, **auth)
        assert facts["available"] and facts["job_id"] == jobs[ORDERS]
        assert live(findings) == []
        findings, facts = check(tmp_path, policies, proxy.url, {"FLINK_TOKEN": "wrong-token"}, **auth)
    fact = [f for f in findings if f.rule == "SW-FACT-001"]
    assert len(fact) == 1
    assert f"{proxy.url}/jobs/overview answered HTTP 401 (unauthorized)" in fact[0].message
    assert "wrong-token" not in json.dumps(facts) and "wrong-token" not in fact[0].message


# ------------------------------------------------------------------------- facts vs the REST API


def _raw(cluster: FlinkCluster, jid: str) -> dict[str, Any]:
    return {
        "job": cluster.get(f"/jobs/{jid}"),
        "config": cluster.get(f"/jobs/{jid}/checkpoints/config"),
        "checkpoints": cluster.get(f"/jobs/{jid}/checkpoints"),
        "exceptions": cluster.get(f"/jobs/{jid}/exceptions"),
    }


@pytest.mark.parametrize("name", [ORDERS, SQL])
def test_gathered_facts_match_the_rest_api_field_by_field(
    tmp_path: Path, cluster: FlinkCluster, jobs: dict[str, str], name: str
) -> None:
    jid = jobs[name]
    before = _raw(cluster, jid)
    facts = gather_flink([{"job": {"name": name}}], {"rest_url": cluster.rest_url}, tmp_path, {})[name]
    after = _raw(cluster, jid)
    assert facts["available"] and facts["job_id"] == jid and facts["duplicates"] == []
    assert facts["rest_url"] == cluster.rest_url and facts["flink_version"] == "2.3.0"

    raw_job, job = before["job"], facts["job"]
    assert (job["id"], job["name"], job["state"]) == (raw_job["jid"], raw_job["name"], raw_job["state"].lower())
    assert job["start_time"] == raw_job["start-time"] and job["end_time"] is None and raw_job["end-time"] == -1
    assert job["running_since"] == raw_job["timestamps"]["RUNNING"]
    assert [(v["id"], v["name"], v["parallelism"], v["max_parallelism"], v["status"]) for v in job["vertices"]] == [
        (v["id"], v["name"], v["parallelism"], v["maxParallelism"], v["status"].lower()) for v in raw_job["vertices"]
    ]

    raw_cfg, cfg = before["config"], facts["checkpoint_config"]
    pairs = {
        "mode": "mode", "interval": "interval", "timeout": "timeout", "min_pause": "min_pause",
        "max_concurrent": "max_concurrent", "unaligned": "unaligned_checkpoints",
        "tolerable_failures": "tolerable_failed_checkpoints", "checkpoint_storage": "checkpoint_storage",
        "state_backend_class": "state_backend", "aligned_checkpoint_timeout": "aligned_checkpoint_timeout",
    }  # fmt: skip
    for ours, theirs in pairs.items():
        assert cfg[ours] == raw_cfg[theirs], ours
    ext = raw_cfg["externalization"]
    expected_ext = "none" if not ext["enabled"] else (
        "delete_on_cancellation" if ext["delete_on_cancellation"] else "retain_on_cancellation"
    )  # fmt: skip
    assert cfg["externalized"] == expected_ext and cfg["state_backend"] == "rocksdb"

    stats = facts["checkpoints"]
    for key in ("completed", "failed", "total"):
        assert before["checkpoints"]["counts"][key] <= stats["counts"][key] <= after["checkpoints"]["counts"][key]
    raw_entries = {e["id"]: e for doc in (before, after) for e in doc["checkpoints"]["history"]}
    compared = 0
    for entry in stats["history"]:
        raw_entry = raw_entries.get(entry["id"])
        if raw_entry is None or raw_entry["status"] != entry["status"].upper():
            continue  # in flight between the reads
        compared += 1
        assert entry["trigger_timestamp"] == raw_entry["trigger_timestamp"]
        assert entry["end_to_end_duration"] == (
            None if raw_entry["end_to_end_duration"] < 0 else raw_entry["end_to_end_duration"]
        )
        assert (entry["state_size"], entry["checkpointed_size"]) == (
            raw_entry["state_size"],
            raw_entry["checkpointed_size"],
        )
        assert entry["is_savepoint"] == raw_entry["is_savepoint"]
        assert entry["checkpoint_type"] == raw_entry["checkpoint_type"].lower()
        if "external_path" in raw_entry:
            assert entry["external_path"] == raw_entry["external_path"]
    assert compared >= 1
    latest = stats["latest"]["completed"]
    assert latest["id"] in {d["checkpoints"]["latest"]["completed"]["id"] for d in (before, after)} or (
        before["checkpoints"]["latest"]["completed"]["id"]
        <= latest["id"]
        <= after["checkpoints"]["latest"]["completed"]["id"]
    )
    assert facts["exceptions"]["entries"] == [] and before["exceptions"]["exceptionHistory"]["entries"] == []
    assert facts["backpressure"]["available"] is True
    assert set(facts["backpressure"]["vertices"]) == {v["id"] for v in raw_job["vertices"]}
    raw_bp = cluster.get(f"/jobs/{jid}/vertices/{raw_job['vertices'][0]['id']}/backpressure")
    assert facts["backpressure"]["vertices"][raw_job["vertices"][0]["id"]]["status"] == raw_bp["status"]
    if facts["metrics"]["available"]:
        raw_metrics = {m["id"]: m["value"] for m in cluster.get(f"/jobs/{jid}/metrics?get=numRestarts")}
        assert facts["metrics"]["values"]["numRestarts"] == int(raw_metrics["numRestarts"]) == facts["restarts"]


def test_harness_skips_only_for_a_missing_java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    reason = java_missing_reason()
    assert reason is not None and "Java is not installed" in reason
