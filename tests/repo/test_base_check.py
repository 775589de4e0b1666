"""Pull-request checks against a real git base: pairing, trusted policies, waivers, errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import CLEAN_CONTRACT, NOW, invoke
from tests.gitrepo import Repo

CUSTOM_POLICY = """package acme.pipelines

import rego.v1

# METADATA
# title: Checkpoints at most every 30 seconds
# custom:
#   id: ACME-001
#   severity: error
deny contains f if {
	input.contract.checkpoint.interval > 30000
	f := {"rule": "ACME-001", "message": "checkpoint.interval above 30s", "path": "checkpoint.interval"}
}
"""

WEAKENED_POLICY = CUSTOM_POLICY.replace("> 30000", "> 999999999")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\nfail_on: error\n')
    r.write("contracts/orders.yaml", CLEAN_CONTRACT)
    r.commit("base")
    r.branch("feature")
    return r


def _json(r) -> dict:
    return json.loads(r.stdout)


def test_renamed_contract_file_still_pairs(runner: CliRunner, repo: Repo) -> None:
    (repo.path / "contracts/sales").mkdir()
    repo.git("mv", "contracts/orders.yaml", "contracts/sales/orders-enrichment.yaml")
    repo.commit("rename")
    r = invoke(runner, "diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert r.exit_code == 0, r.output
    assert _json(r)["pipelines"] == []  # same name, same content: nothing changed


def test_interval_change_no_rule_judges_is_reviewed_not_safe(runner: CliRunner, repo: Repo) -> None:
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("interval: 60s", "interval: 45s"))
    repo.commit("faster checkpoints")
    r = invoke(runner, "diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert r.exit_code == 0, r.output
    (pipeline,) = _json(r)["pipelines"]
    assert pipeline["status"] == "changed"
    (change,) = pipeline["changes"]
    assert change["path"] == "checkpoint.interval"
    assert (change["before"], change["after"], change["class"]) == (60000, 45000, "coordinate")
    assert change["rule"] is None
    assert "no rule judges this change, so it is not known to be safe" in change["reason"]


def test_new_contract_is_checked_as_new(runner: CliRunner, repo: Repo) -> None:
    repo.write("contracts/clicks.yaml", CLEAN_CONTRACT.replace("orders-enrichment", "clicks"))
    repo.commit("new pipeline")
    r = invoke(runner, "diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    statuses = {p["pipeline"]: p["status"] for p in _json(r)["pipelines"]}
    assert statuses == {"clicks": "added"}


def test_deleted_contract_with_consumers_is_breaking(runner: CliRunner, repo: Repo) -> None:
    repo.remove("contracts/orders.yaml")
    repo.write("contracts/other.yaml", CLEAN_CONTRACT.replace("orders-enrichment", "other"))
    repo.commit("drop orders")
    r = invoke(runner, "diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert r.exit_code == 1
    removed = [p for p in _json(r)["pipelines"] if p["status"] == "removed"]
    assert removed[0]["pipeline"] == "orders-enrichment"
    change = removed[0]["changes"][0]
    assert change["class"] == "breaking" and change["rule"] == "SW-SCHEMA-011"
    assert change["consumers"] == ["finance-dashboard"]
    c = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert c.exit_code == 1
    assert any(f["rule"] == "SW-SCHEMA-011" and f["file"] == "contracts/orders.yaml" for f in _json(c)["findings"])


def test_weakened_policy_is_still_judged_by_the_base_policy(runner: CliRunner, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\npolicies: [policies/custom]\n')
    repo.write("policies/custom/acme.rego", CUSTOM_POLICY)
    repo.write(
        "contracts/orders.yaml",
        CLEAN_CONTRACT.replace("interval: 60s", "interval: 20s").replace("min_pause: 30s", "min_pause: 10s"),
    )
    repo.commit("base")
    repo.branch("feature")
    # the pull request slows checkpoints down AND weakens the rule that forbids it
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.write("policies/custom/acme.rego", WEAKENED_POLICY)
    repo.commit("slower checkpoints, weaker policy")
    # without --base the weakened head policy applies: nothing fires
    plain = invoke(runner, "check", "--format", "json", "--now", NOW, cwd=repo.path)
    assert not [f for f in _json(plain)["findings"] if f["rule"] == "ACME-001"]
    # with --base the base policy applies, and the policy change is reported
    r = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    findings = _json(r)["findings"]
    assert r.exit_code == 1
    assert [f["path"] for f in findings if f["rule"] == "ACME-001"] == ["checkpoint.interval"]
    changes = [f for f in findings if f["rule"] == "SW-POLICY-001"]
    assert [(f["file"], f["severity"]) for f in changes] == [("policies/custom/acme.rego", "warning")]


def test_fail_on_never_in_the_pull_request_does_not_apply(runner: CliRunner, repo: Repo) -> None:
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\nfail_on: never\n')
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("min_pause: 30s", "min_pause: 60s"))
    repo.commit("break and hide it")
    r = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert r.exit_code == 1  # the trusted fail_on (error) decides
    rules = {f["rule"] for f in _json(r)["findings"]}
    assert "SW-CKPT-002" in rules and "SW-POLICY-001" in rules


def test_waiver_added_in_the_pull_request_does_not_waive(runner: CliRunner, repo: Repo) -> None:
    broken = CLEAN_CONTRACT.replace("min_pause: 30s", "min_pause: 60s")
    waiver = "waivers:\n  - {rule: SW-CKPT-002, reason: tuning, expires: 2027-01-31, approved_by: me}\n"
    repo.write("contracts/orders.yaml", broken + waiver)
    repo.commit("waive it")
    r = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    f = next(f for f in _json(r)["findings"] if f["rule"] == "SW-CKPT-002")
    assert f["waived"] is False and r.exit_code == 1
    # the same waiver, already on the base branch, does waive
    plain = invoke(runner, "check", "--format", "json", "--now", NOW, cwd=repo.path)
    assert next(f for f in _json(plain)["findings"] if f["rule"] == "SW-CKPT-002")["waived"] is True


def test_unknown_ref_is_a_clear_error(runner: CliRunner, repo: Repo) -> None:
    r = invoke(runner, "check", "--base", "no-such-branch", cwd=repo.path)
    assert r.exit_code == 2
    assert "unknown git ref 'no-such-branch'" in r.output


def test_shallow_clone_without_the_base_says_to_fetch_more_history(
    runner: CliRunner, repo: Repo, tmp_path: Path
) -> None:
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("interval: 60s", "interval: 45s"))
    repo.commit("one")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("interval: 60s", "interval: 50s"))
    repo.commit("two")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{repo.path}", str(clone)], check=True
    )
    r = invoke(runner, "check", "--base", "origin/main", cwd=clone)
    assert r.exit_code == 2
    assert "shallow" in r.output and "fetch-depth: 0" in r.output


def test_contract_unparseable_at_base_is_reported_and_head_still_checked(runner: CliRunner, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("  interval: 60s", "  interval: sixty"))
    repo.commit("broken base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("min_pause: 30s", "min_pause: 60s"))
    repo.commit("fixed, but a new problem")
    r = invoke(runner, "diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    (p,) = _json(r)["pipelines"]
    assert "could not be read" in p["note"] and "interval" in p["note"]
    c = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert "SW-CKPT-002" in {f["rule"] for f in _json(c)["findings"]}


def test_not_a_git_repository(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CLEAN_CONTRACT)
    r = invoke(runner, "check", "c.yaml", "--base", "main", cwd=tmp_path)
    assert r.exit_code == 2 and "not inside one" in r.output


def test_markdown_review_names_classes(runner: CliRunner, repo: Repo) -> None:
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("interval: 60s", "interval: 45s"))
    repo.commit("faster")
    r = invoke(runner, "diff", "--base", "main", "--now", NOW, cwd=repo.path)
    assert "### `orders-enrichment` (changed)" in r.output
    assert "| 🟡 coordinate | `checkpoint.interval` | changed | `60000` | `45000` |" in r.output
