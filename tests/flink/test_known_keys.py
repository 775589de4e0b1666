"""Keys of Flink components are known (SW-DEPLOY-001 stays quiet), typos of them are not, and a
repository can extend the known set in streamwarden.yaml (``flink: {known_keys: [...]}``).

The component key sets are collected from the option classes of the components (Flink Kubernetes
Operator, autoscaler, standalone autoscaler, blue/green controller, Stateful Functions) and kept as
data in streamwarden/flink/keys/. Before, ``statefun.*`` and ``autoscaler.standalone.*`` keys were
"unknown", while a typo under ``job.autoscaler.`` or ``kubernetes.operator.`` passed unnoticed."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import TESTS
from tests.deployrepo import CLEAN_FLINK_CONF, check, line_of, make_repo

CORPUS = TESTS / "fixtures" / "deploy-corpus"
REAL = {
    "statefun": "apache__flink-statefun/tools/docker/flink-distribution-template/conf/flink-conf.yaml",
    "autoscaler-standalone": (
        "apache__flink-kubernetes-operator/flink-autoscaler-standalone/src/test/resources/config.yaml"
    ),
    "operator": "apache__flink-kubernetes-operator/helm/flink-kubernetes-operator/conf/flink-conf.yaml",
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_component_files_have_no_unknown_keys(tmp_path: Path, name: str) -> None:
    rel = REAL[name]
    target = "deploy/" + rel.rsplit("/", 1)[-1]
    repo = make_repo(tmp_path / "repo", [target], {target: (CORPUS / rel).read_text(encoding="utf-8")})
    _, findings = check(repo)
    assert [f["path"] for f in findings if f["rule"] == "SW-DEPLOY-001"] == []


@pytest.mark.parametrize(
    ("line", "suggestion"),
    [
        ("job.autoscaler.enabeld: true", "job.autoscaler.enabled"),
        ("statefun.flink-job-nam: orders", "statefun.flink-job-name"),
        ("kubernetes.operator.savepoint.history.max.cont: 5", "kubernetes.operator.savepoint.history.max.count"),
        ("autoscaler.standalone.control-loop.intervall: 10 s", "autoscaler.standalone.control-loop.interval"),
        ("execution.checkpointing.intervall: 60 s", "execution.checkpointing.interval"),
    ],
)
def test_a_typo_of_a_component_or_core_key_is_named_with_did_you_mean(
    tmp_path: Path, line: str, suggestion: str
) -> None:
    repo = make_repo(tmp_path / "repo", ["deploy/flink-conf.yaml"], {"deploy/flink-conf.yaml": CLEAN_FLINK_CONF + line})
    _, findings = check(repo)
    [typo] = [f for f in findings if f["rule"] == "SW-DEPLOY-001"]
    assert typo["message"].endswith(f"did you mean {suggestion}?"), typo["message"]
    assert typo["line"] == line_of(repo / "contracts/deploy/flink-conf.yaml", line)


def test_a_repository_extends_the_known_keys_in_streamwarden_yaml(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF + "acme.retries: 3\nacme.lake.region: eu-west-1\nacmee.x: 1\n"
    repo = make_repo(tmp_path / "repo", ["deploy/flink-conf.yaml"], {"deploy/flink-conf.yaml": conf})
    _, before = check(repo)
    assert sorted(f["path"] for f in before if f["rule"] == "SW-DEPLOY-001") == [
        "acme.lake.region",
        "acme.retries",
        "acmee.x",
    ]
    (repo / "streamwarden.yaml").write_text('flink:\n  known_keys: ["acme.*"]\n', encoding="utf-8")
    _, after = check(repo)
    assert [f["path"] for f in after if f["rule"] == "SW-DEPLOY-001"] == ["acmee.x"]


def test_known_keys_must_be_key_patterns(tmp_path: Path) -> None:
    from tests.cli import sw

    repo = make_repo(tmp_path / "repo", ["deploy/flink-conf.yaml"], {"deploy/flink-conf.yaml": CLEAN_FLINK_CONF})
    (repo / "streamwarden.yaml").write_text("flink:\n  known_keys: [42, 'a b']\n", encoding="utf-8")
    r = sw("check", "--format", "json", cwd=repo)
    assert r.code == 2
    assert "streamwarden.yaml" in r.stderr and "known_keys" in r.stderr


def test_hadoop_keys_passed_through_flink_are_known(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF + "flink.hadoop.dfs.replication: 2\nflink.hadop.dfs.replication: 2\n"
    repo = make_repo(tmp_path / "repo", ["deploy/flink-conf.yaml"], {"deploy/flink-conf.yaml": conf})
    _, findings = check(repo)
    assert [f["path"] for f in findings if f["rule"] == "SW-DEPLOY-001"] == ["flink.hadop.dfs.replication"]


def test_gate_and_evidence_honour_the_known_keys_of_streamwarden_yaml(tmp_path: Path) -> None:
    """gate and evidence judge the deployment files with the same known keys as check: a key
    `flink.known_keys` declares is not SW-DEPLOY-001 there either (they once read the files with
    the built-in key sets only, so a deploy was warned about what the pull request passed)."""
    import yaml
    from tests.cli import sw
    from tests.recovery_repo import RecoveryRepo

    conf = CLEAN_FLINK_CONF + "acme.retries: 3\nacmee.x: 1\n"
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 20)
    make_repo(repo.root, ["deploy/flink-conf.yaml"], {"deploy/flink-conf.yaml": conf}, repo.contract_text)
    config_file = repo.root / "streamwarden.yaml"
    config = yaml.safe_load(config_file.read_text())
    config["flink"] = {"known_keys": ["acme.*"]}
    config_file.write_text(yaml.safe_dump(config))
    common = ("--env", "prod", "--now", repo.now_arg(), "--format", "json")
    gate = sw("gate", "orders-enrichment", *common, cwd=repo.root).json()
    record = sw("evidence", "orders-enrichment", *common, cwd=repo.root).json()["verdict"]
    for doc in (gate, record):
        unknown = [f["path"] for f in doc["reasons"] + doc["warnings"] if f["rule"] == "SW-DEPLOY-001"]
        assert unknown == ["acmee.x"], doc
