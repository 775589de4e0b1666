"""The policy input document has a JSON Schema (contracts/schema/streamwarden-input.v1.schema.json):
documents produced by the real code paths conform to it (static checks of the examples, a
pull-request check in a real git repository, Iceberg facts from a real PyIceberg SQLite catalog,
Flink REST facts from the fake server, savepoint facts, gate and evidence), and it rejects what the
code does not produce (a wrong type, an unknown key in a closed object)."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from tests.conftest import CLEAN_CONTRACT, NOW, REPO, invoke
from tests.fake_flink import CHECKPOINTS, JID, VID, FakeFlink, fake_flink, flink_error, healthy_routes
from tests.gitrepo import Repo

import streamwarden.check.evaluation as evaluation_module
from streamwarden.check.options import RunOptions, RunResult
from streamwarden.check.run import run_check
from streamwarden.contracts.config import Config, load_config
from streamwarden.contracts.load import load_contract
from streamwarden.core.inputschema import INPUT_SCHEMA, input_schema_errors, json_path
from streamwarden.core.resources import load_schema
from streamwarden.evaluate.inputdoc import pipeline as build_input
from streamwarden.facts.flink import gather_flink_one
from streamwarden.facts.pipeline import gather_one
from streamwarden.facts.savepoint import gather_savepoint

EXAMPLES = REPO / "contracts" / "examples"
NOW_MS = 1_795_608_000_000  # NOW (2026-11-25T12:00:00Z) in epoch ms
UNREACHABLE = "http://127.0.0.1:9"  # the discard port: connection refused


def assert_conforms(doc: dict[str, Any]) -> None:
    errors = input_schema_errors(doc)
    assert errors == [], "\n".join(errors)


@pytest.fixture
def evaluated(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every document the run hands to the engine (pipelines, removed pipelines, the repository)."""
    seen: list[dict[str, Any]] = []
    original = evaluation_module.evaluate_subject

    def spy(engine: Any, policy_set: Any, subject: Any, doc: dict[str, Any], packages: Any) -> Any:
        seen.append(copy.deepcopy(doc))
        return original(engine, policy_set, subject, doc, packages)

    monkeypatch.setattr(evaluation_module, "evaluate_subject", spy)
    return seen


@pytest.fixture
def fake() -> Iterator[FakeFlink]:
    with fake_flink() as f:
        yield f


@pytest.fixture(scope="module")
def examples_run() -> RunResult:
    config = load_config(str(EXAMPLES / "streamwarden.yaml"))
    return run_check(config, RunOptions(keep_inputs=True, now_ms=NOW_MS))


# --- the schema itself --------------------------------------------------------------------------


def _undocumented(node: Any, where: str) -> Iterator[str]:
    """Properties without a description (constraints under if / allOf / not are not documentation)."""
    if isinstance(node, list):
        for i, v in enumerate(node):
            yield from _undocumented(v, f"{where}/{i}")
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ("if", "allOf", "not"):
                continue
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    if not (isinstance(sub, dict) and sub.get("description")):
                        yield f"{where}/properties/{name}"
                    yield from _undocumented(sub, f"{where}/properties/{name}")
            else:
                yield from _undocumented(value, f"{where}/{key}")


def test_schema_is_draft_2020_12_with_an_id_and_every_property_described() -> None:
    schema = load_schema(INPUT_SCHEMA)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/streamwarden-input.v1.json")
    assert schema["title"] and schema["description"]
    assert list(_undocumented(schema, "#")) == []


def test_schema_ships_with_the_other_schemas() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"contracts/schema" = "streamwarden/_schema"' in pyproject
    assert (REPO / "contracts" / "schema" / INPUT_SCHEMA).is_file()


# --- static checks ------------------------------------------------------------------------------


def test_example_contracts_and_their_deployment_files_conform(examples_run: RunResult) -> None:
    assert examples_run.errors == []
    assert sorted(examples_run.inputs) == ["clickstream-sessions", "orders-enrichment", "payments-cdc"]
    for doc in examples_run.inputs.values():
        assert_conforms(doc)
    deployments = [d["facts"]["deployment"] for d in examples_run.inputs.values()]
    assert all(d["available"] for d in deployments)
    kinds = {f["kind"] for d in deployments for f in d["files"]}
    assert {"flink-deployment", "sql", "flink-conf", "flink-config"} <= kinds


def test_deployment_facts_with_conflicts_problems_and_unknown_keys_conform(tmp_path: Path) -> None:
    """Every fixture of tests/fixtures/deploy named by one contract (and the invalid YAML by another)."""
    shutil.copytree(REPO / "tests" / "fixtures" / "deploy", tmp_path / "contracts" / "deploy")
    files = sorted(
        p.relative_to(tmp_path / "contracts").as_posix()
        for p in (tmp_path / "contracts" / "deploy").rglob("*")
        if p.suffix in (".yaml", ".sql") and p.name != "broken.yaml"
    )
    listed = "".join(f"\n    - {f}" for f in files)
    (tmp_path / "contracts" / "all.yaml").write_text(
        CLEAN_CONTRACT.replace("  parallelism: 4\n", f"  parallelism: 4\n  deployment:{listed}\n")
    )
    for name, file in (("conflict", "bad/conflict.yaml"), ("broken", "bad/broken.yaml")):
        one = CLEAN_CONTRACT.replace("  parallelism: 4\n", f"  parallelism: 4\n  deployment: deploy/{file}\n")
        (tmp_path / "contracts" / f"{name}.yaml").write_text(_named(name, one))
    paths = [str(tmp_path / "contracts" / f"{name}.yaml") for name in ("all", "conflict", "broken")]
    result = run_check(load_config(cwd=tmp_path), RunOptions(paths=paths, keep_inputs=True, now_ms=NOW_MS))
    assert result.errors == []
    deployment = result.inputs["orders-enrichment"]["facts"]["deployment"]
    assert deployment["problems"] and deployment["unknown_keys"] and deployment["job"]
    assert result.inputs["conflict"]["facts"]["deployment"]["conflicts"]
    assert result.inputs["broken"]["facts"]["deployment"]["available"] is False
    for doc in result.inputs.values():
        assert_conforms(doc)


def test_facts_command_document_conforms(runner: Any) -> None:
    r = invoke(runner, "facts", "payments-cdc", "--config", str(EXAMPLES / "streamwarden.yaml"), "--now", NOW)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["mode"] == "facts"
    assert_conforms(doc)


def test_unreadable_deployment_file_is_the_unavailable_form(tmp_path: Path) -> None:
    contract_file = tmp_path / "contracts" / "orders.yaml"
    contract_file.parent.mkdir()
    contract_file.write_text(
        CLEAN_CONTRACT.replace("  parallelism: 4\n", "  parallelism: 4\n  deployment: missing.yaml\n")
    )
    result = run_check(
        load_config(cwd=tmp_path), RunOptions(paths=[str(contract_file)], keep_inputs=True, now_ms=NOW_MS)
    )
    (doc,) = result.inputs.values()
    assert doc["facts"]["deployment"]["available"] is False and doc["facts"]["deployment"]["configured"] is True
    assert_conforms(doc)


# --- a pull-request check -----------------------------------------------------------------------

CUSTOM_POLICY = """package acme.pipelines

import rego.v1

deny contains f if {
	input.contract.checkpoint.interval > 30000
	f := {"rule": "ACME-001", "message": "checkpoint.interval above 30s", "path": "checkpoint.interval"}
}
"""


def _named(name: str, text: str = CLEAN_CONTRACT) -> str:
    return text.replace("name: orders-enrichment", f"name: {name}")


def test_pull_request_documents_conform(tmp_path: Path, evaluated: list[dict[str, Any]]) -> None:
    repo = Repo(tmp_path / "repo")
    transitive = CLEAN_CONTRACT.replace("compatibility: full", "compatibility: full_transitive")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\npolicies: [policies/custom]\n')
    repo.write("policies/custom/README.md", "Team policies.\n")
    repo.write("contracts/orders.yaml", transitive.replace("format_version: 2", "format_version: 1"))
    repo.write("contracts/gone.yaml", _named("gone"))
    repo.write("contracts/broken.yaml", _named("broken").replace("max_concurrent: 1", "max_concurrent: many"))
    repo.commit("v1")
    extra = "\n    - {name: channel, type: string, id: 4}"
    repo.write("contracts/orders.yaml", transitive.replace("required: true, id: 3}", "required: true, id: 3}" + extra))
    repo.commit("v2")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", transitive.replace("interval: 60s", "interval: 45s"))
    repo.remove("contracts/gone.yaml")
    repo.write("contracts/broken.yaml", _named("broken"))
    repo.write("contracts/clicks.yaml", _named("clicks"))
    repo.write("policies/custom/acme.rego", CUSTOM_POLICY)
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\npolicies: [policies/custom]\nfail_on: error\n')
    repo.commit("head")

    config = load_config(cwd=repo.path)
    result = run_check(config, RunOptions(base_ref="main", keep_inputs=True, now_ms=NOW_MS))
    assert result.errors == []
    pipelines = [d for d in evaluated if "repository" not in d]
    statuses = {(d["contract"] or d["base"]["contract"])["metadata"]["name"]: d["base"]["status"] for d in pipelines}
    assert statuses == {"orders-enrichment": "present", "broken": "unparseable", "clicks": "added", "gone": "removed"}
    orders = next(d for d in pipelines if d["contract"] and d["contract"]["metadata"]["name"] == "orders-enrichment")
    assert orders["base"]["history"], "the transitive mode keeps the earlier version"
    (repository,) = [d for d in evaluated if "repository" in d]
    changes = {(c["file"], c["change"], c["kind"]) for c in repository["repository"]["policy_changes"]}
    assert changes == {
        ("streamwarden.yaml", "modified", "configuration"),
        ("policies/custom/acme.rego", "added", "policy"),
    }
    for doc in evaluated:
        assert_conforms(doc)


# --- live facts ---------------------------------------------------------------------------------


def _write_config(root: Path, environment: dict[str, Any]) -> None:
    config = {"contracts": ["contracts/**/*.yaml"], "environments": {"prod": environment}}
    (root / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _contract_doc(root: Path, text: str, facts: dict[str, Any]) -> dict[str, Any]:
    """The input document of one contract, with some sources replaced by what a gatherer returned."""
    path = root / "contracts" / "one.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    contract = load_contract(path, root)
    gathered = gather_one(contract.data, contract.path, root)
    gathered.update(facts)
    return build_input(contract, gathered, NOW_MS, "prod", "check", config=Config(root=root).policy_settings())


def test_iceberg_facts_from_a_real_catalog_conform(tmp_path: Path) -> None:
    pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")
    from tests.iceberg_tables import JOB_A, JOB_FORK, FlinkSink, Lake, compact

    lake = Lake(tmp_path)
    table = lake.create_orders({"history.expire.max-snapshot-age-ms": "not-a-number"})
    sink, fork = FlinkSink(lake, table, JOB_A), FlinkSink(lake, table, JOB_FORK)
    sink.commit_range(1, 3)
    compact(lake, table)  # maintenance: a replace snapshot
    fork.commit(1)
    sink.commit(4)
    sink.recommit(4)  # the same data files added twice (SW-TABLE-011)
    sink.commit(2)  # going back in checkpoint ids
    lake.append(table)  # a snapshot without lineage
    head = table.current_snapshot()
    assert head is not None
    table.manage_snapshots().create_tag(head.snapshot_id, "release-1").commit()
    _write_config(tmp_path, {"iceberg": lake.environment()})
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(CLEAN_CONTRACT)
    elsewhere = CLEAN_CONTRACT.replace("catalog: lake", "catalog: nowhere")
    elsewhere += "quality:\n  unique: [order_id]\n"  # data facts wanted, but the catalog is not configured
    (tmp_path / "contracts" / "elsewhere.yaml").write_text(_named("elsewhere", elsewhere))

    result = run_check(
        load_config(cwd=tmp_path), RunOptions(environment="prod", keep_inputs=True, now_ms=lake.clock.now_ms + 60_000)
    )
    assert result.errors == []
    orders, elsewhere_doc = result.inputs["orders-enrichment"], result.inputs["elsewhere"]
    iceberg = orders["facts"]["iceberg"]
    assert iceberg["available"], iceberg
    assert iceberg["lineage"]["interleavings"] and iceberg["lineage"]["backwards"]
    assert iceberg["files"]["scanned"] and iceberg["files"]["duplicates"]
    assert iceberg["retention"]["max_snapshot_age_ms_source"] == "invalid"
    assert orders["facts"]["data"] == {"available": False, "configured": False}
    assert elsewhere_doc["facts"]["iceberg"]["available"] is False
    assert elsewhere_doc["facts"]["data"]["configured"] is True and "error" in elsewhere_doc["facts"]["data"]
    assert_conforms(orders)
    assert_conforms(elsewhere_doc)


def _flink_env(url: str) -> dict[str, Any]:
    """``environments.<name>.flink`` as the config loader hands it over (timeout in ms)."""
    return {"rest_url": url, "timeout": 2000, "retries": 0}


def test_flink_facts_from_the_fake_server_conform(tmp_path: Path, fake: FakeFlink) -> None:
    def gathered(job: str = "orders", url: str = fake.url) -> dict[str, Any]:
        facts = gather_flink_one({"job": {"name": job}}, _flink_env(url), tmp_path, {})
        return _contract_doc(tmp_path, CLEAN_CONTRACT, {"flink": facts})

    docs = {"healthy": gathered(), "not found": gathered("orderz")}
    fake.routes[f"/jobs/{JID}/checkpoints/config"] = flink_error(404, "Checkpointing is not enabled for this job")
    fake.routes[f"/jobs/{JID}/checkpoints"] = flink_error(500, "boom")
    fake.routes[f"/jobs/{JID}/metrics"] = (200, [])
    fake.routes[f"/jobs/{JID}/vertices/{VID}/backpressure"] = flink_error(503, "busy")
    docs["degraded"] = gathered()
    fake.routes[f"/jobs/{JID}"] = flink_error(404, "Job not found")
    docs["vanished"] = gathered()
    docs["unreachable"] = gathered(url=UNREACHABLE)

    flink = {name: d["facts"]["flink"] for name, d in docs.items()}
    assert flink["healthy"]["job_found"] and flink["healthy"]["backpressure"]["available"]
    assert flink["not found"]["job_found"] is False and "similar_jobs" in flink["not found"]
    assert flink["degraded"]["checkpoint_config"] == {
        "available": True,
        "enabled": False,
        "interval": None,
        "source": f"/jobs/{JID}/checkpoints/config",
    }
    assert flink["degraded"]["checkpoints"]["available"] is False
    assert flink["degraded"]["backpressure"]["available"] is False
    assert flink["vanished"]["available"] is False and flink["vanished"]["job_id"] == JID
    assert set(flink["unreachable"]) == {"available", "configured", "error"}
    for name, doc in docs.items():
        assert input_schema_errors(doc) == [], name


def test_savepoint_facts_conform(tmp_path: Path) -> None:
    from tests.savepoint_files import keyed_operator, orders_job, write_savepoint

    text = CLEAN_CONTRACT
    v6 = write_savepoint(
        tmp_path / "savepoints" / "savepoint-4d986c-1a2b3c4d5e6f", orders_job(dedup_uid="orders-dedupe")
    )
    v3 = write_savepoint(tmp_path / "checkpoints" / JID / "chk-7", [keyed_operator("orders-dedup")], version=3)
    docs = [
        _contract_doc(tmp_path, text, {"savepoint": gather_savepoint({}, str(v6), None)}),
        _contract_doc(
            tmp_path, text, {"savepoint": gather_savepoint(load_contract_data(tmp_path, text), str(v6), None)}
        ),
        _contract_doc(
            tmp_path, text, {"savepoint": gather_savepoint(load_contract_data(tmp_path, text), str(v3), None)}
        ),
        # a directory with no _metadata: it exists, so a gap in the facts (a missing path is exit 2)
        _contract_doc(tmp_path, text, {"savepoint": gather_savepoint({}, str(tmp_path / "checkpoints"), None)}),
        _contract_doc(tmp_path, text, {"savepoint": gather_savepoint({}, None, None)}),
    ]
    savepoints = [d["facts"]["savepoint"] for d in docs]
    assert savepoints[1]["unmatched_stateful"] and savepoints[1]["operators"][2]["closest"]["distance"] == 1
    assert savepoints[2]["kind"] == "checkpoint" and savepoints[2]["job_id_source"] == "path"
    assert savepoints[3]["available"] is False and savepoints[3]["source"] == "restore_from"
    assert savepoints[4] == {"available": False, "configured": False}
    for doc in docs:
        assert_conforms(doc)


def load_contract_data(root: Path, text: str) -> dict[str, Any]:
    path = root / "contracts" / "one.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return load_contract(path, root).data


def test_gate_and_evidence_documents_conform(tmp_path: Path, fake: FakeFlink, evaluated: list[dict[str, Any]]) -> None:
    pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")
    from tests.recovery_repo import RecoveryRepo

    from streamwarden.verbs.evidence import build_evidence
    from streamwarden.verbs.gate import run_gate

    repo = RecoveryRepo(tmp_path, upsert=False)
    repo.commit(1, 20)
    fake.routes = healthy_routes(name="orders-enrichment")
    config_file = tmp_path / "streamwarden.yaml"
    config_doc = yaml.safe_load(config_file.read_text())
    config_doc["environments"]["prod"]["flink"] = {"rest_url": fake.url, "timeout": "2s", "retries": 0}
    config_doc["environments"]["staging"] = {
        **config_doc["environments"]["prod"],
        "flink": {"rest_url": UNREACHABLE, "timeout": "2s", "retries": 0},
    }
    config_file.write_text(yaml.safe_dump(config_doc))
    config = load_config(str(config_file))
    now = repo.now_ms

    behind = run_gate(config, "orders-enrichment", "prod", str(repo.savepoint(12)), now)
    target = repo.sink.committed[12]
    named = run_gate(config, "orders-enrichment", "prod", str(repo.savepoint(12)), now, rollback_to=str(target))
    # without --restore-from the gate takes the pointer Flink names: here one that does not exist
    from_flink = run_gate(config, "orders-enrichment", "prod", None, now)
    # Flink's latest savepoint is a real one, of a job that never committed to the table
    savepoint_dir = repo.savepoint(21, name="0f0e0d0c0b0a")
    checkpoints = copy.deepcopy(CHECKPOINTS)
    checkpoints["latest"]["savepoint"] = {
        **checkpoints["latest"]["completed"],
        "id": 21,
        "is_savepoint": True,
        "checkpoint_type": "SAVEPOINT",
        "external_path": savepoint_dir.as_uri(),
    }
    fake.routes[f"/jobs/{JID}/checkpoints"] = (200, checkpoints)
    latest = run_gate(config, "orders-enrichment", "prod", None, now)
    no_flink = run_gate(config, "orders-enrichment", "staging", None, now)
    build_evidence(config, "orders-enrichment", "prod", str(repo.savepoint(12)), now, since_ms=now)

    sp = {
        name: g.input["facts"]["savepoint"]
        for name, g in {
            "behind": behind,
            "named": named,
            "from_flink": from_flink,
            "latest": latest,
            "no_flink": no_flink,
        }.items()
    }
    assert sp["behind"]["table"]["status"] == "behind" and sp["behind"]["table"]["replay"]["snapshots"] > 0
    assert sp["behind"]["retained"], "Flink and Iceberg facts are both available"
    assert sp["named"]["table"]["rollback_target"]["valid"] is True
    assert sp["from_flink"]["available"] is False and sp["from_flink"]["source"] == "flink_latest_checkpoint"
    assert sp["latest"]["source"] == "flink_latest_savepoint" and sp["latest"]["completed_ms_source"] == "flink"
    assert sp["latest"]["table"]["matching_snapshot"] is None
    assert sp["no_flink"] == {"available": False, "configured": False}
    assert {d["mode"] for d in evaluated} == {"gate"}  # evidence renders the gate's own evaluation
    for doc in evaluated:
        assert_conforms(doc)


# --- what the schema refuses ---------------------------------------------------------------------


@pytest.fixture
def example_doc(examples_run: RunResult) -> dict[str, Any]:
    return copy.deepcopy(examples_run.inputs["payments-cdc"])


def test_a_wrong_type_is_an_error_with_its_path(example_doc: dict[str, Any]) -> None:
    example_doc["now_ms"] = "yesterday"
    assert input_schema_errors(example_doc) == ["$.now_ms: 'yesterday' is not of type 'integer'"]


def test_a_duration_that_is_not_normalized_is_an_error(example_doc: dict[str, Any]) -> None:
    example_doc["contract"]["checkpoint"]["interval"] = "60s"
    assert input_schema_errors(example_doc) == ["$.contract.checkpoint.interval: '60s' is not of type 'integer'"]


def test_an_unknown_key_in_a_closed_object_is_an_error(example_doc: dict[str, Any]) -> None:
    key = next(iter(example_doc["facts"]["deployment"]["config"]))
    example_doc["facts"]["deployment"]["config"][key]["origin"] = "somewhere"
    example_doc["facts"]["flink"]["retry_after"] = 5
    errors = input_schema_errors(example_doc)
    assert (
        f"$.facts.deployment.config[\"{key}\"]: Additional properties are not allowed ('origin' was unexpected)"
        in errors
    )
    assert "$.facts.flink: Additional properties are not allowed ('retry_after' was unexpected)" in errors
    assert len(errors) == 2


def test_open_objects_take_any_data_key(example_doc: dict[str, Any]) -> None:
    entry = next(iter(example_doc["facts"]["deployment"]["config"].values()))
    example_doc["facts"]["deployment"]["config"]["some.future.flink-key"] = entry
    example_doc["contract"].setdefault("table", {}).setdefault("properties", {})["write.anything"] = "x"
    assert input_schema_errors(example_doc) == []


def test_the_mode_an_absent_source_and_nan_are_errors(example_doc: dict[str, Any]) -> None:
    example_doc["mode"] = "deploy"
    del example_doc["facts"]["savepoint"]
    errors = input_schema_errors(example_doc)
    assert any(e.startswith("$.mode: 'deploy' is not one of") for e in errors), errors
    assert "$.facts: 'savepoint' is a required property" in errors
    assert input_schema_errors({**example_doc, "now_ms": float("nan")})[0].startswith("$: not a JSON document")


def test_the_repository_document_is_closed_too() -> None:
    doc = {
        "repository": {
            "trusted_ref": "main",
            "trusted_commit": "0" * 40,
            "policy_changes": [{"file": "policies/x.rego", "change": "renamed", "kind": "policy"}],
        },
        "now_ms": 1,
    }
    errors = input_schema_errors(doc)
    assert len(errors) == 1 and errors[0].startswith("$.repository.policy_changes[0].change: 'renamed' is not one of")


def test_json_path_quotes_keys_that_are_not_identifiers() -> None:
    assert json_path(["facts", "deployment", "config", "state.backend.type", "value"]) == (
        '$.facts.deployment.config["state.backend.type"].value'
    )
    assert json_path(["facts", "flink", "jobs", 0, "id"]) == "$.facts.flink.jobs[0].id"


def test_self_check_mode_stops_an_evaluation_whose_input_departs_from_the_schema(
    monkeypatch: pytest.MonkeyPatch, example_doc: dict[str, Any]
) -> None:
    # tests/conftest.py turns self-check mode on for the whole suite: every document any test
    # evaluates through evaluation.evaluate_subject (check, gate, evidence, diffs, live sources) is validated
    from streamwarden.check.evaluation import _Subject, evaluate_subject
    from streamwarden.core.selfcheck import SelfCheckError
    from streamwarden.engine import load_policy_set, make_engine

    policy_set = load_policy_set()
    engine = make_engine("regorus", policy_set)
    subject = _Subject("p", "c.yaml", {})
    bad = {**example_doc, "now_ms": 1}
    bad["contract"] = {
        **example_doc["contract"],
        "checkpoint": {**example_doc["contract"]["checkpoint"], "interval": "60s"},
    }
    monkeypatch.setenv("STREAMWARDEN_SELF_CHECK", "1")
    with pytest.raises(SelfCheckError, match=r"\$\.contract\.checkpoint\.interval: '60s' is not of type 'integer'"):
        evaluate_subject(engine, policy_set, subject, bad, None)
    monkeypatch.setenv("STREAMWARDEN_SELF_CHECK", "0")
    evaluate_subject(engine, policy_set, subject, bad, None)  # off: nothing is validated
