"""Facts for the recovery verbs (``gate``, ``evidence``): one contract, one environment.

The live sections come from the same gatherers as ``check --env`` (facts/source.py): the
repository facts, Flink REST (``facts.flink.gather``), the Iceberg table (``facts.iceberg.gather_table``,
which also hands back the opened table for a walk of the branch's whole ancestry) and the savepoint
(``facts.savepoint.gather``: ``--restore-from``, else Flink's newest retained checkpoint before
``--since``, else the candidate Flink names). On top, and only here, the table side of the restore
(``facts.savepoint.table``, facts/restore.py) and the retained checkpoints. A source the
environment configures but that cannot be read is unavailable (SW-FACT-001); nothing here raises for
it. Unknown environments and contracts are the caller's exit-2 errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from streamwarden.contracts import Contract
from streamwarden.contracts.config import Config
from streamwarden.facts import flink, iceberg, savepoint
from streamwarden.facts.restore import restore_plan, retained_checkpoints, sink_is_idempotent
from streamwarden.facts.source import GatherContext, refused
from streamwarden.facts.static import gather_static_facts
from streamwarden.flink.uids import declared_uids
from streamwarden.iceberg.catalog import public_properties, table_decision
from streamwarden.iceberg.snapshots import branch_ancestry


@dataclass
class RecoveryFacts:
    facts: dict[str, Any]
    catalog: str | None = None
    identifier: str | None = None
    catalog_properties: dict[str, str] = field(default_factory=dict)  # what a printed command may carry
    withheld_properties: list[str] = field(default_factory=list)  # secrets: left to the environment
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
    ctx = GatherContext(config.root, now_ms, branch=branch)
    facts = gather_static_facts(contract, config.root, config.flink_known_keys)
    facts["flink"] = flink.gather(contract.data, env, ctx)
    out = RecoveryFacts(facts, branch=branch)
    decision = table_decision(contract.data, env.get("iceberg"))
    table = None
    if decision is not None:
        facts["access"] = decision.section()
    if decision is not None and not decision.allowed:  # the table is not opened (SW-FACT-002 denies)
        facts["iceberg"] = refused(decision.reason)
    else:
        facts["iceberg"], table = iceberg.gather_table(contract.data, env, ctx)
    if table is not None:
        out.catalog, out.identifier = table.catalog, table.identifier
        out.catalog_properties, out.withheld_properties = public_properties(table.props)
        out.ancestry, out.ancestry_complete = branch_ancestry(table.table, branch)
    location = restore_from or (_candidate_before(facts["flink"], since_ms) if since_ms is not None else None)
    source = "restore_from" if restore_from else "flink_newest_before_since"
    sp = savepoint.gather(
        contract.data, env, replace(ctx, restore_from=location, restore_source=source, flink=facts["flink"])
    )
    if sp.get("available") and facts["iceberg"].get("available"):
        sinks = [d.operator_id for d in declared_uids(contract.data) if d.path.startswith("job.sinks")]
        sp["table"] = restore_plan(
            sp,
            out.ancestry,
            complete=out.ancestry_complete,
            sink_operator_ids=sinks,
            refs=facts["iceberg"].get("refs") or {},
            rollback_to=rollback_to,
            idempotence=sink_is_idempotent(facts["iceberg"], contract.data),
            branch=branch,
        )
    elif sp.get("available"):
        sp["table"] = None
    if facts["flink"].get("available") and facts["iceberg"].get("available"):
        sp["retained"] = retained_checkpoints(facts["flink"], out.ancestry, out.ancestry_complete)
    facts["savepoint"] = sp
    return out


def _candidate_before(flink_facts: dict[str, Any], since_ms: int) -> str | None:
    """The newest retained checkpoint or savepoint completed at or before ``since_ms`` (the
    incident's start), from Flink's checkpoint history; else the newest one Flink names."""
    checkpoints = flink_facts.get("checkpoints") or {}
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
    candidate = savepoint.flink_candidate(flink_facts)
    return candidate[0] if candidate else None
