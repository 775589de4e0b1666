"""A waiver never opens what fails closed, and never holds for longer than ``waivers.max_horizon``.

The fail-closed rules cannot be waived (SW-WAIVER-001 refuses the waiver and says why; the finding
stays): SW-FACT-001 (facts that could not be gathered), SW-FACT-002 (a table the environment does
not let the contract read), SW-POLICY-001, SW-WAIVER-001 and
SW-WAIVER-002. A waiver whose expires day begins more than ``waivers.max_horizon`` (default 365d)
after now waives nothing. Both hold in a plain check, in the gate and in a pull request, where the
base's waivers and the trusted ref's ``streamwarden.yaml`` are the ones in force.

Real processes (tests/cli.py) on real repositories: git repositories for pull requests, and for
the gate the PyIceberg SQLite catalog of tests/recovery_repo.py with a savepoint path that is not
a savepoint.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo
from tests.recovery_repo import RecoveryRepo


def waiver(rule: str, expires: str = "2027-01-31", reason: str = "Iceberg catalog flaky") -> str:
    return f"waivers:\n  - rule: {rule}\n    reason: {reason}\n    expires: {expires}\n    approved_by: data-platform\n"


# a job.deployment entry naming a file that does not exist: SW-FACT-001, an error in every mode
MISSING_DEPLOYMENT = CLEAN_CONTRACT.replace(
    "  restart_strategy: exponential-delay\n",
    "  restart_strategy: exponential-delay\n  deployment: [deploy/missing.yaml]\n",
    1,
)


def _findings(p: Proc, rule: str) -> list[dict[str, Any]]:
    return [f for f in p.json()["findings"] if f["rule"] == rule]


def _check(root: Path, *args: str) -> Proc:
    return sw("check", "--no-cache", "--format", "json", "--now", NOW, *args, cwd=root)


def _repo(root: Path, contract: str, config: str | None = None) -> Path:
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(contract, encoding="utf-8")
    if config is not None:
        (root / "streamwarden.yaml").write_text(config, encoding="utf-8")
    return root


# ---------------------------------------------------------------------------------- the gate


@pytest.mark.parametrize("what", ["a directory without _metadata", "a file that is no _metadata"])
def test_a_waiver_of_fact_001_does_not_open_the_gate_on_a_path_that_is_not_a_savepoint(
    tmp_path: Path, what: str
) -> None:
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 20)
    soon = dt.datetime.fromtimestamp(repo.now_ms / 1000 + 30 * 86_400, tz=dt.timezone.utc).date().isoformat()
    repo.write_contract(CLEAN_CONTRACT + waiver("SW-FACT-001", expires=soon))
    target = repo.root / "not-a-savepoint"
    if what.startswith("a directory"):
        target.mkdir()
    else:
        target.write_text("hello\n", encoding="utf-8")
    common = ("--env", "prod", "--config", str(repo.root / "streamwarden.yaml"), "--now", repo.now_arg())
    p = sw("gate", "orders-enrichment", *common, "--restore-from", str(target), "--format", "json", cwd=repo.root)
    assert p.code == 1, p
    doc = p.json()
    assert doc["decision"] == "deny"
    assert doc["waived"] == []
    reasons = {r["rule"]: r for r in doc["reasons"]}
    assert reasons["SW-FACT-001"]["path"] == "facts.savepoint" and reasons["SW-FACT-001"]["waived"] is False
    refusal = reasons["SW-WAIVER-001"]
    assert refusal["path"] == "waivers[0].rule"
    assert "SW-FACT-001, which cannot be waived" in refusal["message"]
    assert "the gate fails closed on it" in refusal["message"]
    text = sw("gate", "orders-enrichment", *common, "--restore-from", str(target), cwd=repo.root)
    assert text.code == 1 and "gate: DENY" in text.stdout and "waived finding" not in text.stdout, text


# ---------------------------------------------------------------------------------- check


def test_a_waiver_of_a_missing_deployment_file_is_refused_and_the_gap_stays_an_error(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", MISSING_DEPLOYMENT + waiver("SW-FACT-001"))
    p = _check(root)
    assert p.code == 1, p
    (gap,) = _findings(p, "SW-FACT-001")
    assert gap["severity"] == "error" and gap["waived"] is False and gap["path"] == "job.deployment[0]"
    (refusal,) = _findings(p, "SW-WAIVER-001")
    assert refusal["evidence"] == {"waiver_index": 0, "rule": "SW-FACT-001", "problem": "unwaivable"}
    assert refusal["line"] is not None  # at the waiver's rule, in the contract


@pytest.mark.parametrize("rule", ["SW-FACT-001", "SW-FACT-002", "SW-POLICY-001", "SW-WAIVER-001", "SW-WAIVER-002"])
def test_every_fail_closed_rule_is_refused_with_a_reason(tmp_path: Path, rule: str) -> None:
    root = _repo(tmp_path / "repo", CLEAN_CONTRACT + waiver(rule))
    p = _check(root)
    assert p.code == 1, p
    (refusal,) = _findings(p, "SW-WAIVER-001")
    assert refusal["path"] == "waivers[0].rule"
    assert f"waiver 0 names {rule}, which cannot be waived: " in refusal["message"]
    assert refusal["waived"] is False


def test_an_ordinary_rule_can_still_be_waived(tmp_path: Path) -> None:
    # the clean contract, changed so that SW-CKPT-006 (a warning) fires, and that waived
    contract = CLEAN_CONTRACT.replace("num_retained: 3", "num_retained: 1") + waiver("SW-CKPT-006", reason="migration")
    p = _check(_repo(tmp_path / "repo", contract))
    assert p.code == 0, p
    assert _findings(p, "SW-WAIVER-001") == []
    assert [f["waived"] for f in _findings(p, "SW-CKPT-006")] == [True]


# ---------------------------------------------------------------------------------- the horizon


def test_a_waiver_that_expires_on_9999_12_31_waives_nothing(tmp_path: Path) -> None:
    contract = CLEAN_CONTRACT.replace("num_retained: 3", "num_retained: 1")
    root = _repo(tmp_path / "repo", contract + waiver("SW-CKPT-006", expires="9999-12-31", reason="migration"))
    p = _check(root)
    assert p.code == 1, p
    (refusal,) = _findings(p, "SW-WAIVER-001")
    assert refusal["path"] == "waivers[0].expires" and refusal["evidence"]["problem"] == "beyond_horizon"
    assert "expires on 9999-12-31, more than waivers.max_horizon (365d) ahead" in refusal["message"]
    assert [f["waived"] for f in _findings(p, "SW-CKPT-006")] == [False]


def test_the_horizon_is_one_year_by_default_and_set_in_streamwarden_yaml(tmp_path: Path) -> None:
    # NOW is 2026-11-25T12:00Z: 2027-11-25 begins within 365 days of it, 2027-11-27 does not
    contract = CLEAN_CONTRACT.replace("num_retained: 3", "num_retained: 1")
    within = _repo(tmp_path / "within", contract + waiver("SW-CKPT-006", expires="2027-11-25", reason="migration"))
    assert _check(within).code == 0
    beyond = _repo(tmp_path / "beyond", contract + waiver("SW-CKPT-006", expires="2027-11-27", reason="migration"))
    assert _check(beyond).code == 1
    # a longer horizon configured: accepted; a shorter one: refused, the message names it
    (beyond / "streamwarden.yaml").write_text("waivers: {max_horizon: 400d}\n", encoding="utf-8")
    assert _check(beyond).code == 0
    (within / "streamwarden.yaml").write_text("waivers: {max_horizon: 30d}\n", encoding="utf-8")
    p = _check(within)
    assert p.code == 1, p
    (refusal,) = _findings(p, "SW-WAIVER-001")
    assert "more than waivers.max_horizon (30d) ahead" in refusal["message"]
    facts = sw("facts", "orders-enrichment", "--now", NOW, cwd=within)
    assert facts.json()["config"] == {"waivers": {"max_horizon_ms": 30 * 86_400_000}}


def test_a_horizon_that_is_not_a_duration_is_unusable_input(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", CLEAN_CONTRACT, "waivers:\n  max_horizon: 1y\n")
    p = sw("check", "--no-cache", "--now", NOW, cwd=root)
    assert p.code == 2, p
    assert "streamwarden.yaml:2" in p.stderr and "waivers.max_horizon" in p.stderr


# ---------------------------------------------------------------------------------- pull requests


@pytest.fixture
def pr(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    return r


def _pr_check(repo: Repo) -> Proc:
    return sw("check", "--no-cache", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)


def test_a_base_waiver_of_a_fail_closed_rule_covers_nothing_in_a_pull_request(pr: Repo) -> None:
    # merged before waivers of fail-closed rules were refused: the base's version is in force
    pr.write("contracts/orders.yaml", MISSING_DEPLOYMENT + waiver("SW-FACT-001"))
    pr.commit("base: waive the missing deployment file")
    pr.branch("feature")
    pr.write(
        "contracts/orders.yaml", MISSING_DEPLOYMENT.replace("parallelism: 4", "parallelism: 8") + waiver("SW-FACT-001")
    )
    pr.commit("more parallelism")
    p = _pr_check(pr)
    assert p.code == 1, p
    assert [f["waived"] for f in _findings(p, "SW-FACT-001")] == [False]
    assert "SW-FACT-001, which cannot be waived" in _findings(p, "SW-WAIVER-001")[0]["message"]


def test_a_base_waiver_beyond_the_horizon_covers_nothing_in_a_pull_request(pr: Repo) -> None:
    contract = CLEAN_CONTRACT.replace("num_retained: 3", "num_retained: 1")
    far = waiver("SW-CKPT-006", expires="9999-12-31", reason="migration")
    pr.write("contracts/orders.yaml", contract + far)
    pr.commit("base: a waiver for ever")
    pr.branch("feature")
    # the pull request shortens it: the base's version is the one in force, and it is beyond reach
    pr.write("contracts/orders.yaml", contract + waiver("SW-CKPT-006", expires="2027-01-31", reason="migration"))
    pr.commit("a reasonable expiry")
    p = _pr_check(pr)
    assert p.code == 0, p  # SW-CKPT-006 is a warning: reported, no longer waived
    assert [f["waived"] for f in _findings(p, "SW-CKPT-006")] == [False]
    assert _findings(p, "SW-WAIVER-001") == []  # the head's own waiver is within reach


def test_a_pull_request_cannot_widen_the_horizon_it_is_judged_by(pr: Repo) -> None:
    contract = CLEAN_CONTRACT.replace("num_retained: 3", "num_retained: 1")
    far = waiver("SW-CKPT-006", expires="2030-01-31", reason="migration")
    pr.write("contracts/orders.yaml", contract + far)
    pr.commit("base: a waiver beyond the horizon")
    pr.branch("feature")
    pr.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\nwaivers: {max_horizon: 36500d}\n')
    pr.commit("a horizon of a century")
    p = _pr_check(pr)
    assert p.code == 1, p
    assert [f["evidence"]["problem"] for f in _findings(p, "SW-WAIVER-001")] == ["beyond_horizon"]
    assert [f["waived"] for f in _findings(p, "SW-CKPT-006")] == [False]
    assert _findings(p, "SW-POLICY-001")  # the configuration change is reported for review
