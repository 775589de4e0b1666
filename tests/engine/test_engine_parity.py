"""The two Rego engines give the same findings on every contract the repository ships or builds.

`test_rego_policies.py` compares pass/fail per Rego test; that would not notice a rule whose
message, path or severity differs between engines while its tests pass on both. Here the installed
``streamwarden`` command runs each case twice, ``--engine regorus`` (the default, embedded) and
``--engine opa``, and the findings must be equal, field by field. The OPA side is the OPA Go engine
itself (opa-golib-python-bindings, the test oracle) behind OPA's REST API (the stand-in server of
test_engine_opa_server.py: this machine cannot run an ``opa`` binary); the real ``opa`` server is
compared on the examples there, where one is installed.

Cases: the example contracts and the golden fixture; every deployment fixture (tests/fixtures/deploy
and the real deploy-corpus files) named by a contract; a pull request (``--base``) on a git repository
with one contract per diff rule's change; live Iceberg facts (``--env``) for check, gate and evidence.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW, REPO
from tests.engine.test_engine_opa_server import _stand_in
from tests.gitrepo import Repo
from tests.policies.test_diff_rules_git import CASES

FIXTURES = REPO / "tests" / "fixtures"
CONTRACT_DIRS = ("contracts/examples", "tests/golden/fixtures")


@pytest.fixture(scope="module")
def opa_url() -> Iterator[str]:
    """The OPA Go engine behind the stand-in REST server of test_engine_opa_server (skips, with
    the install line, where the OPA bindings are missing)."""
    for server in _stand_in():
        yield server.url


def _both(opa_url: str, *args: str, cwd: Path) -> tuple[Proc, Proc]:
    """The same command on each engine; both must finish with a decision (exit 0 or 1)."""
    regorus = sw(*args, "--engine", "regorus", cwd=cwd, timeout=300)
    opa = sw(*args, "--engine", "opa", "--opa-url", opa_url, cwd=cwd, timeout=300)
    assert regorus.code in (0, 1), regorus
    assert opa.code == regorus.code, (regorus, opa)
    return regorus, opa


def _findings(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (f["pipeline"], f["rule"], f["severity"], f["path"], f["message"], f.get("file"), f.get("line"))
        for f in doc["findings"]
    )


def _same_check(opa_url: str, *args: str, cwd: Path, expect_rules: set[str] | None = None) -> list[tuple[Any, ...]]:
    regorus, opa = _both(opa_url, "check", "--now", NOW, "--format", "json", "--no-cache", *args, cwd=cwd)
    ours, theirs = regorus.json(), opa.json()
    assert _findings(ours), "no findings: the comparison would mean nothing"
    assert _findings(theirs) == _findings(ours)
    assert theirs == ours  # the whole report: fingerprints, evidence, waivers, summary
    fired = {f[1] for f in _findings(ours)}
    assert (expect_rules or set()) <= fired, sorted((expect_rules or set()) - fired)
    return _findings(ours)


def test_every_example_and_fixture_contract(opa_url: str) -> None:
    contracts = sorted(
        p for d in CONTRACT_DIRS for p in (REPO / d).rglob("*.yaml") if "PipelineContract" in p.read_text()
    )
    assert len(contracts) >= 4
    found = _same_check(opa_url, *CONTRACT_DIRS, cwd=REPO)
    assert {f[0] for f in found} >= {"payments-cdc", "clickstream-sessions"}


def _deployment_repo(root: Path) -> int:
    """One contract (the clean one, renamed) per deployment fixture file, naming it in job.deployment."""
    shutil.copytree(FIXTURES / "deploy", root / "deploy")
    shutil.copytree(FIXTURES / "deploy-corpus", root / "corpus")
    files = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".yaml", ".yml", ".sql") and "contracts" not in p.parts
    )
    (root / "contracts").mkdir()
    for i, rel in enumerate(files):
        text = CLEAN_CONTRACT.replace("name: orders-enrichment\n  owner", f"name: d{i:03d}\n  owner", 1)
        text = text.replace(
            "  restart_strategy: exponential-delay\n",
            f"  restart_strategy: exponential-delay\n  deployment:\n    - ../{rel}\n",
            1,
        )
        (root / "contracts" / f"d{i:03d}.yaml").write_text(text, encoding="utf-8")
    return len(files)


def test_every_deployment_fixture(opa_url: str, tmp_path: Path) -> None:
    count = _deployment_repo(tmp_path)
    assert count >= 50
    found = _same_check(opa_url, cwd=tmp_path, expect_rules={"SW-DEPLOY-001", "SW-DEPLOY-004", "SW-CKPT-004"})
    assert any(f[5] and f[5].startswith("corpus/") for f in found)  # findings located in the deployment files


def test_a_pull_request_with_every_diff_rule(opa_url: str, tmp_path: Path) -> None:
    """``check --base main``: one contract per change of test_diff_rules_git, base on main, head on
    a branch; the diff rules (schema, state, waivers, backfills) fire on both engines alike."""
    repo = Repo(tmp_path / "repo")

    def contract(i: int) -> str:
        return CLEAN_CONTRACT.replace("name: orders-enrichment\n  owner", f"name: pr{i:02d}\n  owner", 1)

    for i, (_, base_edit, _, _) in enumerate(CASES):
        repo.write(f"contracts/pr{i:02d}.yaml", base_edit(contract(i)))
    repo.commit("base")
    repo.branch("feature")
    for i, (_, _, head_edit, _) in enumerate(CASES):
        repo.write(f"contracts/pr{i:02d}.yaml", head_edit(contract(i)))
    repo.commit("head")
    expected = {rule for *_, rule in CASES if rule}
    assert len(expected) >= 14
    _same_check(opa_url, "--base", "main", cwd=repo.path, expect_rules=expected)


@pytest.fixture
def live(tmp_path: Path) -> tuple[Any, Path]:
    """A real SQLite Iceberg catalog whose table the Flink sink committed checkpoints 1..20 into,
    append-only (so a restore from 12 duplicates rows), and a savepoint of checkpoint 12."""
    pytest.importorskip("pyiceberg", reason="live Iceberg facts need the [iceberg] extra")
    from tests.recovery_repo import RecoveryRepo

    r = RecoveryRepo(tmp_path, upsert=False)
    r.commit(1, 20)
    return r, r.savepoint(12)


def test_live_iceberg_facts_in_check_gate_and_evidence(opa_url: str, live: tuple[Any, Path]) -> None:
    repo, savepoint = live
    common = ("--config", str(repo.root / "streamwarden.yaml"), "--now", repo.now_arg())
    regorus, opa = _both(opa_url, "check", "--env", "prod", "--format", "json", "--no-cache", *common, cwd=repo.root)
    assert _findings(opa.json()) == _findings(regorus.json())
    live_rules = {f[1] for f in _findings(regorus.json())}
    assert "SW-RET-006" in live_rules, live_rules  # read from the live table's properties
    for verb in ("gate", "evidence"):
        args = (verb, "orders-enrichment", "--env", "prod", "--restore-from", str(savepoint), "--format", "json")
        regorus, opa = _both(opa_url, *args, *common, cwd=repo.root)
        ours, theirs = regorus.json(), opa.json()
        verdict = ours.get("verdict", ours)  # gate prints the decision itself, evidence under "verdict"
        assert verdict["decision"] == "deny" and "SW-REC-002" in [r["rule"] for r in verdict["reasons"]], verb
        assert json.dumps(theirs, sort_keys=True) == json.dumps(ours, sort_keys=True), verb
