"""Templates and placeholders in deployment files.

- A value that is (or holds) a placeholder — ``{{ .Values.x }}``, ``${VAR}``, ``$VAR`` — is decided
  at deploy time: it is not judged (no SW-DEPLOY-003 for it, no rule reads it), and an info
  finding names the key and the placeholder.
- A Helm template that is not YAML until rendered is named as one, with the remedy (render it with
  ``helm template`` and name the rendered file): an SW-FACT-001 error at its entry.
Before, ``SET execution.runtime-mode = $MODE;`` was an SW-DEPLOY-003 error, and a Helm template was
"not valid YAML"."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import TESTS
from tests.deployrepo import CLEAN_FLINK_CONF, check, line_of, make_repo

CHART = TESTS / "fixtures" / "deploy-corpus" / "apache__flink-kubernetes-operator" / "helm"
CONFIGMAP = (CHART / "flink-kubernetes-operator/templates/controller/configmap.yaml").read_text(encoding="utf-8")


def test_a_placeholder_in_a_sql_set_is_an_info_not_an_error(tmp_path: Path) -> None:
    sql = "SET execution.runtime-mode = $MODE;\nSET 'pipeline.name' = 'orders';\n"
    repo = make_repo(tmp_path / "repo", ["deploy/job.sql"], {"deploy/job.sql": sql})
    _, findings = check(repo)
    assert not [f for f in findings if f["rule"] == "SW-DEPLOY-003"]
    [info] = [f for f in findings if f["rule"] == "SW-DEPLOY-004"]
    assert (info["severity"], info["line"], info["path"]) == ("info", 1, "execution.runtime-mode")
    assert "$MODE" in info["message"] and "execution.runtime-mode" in info["message"]


def test_a_placeholder_interval_is_not_judged(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF.replace(
        "execution.checkpointing.interval: 60000", "execution.checkpointing.interval: ${CKPT}"
    )
    repo = make_repo(tmp_path / "repo", ["deploy/flink-conf.yaml"], {"deploy/flink-conf.yaml": conf})
    code, findings = check(repo)
    assert code == 0
    assert [(f["rule"], f["severity"]) for f in findings] == [("SW-DEPLOY-004", "info")]
    assert findings[0]["line"] == line_of(repo / "contracts/deploy/flink-conf.yaml", "${CKPT}")
    assert "${CKPT}" in findings[0]["message"]


def test_a_placeholder_in_a_cr_field_is_not_judged(tmp_path: Path) -> None:
    manifest = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: orders-enrichment
spec:
  flinkConfiguration:
    state.backend.type: "{{ .Values.backend }}"
  job:
    parallelism: "{{ .Values.parallelism }}"
"""
    repo = make_repo(tmp_path / "repo", ["deploy/fd.yaml"], {"deploy/fd.yaml": manifest})
    _, findings = check(repo)
    rules = sorted((f["rule"], f["severity"], f["line"]) for f in findings if f.get("source") == "deployment")
    assert ("SW-DEPLOY-003", "error", 9) not in rules
    assert not [r for r in rules if r[0] == "SW-DEPLOY-005"]  # the backend is not judged
    assert ("SW-DEPLOY-004", "info", 7) in rules and ("SW-DEPLOY-004", "info", 9) in rules


def test_a_typo_beside_placeholders_still_fires(tmp_path: Path) -> None:
    sql = "SET 'execution.checkpointing.intervall' = '${INTERVAL}';\n"
    repo = make_repo(tmp_path / "repo", ["deploy/job.sql"], {"deploy/job.sql": sql})
    _, findings = check(repo)
    [typo] = [f for f in findings if f["rule"] == "SW-DEPLOY-001"]
    assert typo["message"].endswith("did you mean execution.checkpointing.interval?")


def test_a_real_helm_template_is_named_as_one_with_the_remedy(tmp_path: Path) -> None:
    # outside contracts/: discovery reads every YAML file there, and a template is not YAML
    repo = make_repo(
        tmp_path / "repo",
        ["../charts/configmap.yaml", "deploy/flink-conf.yaml"],
        {"deploy/flink-conf.yaml": CLEAN_FLINK_CONF},
    )
    (repo / "charts").mkdir()
    (repo / "charts/configmap.yaml").write_text(CONFIGMAP, encoding="utf-8")
    code, findings = check(repo)
    assert code == 1
    [gap] = [f for f in findings if f["rule"] == "SW-FACT-001"]
    assert (gap["severity"], gap["path"]) == ("error", "job.deployment[0]")
    assert "Helm template" in gap["message"] and "helm template" in gap["message"]
    assert f"at line {line_of(repo / 'charts/configmap.yaml', '{{')}" in gap["message"]
    # the other file is still read: it is clean
    assert [f["rule"] for f in findings] == ["SW-FACT-001"]
