"""The gatherer protocol (facts/source.py): every source takes (contract, env, ctx) and returns one
of the three shapes built there; check --env and the recovery verbs read Flink and Iceberg through
the same functions, and a contract's table is loaded once (iceberg.catalog.open_contract_table)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

from streamwarden.facts import deployment, flink, iceberg, savepoint, spark_data
from streamwarden.facts.source import SOURCES, GatherContext, available, not_configured, unavailable

SRC = Path(__file__).resolve().parent.parent / "src" / "streamwarden"
NOW = 1_795_608_000_000
GATHERERS: dict[str, Any] = {
    "deployment": deployment,
    "flink": flink,
    "iceberg": iceberg,
    "data": spark_data,
    "savepoint": savepoint,
}


def test_every_source_has_a_gatherer_with_the_protocol_signature() -> None:
    assert set(GATHERERS) == set(SOURCES)
    for name, module in GATHERERS.items():
        assert list(inspect.signature(module.gather).parameters) == ["contract", "env", "ctx"], name


def test_a_source_with_nothing_to_read_is_not_configured(tmp_path: Path) -> None:
    """No job.deployment, no flink section, no table, no data promise, no savepoint location."""
    ctx = GatherContext(tmp_path, NOW, contract_file=tmp_path / "contract.yaml")
    contract = {"job": {"name": "orders"}}
    for name, module in GATHERERS.items():
        assert module.gather(contract, {}, ctx) == {"available": False, "configured": False}, name


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


def test_half_a_table_declaration_reads_the_same_for_every_gatherer(tmp_path: Path) -> None:
    """The Iceberg facts and the data scan name the missing half in the same words (one
    declared_table); the scan is asked for because the contract promises fresh data."""
    ctx = GatherContext(tmp_path, NOW)
    contract = {"table": {"catalog": "lake"}, "quality": {"freshness": {"column": "ts", "max_delay": 60_000}}}
    ice = iceberg.gather(contract, {}, ctx)
    data = spark_data.gather(contract, {"spark": {"master": "local[1]"}}, ctx)
    assert ice == data == unavailable("table.identifier is not declared: cannot tell which table of catalog 'lake'")


# --- one table load, the same sections for check --env and the recovery verbs -------------------


def test_check_and_gate_gather_the_same_iceberg_section_with_one_load_each(
    tmp_path: Path, counted_loads: list[str]
) -> None:
    from recovery_repo import RecoveryRepo
    from streamwarden.contracts.config import load_config
    from streamwarden.contracts.load import load_contract
    from streamwarden.facts.live import gather_live
    from streamwarden.facts.recovery import gather_recovery

    repo = RecoveryRepo(tmp_path, upsert=False)
    repo.commit(1, 20)
    config = load_config(str(tmp_path / "streamwarden.yaml"))
    contract = load_contract(tmp_path / "contracts" / "orders.yaml", tmp_path)
    env = config.environment("prod")

    [live] = gather_live([contract.data], env, config.root, repo.now_ms)
    assert counted_loads == ["sales.orders"]
    rec = gather_recovery(contract, config, "prod", repo.now_ms, restore_from=str(repo.savepoint(12)))
    assert counted_loads == ["sales.orders", "sales.orders"]  # the ancestry walk reuses the gatherer's table

    assert live["iceberg"]["available"] and rec.facts["iceberg"] == live["iceberg"]
    assert (rec.catalog, rec.identifier) == ("lake", "sales.orders")
    assert rec.ancestry[0]["snapshot_id"] == repo.sink.committed[20]  # newest first
    plan = rec.facts["savepoint"]["table"]
    assert (plan["behind"], plan["replay"]["snapshots"], plan["idempotence"]["idempotent"]) == (True, 8, False)
    assert "duplicates" not in plan  # a fact document: SW-REC-002 decides
