"""PR mode does work only where the pull request changed something (issue 17, item 1).

A contract whose file the pull request leaves as it is, is not parsed on the base side and the
rules that compare it with its base and history are not evaluated — unless the pull request
changes policies or the configuration, when everything is evaluated again. Real git repositories,
the real CLI in a subprocess.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW, named_contract
from tests.gitrepo import Repo

TRANSITIVE = CLEAN_CONTRACT.replace("compatibility: full", "compatibility: forward_transitive")
CHANNEL = "\n    - {name: channel, type: string, required: true, id: 50, default: web}"


def _with_channel(text: str, required: bool | None) -> str:
    if required is None:
        return text
    field = CHANNEL if required else CHANNEL.replace("required: true, ", "")
    return text.replace("required: true, id: 3}", "required: true, id: 3}" + field)


def _check(repo: Repo) -> Proc:
    return sw("check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)


def _by_pipeline(p: Proc, rule: str) -> set[str]:
    return {f["pipeline"] for f in p.json()["findings"] if f["rule"] == rule}


def _history_repo(tmp_path: Path) -> Repo:
    """orders: `channel` required at v1, optional at v2, dropped at v3 — a forward_transitive
    violation that the merge of v3 already reported. payments: a second, plain contract."""
    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\npolicies: [policies/custom]\n')
    repo.write(
        "policies/custom/acme.rego", "package acme\n\nimport rego.v1\n\ndeny contains f if {\n\tfalse\n\tf := {}\n}\n"
    )
    repo.write("contracts/orders.yaml", _with_channel(TRANSITIVE, required=True))
    repo.write("contracts/payments.yaml", named_contract("payments"))
    repo.commit("v1")
    repo.write("contracts/orders.yaml", _with_channel(TRANSITIVE, required=False))
    repo.commit("v2: channel optional")
    repo.write("contracts/orders.yaml", _with_channel(TRANSITIVE, required=None))
    repo.commit("v3: channel dropped")
    repo.branch("feature")
    return repo


def test_a_contract_the_pull_request_changes_is_compared_with_its_history(tmp_path: Path) -> None:
    repo = _history_repo(tmp_path)
    repo.write(
        "contracts/orders.yaml", _with_channel(TRANSITIVE, required=None).replace("interval: 60s", "interval: 45s")
    )
    repo.commit("touch orders")
    p = _check(repo)
    assert _by_pipeline(p, "SW-SCHEMA-001") == {"orders-enrichment"}, p


def test_an_untouched_contract_is_not_compared_again(tmp_path: Path) -> None:
    repo = _history_repo(tmp_path)
    repo.write("contracts/payments.yaml", named_contract("payments").replace("60s", "45s"))
    repo.commit("touch payments only")
    p = _check(repo)
    assert p.code == 0, p
    assert _by_pipeline(p, "SW-SCHEMA-001") == set(), p
    assert p.json()["summary"]["pipelines"] == 2  # both still checked by the contract rules


def test_a_policy_change_compares_every_contract_again(tmp_path: Path) -> None:
    repo = _history_repo(tmp_path)
    repo.write("policies/custom/acme.rego", (repo.path / "policies/custom/acme.rego").read_text() + "\n# reworded\n")
    repo.commit("a policy change")
    p = _check(repo)
    assert "SW-POLICY-001" in {f["rule"] for f in p.json()["findings"]}, p
    assert _by_pipeline(p, "SW-SCHEMA-001") == {"orders-enrichment"}, p


def test_an_untouched_contract_keeps_its_waivers_and_its_contract_rules(tmp_path: Path) -> None:
    waived = CLEAN_CONTRACT.replace("min_pause: 30s", "min_pause: 90s") + (
        "waivers:\n  - {rule: SW-CKPT-002, reason: agreed, expires: 2027-01-31, approved_by: platform}\n"
    )
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", waived)
    repo.write("contracts/payments.yaml", named_contract("payments"))
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/payments.yaml", named_contract("payments").replace("60s", "45s"))
    repo.commit("touch payments only")
    p = _check(repo)
    assert p.code == 0, p
    (ckpt,) = [f for f in p.json()["findings"] if f["rule"] == "SW-CKPT-002"]
    assert ckpt["pipeline"] == "orders-enrichment" and ckpt["waived"] is True
    d = sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert [x["pipeline"] for x in d.json()["pipelines"]] == ["payments"], d
