"""Facts for the recovery verbs (``gate``, ``evidence``): one contract, one environment.

Gathers, with the other engineers' gatherers: the repository facts, Flink REST
(``facts.flink.gather_flink_one``), the Iceberg table (``iceberg.catalog`` + ``facts.iceberg.table_facts``,
keeping the table for a walk of the branch's whole ancestry), and the savepoint (``--restore-from``,
else the candidate Flink names), then adds the table side of the restore
(``facts.savepoint.table``, facts/restore.py). A source the environment configures but that cannot be
read becomes ``{"available": false, "configured": true, "error": ...}`` (SW-FACT-001); nothing here
raises for it. Unknown environments and contracts are the caller's exit-2 errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamwarden.config import Config
from streamwarden.contracts import Contract
from streamwarden.facts.restore import restore_plan, retained_matches, sink_is_idempotent
from streamwarden.facts.savepoint import flink_candidate, gather_savepoint, not_configured, unavailable
from streamwarden.facts.static import gather_static_facts
from streamwarden.flink.uids import declared_uids
from streamwarden.iceberg.snapshots import branch_ancestry


@dataclass
class RecoveryFacts:
    facts: dict[str, Any]
    catalog: str | None = None
    identifier: str | None = None
    branch: str = "main"
    ancestry: list[dict[str, Any]] = field(default_factory=list)  # newest first
    ancestry_complete: bool = False


def gather_recovery(
    contract: Contract,
    config: Config,
    env_name: str,
    now_ms: int,
    *,
    restore_from: str | None = None,
    rollback_to: str | None = None,
    since_ms: int | None = None,
    branch: str = "main",
) -> RecoveryFacts:
    env = config.environment(env_name)  # an unknown environment is the caller's exit 2
    facts = gather_static_facts(contract, config.root)
    facts["flink"] = _flink(contract, env, config)
    out = RecoveryFacts(facts, branch=branch)
    facts["iceberg"] = _iceberg(contract, env, config, now_ms, out)
    location = restore_from or (_candidate_before(facts["flink"], since_ms) if since_ms is not None else None)
    source = "restore_from" if restore_from else "flink_newest_before_since"
    savepoint = gather_savepoint(contract.data, location, facts["flink"], source)
    if savepoint.get("available") and facts["iceberg"].get("available"):
        sinks = [d.operator_id for d in declared_uids(contract.data) if d.path.startswith("job.sinks")]
        savepoint["table"] = restore_plan(
            savepoint,
            out.ancestry,
            complete=out.ancestry_complete,
            sink_operator_ids=sinks,
            refs=facts["iceberg"].get("refs") or {},
            rollback_to=rollback_to,
            idempotence=sink_is_idempotent(facts["iceberg"], contract.data),
            branch=branch,
        )
    elif savepoint.get("available"):
        savepoint["table"] = None
    if facts["flink"].get("available") and facts["iceberg"].get("available"):
        savepoint["retained"] = retained_matches(
            flink_entries(facts["flink"]), out.ancestry, facts["flink"].get("job_id"), complete=out.ancestry_complete
        )
    facts["savepoint"] = savepoint
    return out


def _flink(contract: Contract, env: dict[str, Any], config: Config) -> dict[str, Any]:
    flink_env = env.get("flink")
    if not flink_env:
        return not_configured()
    try:
        from streamwarden.facts.flink import gather_flink_one

        return gather_flink_one(contract.data, flink_env, config.root)
    except Exception as exc:  # a gatherer bug must not become a traceback; it is a gap in the facts
        return unavailable(f"Flink facts could not be gathered: {type(exc).__name__}: {exc}")


def flink_entries(flink: dict[str, Any]) -> list[dict[str, Any]]:
    """Retained checkpoints and savepoints Flink reports: completed entries with an external path."""
    checkpoints = flink.get("checkpoints") or {}
    latest = checkpoints.get("latest") or {}
    entries = [latest.get("savepoint"), latest.get("completed"), *(checkpoints.get("history") or [])]
    return [
        e
        for e in entries
        if isinstance(e, dict) and e.get("status") in ("completed", None) and isinstance(e.get("external_path"), str)
    ]


def _candidate_before(flink: dict[str, Any], since_ms: int) -> str | None:
    """The newest retained checkpoint or savepoint completed at or before ``since_ms`` (the
    incident's start), from Flink's checkpoint history; else the newest one Flink names."""
    checkpoints = flink.get("checkpoints") or {}
    entries = [*(checkpoints.get("history") or []), *((checkpoints.get("latest") or {}).values())]
    done = [
        e
        for e in entries
        if isinstance(e, dict)
        and e.get("status") == "completed"
        and isinstance(e.get("external_path"), str)
        and not e.get("discarded")
        and isinstance(e.get("latest_ack_timestamp"), int)
        and e["latest_ack_timestamp"] <= since_ms
    ]
    if done:
        return str(max(done, key=lambda e: e["id"])["external_path"])
    candidate = flink_candidate(flink)
    return candidate[0] if candidate else None


def _iceberg(
    contract: Contract, env: dict[str, Any], config: Config, now_ms: int, out: RecoveryFacts
) -> dict[str, Any]:
    table_c = contract.data.get("table") or {}
    name, identifier = table_c.get("catalog"), table_c.get("identifier")
    if not name and not identifier:
        return not_configured()
    if not name or not identifier:
        missing = "table.catalog" if not name else "table.identifier"
        return unavailable(f"{missing} is not declared: cannot tell which table the restore writes")
    from streamwarden.facts.iceberg import table_facts
    from streamwarden.iceberg.catalog import (
        IcebergFactsError,
        catalog_properties,
        describe,
        open_catalog,
        open_table,
    )

    props: dict[str, str] = {}
    try:
        props = catalog_properties(str(name), (env.get("iceberg") or {}).get("catalogs"), config.root)
        table = open_table(open_catalog(str(name), props), str(name), str(identifier), props)
        facts = table_facts(
            table, contract.data, now_ms, catalog=str(name), identifier=str(identifier), branch=out.branch
        )
        out.catalog, out.identifier = str(name), str(identifier)
        out.ancestry, out.ancestry_complete = branch_ancestry(table, out.branch)
        return facts
    except IcebergFactsError as exc:
        return unavailable(str(exc))
    except Exception as exc:
        return unavailable(f"table {identifier} in catalog '{name}' could not be read: {describe(exc, props)}")
