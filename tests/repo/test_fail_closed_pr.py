"""A pull request must not get around its check, and a typo must not silently pass.

Each test runs the installed ``streamwarden`` in a subprocess on a real git repository: the base
branch commits a configuration with a custom policy that fires, the pull request tries a way
around it. (Issue 12, points 1-6 and 8.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

# Fires on every contract whose checkpoint interval is above 30 s (CLEAN_CONTRACT's is 60 s).
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

BASE_CONFIG = 'contracts: ["contracts/**/*.yaml"]\npolicies: [policies/custom]\nfail_on: error\n'


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.write("streamwarden.yaml", BASE_CONFIG)
    r.write("policies/custom/acme.rego", CUSTOM_POLICY)
    r.write("contracts/orders.yaml", CLEAN_CONTRACT)
    r.commit("base: a custom policy that fires on orders")
    r.branch("feature")
    return r


def _on_base(repo: Repo, rel: str, text: str, message: str) -> None:
    """Land a change on main (the trusted ref) and merge it into the pull request's branch."""
    repo.checkout("main")
    repo.write(rel, text)
    repo.commit(message)
    repo.checkout("feature")
    repo.git("merge", "-q", "main")


def _check(repo: Repo, *args: str) -> Proc:
    return sw("check", "--base", "main", "--format", "json", "--now", NOW, *args, cwd=repo.path)


def _rules(p: Proc, unwaived: bool = True) -> list[str]:
    return sorted(f["rule"] for f in p.json()["findings"] if not (unwaived and f["waived"]))


def _contract(name: str, interval: str = "60s") -> str:
    return CLEAN_CONTRACT.replace("name: orders-enrichment\n  owner", f"name: {name}\n  owner", 1).replace(
        "interval: 60s", f"interval: {interval}"
    )


def test_the_base_check_fails_as_the_baseline_for_these_tests(repo: Repo) -> None:
    p = _check(repo)
    assert p.code == 1, p
    assert "ACME-001" in _rules(p)


# 1 -----------------------------------------------------------------------------------------------
def test_deleting_the_configuration_keeps_the_trusted_policies_and_fail_on(repo: Repo) -> None:
    repo.remove("streamwarden.yaml")
    repo.commit("drop the configuration")
    p = _check(repo)
    assert p.code == 1, p
    rules = _rules(p)
    assert "ACME-001" in rules  # the base's custom policy still applies
    change = [f for f in p.json()["findings"] if f["rule"] == "SW-POLICY-001"]
    assert [f["evidence"]["change"] for f in change] == ["removed"], p
    assert change[0]["file"] == "streamwarden.yaml"


# 2 -----------------------------------------------------------------------------------------------
def test_renaming_the_configuration_with_fail_on_never_is_judged_by_the_trusted_one(repo: Repo) -> None:
    repo.git("mv", "streamwarden.yaml", "streamwarden.yml")
    repo.write("streamwarden.yml", 'contracts: ["contracts/**/*.yaml"]\nfail_on: never\n')
    repo.commit("rename the configuration, never fail")
    p = _check(repo)
    assert p.code == 1, p  # the trusted fail_on (error), not the pull request's never
    assert "ACME-001" in _rules(p)
    changes = sorted((f["file"], f["evidence"]["change"]) for f in p.json()["findings"] if f["rule"] == "SW-POLICY-001")
    assert changes == [("streamwarden.yaml", "removed"), ("streamwarden.yml", "added")], p


def test_environments_come_from_the_trusted_configuration(repo: Repo) -> None:
    """A pull request cannot point an environment (and its credentials) at a host of its choosing."""
    trusted = BASE_CONFIG + "environments:\n  prod: {}\n"
    _on_base(repo, "streamwarden.yaml", trusted, "an empty prod environment")
    repo.write(
        "streamwarden.yaml",
        trusted.replace("prod: {}", "prod:\n    flink: {rest_url: 'http://127.0.0.1:9/steal'}"),
    )
    repo.commit("point prod at another host")
    p = _check(repo, "--env", "prod")
    assert p.code == 1, p
    flink = [f for f in p.json()["findings"] if f["rule"] == "SW-FACT-001" and "flink" in f["message"].lower()]
    assert flink == [], p  # the trusted prod has no Flink: nothing was contacted, nothing is missing


# 3 -----------------------------------------------------------------------------------------------
def test_narrowing_the_contract_globs_does_not_hide_a_new_contract(repo: Repo) -> None:
    repo.write("streamwarden.yaml", BASE_CONFIG.replace("contracts/**/*.yaml", "contracts/orders.yaml"))
    repo.write("contracts/more/payments.yaml", _contract("payments", interval="90s"))
    repo.commit("narrow the globs, add a contract outside them")
    p = _check(repo)
    assert p.code == 1, p
    pipelines = {f["pipeline"] for f in p.json()["findings"] if f["rule"] == "ACME-001"}
    assert pipelines == {"orders-enrichment", "payments"}, p
    assert p.json()["summary"]["pipelines"] == 2


def test_the_pull_requests_own_globs_add_contracts_too(repo: Repo) -> None:
    repo.write(
        "streamwarden.yaml", BASE_CONFIG.replace('["contracts/**/*.yaml"]', '["contracts/**/*.yaml", "jobs/*.yaml"]')
    )
    repo.write("jobs/payments.yaml", _contract("payments"))
    repo.commit("contracts in a second folder")
    p = _check(repo)
    assert p.json()["summary"]["pipelines"] == 2, p


# 4 -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["contracts/bestellungen-ü.yaml", "contracts/two\nlines.yaml", 'contracts/"quoted".yaml']
)
def test_a_contract_whose_path_git_quotes_is_seen_on_the_base_side(tmp_path: Path, name: str) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    repo.write(name, CLEAN_CONTRACT)
    repo.commit("base")
    repo.branch("feature")
    repo.write(name, CLEAN_CONTRACT.replace("type: long, required: true, id: 1", "type: string, required: true, id: 1"))
    repo.commit("order_id becomes a string")
    p = sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert p.code == 1, p  # a breaking change, not "added"
    (pipeline,) = p.json()["pipelines"]
    assert pipeline["status"] == "changed", p
    assert any(c["rule"] == "SW-SCHEMA-002" for c in pipeline["changes"]), p
    c = sw("check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert c.code == 1, c
    assert "SW-SCHEMA-002" in _rules(c)


# 5 -----------------------------------------------------------------------------------------------
WAIVER = """waivers:
  - rule: ACME-001
    reason: "the 60s interval is agreed with the finance team"
    expires: {expires}
    approved_by: data-platform
"""


def test_a_base_waiver_stays_in_force_while_the_pull_request_extends_it(repo: Repo) -> None:
    _on_base(
        repo,
        "contracts/orders.yaml",
        CLEAN_CONTRACT + WAIVER.format(expires="2026-12-31"),
        "waive ACME-001 until the end of the year",
    )
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT + WAIVER.format(expires="2027-06-30"))
    repo.commit("extend the waiver by half a year")
    p = _check(repo)
    assert p.code == 0, p  # the base's waiver still covers the finding
    (acme,) = [f for f in p.json()["findings"] if f["rule"] == "ACME-001"]
    assert acme["waived"] is True
    assert acme["waiver"]["expires"] == "2026-12-31"  # the base version is the one in force
    assert "SW-WAIVER-002" in _rules(p)  # the extension waits for review


def test_a_waiver_only_the_pull_request_adds_covers_nothing(repo: Repo) -> None:
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT + WAIVER.format(expires="2026-12-31"))
    repo.commit("waive it myself")
    p = _check(repo)
    assert p.code == 1, p
    assert "ACME-001" in _rules(p)


def test_a_waiver_the_pull_request_removes_covers_nothing(repo: Repo) -> None:
    _on_base(repo, "contracts/orders.yaml", CLEAN_CONTRACT + WAIVER.format(expires="2026-12-31"), "waive ACME-001")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("drop the waiver")
    p = _check(repo)
    assert p.code == 1, p
    assert "ACME-001" in _rules(p)


def test_a_base_waiver_that_has_expired_covers_nothing_in_a_pull_request(repo: Repo) -> None:
    _on_base(
        repo,
        "contracts/orders.yaml",
        CLEAN_CONTRACT + WAIVER.format(expires="2026-11-01"),
        "waive ACME-001 (expired by NOW)",
    )
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT + WAIVER.format(expires="2027-01-31"))
    repo.commit("renew the waiver")
    p = _check(repo)
    assert p.code == 1, p
    assert "ACME-001" in _rules(p)


# 6 -----------------------------------------------------------------------------------------------
def test_deleting_the_only_contract_is_judged_not_an_error(repo: Repo) -> None:
    repo.remove("contracts/orders.yaml")
    repo.commit("delete the only contract")
    p = _check(repo)
    assert p.code == 1, p
    assert _rules(p) == ["SW-SCHEMA-011"], p
    d = sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert d.code == 1, d
    assert d.json()["pipelines"][0]["status"] == "removed"


# 8 -----------------------------------------------------------------------------------------------
TYPO = CLEAN_CONTRACT.replace("kind: PipelineContract", "kind: PipelineContrat")
NO_KIND = CLEAN_CONTRACT.replace("kind: PipelineContract\n", "")


def _two_contracts(tmp_path: Path, broken: str, config: str | None) -> Path:
    root = tmp_path / "repo"
    (root / "contracts").mkdir(parents=True)
    (root / "contracts/orders.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    (root / "contracts/payments.yaml").write_text(broken.replace("orders-enrichment", "payments"), encoding="utf-8")
    if config is not None:
        (root / "streamwarden.yaml").write_text(config, encoding="utf-8")
    return root


@pytest.mark.parametrize("broken", [TYPO, NO_KIND], ids=["misspelled-kind", "missing-kind"])
@pytest.mark.parametrize(
    "config",
    ['contracts: ["contracts/*.yaml"]\n', None],
    ids=["globs-in-config", "default-globs"],
)
def test_a_contract_with_a_bad_kind_is_unusable_input_not_skipped(
    tmp_path: Path, broken: str, config: str | None
) -> None:
    root = _two_contracts(tmp_path, broken, config)
    for args in (("check",), ("check", "contracts"), ("validate",)):
        p = sw(*args, cwd=root)
        assert p.code == 2, (args, p)
        assert "contracts/payments.yaml:" in p.output, p
        assert "kind" in p.output
        assert "PipelineContract" in p.output  # what to write instead
    p = sw("check", "contracts/payments.yaml", cwd=root)
    assert p.code == 2, p


def test_a_misspelled_kind_without_api_version_is_still_caught_in_a_directory(tmp_path: Path) -> None:
    broken = TYPO.replace("apiVersion: streamwarden/v1\n", "")
    root = _two_contracts(tmp_path, broken, None)
    p = sw("check", "contracts", cwd=root)
    assert p.code == 2, p
    assert "did you mean 'PipelineContract'?" in p.output, p


def test_other_yaml_in_a_contract_directory_is_still_skipped(tmp_path: Path) -> None:
    root = _two_contracts(tmp_path, CLEAN_CONTRACT, None)
    (root / "contracts/payments.yaml").unlink()
    (root / "contracts/deploy.yaml").write_text(
        "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {name: orders}\n", encoding="utf-8"
    )
    p = sw("check", "--format", "json", "--now", NOW, cwd=root)
    assert p.code == 0, p
    assert p.json()["summary"]["pipelines"] == 1
