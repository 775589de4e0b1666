"""The recovery evidence record: which savepoint or checkpoint is authoritative, which table
snapshot matches it, what the restart replays, whether that duplicates rows, how to roll the table
back, who to tell, and which code version is restored. Markdown for people, JSON for tooling.

Built from the same facts as the gate (facts/recovery.py), and its verdict is the gate's own
decision (``gate.decide``: the same evaluation, in gate mode), rendered, never decided again: a
record and a gate run on the same pipeline, environment and savepoint give the same decision and
the same reasons (a gap in the facts, SW-FACT-001, is a reason in both).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.config import Config
from streamwarden.escape import cell, log_text
from streamwarden.escape import code as md_code
from streamwarden.facts.recovery import RecoveryFacts, gather_recovery
from streamwarden.facts.restore import rollback_commands
from streamwarden.findings import Finding
from streamwarden.gate import GateResult, decide, find_contract, source_status
from streamwarden.timeline import recovery_timeline

SINCE_CAP = 200


@dataclass
class EvidenceRecord:
    data: dict[str, Any]
    findings: list[Finding]
    gate: GateResult | None = None  # the decision the verdict renders

    @property
    def exit_code(self) -> int:
        """0: a record was produced (the verdict inside may still be deny)."""
        return 0


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
    contract = find_contract(config, pipeline, paths)
    rec = gather_recovery(
        contract, config, env_name, now_ms, restore_from=restore_from, rollback_to=rollback_to, since_ms=since_ms
    )
    result = decide(
        contract,
        rec,
        env_name,
        now_ms,
        config=config,
        policy_dirs=policy_dirs,
        engine=engine,
        engine_options=engine_options,
    )
    facts = rec.facts
    data: dict[str, Any] = {
        "version": 1,
        "pipeline": contract.name,
        "environment": env_name,
        "generated_ms": now_ms,
        "since_ms": since_ms,
        "verdict": {
            "decision": result.decision,
            "reasons": [_brief(f) for f in result.reasons],
            "warnings": [_brief(f) for f in result.notes],
        },
        "candidate": _candidate(facts.get("savepoint") or {}),
        "table": _table(rec, facts),
        "since": _since(rec, facts, since_ms),
        "consumers": _consumers(contract.data),
        "code": _code(contract.path, contract.file, facts),
        "sources": source_status(facts),
    }
    return EvidenceRecord(data, result.findings, result)


def _brief(f: Finding) -> dict[str, Any]:
    return {"rule": f.rule, "severity": f.severity, "message": f.message, "path": f.path, "evidence": f.evidence}


def _candidate(sp: dict[str, Any]) -> dict[str, Any] | None:
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
    return {"available": True, **{k: sp.get(k) for k in keys}, "operators": ops}


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
            "commands": rollback_commands(str(rec.catalog), str(rec.identifier), target["snapshot_id"], rec.branch),
            "discards": (plan.get("discarded_by_rollback") or {}).get("snapshots", 0),
            "named": plan.get("rollback_target"),
        }
    return out


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


def _consumers(contract: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for c in (contract.get("metadata") or {}).get("consumers") or []:
        if isinstance(c, dict):
            out.append({"name": c.get("name"), "contact": c.get("contact"), "freshness_ms": c.get("freshness")})
    return out


def _code(path: Path, shown: str, facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"contract": shown, "git_commit": None, "git_dirty": None}
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path.parent, capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            out["git_commit"] = head.stdout.strip()
            status = subprocess.run(
                ["git", "status", "--porcelain", "--", "."], cwd=path.parent, capture_output=True, text=True, timeout=10
            )
            out["git_dirty"] = bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        pass
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


def render_json(record: EvidenceRecord) -> str:
    return json.dumps(record.data, indent=2, ensure_ascii=False, default=str) + "\n"


def _ts(ms: Any) -> str:
    if not isinstance(ms, int):
        return "unknown"
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _dur(ms: Any) -> str:
    if not isinstance(ms, int):
        return "none promised"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def render_markdown(record: EvidenceRecord) -> str:
    d = record.data
    out = [
        f"# Recovery evidence: {cell(d['pipeline'])} in {cell(d['environment'])}",
        "",
        f"Generated {_ts(d['generated_ms'])}"
        + (f", incident since {_ts(d['since_ms'])}" if d["since_ms"] else "")
        + ".",
        "",
        f"**Verdict: {d['verdict']['decision'].upper()}**",
        "",
    ]
    out += [f"- {md_code(r['rule'])} {cell(r['message'])}" for r in d["verdict"]["reasons"]]
    out += [f"- {md_code(r['rule'])} ({r['severity']}) {cell(r['message'])}" for r in d["verdict"]["warnings"]]
    cand = d["candidate"]
    if cand and cand.get("available"):
        plan = (d["table"] or {}).get("plan")
        out += ["", "## Timeline", "", *recovery_timeline({**cand, "table": plan})]
    out += ["", "## Savepoint or checkpoint to restore", ""]
    if cand is None:
        out.append("None given (`--restore-from`) and none found in Flink's checkpoint history.")
    elif not cand["available"]:
        out.append(f"{md_code(cand.get('location'))} could not be read: {cell(cand.get('error'))}")
    else:
        out += [
            f"- location: {md_code(cand['location'])} ({cell(cand['source'])})",
            f"- {cand['kind'] or 'snapshot'} of checkpoint **{cand['checkpoint_id']}**, _metadata v{cand['version']}"
            f"{', ' + cand['format'] if cand.get('format') else ''}",
            f"- completed {_ts(cand['completed_ms'])} (from {cand['completed_ms_source']})",
            f"- job {md_code(cand['job_id'] or (cand.get('job_id_prefix') or '?') + '…')}; "
            f"{cand['stateful_operators']} stateful operators, {cand['state_size']} bytes of state",
            "",
            "| operator id | uid | contract uid | max parallelism | state bytes |",
            "|---|---|---|---|---|",
        ]
        for op in cand["operators"]:
            if op["has_state"]:
                m = op.get("matched") or {}
                out.append(
                    f"| {md_code(op['operator_id'])} | {cell(op['uid'] or op['name'] or '')} | "
                    f"{cell(m['uid']) if m.get('uid') else '**none**'} | "
                    f"{op['max_parallelism']} | {op['state_size']} |"
                )
    out += _table_md(d["table"])
    if d["since"] is not None:
        s = d["since"]
        out += [
            "",
            "## Since the incident started",
            "",
            f"{s['snapshots']} snapshots committed since then; "
            f"{len(s['checkpoints'])} checkpoints in Flink's recent history.",
        ]
    out += ["", "## Consumers to notify", ""]
    out += [
        f"- {cell(c['name'])}: {cell(c['contact']) if c['contact'] else '**no contact**'} "
        f"(freshness {_dur(c['freshness_ms'])})"
        for c in d["consumers"]
    ] or ["None declared."]
    version = d["code"]
    out += [
        "",
        "## Code version being restored",
        "",
        f"- contract {md_code(version['contract'])} at commit "
        f"{md_code(version['git_commit'] or 'unknown')}"
        + (" (uncommitted changes)" if version.get("git_dirty") else ""),
    ]
    if version.get("flink"):
        f = version["flink"]
        out.append(
            f"- Flink job {md_code(f['job_name'])} {md_code(f['job_id'])} "
            f"({cell(f['state'])}, Flink {cell(f['flink_version'])})"
        )
    return "\n".join(out) + "\n"


def _fenced(text: str) -> list[str]:
    """A fenced code block whose fence no line of ``text`` can close (a command holds table names)."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return [fence, log_text(text), fence]


def _table_md(table: dict[str, Any] | None) -> list[str]:
    out = ["", "## The table", ""]
    if table is None:
        return [*out, "No table declared."]
    if not table["available"]:
        return [*out, f"Unavailable: {cell(table['error'])}"]
    plan = table.get("plan") or {}
    out.append(f"{md_code(str(table['catalog']) + '.' + str(table['identifier']))} branch {md_code(table['branch'])}.")
    if plan.get("status") not in ("behind", "current"):
        return [*out, "", f"Cannot match the savepoint to the table: {cell(plan.get('reason') or 'no savepoint')}."]
    match = plan.get("matching_snapshot")
    rep = plan["replay"]
    idem = plan.get("idempotence") or {}
    out += [
        "",
        f"- max committed checkpoint of job {md_code(plan['job_id'])}: **{plan['max_committed_checkpoint_id']}**",
        f"- snapshot of checkpoint {plan['checkpoint_id']}: "
        + (
            f"**{match['snapshot_id']}** (checkpoint {match['checkpoint_id']}, {_ts(match['timestamp_ms'])})"
            if match
            else f"none ({cell(plan.get('matching_missing'))})"
        ),
        f"- replay window: {rep['snapshots']} commits, checkpoints "
        f"{rep['first_checkpoint_id']}..{rep['last_checkpoint_id']}, {rep['added_records']} records, "
        f"{rep['added_data_files']} data files, {rep['added_delete_files']} delete files",
        f"- sink idempotent (upsert with identifier fields): {'yes' if idem.get('idempotent') else 'no'}"
        f" ({idem.get('source')})",
        f"- replay duplicates rows: **{'yes' if plan.get('duplicates') else 'no'}**",
    ]
    if plan.get("behind"):
        out.append(
            f"- a restored job that keeps job id {md_code(plan['job_id'])} (fixed job ids) finds checkpoints up to "
            f"{plan['max_committed_checkpoint_id']} already committed and skips them instead: rows are lost, "
            "not duplicated (apache/iceberg#10892); roll back first either way"
        )
    rb = table.get("rollback")
    if rb:
        out += [
            "",
            "### Rollback target",
            "",
            f"Snapshot **{rb['snapshot_id']}** (checkpoint {rb['checkpoint_id']}, "
            f"{_ts(rb['timestamp_ms'])}); rolling back discards {rb['discards']} newer snapshots"
            + ("" if rb["needed"] else " (not needed: nothing is replayed)")
            + ".",
            "",
        ]
        for name, cmd in rb["commands"].items():
            out += [f"{cell(name)}:", "", *_fenced(cmd), ""]
    return out
