"""Deployment files read as Flink and the Kubernetes operator read them, where an audit found
streamwarden reading them otherwise. Each test runs the CLI (``facts``, ``check``) on files in a
temporary repository and fails on the build before this one:

- the operator's job defaults (``FlinkConfigBuilder.applyJobConfig``, for a FlinkDeployment with
  ``spec.job`` and every FlinkSessionJob): ``execution.checkpointing.externalized-checkpoint-retention``
  is RETAIN_ON_CANCELLATION, and with ``upgradeMode: last-state`` the checkpoint interval is 5 min,
  where nothing else sets them;
- a ``config.yaml`` value written in a flow mapping on one line is the value of its own key;
- in a Kubernetes resource a plain ``on``/``yes``/``off`` is a boolean (kubectl reads YAML 1.1);
- Flink 2.3.0 keys the table lacked are known, and an Integer option refuses a memory size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW

DEPLOYMENT = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: orders-enrichment
spec:
  image: flink:2.1
  flinkVersion: v2_1
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
    execution.checkpointing.dir: s3://lake-checkpoints/orders-enrichment
{extra}  job:
    jarURI: local:///opt/flink/usrlib/orders.jar
    parallelism: 4
    upgradeMode: {mode}
"""


def _repo(root: Path, files: dict[str, str], contract: str = CLEAN_CONTRACT) -> Path:
    names = ", ".join(f"../{name}" for name in files)
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(contract.replace("job:\n", f"job:\n  deployment: [{names}]\n", 1))
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _config(root: Path) -> dict[str, Any]:
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=root)
    assert p.code == 0, p
    config: dict[str, Any] = p.json()["facts"]["deployment"]["config"]
    return config


def _rules(root: Path) -> list[str]:
    p = sw("check", "--no-cache", "--now", NOW, "--format", "json", cwd=root)
    return [f["rule"] for f in p.json()["findings"]]


def test_last_state_gets_the_operators_interval_and_retention(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"fd.yaml": DEPLOYMENT.format(extra="", mode="last-state")})
    config = _config(root)
    interval = config["execution.checkpointing.interval"]
    assert interval["value"] == 300_000 and interval["default"] is False
    assert interval["file"] == "fd.yaml" and interval["line"] == 14  # the upgradeMode line
    assert "operator" in interval["key"]
    retention = config["execution.checkpointing.externalized-checkpoint-retention"]
    assert retention["value"] == "retain_on_cancellation" and retention["line"] == 11  # spec.job
    # a contract that promises what the operator runs: no SW-CKPT-001 (interval), SW-CKPT-005 (retention)
    promised = CLEAN_CONTRACT.replace("interval: 60s", "interval: 5m")
    root2 = _repo(tmp_path / "promised", {"fd.yaml": DEPLOYMENT.format(extra="", mode="last-state")}, promised)
    rules = _rules(root2)
    assert "SW-CKPT-001" not in rules and "SW-CKPT-005" not in rules, rules


def test_the_operators_defaults_give_way_to_what_the_files_set(tmp_path: Path) -> None:
    extra = (
        "    execution.checkpointing.interval: 30 s\n"
        "    execution.checkpointing.externalized-checkpoint-retention: DELETE_ON_CANCELLATION\n"
    )
    text = DEPLOYMENT.format(extra="", mode="last-state").replace(
        "    execution.checkpointing.dir: s3://lake-checkpoints/orders-enrichment\n",
        "    execution.checkpointing.dir: s3://lake-checkpoints/orders-enrichment\n" + extra,
    )
    config = _config(_repo(tmp_path, {"fd.yaml": text}))
    assert config["execution.checkpointing.interval"]["value"] == 30_000
    assert config["execution.checkpointing.externalized-checkpoint-retention"]["value"] == "delete_on_cancellation"


def test_savepoint_upgrade_mode_gets_no_interval_from_the_operator(tmp_path: Path) -> None:
    config = _config(_repo(tmp_path, {"fd.yaml": DEPLOYMENT.format(extra="", mode="savepoint")}))
    assert config["execution.checkpointing.interval"]["default"] is True  # Flink's: no checkpoints
    assert config["execution.checkpointing.externalized-checkpoint-retention"]["value"] == "retain_on_cancellation"


def test_a_flow_mapping_line_gives_each_key_its_own_value(tmp_path: Path) -> None:
    text = (
        "execution:\n"
        "  checkpointing: {interval: 30s, local-backup: {enabled: false}, unaligned: {enabled: true},"
        " aligned-checkpoint-timeout: 0, timeout: 30000}\n"
    )
    config = _config(_repo(tmp_path, {"config.yaml": text}))
    assert config["execution.checkpointing.unaligned.enabled"]["value"] is True
    assert config["execution.checkpointing.timeout"]["value"] == 30_000
    assert config["execution.checkpointing.interval"]["value"] == 30_000


def test_yaml_1_1_booleans_in_a_kubernetes_resource_are_booleans(tmp_path: Path) -> None:
    extra = "    execution.checkpointing.unaligned.enabled: on\n    execution.checkpointing.incremental: yes\n"
    text = DEPLOYMENT.format(extra="", mode="savepoint").replace(
        '    taskmanager.numberOfTaskSlots: "2"\n', '    taskmanager.numberOfTaskSlots: "2"\n' + extra
    )
    root = _repo(tmp_path, {"fd.yaml": text})
    config = _config(root)
    assert config["execution.checkpointing.unaligned.enabled"]["value"] is True
    assert config["execution.checkpointing.incremental"]["value"] is True
    # while a config.yaml is read as Flink reads it (YAML 1.2): "on" is no boolean there
    root2 = _repo(tmp_path / "conf", {"config.yaml": "execution.checkpointing.unaligned.enabled: on\n"})
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=root2)
    problems = p.json()["facts"]["deployment"]["problems"]
    assert any(x.get("code") == "invalid-value" for x in problems), problems


def test_flink_2_keys_the_table_lacked_are_known_and_typed(tmp_path: Path) -> None:
    text = (
        "state.checkpoints.create-subdir: false\n"
        "execution.checkpointing.during-recovery.enabled: true\n"
        "execution.checkpointing.unaligned.recover-output-on-downstream.enabled: true\n"
        "state.checkpoint.cleaner.parallel-mode: false\n"
        "state.backend.changelog.periodic-materialize.enabled: false\n"
        "execution.checkpointing.write-buffer-size: 4 kb\n"
    )
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=_repo(tmp_path, {"config.yaml": text}))
    deployment = p.json()["facts"]["deployment"]
    assert deployment["unknown_keys"] == [], deployment["unknown_keys"]
    config = deployment["config"]
    assert config["execution.checkpointing.create-subdir"]["value"] is False
    assert config["state.changelog.periodic-materialize.enabled"]["value"] is False
    invalid = [x for x in deployment["problems"] if x.get("code") == "invalid-value"]
    assert [x["line"] for x in invalid] == [6], invalid  # an Integer option: "4 kb" is refused


def test_an_interval_below_10_ms_is_refused_as_flink_refuses_it(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"config.yaml": "execution.checkpointing.interval: 0\n"})
    p = sw("check", "--no-cache", "--now", NOW, "--format", "json", cwd=root)
    [refused] = [f for f in p.json()["findings"] if f["path"] == "execution.checkpointing.interval"]
    assert (
        refused["rule"] == "SW-DEPLOY-003"
        and "below the smallest value Flink accepts here (10 ms)" in refused["message"]
    )
    assert "SW-CKPT-001" not in [f["rule"] for f in p.json()["findings"]]  # not "checkpointing off"
    assert (
        _config(_repo(tmp_path / "ok", {"config.yaml": "execution.checkpointing.interval: 10 ms\n"}))[
            "execution.checkpointing.interval"
        ]["value"]
        == 10
    )


def test_a_duration_in_other_scripts_digits_is_refused(tmp_path: Path) -> None:
    p = sw(
        "facts",
        "orders-enrichment",
        "--now",
        NOW,
        cwd=_repo(tmp_path, {"config.yaml": "execution.checkpointing.timeout: ١٠s\n"}),
    )
    problems = p.json()["facts"]["deployment"]["problems"]
    assert [x["code"] for x in problems if x.get("key") == "execution.checkpointing.timeout"] == ["invalid-value"], (
        problems
    )


def test_a_legacy_flink_conf_is_not_applied_to_a_flink_2_resource(tmp_path: Path) -> None:
    fd = DEPLOYMENT.format(extra="", mode="savepoint")
    conf = "execution.checkpointing.interval: 30 s\nstate.backend.type: rocksdb\n"
    p = sw(
        "check",
        "--no-cache",
        "--now",
        NOW,
        "--format",
        "json",
        cwd=_repo(tmp_path, {"fd.yaml": fd, "flink-conf.yaml": conf}),
    )
    [ignored] = [f for f in p.json()["findings"] if f["rule"] == "SW-DEPLOY-004" and f["file"] == "flink-conf.yaml"]
    assert ignored["severity"] == "error" and "runs Flink v2_1" in ignored["message"], ignored
    config = _config(_repo(tmp_path / "again", {"fd.yaml": fd, "flink-conf.yaml": conf}))
    assert config["execution.checkpointing.interval"]["default"] is True  # the flink-conf.yaml value is not applied
    # a Flink 1.x resource still reads it
    v1 = _config(_repo(tmp_path / "v1", {"fd.yaml": fd.replace("v2_1", "v1_20"), "flink-conf.yaml": conf}))
    assert v1["execution.checkpointing.interval"]["value"] == 30_000


def test_task_manager_replicas_decide_the_parallelism(tmp_path: Path) -> None:
    text = (
        DEPLOYMENT.format(extra="", mode="savepoint")
        .replace('    taskmanager.numberOfTaskSlots: "2"\n', '    taskmanager.numberOfTaskSlots: "8"\n')
        .replace("  job:\n", "  taskManager:\n    replicas: 20\n  job:\n")
    )
    root = _repo(tmp_path, {"fd.yaml": text})
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=root)
    deployment = p.json()["facts"]["deployment"]
    parallelism = deployment["config"]["parallelism.default"]
    assert parallelism["value"] == 160 and parallelism["line"] == 12, parallelism  # 20 replicas x 8 slots
    [ignored] = [x for x in deployment["problems"] if x["code"] == "ignored-field"]
    assert ignored["key"] == "spec.job.parallelism" and "= 160" in ignored["message"]
