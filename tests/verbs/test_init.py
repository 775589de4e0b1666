"""`streamwarden init` through the real CLI: contracts derived from the examples' deployment files,
from the example lake (--table) and from a job on the real Flink test cluster (--env --job); what
cannot be derived is a TODO that validate and check refuse; --dry-run, --force, no overwrite; a
hostile name from a file cannot break the YAML written."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import sw
from tests.conftest import REPO

EXAMPLES = REPO / "contracts" / "examples"
# pipeline -> the deployment files init reads (as the example contract's job.deployment lists them)
PIPELINES = {
    "orders-enrichment": ["deploy/flinkdeployment.yaml", "deploy/job.sql"],
    "clickstream-sessions": ["deploy/flink-conf.yaml"],
    "payments-cdc": ["deploy/config.yaml", "deploy/flinkdeployment.yaml"],
}
FILLED = {
    "TODO(owner)": "data-platform",
    "TODO(consumer)": "finance-dashboard",
    "TODO(duration)": "1h",
    "TODO(contact)": '"#finance-data"',
    "TODO(column)": "updated_at",
    "TODO(kind)": "keyed",
}


def deploy_copy(tmp_path: Path) -> Path:
    """A repository holding only the examples' deploy/ directories: no contract at all."""
    root = tmp_path / "repo"
    for name in PIPELINES:
        shutil.copytree(EXAMPLES / name / "deploy", root / name / "deploy")
    return root


def fill_todos(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for marker, value in FILLED.items():
        text = text.replace(marker, value)
    assert not re.search(r"(:|-) TODO\(", text), text
    path.write_text(text, encoding="utf-8")


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def init_example(root: Path, name: str, *extra: str) -> Any:
    files = [f"{name}/{f}" for f in PIPELINES[name]]
    job = ["--job", name] if name == "clickstream-sessions" else []  # flink-conf.yaml names no job
    return sw("init", "--from-deployment", *files, *job, *extra, cwd=root)


def test_contracts_from_the_examples_deploy_files_pass_check_once_the_todos_are_filled(tmp_path: Path) -> None:
    root = deploy_copy(tmp_path)
    for name in PIPELINES:
        p = init_example(root, name)
        assert p.code == 0, p
        assert f"wrote contracts/{name}.yaml" in p.stderr

    contracts = {name: root / "contracts" / f"{name}.yaml" for name in PIPELINES}
    for name, path in contracts.items():
        text = path.read_text(encoding="utf-8")
        # the schema is installed outside this repository: no modeline, no path of this machine
        assert text.startswith("# Written by `streamwarden init`."), text
        assert str(Path(sys.prefix).parent) not in text and str(tmp_path) not in text
        data = load(path)
        assert data["metadata"]["name"] == data["job"]["name"] == name
        assert data["job"]["deployment"] == [f"../{name}/{f}" for f in PIPELINES[name]]
        assert data["metadata"]["owner"] == "TODO(owner)"

    # values and where they came from, against the hand-written example contract
    orders = load(contracts["orders-enrichment"])
    assert orders["job"] | {"deployment": None} == {
        "name": "orders-enrichment",
        "deployment": None,
        "parallelism": 4,
        "max_parallelism": 128,
        "restart_strategy": "exponential-delay",
    }
    assert orders["checkpoint"] == {
        "mode": "exactly_once",
        "interval": "1m",
        "timeout": "10m",
        "min_pause": "30s",
        "max_concurrent": 1,
        "storage": "s3://lake-checkpoints/orders-enrichment",
        "externalized": "retain_on_cancellation",
        "num_retained": 3,
        "unaligned": False,
        "tolerable_failures": 3,
    }
    assert orders["state"] == {
        "backend": "rocksdb",
        "incremental": True,
        "auto_generated_uids": "forbidden",
        "allow_non_restored_state": False,
    }
    text = contracts["orders-enrichment"].read_text(encoding="utf-8")
    assert re.search(r"interval: 1m +# orders-enrichment/deploy/flinkdeployment\.yaml:21 ", text)
    assert re.search(r"allow_non_restored_state: false +# orders-enrichment/deploy/flinkdeployment\.yaml:59 ", text)
    assert re.search(r"name: orders-enrichment +# orders-enrichment/deploy/job\.sql:7 pipeline\.name", text)
    # the schema_evolution section in force without one, written out (absent would mean the same)
    assert orders["schema_evolution"] == {
        "compatibility": "backward",
        "allow_renames": False,
        "coordinate_with_state": False,
        "protect_consumers": True,
    }
    assert list(orders)[-1] == "schema_evolution"
    assert "no column the consumers read removed or made optional (SW-SCHEMA-012)" in text
    payments = load(contracts["payments-cdc"])
    assert payments["state"]["allow_non_restored_state"] is True  # the CR's deprecated alias
    assert payments["checkpoint"]["interval"] == "2m"  # config.yaml beside the CR

    # unreviewed: validate and check refuse every TODO, with file:line
    p = sw("validate", cwd=root)
    assert p.code == 2, p
    assert "contracts/orders-enrichment.yaml:9: metadata.owner: fill the TODO" in p.stderr
    assert "contracts/payments-cdc.yaml:13: metadata.consumers[0].freshness: fill the TODO" in p.stderr
    assert p.stderr.count("fill the TODO") == 12
    p = sw("check", cwd=root)
    assert p.code == 2, p
    assert "contracts/clickstream-sessions.yaml:12: metadata.consumers[0].name: fill the TODO" in p.output

    for path in contracts.values():
        fill_todos(path)
    p = sw("validate", cwd=root)
    assert p.code == 0, p
    p = sw("check", "--format", "json", cwd=root)
    findings = Counter((f["pipeline"], f["rule"], f["path"]) for f in p.json()["findings"])
    # only what clickstream's flink-conf.yaml really does: checkpoints on the local disk
    # (state.checkpoints.dir file:///tmp/ckpt, in the file and so in the contract) and a min pause
    # (60 s) longer than the interval it was left beside (30 s)
    assert findings == Counter(
        {
            ("clickstream-sessions", "SW-CKPT-004", "checkpoint.storage"): 1,
            ("clickstream-sessions", "SW-CKPT-004", "execution.checkpointing.dir"): 1,
            ("clickstream-sessions", "SW-CKPT-002", "checkpoint.min_pause"): 1,
        }
    ), p
    assert p.code == 1


def test_dry_run_prints_and_an_existing_contract_is_only_replaced_with_force(tmp_path: Path) -> None:
    root = deploy_copy(tmp_path)
    target = root / "contracts" / "orders-enrichment.yaml"
    p = init_example(root, "orders-enrichment", "--dry-run")
    assert p.code == 0, p
    assert not target.exists()
    assert p.stdout.startswith("# Written by `streamwarden init`.")
    assert "owner: TODO(owner)" in p.stdout

    assert init_example(root, "orders-enrichment").code == 0
    assert target.read_text(encoding="utf-8") == p.stdout
    target.write_text("kept\n", encoding="utf-8")
    p = init_example(root, "orders-enrichment")
    assert p.code == 2, p
    assert "contracts/orders-enrichment.yaml: already exists; not overwritten" in p.stderr
    assert target.read_text(encoding="utf-8") == "kept\n"
    p = init_example(root, "orders-enrichment", "--force")
    assert p.code == 0, p
    assert "owner: TODO(owner)" in target.read_text(encoding="utf-8")

    other = root / "elsewhere" / "orders.yaml"
    p = init_example(root, "orders-enrichment", "-o", str(other))
    assert p.code == 0, p
    assert load(other)["job"]["deployment"] == [
        "../orders-enrichment/deploy/flinkdeployment.yaml",
        "../orders-enrichment/deploy/job.sql",
    ]


def test_nothing_to_derive_from_and_a_missing_file_are_usage_errors(tmp_path: Path) -> None:
    p = sw("init", cwd=tmp_path)
    assert p.code == 2 and "nothing to derive a contract from" in p.stderr, p
    p = sw("init", "--from-deployment", "nope.yaml", cwd=tmp_path)
    assert p.code == 2 and "nope.yaml: deployment file does not exist" in p.stderr, p
    p = sw("init", "--table", "lake.sales.orders", "-o", "x.yaml", cwd=tmp_path)
    assert p.code == 2 and "--table needs --env" in p.stderr, p


HOSTILE = 'evil": x\n  injected: true\n# \u2028kind: Other'


def test_a_hostile_job_name_in_a_manifest_cannot_inject_keys(tmp_path: Path) -> None:
    manifest = {
        "apiVersion": "flink.apache.org/v1beta1",
        "kind": "FlinkDeployment",
        "metadata": {"name": HOSTILE},
        "spec": {
            "flinkConfiguration": {"execution.checkpointing.interval": "10 s", "pipeline.name": HOSTILE},
            "job": {"jarURI": "local:///job.jar", "parallelism": 2},
        },
    }
    (tmp_path / "cr.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    p = sw("init", "--from-deployment", "cr.yaml", cwd=tmp_path)
    assert p.code == 2 and "is not a plain file name" in p.stderr, p  # never contracts/<that>.yaml
    p = sw("init", "--from-deployment", "cr.yaml", "-o", "c.yaml", cwd=tmp_path)
    assert p.code == 0, p
    data = load(tmp_path / "c.yaml")
    assert data["metadata"]["name"] == data["job"]["name"] == HOSTILE
    assert set(data) == {"apiVersion", "kind", "metadata", "job", "state", "checkpoint", "schema_evolution"}
    assert data["kind"] == "PipelineContract"
    assert "injected" not in data["metadata"] and "injected" not in data["job"]
    assert data["checkpoint"]["interval"] == "10s"
    # the comments stay comments: every line is a key, a list item, a comment or inside them
    for line in (tmp_path / "c.yaml").read_text(encoding="utf-8").splitlines():
        assert not line.lstrip().startswith("injected"), line


def _load_lake_script() -> Any:
    spec = importlib.util.spec_from_file_location("make_example_lake", REPO / "scripts" / "make_example_lake.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_table_from_the_example_lake(tmp_path: Path) -> None:
    pytest.importorskip("pyiceberg")
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake"))
    assert _load_lake_script().main(["--root", str(root), "--now", "2026-11-25T12:00:00Z"]) == 0
    p = sw(
        "init",
        "--env",
        "local",
        "--table",
        "lake.sales.orders",
        "--job",
        "orders-enrichment",
        "-o",
        "new.yaml",
        cwd=root,
    )
    assert p.code == 0, p
    assert "no flink section" in p.stderr  # local has no Flink: --job only names the contract
    new = load(root / "new.yaml")
    example = load(root / "orders-enrichment" / "contract.yaml")
    for key in ("catalog", "identifier", "format_version", "identifier_fields", "partition_spec"):
        assert new["table"][key] == example["table"][key], key
    strip = [{k: v for k, v in f.items() if k != "default"} for f in example["table"]["schema"]]
    assert new["table"]["schema"] == strip  # names, types, required, field ids, docs
    retention_keys = {
        k: v for k, v in example["table"]["properties"].items() if k.startswith(("history.", "write.metadata."))
    }
    assert retention_keys.items() <= new["table"]["properties"].items()
    assert new["retention"]["snapshots"] == example["retention"]["snapshots"]
    assert new["quality"]["freshness"] == {"column": "TODO(column)", "max_lag": "TODO(duration)"}
    text = (root / "new.yaml").read_text(encoding="utf-8")
    assert "Iceberg catalog (lake)" in text
    assert "yaml-language-server" not in text  # the schema is outside the repository: no machine's path

    fill_todos(root / "new.yaml")
    p = sw("validate", "new.yaml", cwd=root)
    assert p.code == 0, p

    p = sw("init", "--env", "local", "--table", "lake.sales.nope", "-o", "x.yaml", cwd=root)
    assert p.code == 2 and "the table cannot be read" in p.stderr and "does not exist" in p.stderr, p


@pytest.mark.slow
def test_running_job_on_the_flink_test_cluster(tmp_path: Path, flink_cluster: Any) -> None:
    name = "sw-init-orders"
    settings = {
        "execution.checkpointing.interval": "2s",
        "execution.checkpointing.mode": "EXACTLY_ONCE",
        "execution.checkpointing.timeout": "1min",
        "execution.checkpointing.min-pause": "500ms",
        "execution.checkpointing.tolerable-failed-checkpoints": "3",
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
    }
    jid = flink_cluster.submit("stateful_datastream.py", "--name", name, dynamic=settings)
    try:
        flink_cluster.wait_running(jid, checkpoints=1)
        (tmp_path / "streamwarden.yaml").write_text(
            f"environments:\n  test:\n    flink:\n      rest_url: {flink_cluster.rest_url}\n", encoding="utf-8"
        )
        p = sw("init", "--env", "test", "--job", name, cwd=tmp_path)
        assert p.code == 0, p
        path = tmp_path / "contracts" / f"{name}.yaml"
        data = load(path)
        assert data["job"]["name"] == name
        assert data["checkpoint"] | {"storage": None} == {
            "mode": "exactly_once",
            "interval": "2s",
            "timeout": "1m",
            "min_pause": "500ms",
            "max_concurrent": 1,
            "externalized": "retain_on_cancellation",
            "unaligned": False,
            "tolerable_failures": 3,
            "storage": None,
        }
        assert data["checkpoint"]["storage"].startswith("file:")  # the cluster's checkpoint directory
        assert data["job"]["max_parallelism"] == 128
        operators = data["state"]["operators"]
        uids = [o["uid"] for o in operators]
        assert "count-per-key" in uids  # Flink's hash of it is the vertex id: proven, so written
        assert all(o["kind"] == "TODO(kind)" for o in operators)
        text = path.read_text(encoding="utf-8")
        assert "Flink REST /jobs/" in text
        p = sw("validate", cwd=tmp_path)
        assert p.code == 2 and "state.operators[0].kind: fill the TODO" in p.stderr, p
        p = sw("init", "--env", "test", "--job", "no-such-job", "-o", "x.yaml", cwd=tmp_path)
        assert p.code == 2 and "runs no job named 'no-such-job'" in p.stderr, p
    finally:
        flink_cluster.cancel(jid)


def test_the_modeline_never_names_a_path_of_this_machine_and_refers_to_a_copy_in_the_repository(
    tmp_path: Path,
) -> None:
    root = deploy_copy(tmp_path)
    (root / ".git").mkdir()  # a checkout: the shipped schema (in this repository's checkout) is outside it
    p = init_example(root, "orders-enrichment")
    assert p.code == 0, p
    text = (root / "contracts" / "orders-enrichment.yaml").read_text(encoding="utf-8")
    assert "yaml-language-server" not in text and "/" + REPO.name + "/" not in text and str(REPO) not in text
    command = "streamwarden schema contract > contracts/pipeline-contract.schema.json"
    assert "streamwarden: note: no yaml-language-server modeline was written" in p.stderr and command in p.stderr, p

    # the user copies the schema in, as the note says: init refers to the copy, relative to the contract
    schema = sw("schema", "contract", cwd=root)
    (root / "contracts" / "pipeline-contract.schema.json").write_text(schema.stdout, encoding="utf-8")
    p = init_example(root, "orders-enrichment", "--force")
    assert p.code == 0 and "note:" not in p.stderr, p
    text = (root / "contracts" / "orders-enrichment.yaml").read_text(encoding="utf-8")
    assert text.splitlines()[0] == "# yaml-language-server: $schema=pipeline-contract.schema.json"
    nested = root / "contracts" / "team" / "orders.yaml"
    p = init_example(root, "orders-enrichment", "-o", str(nested))
    assert p.code == 0, p
    first = nested.read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../pipeline-contract.schema.json"
    assert sw("validate", str(nested), cwd=root).code == 2  # TODOs; the modeline itself disturbs nothing


def test_dry_run_needs_no_job_name_nor_output(tmp_path: Path) -> None:
    root = deploy_copy(tmp_path)
    # flink-conf.yaml names no job: the contract has no file name, which a dry run does not need
    p = sw("init", "--from-deployment", "clickstream-sessions/deploy/flink-conf.yaml", "--dry-run", cwd=root)
    assert p.code == 0, p
    assert not (root / "contracts").exists()
    data = yaml.safe_load(p.stdout)
    assert data["job"]["name"] == "TODO(name)" and data["checkpoint"]["interval"]
    line = next(i for i, t in enumerate(p.stdout.splitlines(), 1) if t.strip().startswith("name: TODO(name)"))
    assert f"  line {line}: metadata.name" in p.stderr, p
    # writing it still needs a name
    p = sw("init", "--from-deployment", "clickstream-sessions/deploy/flink-conf.yaml", cwd=root)
    assert p.code == 2 and "no job name was found" in p.stderr and "--job NAME or -o FILE" in p.stderr, p
