"""The recovery evidence record: which savepoint or checkpoint is authoritative, which table
snapshot matches it, what the restart replays, whether that duplicates rows, how to roll the table
back, who to tell and what each consumer is told (verbs/notices.py), and which code version is
restored (report/evidence.py renders it: Markdown for people, JSON for tooling).

Built on a gate run (``gate.run_gate``, with ``since_ms`` for what happened since the incident
began): its facts (facts/recovery.py) are the record's, and its decision is the verdict, rendered,
never decided again: a record and a gate run on the same pipeline, environment and savepoint give
the same decision and the same reasons (a gap in the facts, SW-FACT-001, is a reason in both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.contracts.config import Config
from streamwarden.core import exitcodes
from streamwarden.evaluate.findings import Finding
from streamwarden.facts.recovery import RecoveryFacts
from streamwarden.facts.restore import rollback_commands
from streamwarden.repo.git import work_tree_commit
from streamwarden.verbs.gate import GateResult, run_gate, source_status
from streamwarden.verbs.notices import build_notices, replay_duplicates

SINCE_CAP = 200


@dataclass
class EvidenceRecord:
    data: dict[str, Any]
    findings: list[Finding]
    gate: GateResult | None = None  # the decision the verdict renders

    @property
    def exit_code(self) -> int:
        """0: a record was produced (the verdict inside may still be deny); 1: it was, but a notice
        ``--notify`` posted was not delivered (``notify.failed``)."""
        return exitcodes.exit_code(failed=bool((self.data.get("notify") or {}).get("failed")))

    def notified(self, outcome: dict[str, Any]) -> None:
        """What ``--notify`` did (verbs/notify.py ``deliver``), kept in the record: ``notify`` (every
        post, who no target serves) and ``notified`` (the consumers told)."""
        self.data["notify"] = outcome
        self.data["notified"] = list(outcome["notified"])


def build_evidence(
    config: Config,
    pipeline: str,
    env_name: str,
    restore_from: str | None,
    now_ms: int,
    *,
    since_ms: int | None = None,
    rollback_to: str | None = None,
    paths: Sequence[str] = (),
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> EvidenceRecord:
    result = run_gate(
        config,
        pipeline,
        env_name,
        restore_from,
        now_ms,
        rollback_to=rollback_to,
        since_ms=since_ms,
        paths=paths,
        policy_dirs=policy_dirs,
        engine=engine,
        engine_options=engine_options,
    )
    return evidence_of(result, since_ms)


def evidence_of(result: GateResult, since_ms: int | None = None) -> EvidenceRecord:
    """The evidence record of a gate run (``gate --record`` keeps it in the ledger row too)."""
    rec, contract, now_ms, env_name = result.recovery, result.contract, result.now_ms, result.environment
    facts = rec.facts
    data: dict[str, Any] = {
        "version": 1,
        "pipeline": contract.name,
        "environment": env_name,
        "generated_ms": now_ms,
        "since_ms": since_ms,
        "verdict": {
            "decision": result.decision,
            "undecided": result.undecided,
            "reasons": [_brief(f) for f in result.reasons],
            "warnings": [_brief(f) for f in result.notes],
        },
        "candidate": _candidate(facts.get("savepoint") or {}, facts.get("kafka") or {}),
        "table": _table(rec, facts),
        "since": _since(rec, facts, since_ms),
        "history": _history(facts),
        "consumers": _consumers(contract.data),
        "code": _code(contract.path, contract.file, facts),
        "sources": source_status(facts),
    }
    data["notices"] = build_notices(data, rec.ancestry, replay_duplicates(result.findings))
    data["notify"] = None  # `--notify` fills it in: EvidenceRecord.notified
    data["notified"] = []
    return EvidenceRecord(data, result.findings, result)


def _brief(f: Finding) -> dict[str, Any]:
    return {"rule": f.rule, "severity": f.severity, "message": f.message, "path": f.path, "evidence": f.evidence}


def _candidate(sp: dict[str, Any], broker: dict[str, Any]) -> dict[str, Any] | None:
    if not sp.get("configured"):
        return None
    if not sp.get("available"):
        return {
            "available": False,
            "location": sp.get("location"),
            "source": sp.get("source"),
            "error": sp.get("error"),
        }
    ops = [
        {
            k: op.get(k)
            for k in (
                "operator_id",
                "name",
                "uid",
                "parallelism",
                "max_parallelism",
                "has_state",
                "state_size",
                "matched",
            )
        }
        for op in sp.get("operators") or []
    ]
    keys = (
        "source",
        "location",
        "kind",
        "format",
        "version",
        "checkpoint_id",
        "completed_ms",
        "completed_ms_source",
        "job_id",
        "job_id_prefix",
        "stateful_operators",
        "state_size",
        "unmatched_stateful",
    )
    kafka = sp.get("kafka") or {"sources": [], "partitions": []}
    kafka = {**kafka, "partitions": [_window(p, broker) for p in kafka.get("partitions") or []]}
    return {"available": True, **{k: sp.get(k) for k in keys}, "operators": ops, "kafka": kafka}


def _window(p: dict[str, Any], broker: dict[str, Any]) -> dict[str, Any]:
    """A restore offset with what the broker holds of its partition (facts.kafka; None without
    one): the window SW-REC-006 compares. Facts only; the rule decides."""
    topics = broker.get("topics") if broker.get("available") else None
    topic = topics.get(p.get("topic")) if isinstance(topics, dict) else None
    held = [q for q in (topic or {}).get("partitions") or [] if q.get("partition") == p.get("partition")]
    return {
        **p,
        "broker_earliest": held[0]["earliest"] if held else None,
        "broker_latest": held[0]["latest"] if held else None,
    }


def _table(rec: RecoveryFacts, facts: dict[str, Any]) -> dict[str, Any] | None:
    ice = facts.get("iceberg") or {}
    if not ice.get("configured"):
        return None
    if not ice.get("available"):
        return {"available": False, "error": ice.get("error")}
    plan = (facts.get("savepoint") or {}).get("table")
    out: dict[str, Any] = {
        "available": True,
        "catalog": rec.catalog,
        "identifier": rec.identifier,
        "branch": rec.branch,
        "head": (ice.get("snapshots") or {}).get("head"),
        "plan": plan,
    }
    if isinstance(plan, dict) and plan.get("matching_snapshot"):
        target = plan["matching_snapshot"]
        out["rollback"] = {
            "needed": bool(plan.get("behind")),
            "snapshot_id": target["snapshot_id"],
            "timestamp_ms": target["timestamp_ms"],
            "checkpoint_id": target["checkpoint_id"],
            "commands": rollback_commands(
                str(rec.catalog),
                str(rec.identifier),
                target["snapshot_id"],
                rec.branch,
                rec.catalog_properties,
                rec.withheld_properties,
            ),
            "discards": (plan.get("discarded_by_rollback") or {}).get("snapshots", 0),
            "named": plan.get("rollback_target"),
        }
    elif rec.rollback_to:
        # no savepoint to judge the target against (or no snapshot matching it): the record still
        # says which snapshot the operator named, so the ledger row explains the rollback after it
        out["rollback"] = {"needed": None, "named": _named_only(rec)}
    return out


def _named_only(rec: RecoveryFacts) -> dict[str, Any]:
    """``--rollback-to`` resolved on the branch's ancestry (a snapshot id) or the table's refs,
    without a verdict on it (``valid`` is None: no restore point to compare it with)."""
    text = str(rec.rollback_to).strip()
    on_branch = {s.get("snapshot_id") for s in rec.ancestry}
    refs = (rec.facts.get("iceberg") or {}).get("refs") or {}
    snapshot_id: int | None = None
    via = "snapshot id"
    if isinstance(refs, dict) and isinstance(refs.get(text), dict):
        snapshot_id, via = refs[text].get("snapshot_id"), f"{refs[text].get('type', 'ref')} {text}"
    elif text.lstrip("-").isdigit() and int(text) in on_branch:
        snapshot_id = int(text)
    reason = (
        "no savepoint to judge it against"
        if snapshot_id is not None
        else f"{text!r} is not a snapshot id or ref on the branch's ancestry"
    )
    return {"named": text, "via": via, "snapshot_id": snapshot_id, "valid": None, "reason": reason}


def _since(rec: RecoveryFacts, facts: dict[str, Any], since_ms: int | None) -> dict[str, Any] | None:
    if since_ms is None:
        return None
    snaps = [s for s in rec.ancestry if (s.get("timestamp_ms") or 0) >= since_ms][::-1]
    checkpoints = ((facts.get("flink") or {}).get("checkpoints") or {}).get("history") or []
    return {
        "snapshots": len(snaps),
        "snapshot_list": [
            {k: s.get(k) for k in ("snapshot_id", "timestamp_ms", "operation", "job_id", "checkpoint_id")}
            for s in snaps[:SINCE_CAP]
        ],
        "checkpoints": [
            {
                k: c.get(k)
                for k in ("id", "status", "is_savepoint", "trigger_timestamp", "external_path", "failure_message")
            }
            for c in checkpoints
            if isinstance(c, dict) and (c.get("trigger_timestamp") or 0) >= since_ms
        ],
    }


def _history(facts: dict[str, Any]) -> dict[str, Any] | None:
    """The table's rollbacks, cherry-picks and deletes, and its clean-ups' lost rows
    (facts.iceberg.history), as read; SW-REC-007's findings say which no ledger row explains."""
    ice = facts.get("iceberg") or {}
    hist = ice.get("history") if ice.get("available") else None
    if not isinstance(hist, dict):
        return None
    return {
        "available": bool(hist.get("available")),
        "error": hist.get("error"),
        "metadata_files": hist.get("metadata_files"),
        "changes": [{k: v for k, v in c.items() if k != "metadata_file"} for c in hist.get("changes") or []],
        "changes_truncated": hist.get("changes_truncated", 0),
        "cleanups": hist.get("cleanups") or [],
    }


def _consumers(contract: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for c in (contract.get("metadata") or {}).get("consumers") or []:
        if isinstance(c, dict):
            out.append({"name": c.get("name"), "contact": c.get("contact"), "freshness_ms": c.get("freshness")})
    return out


def _code(path: Path, shown: str, facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"contract": shown, "git_commit": None, "git_dirty": None}
    commit, dirty = work_tree_commit(path.parent)
    if commit is not None:
        out["git_commit"], out["git_dirty"] = commit, dirty
    dep = facts.get("deployment") or {}
    job = dep.get("job") if dep.get("available") else None
    if isinstance(job, dict):
        out["deployment"] = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in job.items()}
    flink = facts.get("flink") or {}
    if flink.get("available"):
        out["flink"] = {
            "job_id": flink.get("job_id"),
            "job_name": flink.get("job_name"),
            "state": (flink.get("job") or {}).get("state"),
            "flink_version": flink.get("flink_version"),
        }
    return out
