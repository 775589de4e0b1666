"""Flink Kubernetes Operator resources beyond FlinkDeployment / FlinkSessionJob, read as the
operator reads them.

- ``FlinkBlueGreenDeployment`` (operator 1.14+): ``spec.template.spec`` is a FlinkDeployment spec
  (FlinkBlueGreenDeploymentSpec.template -> FlinkDeploymentTemplateSpec.spec); ``spec.configuration``
  is the blue/green controller's own configuration, not the job's.
- Other kinds of the API group without Flink configuration (``FlinkStateSnapshot``) are named and
  skipped with an info finding, not reported as an ambiguous manifest.
- ``spec.jobManager/taskManager.resources`` (Kubernetes ResourceRequirements, the newer form):
  memory is ``requests.memory``, else ``limits.memory``, and it replaces the deprecated
  ``resource`` block whenever it has any request or limit (FlinkConfigBuilder.applyResourceConfig).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import sw
from tests.conftest import TESTS
from tests.deployrepo import check, line_of, make_repo

CORPUS = TESTS / "fixtures" / "deploy-corpus" / "apache__flink-kubernetes-operator"
BLUE_GREEN = (CORPUS / "e2e-tests" / "data" / "bluegreen-laststate.yaml").read_text(encoding="utf-8")
SNAPSHOT = (CORPUS / "examples" / "snapshot" / "savepoint-already-exists.yaml").read_text(encoding="utf-8")


def _facts(repo: Path) -> dict[str, object]:
    r = sw("facts", "orders-enrichment", cwd=repo)
    assert r.code == 0, r
    return json.loads(r.stdout)["facts"]["deployment"]  # type: ignore[no-any-return]


def test_a_real_blue_green_deployment_is_read_as_its_template(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["deploy/bg.yaml"], {"deploy/bg.yaml": BLUE_GREEN})
    code, findings = check(repo)
    assert code == 1
    rules = {f["rule"] for f in findings}
    # read: no "no FlinkDeployment" ambiguity, and checkpointing is seen as on (10s)
    assert "SW-DEPLOY-004" not in rules and "SW-CKPT-001" not in rules and "SW-CKPT-006" not in rules
    # the template's interval differs from the contract's 60s: reported at its line
    [interval] = [f for f in findings if f["rule"] == "SW-CKPT-003" and f["path"] == "execution.checkpointing.interval"]
    assert interval["file"] == "contracts/deploy/bg.yaml"
    assert interval["line"] == line_of(repo / "contracts/deploy/bg.yaml", 'execution.checkpointing.interval: "10s"')
    facts = _facts(repo)
    assert facts["files"] == [
        {
            "file": "contracts/deploy/bg.yaml",
            "kind": "flink-blue-green-deployment",
            "resources": ["FlinkBlueGreenDeployment/basic-bg-laststate-example"],
        }
    ]
    job = facts["job"]
    assert isinstance(job, dict) and job["upgrade_mode"]["value"] == "last_state"
    # resources.requests.memory "2G" of the template's taskManager is the process memory
    config = facts["config"]
    assert isinstance(config, dict)
    tm = config["taskmanager.memory.process.size"]
    assert (tm["value"], tm["key"]) == (2 * 1024**3, "spec.template.spec.taskManager.resources.requests.memory")


def test_a_typo_in_a_blue_green_template_still_fires(tmp_path: Path) -> None:
    text = BLUE_GREEN.replace("execution.checkpointing.interval:", "execution.checkpointing.intervall:")
    repo = make_repo(tmp_path / "repo", ["deploy/bg.yaml"], {"deploy/bg.yaml": text})
    _, findings = check(repo)
    [typo] = [f for f in findings if f["rule"] == "SW-DEPLOY-001"]
    assert "did you mean execution.checkpointing.interval?" in typo["message"]
    assert typo["line"] == line_of(repo / "contracts/deploy/bg.yaml", "intervall")
    # and so the interval is the operator's for last-state (5 min), not the 10s the template meant:
    # the contract's 60s differs from it, reported at the upgradeMode line
    [interval] = [f for f in findings if f["rule"] == "SW-CKPT-003" and f["path"] == "execution.checkpointing.interval"]
    assert interval["evidence"]["deployment_value"] == 300_000, interval
    assert "the Kubernetes operator's default interval" in interval["message"]
    assert interval["line"] == line_of(repo / "contracts/deploy/bg.yaml", "upgradeMode: last-state")


def test_a_state_snapshot_is_named_and_skipped_with_an_info(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["deploy/snap.yaml"], {"deploy/snap.yaml": SNAPSHOT})
    _, findings = check(repo)
    [skipped] = [f for f in findings if f["rule"] == "SW-DEPLOY-004"]
    assert skipped["severity"] == "info"
    assert "FlinkStateSnapshot" in skipped["message"]
    assert skipped["line"] == line_of(repo / "contracts/deploy/snap.yaml", "kind: FlinkStateSnapshot") - 1


def test_resources_limits_stand_in_for_requests_and_replace_the_deprecated_block(tmp_path: Path) -> None:
    manifest = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: orders-enrichment
spec:
  flinkConfiguration:
    execution.checkpointing.interval: 60 s
  jobManager:
    resource:
      memory: 4096m
    resources:
      limits:
        memory: 3Gi
  taskManager:
    resources:
      requests:
        memory: 1024m
      limits:
        memory: 8Gi
"""
    repo = make_repo(tmp_path / "repo", ["deploy/fd.yaml"], {"deploy/fd.yaml": manifest})
    config = _facts(repo)["config"]
    assert isinstance(config, dict)
    jm, tm = config["jobmanager.memory.process.size"], config["taskmanager.memory.process.size"]
    assert (jm["value"], jm["key"], jm["line"]) == (3 * 1024**3, "spec.jobManager.resources.limits.memory", 13)
    assert (tm["value"], tm["key"], tm["line"]) == (1024**3, "spec.taskManager.resources.requests.memory", 17)


def test_two_resources_of_the_same_name_are_told_apart_by_namespace(tmp_path: Path) -> None:
    doc = "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata:\n  name: orders-enrichment\n"
    manifest = doc + "  namespace: staging\n---\n" + doc + "  namespace: prod\n"
    repo = make_repo(tmp_path / "repo", ["deploy/fd.yaml"], {"deploy/fd.yaml": manifest})
    _, findings = check(repo)
    [several] = [f for f in findings if f["rule"] == "SW-DEPLOY-004"]
    assert "namespace staging" in several["message"] and "namespace prod" in several["message"]
