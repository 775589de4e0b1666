"""Deployment facts from real files, and the repository-side rules on top of them.

Every test copies fixtures (tests/fixtures/deploy) into a temporary repository, applies at most
one drift, gathers ``facts.deployment`` and, where a rule is concerned, evaluates the built-in
policies on regorus. Findings must cite the repository file and line that is wrong.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import REPO, TESTS

from streamwarden.facts.deployment import DeploymentGatherer, gather_deployment
from streamwarden.flink import deployment_files

FIXTURES = TESTS / "fixtures" / "deploy"
POLICIES = REPO / "policies" / "streamwarden"
# lib.rego and every rule and helper file of the packages that read the deployment facts
POLICY_FILES = (
    "lib.rego",
    *(
        p.relative_to(POLICIES).as_posix()
        for package in ("checkpoint", "state", "deployment")
        for p in sorted((POLICIES / package).glob("*.rego"))
        if not p.name.endswith("_test.rego")
    ),
)

# The normalized contract the fixtures were written for (durations in ms, sizes in bytes).
CONTRACT: dict[str, Any] = {
    "apiVersion": "streamwarden/v1",
    "kind": "PipelineContract",
    "metadata": {"name": "orders-enrichment"},
    "job": {
        "name": "orders-enrichment",
        "parallelism": 4,
        "max_parallelism": 128,
        "sinks": [{"name": "orders-table", "kind": "iceberg", "delivery": "exactly_once", "uid": "sink"}],
    },
    "state": {
        "backend": "rocksdb",
        "incremental": True,
        "max_size": 50 * 1024**3,
        "auto_generated_uids": "forbidden",
        "allow_non_restored_state": False,
        "operators": [{"uid": "orders-dedup", "kind": "keyed", "ttl": 86_400_000}],
    },
    "checkpoint": {
        "mode": "exactly_once",
        "interval": 60_000,
        "timeout": 600_000,
        "min_pause": 30_000,
        "max_concurrent": 1,
        "storage": "s3://lake-checkpoints/orders-enrichment",
        "externalized": "retain_on_cancellation",
        "num_retained": 3,
        "unaligned": False,
        "tolerable_failures": 3,
    },
    "retention": {"rollback_window": 3 * 86_400_000, "checkpoints": {"num_retained": 3}},
}

SETUPS = {
    "flink120": ["deploy/flink120/flinkdeployment.yaml"],
    "flink2": ["deploy/flink2/config.yaml", "deploy/flink2/sessionjob.yaml"],
    "legacy": ["deploy/legacy/flink-conf.yaml"],
    "legacy+sql": ["deploy/legacy/flink-conf.yaml", "deploy/sql/job.sql"],
}


# --- helpers -------------------------------------------------------------------------------------


class Repo:
    """A temporary repository: contracts/orders.yaml and the fixtures under contracts/deploy/."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.contract_file = root / "contracts" / "orders.yaml"
        self.contract_file.parent.mkdir(parents=True)
        self.contract_file.write_text("# the contract's YAML is not read by the gatherer\n")
        shutil.copytree(FIXTURES, root / "contracts" / "deploy")

    def path(self, rel: str) -> Path:
        return self.contract_file.parent / rel

    def edit(self, rel: str, old: str, new: str) -> None:
        text = self.path(rel).read_text()
        assert old in text, f"{old!r} not in {rel}"
        self.path(rel).write_text(text.replace(old, new, 1))

    def write(self, rel: str, text: str) -> str:
        self.path(rel).parent.mkdir(parents=True, exist_ok=True)
        self.path(rel).write_text(text)
        return rel

    def line_of(self, rel: str, needle: str) -> int:
        for number, line in enumerate(self.path(rel).read_text().splitlines(), 1):
            if needle in line:
                return number
        raise AssertionError(f"{needle!r} not in {rel}")

    def shown(self, rel: str) -> str:
        return f"contracts/{rel}"

    def facts(self, files: list[str], contract: dict[str, Any] | None = None) -> dict[str, Any]:
        contract = json.loads(json.dumps(contract or CONTRACT))
        contract["job"]["deployment"] = files
        return gather_deployment(contract, self.contract_file, self.root)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


@pytest.fixture(scope="module")
def engine() -> Any:
    import regorus  # a hard dependency: a broken install fails here, it is not a skip

    eng = regorus.Engine()
    for name in POLICY_FILES:
        eng.add_policy(name, (POLICIES / name).read_text())
    return eng


def evaluate(engine: Any, facts: dict[str, Any], contract: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Repository-sourced findings (source deployment), each with its set's severity."""
    engine.set_input_json(
        json.dumps({"contract": contract or CONTRACT, "facts": {"deployment": facts}, "now_ms": 1_764_000_000_000})
    )
    out = []
    for package in ("checkpoint", "state", "deployment"):
        for rule_set, severity in (("deny", "error"), ("warn", "warning")):
            result = json.loads(engine.eval_query_as_json(f"data.streamwarden.{package}.{rule_set}"))
            for f in result["result"][0]["expressions"][0]["value"]:
                if f.get("source") == "deployment":
                    out.append({"severity": severity, **f})
    return out


def only(findings: list[dict[str, Any]], rule: str) -> dict[str, Any]:
    matching = [f for f in findings if f["rule"] == rule]
    assert len(matching) == 1, f"expected one {rule}, got {json.dumps(findings, indent=1)}"
    return matching[0]


# --- aligned deployments are quiet -----------------------------------------------------------------


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_aligned_deployment_has_no_findings(repo: Repo, engine: Any, setup: str) -> None:
    facts = repo.facts(SETUPS[setup])
    assert facts["available"] is True, facts
    assert facts["problems"] == [] and facts["unknown_keys"] == [] and facts["conflicts"] == []
    assert evaluate(engine, facts) == []


# --- each repository rule fires on a drift and cites file:line --------------------------------------

DRIFTS = [
    # (id, setup, file, old text, new text, rule, Flink key in path, the line the finding cites)
    (
        "ckpt001-cr",
        "flink120",
        "deploy/flink120/flinkdeployment.yaml",
        '    execution.checkpointing.interval: "60 s"\n',
        "",
        "SW-CKPT-001",
        "execution.checkpointing.interval",
        "flinkConfiguration:",
    ),
    (
        "ckpt001-conf",
        "legacy",
        "deploy/legacy/flink-conf.yaml",
        "execution.checkpointing.interval: 60000\n",
        "",
        "SW-CKPT-001",
        "execution.checkpointing.interval",
        None,
    ),
    (
        "ckpt003-interval",
        "legacy",
        "deploy/legacy/flink-conf.yaml",
        "interval: 60000",
        "interval: 30000",
        "SW-CKPT-003",
        "execution.checkpointing.interval",
        "interval: 30000",
    ),
    (
        "ckpt003-min-pause",
        "flink2",
        "deploy/flink2/config.yaml",
        "min-pause: 30 s",
        "min-pause: 10 s",
        "SW-CKPT-003",
        "execution.checkpointing.min-pause",
        "min-pause",
    ),
    (
        "ckpt003-timeout",
        "flink120",
        "deploy/flink120/flinkdeployment.yaml",
        '"10 min"',
        '"5 min"',
        "SW-CKPT-003",
        "execution.checkpointing.timeout",
        "timeout",
    ),
    (
        "ckpt003-max-concurrent",
        "flink2",
        "deploy/flink2/config.yaml",
        "max-concurrent-checkpoints: 1",
        "max-concurrent-checkpoints: 2",
        "SW-CKPT-003",
        "execution.checkpointing.max-concurrent-checkpoints",
        "max-concurrent",
    ),
    (
        "ckpt003-unaligned",
        "flink120",
        "deploy/flink120/flinkdeployment.yaml",
        'unaligned: "false"',
        'unaligned: "true"',
        "SW-CKPT-003",
        "execution.checkpointing.unaligned.enabled",
        "unaligned",
    ),
    (
        "ckpt003-tolerable",
        "legacy",
        "deploy/legacy/flink-conf.yaml",
        "tolerable-failed-checkpoints: 3",
        "tolerable-failed-checkpoints: 1",
        "SW-CKPT-003",
        "execution.checkpointing.tolerable-failed-checkpoints",
        "tolerable",
    ),
    (
        "ckpt004-local-dir",
        "flink120",
        "deploy/flink120/flinkdeployment.yaml",
        '"s3://lake-checkpoints/orders-enrichment"',
        '"file:///tmp/ckpt"',
        "SW-CKPT-004",
        "execution.checkpointing.dir",
        "state.checkpoints.dir",
    ),
    (
        "ckpt004-missing-dir",
        "legacy",
        "deploy/legacy/flink-conf.yaml",
        "state.checkpoints.dir: s3://lake-checkpoints/orders-enrichment\n",
        "",
        "SW-CKPT-004",
        "execution.checkpointing.dir",
        None,
    ),
    (
        "ckpt005-retention",
        "flink2",
        "deploy/flink2/config.yaml",
        "RETAIN_ON_CANCELLATION",
        "DELETE_ON_CANCELLATION",
        "SW-CKPT-005",
        "execution.checkpointing.externalized-checkpoint-retention",
        "externalized",
    ),
    (
        "ckpt006-retained",
        "legacy",
        "deploy/legacy/flink-conf.yaml",
        "num-retained: 3",
        "num-retained: 2",
        "SW-CKPT-006",
        "execution.checkpointing.num-retained",
        "num-retained",
    ),
    (
        "ckpt007-mode",
        "flink120",
        "deploy/flink120/flinkdeployment.yaml",
        '"EXACTLY_ONCE"',
        '"AT_LEAST_ONCE"',
        "SW-CKPT-007",
        "execution.checkpointing.mode",
        "mode",
    ),
    (
        "ckpt008-tolerable",
        "flink2",
        "deploy/flink2/config.yaml",
        "tolerable-failed-checkpoints: 3",
        "tolerable-failed-checkpoints: 10",
        "SW-CKPT-008",
        "execution.checkpointing.tolerable-failed-checkpoints",
        "tolerable",
    ),
    (
        "state001-uids",
        "legacy",
        "deploy/legacy/flink-conf.yaml",
        "pipeline.auto-generate-uids: false\n",
        "",
        "SW-STATE-001",
        "pipeline.auto-generate-uids",
        None,
    ),
    (
        "state002-incremental",
        "flink120",
        "deploy/flink120/flinkdeployment.yaml",
        'incremental: "true"',
        'incremental: "false"',
        "SW-STATE-002",
        "execution.checkpointing.incremental",
        "incremental",
    ),
    (
        "state004-max-parallelism",
        "flink2",
        "deploy/flink2/config.yaml",
        "max-parallelism: 128",
        "max-parallelism: 256",
        "SW-STATE-004",
        "pipeline.max-parallelism",
        "max-parallelism",
    ),
    (
        "state012-cr-field",
        "flink120",
        "deploy/flink120/flinkdeployment.yaml",
        "allowNonRestoredState: false",
        "allowNonRestoredState: true",
        "SW-STATE-012",
        "execution.state-recovery.ignore-unclaimed-state",
        "allowNonRestoredState",
    ),
    (
        "state012-session-job",
        "flink2",
        "deploy/flink2/sessionjob.yaml",
        "allowNonRestoredState: false",
        "allowNonRestoredState: true",
        "SW-STATE-012",
        "execution.state-recovery.ignore-unclaimed-state",
        "allowNonRestoredState",
    ),
    (
        "deploy005-backend",
        "flink2",
        "deploy/flink2/config.yaml",
        "type: rocksdb",
        "type: hashmap",
        "SW-DEPLOY-005",
        "state.backend.type",
        "type: hashmap",
    ),
]


@pytest.mark.parametrize(
    ("setup", "rel", "old", "new", "rule", "key", "needle"), [d[1:] for d in DRIFTS], ids=[d[0] for d in DRIFTS]
)
def test_each_rule_fires_on_a_drift_and_cites_the_line(
    repo: Repo, engine: Any, setup: str, rel: str, old: str, new: str, rule: str, key: str, needle: str | None
) -> None:
    repo.edit(rel, old, new)
    facts = repo.facts(SETUPS[setup])
    f = only(evaluate(engine, facts), rule)
    assert f["path"] == key
    if needle is None:  # an unset key: the finding points at the file that should set it
        assert (f["file"], f["line"]) == (facts["anchor"]["file"], facts["anchor"]["line"])
        assert f["evidence"]["deployment_source"] == "Flink default (unset in the repository)"
    else:
        assert (f["file"], f["line"]) == (repo.shown(rel), repo.line_of(rel, needle))


def test_ckpt_003_names_both_values_and_their_sources(repo: Repo, engine: Any) -> None:
    repo.edit("deploy/legacy/flink-conf.yaml", "interval: 60000", "interval: 30 s")
    f = only(evaluate(engine, repo.facts(SETUPS["legacy"])), "SW-CKPT-003")
    line = repo.line_of("deploy/legacy/flink-conf.yaml", "interval: 30 s")
    assert f["message"] == (
        "the checkpoint interval differs from the contract: the contract says 1m (checkpoint.interval) but the "
        f"repository sets execution.checkpointing.interval to 30s at contracts/deploy/legacy/flink-conf.yaml:{line}"
    )
    assert f["value"] == 30_000 and f["severity"] == "error" and f["source"] == "deployment"


def test_ckpt_001_without_interval_is_not_repeated_by_ckpt_003(repo: Repo, engine: Any) -> None:
    repo.edit("deploy/flink120/flinkdeployment.yaml", '    execution.checkpointing.interval: "60 s"\n', "")
    findings = evaluate(engine, repo.facts(SETUPS["flink120"]))
    assert [f["rule"] for f in findings] == ["SW-CKPT-001"]
    assert "Flink's default: no periodic checkpoints" in findings[0]["message"]


def test_sql_set_overrides_the_config_and_is_cited(repo: Repo, engine: Any) -> None:
    # before the job (a SET after it applies to nothing: tests/flink/test_sql_statement_order.py)
    repo.edit(
        "deploy/sql/job.sql",
        "EXECUTE STATEMENT SET BEGIN",
        "SET 'execution.checkpointing.interval' = '2 min';\nEXECUTE STATEMENT SET BEGIN",
    )
    facts = repo.facts(SETUPS["legacy+sql"])
    f = only(evaluate(engine, facts), "SW-CKPT-003")
    assert (f["file"], f["line"]) == ("contracts/deploy/sql/job.sql", repo.line_of("deploy/sql/job.sql", "'2 min'"))
    entry = facts["config"]["execution.checkpointing.interval"]
    assert entry["overridden"] == [
        {
            "file": "contracts/deploy/legacy/flink-conf.yaml",
            "line": repo.line_of("deploy/legacy/flink-conf.yaml", "interval: 60000"),
            "key": "execution.checkpointing.interval",
            "raw": "60000",
        }
    ]


def test_state_004_unset_max_parallelism_explains_the_derived_value(repo: Repo, engine: Any) -> None:
    repo.edit("deploy/flink2/config.yaml", "  max-parallelism: 128\n", "")
    f = only(evaluate(engine, repo.facts(SETUPS["flink2"])), "SW-STATE-004")
    assert "128 for parallelism 4, the same up to parallelism 85" in f["message"]
    assert f["evidence"]["derived_max_parallelism"] == 128


# --- deprecated keys ---------------------------------------------------------------------------


def test_deprecated_key_and_its_2x_name_disagree(repo: Repo, engine: Any) -> None:
    rel = "deploy/bad/conflict.yaml"
    facts = repo.facts([rel])
    assert facts["config"]["execution.checkpointing.num-retained"]["value"] == 1
    [conflict] = facts["conflicts"]
    assert conflict["wins"] == "execution.checkpointing.num-retained" and conflict["alias_value"] == 5
    findings = evaluate(engine, facts)
    f = only(findings, "SW-DEPLOY-002")
    assert (f["file"], f["line"]) == (repo.shown(rel), repo.line_of(rel, "state.checkpoints.num-retained"))
    assert "Flink uses 1 from execution.checkpointing.num-retained" in f["message"]
    assert "a 2.x key always takes precedence over its deprecated aliases" in f["message"]
    assert f["severity"] == "warning"
    # and the value Flink really uses (1) is below the contract's 3
    retained = only(findings, "SW-CKPT-006")
    assert retained["line"] == repo.line_of(rel, "execution.checkpointing.num-retained")


def test_2x_key_wins_even_from_a_lower_precedence_file(repo: Repo) -> None:
    conf = repo.write("deploy/x/config.yaml", "execution.checkpointing.num-retained: 5\n")
    cr = repo.write("deploy/x/cr.yaml", _cr('    state.checkpoints.num-retained: "3"\n'))
    facts = repo.facts([conf, cr])
    entry = facts["config"]["execution.checkpointing.num-retained"]
    assert (entry["value"], entry["file"], entry["kind"]) == (5, "contracts/deploy/x/config.yaml", "flink-config")
    [c] = facts["conflicts"]
    assert (c["alias"], c["alias_file"], c["wins_by"]) == (
        "state.checkpoints.num-retained",
        "contracts/deploy/x/cr.yaml",
        "2.x-key",
    )


def test_between_two_aliases_flinks_fallback_order_decides(repo: Repo) -> None:
    conf = repo.write(
        "deploy/x/flink-conf.yaml", "state.backend.fs.checkpointdir: s3://b/old\nstate.checkpoints.dir: s3://b/new\n"
    )
    facts = repo.facts([conf])
    entry = facts["config"]["execution.checkpointing.dir"]
    assert (entry["value"], entry["key"], entry["line"]) == ("s3://b/new", "state.checkpoints.dir", 2)
    [c] = facts["conflicts"]
    assert (c["wins"], c["wins_by"], c["alias_line"]) == ("state.checkpoints.dir", "fallback-order", 1)


def test_equal_alias_values_are_no_conflict(repo: Repo) -> None:
    conf = repo.write(
        "deploy/x/config.yaml", "state.checkpoints.num-retained: 3\nexecution.checkpointing.num-retained: '3'\n"
    )
    facts = repo.facts([conf])
    assert facts["conflicts"] == []
    assert facts["config"]["execution.checkpointing.num-retained"]["line"] == 2


def test_cr_allow_non_restored_state_beats_the_deprecated_key(repo: Repo) -> None:
    cr = repo.write(
        "deploy/x/cr.yaml",
        _cr('    execution.savepoint.ignore-unclaimed-state: "true"\n', job="    allowNonRestoredState: false\n"),
    )
    facts = repo.facts([cr])
    entry = facts["config"]["execution.state-recovery.ignore-unclaimed-state"]
    assert (entry["value"], entry["key"]) == (False, "spec.job.allowNonRestoredState")
    assert facts["conflicts"][0]["alias"] == "execution.savepoint.ignore-unclaimed-state"
    assert facts["job"]["allow_non_restored_state"]["line"] == repo.line_of(cr, "allowNonRestoredState")


# --- precedence and provenance ---------------------------------------------------------------------


def _cr(conf_lines: str, *, name: str = "orders-enrichment", job: str = "", kind: str = "FlinkDeployment") -> str:
    text = (
        f"apiVersion: flink.apache.org/v1beta1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n"
        f"  flinkConfiguration:\n{conf_lines}"
    )
    if job:
        text += f"  job:\n    jarURI: local:///job.jar\n{job}"
    return text


def test_cr_flink_configuration_overrides_config_yaml(repo: Repo) -> None:
    conf = repo.write("deploy/x/config.yaml", "execution:\n  checkpointing:\n    interval: 1 min\n")
    cr = repo.write("deploy/x/cr.yaml", _cr('    execution.checkpointing.interval: "2 min"\n'))
    for order in ([conf, cr], [cr, conf]):  # the class decides, not the order
        entry = repo.facts(order)["config"]["execution.checkpointing.interval"]
        assert (entry["value"], entry["file"], entry["line"]) == (120_000, "contracts/deploy/x/cr.yaml", 7)
        assert entry["overridden"][0]["line"] == 3


def test_later_file_of_the_same_class_wins(repo: Repo) -> None:
    a = repo.write("deploy/x/a/config.yaml", "execution.checkpointing.timeout: 5 min\n")
    b = repo.write("deploy/x/b/config.yaml", "execution.checkpointing.timeout: 7 min\n")
    assert repo.facts([a, b])["config"]["execution.checkpointing.timeout"]["value"] == 420_000
    assert repo.facts([b, a])["config"]["execution.checkpointing.timeout"]["value"] == 300_000


def test_later_line_wins_within_a_file_and_the_duplicate_is_reported(repo: Repo, engine: Any) -> None:
    conf = repo.write(
        "deploy/x/config.yaml",
        "execution:\n  checkpointing:\n    timeout: 5 min\nexecution.checkpointing.timeout: 10 min\n",
    )
    facts = repo.facts([conf])
    assert facts["config"]["execution.checkpointing.timeout"]["line"] == 4
    [problem] = facts["problems"]
    assert (problem["code"], problem["line"]) == ("duplicate-key", 4)
    assert only(evaluate(engine, facts), "SW-DEPLOY-004")["line"] == 4


def test_later_sql_set_wins_and_reset_falls_back(repo: Repo) -> None:
    conf = repo.write("deploy/x/config.yaml", "table.exec.state.ttl: 1 h\n")
    sql = repo.write("deploy/x/job.sql", "SET 'table.exec.state.ttl' = '1 d';\nSET 'table.exec.state.ttl' = '2 d';\n")
    entry = repo.facts([conf, sql])["config"]["table.exec.state.ttl"]
    assert (entry["value"], entry["line"], entry["kind"]) == (2 * 86_400_000, 2, "sql")
    repo.write("deploy/x/reset.sql", "RESET 'table.exec.state.ttl';\n")
    entry = repo.facts([conf, sql, "deploy/x/reset.sql"])["config"]["table.exec.state.ttl"]
    assert (entry["value"], entry["file"]) == (3_600_000, "contracts/deploy/x/config.yaml")
    repo.write("deploy/x/reset-all.sql", "RESET;\n")
    assert repo.facts([sql, "deploy/x/reset-all.sql"])["config"]["table.exec.state.ttl"]["default"] is True


def test_unset_keys_carry_flinks_defaults_explicitly(repo: Repo) -> None:
    conf = repo.write("deploy/x/config.yaml", "parallelism.default: 2\n")
    facts = repo.facts([conf])
    config = facts["config"]
    assert config["execution.checkpointing.interval"] == {
        "value": None,
        "raw": None,
        "key": "execution.checkpointing.interval",
        "file": None,
        "line": None,
        "kind": None,
        "default": True,
    }
    assert config["execution.checkpointing.num-retained"]["value"] == 1
    assert config["execution.checkpointing.externalized-checkpoint-retention"]["value"] == "no_externalized_checkpoints"
    assert config["execution.checkpointing.tolerable-failed-checkpoints"]["value"] == 0
    assert config["state.backend.type"]["value"] == "hashmap"
    assert facts["anchor"] == {"file": "contracts/deploy/x/config.yaml", "line": 1}


def test_values_are_read_as_written_not_as_yaml_1_1(repo: Repo) -> None:
    conf = repo.write(
        "deploy/x/config.yaml",
        "execution.checkpointing.min-pause: 010\n"  # YAML 1.1 octal; Flink reads 10 ms
        "execution.checkpointing.timeout: 600000  # ms\n"
        "pipeline.auto-generate-uids: off\n",
    )  # YAML 1.1 false; Flink refuses it
    facts = repo.facts([conf])
    assert facts["config"]["execution.checkpointing.min-pause"]["value"] == 10
    assert facts["config"]["execution.checkpointing.min-pause"]["raw"] == "010"
    assert facts["config"]["execution.checkpointing.timeout"]["raw"] == "600000"
    uids = facts["config"]["pipeline.auto-generate-uids"]
    assert uids["value"] is None and "only true or false" in uids["error"]


def test_cr_resources_and_job_fields(repo: Repo) -> None:
    facts = repo.facts(SETUPS["flink120"])
    rel = "deploy/flink120/flinkdeployment.yaml"
    assert facts["files"] == [
        {"file": repo.shown(rel), "kind": "flink-deployment", "resources": ["FlinkDeployment/orders-enrichment"]}
    ]
    job = facts["job"]
    assert job["upgrade_mode"]["value"] == "savepoint"
    assert job["parallelism"] == {
        "value": 4,
        "raw": "4",
        "key": "spec.job.parallelism",
        "file": repo.shown(rel),
        "line": repo.line_of(rel, "parallelism: 4"),
        "kind": "flink-deployment",
        "default": False,
    }
    assert job["flink_version"]["value"] == "v1_20"
    assert facts["config"]["taskmanager.memory.process.size"]["value"] == 4 * 1024**3  # 4Gi
    assert facts["config"]["jobmanager.memory.process.size"]["value"] == 2048 * 1024**2  # Flink's 2048m
    assert facts["anchor"] == {"file": repo.shown(rel), "line": repo.line_of(rel, "flinkConfiguration:")}


def test_session_job_brings_its_session_cluster(repo: Repo) -> None:
    rel = "deploy/multi/session.yaml"
    facts = repo.facts([rel])
    assert facts["files"][0]["resources"] == ["FlinkDeployment/orders-session", "FlinkSessionJob/orders-enrichment"]
    assert facts["problems"] == []
    interval = facts["config"]["execution.checkpointing.interval"]
    assert (interval["value"], interval["line"]) == (120_000, repo.line_of(rel, '"2 min"'))
    assert facts["config"]["execution.checkpointing.num-retained"]["value"] == 3  # from the cluster
    assert facts["job"]["upgrade_mode"]["value"] == "savepoint"


# --- errors and problems: a finding or an unavailable source, never a traceback ----------------------


def test_unparseable_values_and_unknown_keys(repo: Repo, engine: Any) -> None:
    rel = "deploy/bad/bad-values.yaml"
    facts = repo.facts([rel])
    assert facts["available"] is True  # the run goes on
    findings = evaluate(engine, facts)
    invalid = {f["path"]: f for f in findings if f["rule"] == "SW-DEPLOY-003"}
    assert set(invalid) == {
        "execution.checkpointing.interval",
        "execution.checkpointing.timeout",
        "execution.checkpointing.mode",
        "execution.checkpointing.unaligned.enabled",
        "execution.checkpointing.num-retained",
        "taskmanager.memory.process.size",
    }
    interval = invalid["execution.checkpointing.interval"]
    assert (interval["file"], interval["line"], interval["value"]) == (repo.shown(rel), 2, "1h 30min")
    assert "Flink refuses combinations like '1h 30min'" in interval["message"]
    assert "write EXACTLY_ONCE" in invalid["execution.checkpointing.mode"]["message"]
    assert "4 GiBs" in invalid["taskmanager.memory.process.size"]["message"]
    unknown = only(findings, "SW-DEPLOY-001")
    assert (unknown["line"], unknown["severity"]) == (repo.line_of(rel, "intervall"), "warning")
    assert "did you mean execution.checkpointing.interval?" in unknown["message"]
    # the unparseable interval is not mistaken for "checkpointing off"
    assert not [f for f in findings if f["rule"] in ("SW-CKPT-001", "SW-CKPT-003") and "interval" in f["path"]]


def test_several_resources_in_one_manifest(repo: Repo, engine: Any) -> None:
    rel = "deploy/multi/two-deployments.yaml"
    facts = repo.facts([rel])
    assert facts["files"][0]["resources"] == ["FlinkDeployment/orders-enrichment"]
    assert facts["config"]["execution.checkpointing.interval"]["value"] == 60_000
    f = only(evaluate(engine, facts), "SW-DEPLOY-004")
    assert f["line"] == repo.line_of(rel, "name: orders-backfill") - 3  # the other resource's document
    assert "using FlinkDeployment orders-enrichment (its name matches the contract's job)" in f["message"]


def test_several_resources_none_matching_uses_the_first(repo: Repo) -> None:
    rel = "deploy/multi/two-deployments.yaml"
    contract = json.loads(json.dumps(CONTRACT))
    contract["job"]["name"] = contract["metadata"]["name"] = "something-else"
    facts = repo.facts([rel], contract)
    assert facts["files"][0]["resources"] == ["FlinkDeployment/orders-backfill"]
    assert "the first; none is named 'something-else'" in facts["problems"][0]["message"]


def test_several_documents_in_a_config_file(repo: Repo, engine: Any) -> None:
    facts = repo.facts(["deploy/bad/two-docs-config.yaml"])
    f = only(evaluate(engine, facts), "SW-DEPLOY-004")
    assert (f["line"], f["severity"]) == (3, "error")
    assert facts["config"]["execution.checkpointing.interval"]["value"] == 60_000


def test_manifest_without_a_flink_resource(repo: Repo) -> None:
    rel = repo.write("deploy/x/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
    facts = repo.facts([rel])
    assert facts["files"] == [{"file": repo.shown(rel), "kind": "manifest"}]
    assert facts["problems"][0]["code"] == "no-flink-settings"
    assert "found Service at line 1" in facts["problems"][0]["message"]


def test_nested_block_in_legacy_flink_conf_is_ignored_like_flink_1x(repo: Repo) -> None:
    rel = repo.write("deploy/x/flink-conf.yaml", "execution:\n  checkpointing:\n    interval: 60 s\n")
    facts = repo.facts([rel])
    assert facts["config"]["execution.checkpointing.interval"]["default"] is True
    assert (facts["problems"][0]["code"], facts["problems"][0]["severity"]) == ("nested-in-flink-conf", "error")


def test_empty_files(repo: Repo) -> None:
    assert repo.facts([repo.write("deploy/x/config.yaml", "# nothing\n")])["problems"][0]["code"] == "no-flink-settings"
    sql = repo.facts([repo.write("deploy/x/job.sql", "")])
    assert sql["available"] is True and sql["problems"] == []


def test_unreadable_sql_statement_is_reported(repo: Repo) -> None:
    rel = repo.write("deploy/x/job.sql", "SET 'a.b' 'c';\n")
    [problem] = repo.facts([rel])["problems"]
    assert (problem["code"], problem["line"]) == ("unreadable-statement", 1)


def test_missing_files_are_listed_and_the_others_still_read(repo: Repo) -> None:
    facts = repo.facts(["deploy/flink120/flinkdeployment.yaml", "deploy/nope.yaml", "deploy/nope.sql"])
    assert facts["available"] is True
    assert [f["file"] for f in facts["files"]] == ["contracts/deploy/flink120/flinkdeployment.yaml"]
    assert facts["missing"] == [
        {"index": 1, "entry": "deploy/nope.yaml", "file": "contracts/deploy/nope.yaml"},
        {"index": 2, "entry": "deploy/nope.sql", "file": "contracts/deploy/nope.sql"},
    ]


def test_every_file_missing_makes_the_source_unavailable(repo: Repo) -> None:
    facts = repo.facts(["deploy/nope.yaml", "deploy/nope.sql"])
    assert facts == {
        "available": False,
        "configured": True,
        "error": "contracts/deploy/nope.yaml: file does not exist; contracts/deploy/nope.sql: file does not exist",
        "missing": [
            {"index": 0, "entry": "deploy/nope.yaml", "file": "contracts/deploy/nope.yaml"},
            {"index": 1, "entry": "deploy/nope.sql", "file": "contracts/deploy/nope.sql"},
        ],
    }


def test_invalid_yaml_names_file_and_line(repo: Repo) -> None:
    facts = repo.facts(["deploy/bad/broken.yaml"])
    assert facts["available"] is False
    assert facts["error"].startswith("contracts/deploy/bad/broken.yaml:4: not valid YAML")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("../../outside.yaml", "is outside the repository"),
        ("deploy/README.md", "is not a deployment file streamwarden can read"),
        ("deploy/missing.conf", "file does not exist"),
        ("deploy", "is not a regular file"),
    ],
)
def test_unusable_entries(repo: Repo, entry: str, message: str) -> None:
    (repo.root.parent / "outside.yaml").write_text("a: 1\n")
    facts = repo.facts([entry])
    assert facts["available"] is False and message in facts["error"]
    # each entry is listed where SW-FACT-001 reports it (a missing file apart)
    listed = facts.get("unreadable") or facts.get("missing")
    assert listed and listed[0]["index"] == 0 and listed[0]["entry"] == entry


def test_directory_and_non_string_entries(repo: Repo) -> None:
    repo.path("deploy/dir.yaml").mkdir()
    assert "is not a regular file" in repo.facts(["deploy/dir.yaml"])["error"]
    assert "is not a file path" in repo.facts([42])["error"]  # type: ignore[list-item]


def test_not_configured_and_a_single_string(repo: Repo) -> None:
    contract = json.loads(json.dumps(CONTRACT))
    assert gather_deployment(contract, repo.contract_file, repo.root) == {"available": False, "configured": False}
    contract["job"]["deployment"] = "deploy/legacy/flink-conf.yaml"
    assert gather_deployment(contract, repo.contract_file, repo.root)["available"] is True


def test_yaml_limits_are_enforced_on_deployment_files(repo: Repo) -> None:
    rel = repo.write("deploy/x/dup.yaml", "a: 1\na: 2\n")
    facts = repo.facts([rel])
    assert facts["available"] is False and "duplicate key 'a'" in facts["error"]


# --- the document and speed --------------------------------------------------------------------------


def test_facts_document_shape_is_json(repo: Repo) -> None:
    facts = repo.facts(SETUPS["flink2"])
    assert set(facts) == {
        "available",
        "configured",
        "files",
        "anchor",
        "config",
        "job",
        "jobs",
        "conflicts",
        "unknown_keys",
        "problems",
    }
    assert facts["jobs"] == []  # no SQL script runs a job: `config` is the one configuration
    assert json.loads(json.dumps(facts)) == facts
    for key, entry in facts["config"].items():
        assert {"value", "raw", "key", "file", "line", "kind", "default"} <= set(entry), key


def test_each_file_is_parsed_once_per_gatherer(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = deployment_files.read_yaml

    def counting(text: str, display: str) -> Any:
        calls.append(display)
        return real(text, display)

    monkeypatch.setattr("streamwarden.facts.deployment.read_yaml", counting)
    gatherer = DeploymentGatherer(repo.root)
    contract = json.loads(json.dumps(CONTRACT))
    contract["job"]["deployment"] = SETUPS["flink2"]
    first = gatherer.gather(contract, repo.contract_file)
    for _ in range(5):
        assert gatherer.gather(contract, repo.contract_file) == first
    assert len(calls) == 2


def test_one_gatherer_serves_many_contracts_each_from_its_own_directory(tmp_path: Path) -> None:
    # Speed is measured in tests/benchmarks, not asserted here: this checks that one gatherer
    # reused across 200 contracts resolves every contract's files relative to its own directory.
    root = tmp_path / "big"
    cr = (FIXTURES / "flink120" / "flinkdeployment.yaml").read_text()
    sql = (FIXTURES / "sql" / "job.sql").read_text()
    for i in range(200):
        d = root / f"p{i}" / "deploy"
        d.mkdir(parents=True)
        (d / "fd.yaml").write_text(cr)
        (d / "job.sql").write_text(sql)
    gatherer = DeploymentGatherer(root)
    contract = {"job": {"name": "orders-enrichment", "deployment": ["deploy/fd.yaml", "deploy/job.sql"]}}
    (root / "p7" / "deploy" / "job.sql").write_text("SET 'parallelism.default' = '7';\n")
    for i in range(200):
        facts = gatherer.gather(contract, root / f"p{i}" / "c.yaml")
        assert facts["available"]
        assert [f["file"] for f in facts["files"]] == [f"p{i}/deploy/fd.yaml", f"p{i}/deploy/job.sql"]
        parallelism = facts["config"]["parallelism.default"]
        if i == 7:  # only p7's job.sql sets it: no value leaks from one contract to the next
            assert (parallelism["value"], parallelism["file"]) == (7, "p7/deploy/job.sql")
        else:
            assert parallelism["value"] != 7 and parallelism["file"].startswith(f"p{i}/"), parallelism


def test_a_file_edited_between_runs_is_read_again(repo: Repo) -> None:
    rel = repo.write("deploy/x/config.yaml", "execution.checkpointing.timeout: 5 min\n")
    assert repo.facts([rel])["config"]["execution.checkpointing.timeout"]["value"] == 300_000
    repo.write(rel, "execution.checkpointing.timeout: 10 min\n")
    assert repo.facts([rel])["config"]["execution.checkpointing.timeout"]["value"] == 600_000


def test_cli_check_reports_a_missing_deployment_file_without_a_traceback(tmp_path: Path, runner: Any) -> None:
    from tests.conftest import CLEAN_CONTRACT, invoke

    contract = CLEAN_CONTRACT.replace(
        "  restart_strategy: exponential-delay\n",
        "  restart_strategy: exponential-delay\n  deployment: [deploy/missing.yaml]\n",
    )
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(contract)
    result = invoke(runner, "check", "contracts", "--format", "json", cwd=tmp_path)
    report = json.loads(result.output)
    [gap] = [f for f in report["findings"] if f["rule"] == "SW-FACT-001"]
    assert "deploy/missing.yaml, which does not exist" in gap["message"]
    assert (gap["path"], gap["severity"]) == ("job.deployment[0]", "error")
    assert result.exit_code == 1


def test_invalid_cr_fields_are_reported_with_their_lines(repo: Repo, engine: Any) -> None:
    cr = repo.write(
        "deploy/x/cr.yaml",
        _cr('    pipeline.name: "orders-enrichment"\n', job="    parallelism: four\n    upgradeMode: sometimes\n")
        + "  taskManager:\n    resource:\n      memory: lots\n",
    )
    facts = repo.facts([cr])
    invalid = {f["path"]: f for f in evaluate(engine, facts) if f["rule"] == "SW-DEPLOY-003"}
    assert set(invalid) == {"spec.job.parallelism", "spec.job.upgradeMode", "spec.taskManager.resource.memory"}
    assert invalid["spec.job.parallelism"]["line"] == repo.line_of(cr, "parallelism: four")
    assert invalid["spec.job.parallelism"]["value"] == "four"
    assert facts["job"]["parallelism"]["error"].startswith("'four' is not an integer")
    assert "parallelism.default" not in facts["config"]
