"""``gate --record`` and ``evidence --record``: one ledger row per decision (ledger/), and with
``gate --record --tag`` the Iceberg tag ``streamwarden-restore-<decision id>`` at the snapshot to
trust. Builds the row from the evidence record of the run (verbs/evidence.py): the row is data the
record already holds, never a second decision.

Order, so that nothing is left half done: with ``--tag``, the contract's table is checked first
for a ref of the tag's name at another snapshot (exit 2, nothing written); then the ledger is
opened (created on first use) and the row appended (one Iceberg commit; none when the decision id is
there already), then the tag is created. A tag that fails after the row was written leaves the
row (it is true) and exits 2; running the same command again writes no second row and creates
the tag."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from streamwarden import __version__
from streamwarden.contracts.config import Config
from streamwarden.core import secrets
from streamwarden.core.units import format_duration
from streamwarden.iceberg.catalog import IcebergFactsError, describe, open_contract_table
from streamwarden.ledger.schema import decision_id
from streamwarden.ledger.store import LedgerError, append_once, open_ledger, tag_name, tag_snapshot
from streamwarden.verbs.evidence import EvidenceRecord


@dataclass
class RecordResult:
    decision_id: str
    ledger: str  # the ledger table's identifier
    written: bool  # False: the decision was recorded before (a retry)
    tag: str | None = None  # the tag's name, with --tag
    tag_created: bool = False  # False with a tag: it was there at that snapshot already
    tag_skipped: str | None = None  # why no tag was made (a denied restore has no restore point)


def require_ledger(config: Config, env_name: str) -> None:
    """Exit 2 before anything runs when ``env_name`` has no ledger to record to."""
    if config.ledger_for(env_name) is None:
        raise LedgerError(
            f"--record needs a ledger, and environment '{env_name}' has none",
            file=config.file,
            hint="add `ledger: {catalog: NAME, table: NAMESPACE.TABLE}` to streamwarden.yaml (top level or "
            "under the environment), NAME one of its iceberg.catalogs; see docs/ledger.md",
        )


def ledger_row(record: EvidenceRecord, verb: str, note: str | None, recorded_at: dt.datetime) -> dict[str, Any]:
    """The ledger row of ``record`` for ``verb`` (gate: its allow/deny; evidence: ``recorded``)."""
    result = record.gate
    assert result is not None  # built on a gate run
    data = record.data
    cand = data.get("candidate") or {}
    table = data.get("table") or {}
    plan: dict[str, Any] = table["plan"] if isinstance(table.get("plan"), dict) else {}
    replay = plan.get("replay") or {}
    matching = plan.get("matching_snapshot") or {}
    rollback = table.get("rollback") or {}
    named = plan.get("rollback_target") or rollback.get("named") or {}
    declared = result.contract.data.get("table") or {}
    rules = [f.rule for f in result.reasons]
    if named.get("snapshot_id") is not None:
        target = named.get("snapshot_id")
    elif rollback.get("needed"):
        target = rollback.get("snapshot_id")
    else:
        target = None
    row: dict[str, Any] = {
        "recorded_at": recorded_at,
        "tool_version": __version__,
        "repo_commit": (data.get("code") or {}).get("git_commit"),
        "pipeline": result.pipeline,
        "environment": result.environment,
        "verb": verb,
        "decision": result.decision if verb == "gate" else "recorded",
        "reasons": list(dict.fromkeys(rules)),
        "savepoint_path": cand.get("location"),
        "checkpoint_id": cand.get("checkpoint_id"),
        "job_id": cand.get("job_id") or plan.get("job_id"),
        "table_identifier": table.get("identifier") or declared.get("identifier"),
        "restore_snapshot_id": matching.get("snapshot_id"),
        "replay_from_checkpoint": replay.get("first_checkpoint_id"),
        "replay_to_checkpoint": replay.get("last_checkpoint_id"),
        "replay_snapshot_ids": list(replay.get("snapshot_ids") or []),
        "duplicate_risk": _duplicate_risk(record, plan, replay),
        "rollback_target_snapshot_id": target,
        "consumers": _consumers(data.get("consumers") or [], data.get("notices") or []),
        "notified": [str(n) for n in data.get("notified") or []],
        "note": note,
        # the record as its JSON renderer keeps it, scrubbed of every secret this run registered
        "evidence_json": secrets.scrub(json.dumps(data, sort_keys=True, default=str)),
    }
    row["decision_id"] = decision_id(row)
    return row


def _duplicate_risk(record: EvidenceRecord, plan: Mapping[str, Any], replay: Mapping[str, Any]) -> str:
    """What the record says of duplicates: ``duplicates`` when SW-REC-002 found them, else
    ``unknown`` (no restore plan), ``none`` (nothing replayed), ``idempotent`` (an upsert sink
    replays onto itself) or ``replay`` (replayed commits, no rule finding)."""
    if any(f.rule == "SW-REC-002" for f in record.findings if f.counts):
        return "duplicates"
    if not plan or plan.get("status") == "unknown":
        return "unknown"
    if not replay.get("snapshots"):
        return "none"
    return "idempotent" if (plan.get("idempotence") or {}).get("idempotent") else "replay"


def _consumers(consumers: list[Mapping[str, Any]], notices: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each consumer with its promised freshness and what the decision breaks of it: the notice's
    ``freshness.over_promise_ms`` (verbs/notices.py, the one reckoning: the age of the state to
    trust at the decision's time beyond the promise; 0: kept; None: no promise or no snapshot)."""
    lost = {(n.get("consumer") or {}).get("name"): (n.get("freshness") or {}).get("over_promise_ms") for n in notices}
    out = []
    for c in consumers:
        promise = c.get("freshness_ms")
        out.append(
            {
                "name": c.get("name"),
                "contact": c.get("contact"),
                "freshness": format_duration(promise) if isinstance(promise, int) else None,
                "freshness_lost_ms": lost.get(c.get("name")),
            }
        )
    return out


def record(
    config: Config,
    record: EvidenceRecord,
    verb: str,
    *,
    note: str | None = None,
    tag: bool = False,
    recorded_at: dt.datetime | None = None,
) -> RecordResult:
    """Write ``record``'s row to the ledger of its environment (and the tag): see the module."""
    result = record.gate
    assert result is not None
    env_name = result.environment
    require_ledger(config, env_name)
    env = config.environment(env_name)
    row = ledger_row(record, verb, note, recorded_at or dt.datetime.now(dt.timezone.utc))
    out = RecordResult(row["decision_id"], str(env["ledger"]["table"]), False)
    target: tuple[Any, int, dict[str, str]] | None = None
    if tag:
        out.tag = tag_name(row["decision_id"])
        if result.decision != "allow":
            out.tag_skipped = "the gate denied this restore: there is no restore point to mark"
        elif row["restore_snapshot_id"] is None:
            raise LedgerError(
                "--tag needs the snapshot to trust, and this restore has none "
                "(no table snapshot matches the savepoint's checkpoint)",
                hint="run without --tag, or restore from a savepoint whose checkpoint the table committed",
            )
        else:
            target = _table_to_tag(config, record, env, out.tag, row["restore_snapshot_id"])
    ledger = open_ledger(env["ledger"], env.get("iceberg"), config.root, create=True)
    out.written = append_once(ledger, row)
    if target is not None and out.tag is not None:
        table, snapshot, props = target
        retention = (result.contract.data.get("retention") or {}).get("rollback_window")
        out.tag_created = tag_snapshot(
            table, out.tag, snapshot, retention if isinstance(retention, int) else None, props
        )
    return out


def _table_to_tag(
    config: Config, record: EvidenceRecord, env: Mapping[str, Any], name: str, snapshot: int
) -> tuple[Any, int, dict[str, str]]:
    """The contract's table, freshly loaded, checked before the row is written: a ref ``name``
    at another snapshot is exit 2 with nothing written."""
    assert record.gate is not None
    try:
        opened = open_contract_table(record.gate.contract.data, env.get("iceberg"), config.root)
    except IcebergFactsError as exc:  # redacted already
        raise LedgerError(f"--tag: the table cannot be opened: {exc}") from None
    except Exception as exc:  # refused by the environment's grants, or a shape no check expected
        raise LedgerError(f"--tag: the table cannot be opened: {describe(exc)}") from None
    if opened is None:
        raise LedgerError("--tag: the contract declares no table")
    table = opened.table
    ref = (table.metadata.refs or {}).get(name)
    if ref is not None and ref.snapshot_id != snapshot:
        tag_snapshot(table, name, snapshot, None, dict(opened.props))  # raises: at another snapshot
    return table, snapshot, dict(opened.props)
