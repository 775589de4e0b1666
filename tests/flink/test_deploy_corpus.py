"""Real deployment files from public repositories (tests/fixtures/deploy-corpus, origins in its
README.md), each checked through the CLI with a contract that names it, asserting exactly which
repository-sourced rules fire (and so, which do not), then contrived near misses of each file class
where a real typo must still fire with its did-you-mean, file and line.

One repository, one ``check`` run: every contract names one corpus file (or one mutated copy)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.cli import sw
from tests.conftest import NOW, TESTS

CORPUS = TESTS / "fixtures" / "deploy-corpus"
OP = "apache__flink-kubernetes-operator/"
LOCAL_CKPT = ("SW-CKPT-004", "error")  # state.checkpoints.dir on file:///: not durable, and true
SKIPPED = ("SW-DEPLOY-004", "info")  # a FlinkStateSnapshot, named and skipped
NO_FLINK = ("SW-DEPLOY-004", "warning")  # a manifest without a Flink resource
SEVERAL = ("SW-DEPLOY-004", "warning")  # several Flink resources in one manifest
HELM = ("SW-FACT-001", "error", 8)  # an unrendered Helm template, at the contract's job.deployment[0]

# corpus file -> (the contract's job name, its checkpoint interval, expected (rule, severity, line))
TABLE: dict[str, tuple[str | None, str | None, set[tuple[str, str, int]]]] = {
    OP + "e2e-tests/data/autoscaler.yaml": (None, None, {(*LOCAL_CKPT, 38)}),
    OP + "e2e-tests/data/bluegreen-ingress.yaml": (None, None, set()),
    OP + "e2e-tests/data/bluegreen-laststate.yaml": (None, "10s", {(*LOCAL_CKPT, 35)}),
    OP + "e2e-tests/data/bluegreen-stateless.yaml": (None, None, set()),
    OP + "e2e-tests/data/flinkdep-batch-cr.yaml": (None, None, set()),
    OP + "e2e-tests/data/flinkdep-cr.yaml": (None, None, {(*LOCAL_CKPT, 38)}),
    OP + "e2e-tests/data/multi-sessionjob.yaml": (None, None, {(*LOCAL_CKPT, 38), (*SEVERAL, 71)}),
    OP + "e2e-tests/data/savepoint.yaml": (None, None, {(*SKIPPED, 19)}),
    OP + "e2e-tests/data/sessionjob-cr.yaml": ("flink-example-statemachine", None, {(*LOCAL_CKPT, 38)}),
    OP + "examples/advanced-ingress.yaml": (None, None, set()),
    OP + "examples/autoscaling/autoscaling-dynamic.yaml": (None, None, set()),
    OP + "examples/autoscaling/autoscaling.yaml": (None, "1m", {(*LOCAL_CKPT, 36)}),
    OP + "examples/basic-checkpoint-ha.yaml": (None, None, {(*LOCAL_CKPT, 30)}),
    OP + "examples/basic-ingress.yaml": (None, None, set()),
    OP + "examples/basic-reactive.yaml": (None, None, {(*LOCAL_CKPT, 31)}),
    OP + "examples/basic-session-deployment-and-job.yaml": (None, None, {(*SEVERAL, 38)}),
    OP + "examples/basic-session-deployment-only.yaml": (None, None, set()),
    OP + "examples/basic-session-job-only.yaml": (None, None, set()),
    OP + "examples/basic.yaml": (None, None, set()),
    OP + "examples/canary.yaml": (None, None, set()),
    OP + "examples/custom-logging.yaml": (None, None, set()),
    OP + "examples/flink-beam-example/beam-example.yaml": (None, None, set()),
    OP + "examples/flink-python-example/python-example.yaml": (None, None, set()),
    OP + "examples/flink-sql-runner-example/sql-example.yaml": (None, None, set()),
    OP + "examples/flink-sql-runner-example/sql-scripts/simple.sql": (None, None, set()),
    OP + "examples/flink-sql-runner-example/sql-scripts/statement-set.sql": (None, None, set()),
    OP + "examples/flink-tls-example/basic-secure-deployment-only.yaml": (None, None, set()),
    OP + "examples/flink-tls-example/basic-secure-session-job-only.yaml": (None, None, set()),
    OP + "examples/flink-tls-example/basic-secure.yaml": (None, None, set()),
    OP + "examples/flink-tls-example/pre-install.yaml": (None, None, {(*NO_FLINK, 19)}),
    OP + "examples/hpa/basic-hpa.yaml": (None, None, {(*NO_FLINK, 19)}),
    OP + "examples/kustomize/conf-override/flink-conf.yaml": (None, None, set()),
    OP + "examples/kustomize/conf-override/patch.yaml": (None, None, {(*NO_FLINK, 19)}),
    OP + "examples/kustomize/sidecar/patch.yaml": (None, None, {(*NO_FLINK, 19)}),
    OP + "examples/pod-template.yaml": (None, None, set()),
    OP + "examples/snapshot/checkpoint.yaml": (None, None, {(*SKIPPED, 19)}),
    OP + "examples/snapshot/job-from-savepoint.yaml": (None, None, {(*LOCAL_CKPT, 41), (*SKIPPED, 21)}),
    OP + "examples/snapshot/savepoint-already-exists.yaml": (None, None, {(*SKIPPED, 19)}),
    OP + "examples/snapshot/savepoint-job-defaults.yaml": (None, None, {(*SKIPPED, 19)}),
    OP + "examples/snapshot/savepoint-job-full-spec.yaml": (None, None, {(*SKIPPED, 19)}),
    OP + "flink-autoscaler-standalone/src/test/resources/config.yaml": (None, None, set()),
    OP + "helm/flink-kubernetes-operator/conf/flink-conf.yaml": (None, None, set()),
    # Helm templates: not YAML until rendered, named as such (SW-FACT-001 at the contract's entry)
    OP + "helm/flink-kubernetes-operator/templates/controller/configmap.yaml": (None, None, {HELM}),
    OP + "helm/flink-kubernetes-operator/templates/flink/role.yaml": (None, None, {HELM}),
    # query.server.port: no key of Flink 1.15+ (QueryableStateOptions reads queryable-state.server.ports,
    # or its deprecated query.server.ports), so Flink ignores the line: did you mean query.server.ports?
    "apache__flink-playgrounds/operations-playground/conf/flink-conf.yaml": (
        None,
        None,
        {(*LOCAL_CKPT, 28), ("SW-DEPLOY-001", "warning", 22)},
    ),
    "apache__flink-statefun/statefun-e2e-tests/statefun-e2e-tests-common/src/main/resources/flink-conf.yaml": (
        None,
        "5s",
        {(*LOCAL_CKPT, 44)},
    ),
    "apache__flink-statefun/tools/docker/flink-distribution-template/conf/flink-conf.yaml": (
        None,
        None,
        {(*LOCAL_CKPT, 45)},
    ),
}

# Near misses: a real file of each class with one real-looking typo. (file, old, new, suggestion)
NEAR_MISSES: dict[str, tuple[str, str, str, str]] = {
    "flink-deployment": (
        OP + "examples/basic-checkpoint-ha.yaml",
        "      checkpoints.dir:",
        "      checkpoints.dri:",
        "state.checkpoints.dir",
    ),
    "flink-session-job": (
        OP + "examples/basic-session-job-only.yaml",
        "  job:\n",
        "  flinkConfiguration:\n    execution.checkpointing.intervall: 1 min\n  job:\n",
        "execution.checkpointing.interval",
    ),
    "flink-blue-green-deployment": (
        OP + "e2e-tests/data/bluegreen-laststate.yaml",
        "state.backend.incremental:",
        "state.backend.incremantal:",
        "state.backend.incremental",
    ),
    "flink-conf (Flink 1.x)": (
        "apache__flink-playgrounds/operations-playground/conf/flink-conf.yaml",
        "state.savepoints.dir:",
        "state.savepoint.dir:",
        "state.savepoints.dir",
    ),
    "config.yaml (Flink 2.x)": (
        OP + "flink-autoscaler-standalone/src/test/resources/config.yaml",
        "autoscaler.standalone.control-loop.interval",
        "autoscaler.standalone.control-loop.intervall",
        "autoscaler.standalone.control-loop.interval",
    ),
    "autoscaler in a FlinkDeployment": (
        OP + "examples/autoscaling/autoscaling.yaml",
        "      stabilization.interval:",
        "      stabilisation.interval:",
        "job.autoscaler.stabilization.interval",
    ),
    "statefun": (
        "apache__flink-statefun/tools/docker/flink-distribution-template/conf/flink-conf.yaml",
        "statefun.flink-job-name:",
        "statefun.flink-jobname:",
        "statefun.flink-job-name",
    ),
    "sql": (
        OP + "examples/flink-sql-runner-example/sql-scripts/simple.sql",
        "CREATE TABLE",
        "SET 'pipeline.max-paralelism' = '128';\nCREATE TABLE",
        "pipeline.max-parallelism",
    ),
}


def _contract(name: str, job: str | None, entry: str, interval: str | None) -> str:
    text = (
        "apiVersion: streamwarden/v1\nkind: PipelineContract\n"
        f"metadata:\n  name: {name}\njob:\n  name: {job or name}\n  deployment:\n    - {entry}\n"
    )
    if interval:
        text += f"checkpoint:\n  interval: {interval}\n"
    return text


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    repo = tmp_path_factory.mktemp("corpus")
    shutil.copytree(CORPUS, repo / "corpus")
    (repo / "contracts").mkdir()
    for i, (rel, (job, interval, _)) in enumerate(sorted(TABLE.items())):
        (repo / "contracts" / f"c{i:02d}.yaml").write_text(_contract(f"c{i:02d}", job, f"../corpus/{rel}", interval))
    for i, (rel, old, new, _) in enumerate(NEAR_MISSES.values()):
        target = repo / "near" / str(i) / rel.rsplit("/", 1)[-1]
        target.parent.mkdir(parents=True)
        text = (CORPUS / rel).read_text(encoding="utf-8")
        assert old in text, (rel, old)
        target.write_text(text.replace(old, new, 1), encoding="utf-8")
        entry = f"../near/{i}/{target.name}"
        (repo / "contracts" / f"n{i:02d}.yaml").write_text(_contract(f"n{i:02d}", None, entry, None))
    r = sw("check", "--now", NOW, "--format", "json", cwd=repo, timeout=300)
    assert r.code in (0, 1), r
    by: dict[str, list[dict[str, Any]]] = {}
    for f in r.json()["findings"]:
        # what the deployment files cause: findings in them, and any gap in reading them
        if f.get("source") == "deployment" or f["rule"] == "SW-FACT-001":
            by.setdefault(f["pipeline"], []).append(f)
    by["__repo__"] = [{"root": str(repo)}]
    return by


def test_the_corpus_is_real_and_large_enough() -> None:
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name != "README.md")
    assert len(files) >= 40
    assert {p.relative_to(CORPUS).as_posix() for p in files} == set(TABLE)
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    for rel in TABLE:
        assert rel.split("/", 1)[1] in readme, f"{rel} has no origin in README.md"


@pytest.mark.parametrize("index_rel", list(enumerate(sorted(TABLE))), ids=lambda x: x[1].split("/", 1)[1])
def test_each_real_file_fires_exactly_the_expected_rules(
    corpus_run: dict[str, list[dict[str, Any]]], index_rel: tuple[int, str]
) -> None:
    index, rel = index_rel
    expected = TABLE[rel][2]
    got = corpus_run.get(f"c{index:02d}", [])
    assert {(f["rule"], f["severity"], f["line"]) for f in got} == expected, got
    for f in got:
        if f["rule"] == "SW-FACT-001":
            assert f["file"] == f"contracts/c{index:02d}.yaml" and "Helm template" in f["message"]
        else:
            assert f["file"] == f"corpus/{rel}" and f["source"] == "deployment"
    # nothing repository-sourced fires twice, and no file was unreadable
    assert len(got) == len(expected)


@pytest.mark.parametrize("index_name", list(enumerate(NEAR_MISSES)), ids=lambda x: x[1])
def test_a_typo_in_each_class_still_fires(
    corpus_run: dict[str, list[dict[str, Any]]], index_name: tuple[int, str]
) -> None:
    index, name = index_name
    rel, _, new, suggestion = NEAR_MISSES[name]
    # what the unchanged file already has (TABLE) is not the typo's
    before = {f["path"] for f in corpus_run.get(f"c{sorted(TABLE).index(rel):02d}", []) if f["rule"] == "SW-DEPLOY-001"}
    got = [f for f in corpus_run.get(f"n{index:02d}", []) if f["rule"] == "SW-DEPLOY-001" and f["path"] not in before]
    assert len(got) == 1, corpus_run.get(f"n{index:02d}")
    [typo] = got
    assert typo["message"].endswith(f"did you mean {suggestion}?"), typo["message"]
    root = Path(corpus_run["__repo__"][0]["root"])
    lines = (root / typo["file"]).read_text(encoding="utf-8").splitlines()
    last = typo["path"].rsplit(".", 1)[-1]  # a nested key's line holds its last segments only
    assert last in lines[typo["line"] - 1] and last in new
