"""The gathering pipeline (facts/pipeline.py over facts/registry.py): every source is one object of
the Source shape (facts/source.py), each section one of the shapes built there; check --env and
the recovery verbs gather through the same pipeline, and a contract's table is loaded once
(iceberg.catalog.open_contract_table)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

from streamwarden.facts import pipeline, registry
from streamwarden.facts.iceberg import IcebergSource
from streamwarden.facts.source import GatherContext, Subject, available, not_configured, unavailable
from streamwarden.facts.spark_data import DataSource

SRC = REPO / "src" / "streamwarden"
NOW = 1_795_608_000_000


def test_every_registered_source_is_one_object_of_the_source_shape() -> None:
    assert registry.names() == ("deployment", "flink", "iceberg", "data", "savepoint", "kafka", "ledger")
    for name in registry.names():
        source = registry.source(name)
        assert source.name == name
        assert registry.kind(name) in (registry.STATIC, registry.LIVE), name
        assert isinstance(source.phase, str) and isinstance(source.recovery, bool), name
        assert source.section is None or isinstance(source.section, str), name
        assert source.extra is None or isinstance(source.extra, str), name
        assert callable(source.needed) and callable(source.modules) and callable(source.gather), name
    assert [n for n in registry.names() if registry.kind(n) == registry.STATIC] == ["deployment"]
    assert pipeline.recovery_sources() == ("deployment", "flink", "iceberg", "savepoint", "kafka", "ledger")


def test_a_source_with_nothing_to_read_is_not_configured(tmp_path: Path) -> None:
    """No job.deployment, no flink section, no table, no data promise, no savepoint location."""
    ctx = GatherContext(tmp_path, NOW)
    contract = {"job": {"name": "orders"}}
    for name in registry.names():
        subject = Subject(contract, tmp_path / "contract.yaml")
        assert registry.source(name).gather([subject], {}, ctx) == [not_configured()], name
    facts = pipeline.gather_one(contract, tmp_path / "contract.yaml", tmp_path, {}, NOW)
    assert facts == {name: not_configured() for name in registry.names()}


def test_without_an_environment_only_the_repository_sources_run(tmp_path: Path) -> None:
    """A live source is never called without an environment: its section stays not configured
    even when the contract declares what it would read."""
    contract = {"table": {"catalog": "lake"}, "quality": {"freshness": {"column": "ts", "max_delay": 60_000}}}
    facts = pipeline.gather_one(contract, tmp_path / "contract.yaml", tmp_path)
    assert facts == {name: not_configured() for name in registry.names()}


def test_the_three_shapes() -> None:
    assert available(job_id="a") == {"available": True, "configured": True, "job_id": "a"}
    assert not_configured() == {"available": False, "configured": False}
    assert unavailable("down", location="s3://b/sp", source=None) == {
        "available": False,
        "configured": True,
        "error": "down",
        "location": "s3://b/sp",
    }


def test_the_shapes_are_spelled_out_in_one_module_only() -> None:
    """A gatherer that writes {"available": ..., "configured": ...} itself is a second copy."""
    literal = re.compile(r'"configured":\s*(True|False)')
    spelled = sorted(
        str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if literal.search(p.read_text(encoding="utf-8"))
    )
    assert spelled == ["facts/source.py"]


def test_no_source_names_the_main_branch_itself() -> None:
    """The branch a run reads is decided in one place (source.checked_branch, on Iceberg's name for
    the current snapshot's branch): no gathering module spells "main"."""
    spelled = sorted(
        str(p.relative_to(SRC))
        for p in (SRC / "facts").rglob("*.py")
        if re.search(r"""["']main["']""", p.read_text(encoding="utf-8"))
    )
    assert spelled == []


def test_half_a_table_declaration_reads_the_same_for_every_gatherer(tmp_path: Path) -> None:
    """The Iceberg facts and the data scan name the missing half in the same words (one
    declared_table); the scan is asked for because the contract promises fresh data."""
    ctx = GatherContext(tmp_path, NOW)
    contract = {"table": {"catalog": "lake"}, "quality": {"freshness": {"column": "ts", "max_delay": 60_000}}}
    [ice] = IcebergSource().gather([Subject(contract)], {}, ctx)
    [data] = DataSource().gather([Subject(contract)], {"spark": {"master": "local[1]"}}, ctx)
    assert ice == data == unavailable("table.identifier is not declared: cannot tell which table of catalog 'lake'")


# --- one table load, the same sections for check --env and the recovery verbs -------------------


def test_check_and_gate_gather_the_same_iceberg_section_with_one_load_each(
    tmp_path: Path, counted_loads: list[str]
) -> None:
    from tests.recovery_repo import RecoveryRepo

    from streamwarden.contracts.config import load_config
    from streamwarden.contracts.load import load_contract
    from streamwarden.facts.recovery import gather_recovery

    repo = RecoveryRepo(tmp_path, upsert=False)
    repo.commit(1, 20)
    config = load_config(str(tmp_path / "streamwarden.yaml"))
    contract = load_contract(tmp_path / "contracts" / "orders.yaml", tmp_path)
    env = config.environment("prod")

    subject = Subject(contract.data, contract.path)
    pipeline.gather([subject], env, GatherContext(config.root, repo.now_ms), pipeline.LIVE)
    live = subject.facts
    assert "deployment" not in live  # a live pass writes the live sections only
    assert counted_loads == ["sales.orders"]
    rec = gather_recovery(contract, config, "prod", repo.now_ms, restore_from=str(repo.savepoint(12)))
    assert counted_loads == ["sales.orders", "sales.orders"]  # the ancestry walk reuses the gatherer's table

    assert live["iceberg"]["available"] and rec.facts["iceberg"] == live["iceberg"]
    assert (rec.catalog, rec.identifier) == ("lake", "sales.orders")
    assert rec.ancestry[0]["snapshot_id"] == repo.sink.committed[20]  # newest first
    plan = rec.facts["savepoint"]["table"]
    assert (plan["behind"], plan["replay"]["snapshots"], plan["idempotence"]["idempotent"]) == (True, 8, False)
    assert "duplicates" not in plan  # a fact document: SW-REC-002 decides
    assert rec.facts["data"] == not_configured()  # a gate scans no data


def test_a_fork_confined_to_a_branch_is_read_along_that_branch(tmp_path: Path) -> None:
    """The branch comes from the contract (fork_of.branch), never from a literal: the table's
    snapshots, the restore plan and the ancestry of a fork's gate are those of the branch its job
    commits to. Here the fork's branch stops at checkpoint 12 while main goes on to 20, so a
    restore from checkpoint 12 replays nothing on the fork's branch (8 snapshots on main)."""
    from tests.recovery_repo import RecoveryRepo

    from streamwarden.contracts.config import load_config
    from streamwarden.contracts.load import load_contract
    from streamwarden.facts.recovery import gather_recovery

    repo = RecoveryRepo(tmp_path, upsert=False)
    repo.commit(1, 12)
    repo.lake.table().manage_snapshots().create_branch(repo.sink.committed[12], "audit").commit()
    repo.commit(13, 20)
    config = load_config(str(tmp_path / "streamwarden.yaml"))
    path = tmp_path / "contracts" / "orders.yaml"
    main_side = gather_recovery(
        load_contract(path, tmp_path), config, "prod", repo.now_ms, restore_from=str(repo.savepoint(12))
    )
    repo.write_contract(repo.contract_text + "fork_of:\n  pipeline: orders-owner\n  kind: fork\n  branch: audit\n")
    fork = load_contract(path, tmp_path)
    fork_side = gather_recovery(fork, config, "prod", repo.now_ms, restore_from=str(repo.savepoint(12)))

    assert (main_side.branch, fork_side.branch) == ("main", "audit")
    assert main_side.facts["iceberg"]["branch"] == "main"
    assert fork_side.facts["iceberg"]["branch"] == "audit" and fork_side.facts["iceberg"]["branch_exists"]
    assert fork_side.ancestry[0]["snapshot_id"] == repo.sink.committed[12]
    assert main_side.facts["savepoint"]["table"]["replay"]["snapshots"] == 8
    assert fork_side.facts["savepoint"]["table"]["replay"]["snapshots"] == 0
