"""Right by default: what a new user runs gives the right answer. Through the real CLI, on real
Kubernetes operator manifests (tests/fixtures/deploy-corpus, origins in its README.md) and, for
pull requests, on real git repositories:

- a stateful job (state operators, an exactly-once sink) deployed with ``upgradeMode: stateless``,
  written or left to the operator's default (its ``JobSpec`` default is STATELESS), fails the
  check (SW-STATE-013); in a pull request that moves it there the review lists it as breaking;
  ``allowNonRestoredState: true`` against ``allow_non_restored_state: false`` fails (SW-STATE-012);
- a contract without ``schema_evolution`` is judged as ``compatibility: backward`` with the
  consumers protected: a pull request that drops a column the consumers read, or makes one
  optional, is breaking (SW-SCHEMA-012); ``facts`` shows the section in force;
- SW-STATE-004 says exactly when a restore breaks (Flink keeps the savepoint's max parallelism
  when none is set), not that a parallelism change breaks every restore.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW, TESTS
from tests.deployrepo import check, line_of, make_repo
from tests.gitrepo import Repo

OPERATOR = TESTS / "fixtures" / "deploy-corpus" / "apache__flink-kubernetes-operator" / "examples"
STATELESS = (OPERATOR / "basic.yaml").read_text(encoding="utf-8")  # upgradeMode: stateless
NO_MODE = (OPERATOR / "basic-ingress.yaml").read_text(encoding="utf-8")  # spec.job without upgradeMode
SAVEPOINT = (OPERATOR / "basic-checkpoint-ha.yaml").read_text(encoding="utf-8")  # upgradeMode: savepoint
assert "    upgradeMode: stateless\n" in STATELESS and "upgradeMode" not in NO_MODE
assert "    upgradeMode: savepoint\n" in SAVEPOINT

SECTION = "schema_evolution:\n  compatibility: full\n  allow_renames: false\n  coordinate_with_state: true\n"
assert SECTION in CLEAN_CONTRACT
NO_SECTION = CLEAN_CONTRACT.replace(SECTION, "")
AMOUNT = '    - {name: amount, type: "decimal(12,2)", id: 2}\n'
EVENT_TIME = "    - {name: event_time, type: timestamptz, required: true, id: 3}\n"


def _of(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == rule]


def _cr_repo(root: Path, text: str, contract: str = CLEAN_CONTRACT) -> Path:
    return make_repo(root, ["deploy/fd.yaml"], {"deploy/fd.yaml": text}, contract)


# --- a deploy that throws the state away --------------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "needle", "says"),
    [
        (STATELESS, "upgradeMode: stateless", "sets spec.job.upgradeMode to stateless at contracts/deploy/fd.yaml:"),
        (NO_MODE, "  job:", "sets no spec.job.upgradeMode, so the Kubernetes operator uses its default, stateless"),
    ],
    ids=["written", "operator-default"],
)
def test_a_stateful_job_deployed_stateless_fails_the_check(
    tmp_path: Path, manifest: str, needle: str, says: str
) -> None:
    repo = _cr_repo(tmp_path, manifest)
    code, findings = check(repo)
    assert code == 1
    [f] = _of(findings, "SW-STATE-013")
    assert (f["severity"], f["source"], f["file"]) == ("error", "deployment", "contracts/deploy/fd.yaml")
    assert f["line"] == line_of(repo / "contracts/deploy/fd.yaml", needle)
    assert f["path"] == "spec.job.upgradeMode"
    assert says in f["message"]
    assert (
        "restores nothing, but the pipeline keeps state: 1 state operator under state.operators (orders-dedup)"
        in (f["message"])
    )
    assert "exactly-once sinks (orders-table)" in f["message"]
    # facts tell the truth about the mode the operator runs the job with
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=repo)
    assert p.code == 0, p
    mode = p.json()["facts"]["deployment"]["job"]["upgrade_mode"]
    assert mode["value"] == "stateless"
    assert mode["default"] is (manifest is NO_MODE)


def test_savepoint_and_last_state_keep_the_state(tmp_path: Path) -> None:
    for mode in ("savepoint", "last-state"):
        text = SAVEPOINT.replace("upgradeMode: savepoint", f"upgradeMode: {mode}")
        _, findings = check(_cr_repo(tmp_path / mode, text))
        assert not _of(findings, "SW-STATE-013"), findings


def test_a_job_without_state_may_run_stateless(tmp_path: Path) -> None:
    operators = (
        "  operators:\n    - uid: orders-dedup\n      kind: keyed\n      key: [order_id]\n      ttl: 24h\n"
        "      serializer: avro\n      schema_version: 3\n"
    )
    assert operators in CLEAN_CONTRACT
    plain = CLEAN_CONTRACT.replace(operators, "").replace(
        "      delivery: exactly_once\n", "      delivery: at_least_once\n"
    )
    _, findings = check(_cr_repo(tmp_path, STATELESS, plain))
    assert not _of(findings, "SW-STATE-013"), findings


def test_allow_non_restored_state_in_the_cr_against_the_contract_fails(tmp_path: Path) -> None:
    text = SAVEPOINT.replace(
        "    upgradeMode: savepoint\n", "    upgradeMode: savepoint\n    allowNonRestoredState: true\n"
    )
    repo = _cr_repo(tmp_path, text)
    code, findings = check(repo)
    assert code == 1
    [f] = _of(findings, "SW-STATE-012")
    assert f["line"] == line_of(repo / "contracts/deploy/fd.yaml", "allowNonRestoredState: true")
    assert "state.allow_non_restored_state is false" in f["message"]


def _pull_request(tmp_path: Path, files: dict[str, str], changes: dict[str, str]) -> Repo:
    repo = Repo(tmp_path / "repo")
    for rel, text in files.items():
        repo.write(rel, text)
    repo.commit("base")
    repo.branch("feature")
    for rel, text in changes.items():
        repo.write(rel, text)
    repo.commit("head")
    return repo


def _review(repo: Repo) -> Proc:
    p = sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert p.code in (0, 1), p
    return p


def _changes(p: Proc) -> list[dict[str, Any]]:
    (pipeline,) = [x for x in p.json()["pipelines"] if x["pipeline"] == "orders-enrichment"]
    changes: list[dict[str, Any]] = pipeline["changes"]
    return changes


@pytest.mark.parametrize("old", ["savepoint", "last-state"])
def test_a_pull_request_moving_a_stateful_job_to_stateless_is_breaking_in_the_review(tmp_path: Path, old: str) -> None:
    contract = CLEAN_CONTRACT.replace(
        "  restart_strategy: exponential-delay\n",
        "  restart_strategy: exponential-delay\n  deployment: [deploy/fd.yaml]\n",
    )
    base = SAVEPOINT.replace("upgradeMode: savepoint", f"upgradeMode: {old}")
    head = SAVEPOINT.replace("upgradeMode: savepoint", "upgradeMode: stateless")
    files = {"contracts/orders.yaml": contract, "contracts/deploy/fd.yaml": base}
    repo = _pull_request(tmp_path, files, {"contracts/deploy/fd.yaml": head})
    p = _review(repo)
    assert p.code == 1, p
    [change] = [c for c in _changes(p) if c["rule"] == "SW-STATE-013"]
    assert (change["class"], change["change"], change["path"]) == ("breaking", "deployment", "spec.job.upgradeMode")
    assert (change["before"], change["after"]) == (None, "stateless")
    assert "starts the job from empty state and restores nothing" in change["reason"]
    # the pull-request check fails on it too
    c = sw("check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert c.code == 1, c
    assert [f["line"] for f in c.json()["findings"] if f["rule"] == "SW-STATE-013"] == [
        line_of(repo.path / "contracts/deploy/fd.yaml", "upgradeMode: stateless")
    ]


# --- schema evolution protects the consumers by default -----------------------------------------


@pytest.mark.parametrize(
    "section",
    ["", "schema_evolution:\n  compatibility: backward\n"],
    ids=["absent", "explicit-backward"],
)
def test_dropping_a_column_the_consumers_read_is_breaking_by_default(tmp_path: Path, section: str) -> None:
    base = NO_SECTION + section
    repo = _pull_request(tmp_path, {"contracts/orders.yaml": base}, {"contracts/orders.yaml": base.replace(AMOUNT, "")})
    p = _review(repo)
    assert p.code == 1, p
    [removed] = [c for c in _changes(p) if c["change"] == "removed"]
    assert (removed["path"], removed["class"], removed["rule"]) == ("table.schema[1]", "breaking", "SW-SCHEMA-012")
    assert removed["consumers"] == ["finance-dashboard"]
    assert "(compatibility backward)" in removed["reason"]
    c = sw("check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert c.code == 1, c
    [f] = [f for f in c.json()["findings"] if f["rule"] == "SW-SCHEMA-012"]
    assert (f["severity"], f["path"]) == ("error", "table.schema")


def test_making_a_column_the_consumers_read_optional_is_breaking_by_default(tmp_path: Path) -> None:
    head = NO_SECTION.replace(EVENT_TIME, "    - {name: event_time, type: timestamptz, id: 3}\n")
    repo = _pull_request(tmp_path, {"contracts/orders.yaml": NO_SECTION}, {"contracts/orders.yaml": head})
    p = _review(repo)
    assert p.code == 1, p
    [change] = [c for c in _changes(p) if c["path"] == "table.schema[2].required"]
    assert (change["change"], change["class"], change["rule"]) == ("removed", "breaking", "SW-SCHEMA-012")
    assert (change["before"], change["after"]) == (True, None)
    assert "is required in the base (main) and optional now" in change["reason"]


def test_protect_consumers_false_at_the_base_lets_the_column_go_for_review(tmp_path: Path) -> None:
    base = NO_SECTION + "schema_evolution:\n  protect_consumers: false\n"
    repo = _pull_request(tmp_path, {"contracts/orders.yaml": base}, {"contracts/orders.yaml": base.replace(AMOUNT, "")})
    p = _review(repo)
    assert p.code == 0, p
    [removed] = [c for c in _changes(p) if c["change"] == "removed"]
    assert (removed["class"], removed["rule"]) == ("coordinate", None)
    # turning the protection off in the pull request itself does not count yet, and is reported
    head = NO_SECTION.replace(AMOUNT, "") + "schema_evolution:\n  protect_consumers: false\n"
    repo = _pull_request(tmp_path / "same-pr", {"contracts/orders.yaml": NO_SECTION}, {"contracts/orders.yaml": head})
    c = sw("check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert c.code == 1, c
    rules = {(f["rule"], f["path"]) for f in c.json()["findings"]}
    assert {("SW-SCHEMA-012", "table.schema"), ("SW-SCHEMA-009", "schema_evolution.protect_consumers")} <= rules


def test_facts_show_the_schema_evolution_in_force(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(NO_SECTION, encoding="utf-8")
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=tmp_path)
    assert p.code == 0, p
    assert p.json()["contract"]["schema_evolution"] == {
        "compatibility": "backward",
        "allow_renames": False,
        "coordinate_with_state": False,
        "protect_consumers": True,
    }
    # a key the contract writes is kept, the others are filled in
    (tmp_path / "contracts" / "orders.yaml").write_text(
        NO_SECTION + "schema_evolution:\n  compatibility: FULL\n", encoding="utf-8"
    )
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=tmp_path)
    assert p.json()["contract"]["schema_evolution"]["compatibility"] == "full"
    assert p.json()["contract"]["schema_evolution"]["protect_consumers"] is True


# --- SW-STATE-004 says when a restore breaks ----------------------------------------------------


def test_max_parallelism_findings_say_exactly_when_a_restore_breaks(tmp_path: Path) -> None:
    # the contract does not pin it
    repo = tmp_path / "contract"
    (repo / "contracts").mkdir(parents=True)
    (repo / "contracts" / "orders.yaml").write_text(CLEAN_CONTRACT.replace("  max_parallelism: 128\n", ""))
    _, findings = check(repo)
    [f] = _of(findings, "SW-STATE-004")
    assert "(128 for job.parallelism 4, the same for any parallelism up to 85)" in f["message"]
    assert (
        "keeps the savepoint's value on every restore, which breaks when the job is rescaled above that value"
        in (f["message"])
    )
    assert "breaks every restore" not in f["message"]
    assert (f["evidence"]["parallelism"], f["evidence"]["derived_max_parallelism"]) == (4, 128)

    # the contract pins 128, the real manifest sets none: the job runs at parallelism 2
    repo = _cr_repo(tmp_path / "deployment", SAVEPOINT)
    _, findings = check(repo)
    [g] = [x for x in _of(findings, "SW-STATE-004") if x["source"] == "deployment"]
    assert "leaves pipeline.max-parallelism unset" in g["message"]
    assert "(128 for parallelism 2, the same up to parallelism 85)" in g["message"]
    assert "breaks every restore" not in g["message"]
    assert json.dumps(g["evidence"]["derived_max_parallelism"]) == "128"
