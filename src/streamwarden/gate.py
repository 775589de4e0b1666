"""The pre-deploy gate: may this job version be restored (from this savepoint) into the live table?

``run_gate`` gathers the contract, repository, Flink, Iceberg and savepoint facts of one pipeline
in one environment (facts/recovery.py), evaluates every policy with ``input.mode == "gate"`` (so
SW-FACT-001 is an error: the gate fails closed), applies the contract's waivers, and decides:
``allow`` when no unwaived error finding remains, else ``deny`` with the findings as reasons.
Exit codes (``GateResult.exit_code``): 0 allow, 1 deny; unusable input raises a StreamwardenError
(exit 2 in the CLI). A savepoint that cannot be read is a gap in the facts (deny, SW-FACT-001).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.config import Config
from streamwarden.contracts import Contract
from streamwarden.errors import ContractErrors, UsageError
from streamwarden.facts.recovery import RecoveryFacts, gather_recovery
from streamwarden.findings import Finding

SOURCES = ("deployment", "flink", "iceberg", "savepoint")


@dataclass
class GateResult:
    pipeline: str
    environment: str
    decision: str  # allow | deny
    findings: list[Finding]
    input: dict[str, Any]
    now_ms: int
    contract_file: str = ""
    recovery: RecoveryFacts | None = field(default=None, repr=False)

    @property
    def reasons(self) -> list[Finding]:
        return [f for f in self.findings if f.counts and f.severity == "error"]

    @property
    def notes(self) -> list[Finding]:
        return [f for f in self.findings if f.counts and f.severity != "error"]

    @property
    def exit_code(self) -> int:
        return 0 if self.decision == "allow" else 1


def find_contract(config: Config, pipeline: str, paths: Sequence[str] = ()) -> Contract:
    """The contract whose ``metadata.name`` is ``pipeline`` (exit 2 when unknown or invalid)."""
    from streamwarden.run import load_for_run

    contracts, errors = load_for_run(config, paths)
    match = [c for c in contracts if c.name == pipeline]
    if match:
        return match[0]
    if errors:  # the pipeline may be the contract that does not load
        raise ContractErrors(errors)
    known = ", ".join(sorted(c.name for c in contracts)) or "none found"
    raise UsageError(f"unknown pipeline '{pipeline}' (known: {known})")


def evaluate(
    contract: Contract,
    facts: dict[str, Any],
    now_ms: int,
    env_name: str,
    mode: str,
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    config: Config | None = None,
    engine_options: dict[str, Any] | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """Every policy over the input document, waivers applied; findings sorted as everywhere."""
    from streamwarden.engine import load_policy_set, make_engine
    from streamwarden.run import build_input, evaluate_contract
    from streamwarden.waivers import apply_waivers

    extra = [*(config.policies if config else []), *policy_dirs]
    policy_set = load_policy_set(list(extra), root=config.root if config else None)
    doc = build_input(contract, facts, now_ms, env_name, mode)
    options = {**({"limits": config.limits} if config else {}), **(engine_options or {})}
    findings = evaluate_contract(make_engine(engine, policy_set, **options), policy_set, contract, doc)
    apply_waivers(findings, contract.data)
    findings.sort(key=Finding.sort_key)
    return findings, doc


def run_gate(
    config: Config,
    pipeline: str,
    env_name: str,
    restore_from: str | None,
    now_ms: int,
    *,
    rollback_to: str | None = None,
    paths: Sequence[str] = (),
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> GateResult:
    contract = find_contract(config, pipeline, paths)
    recovery = gather_recovery(contract, config, env_name, now_ms, restore_from=restore_from, rollback_to=rollback_to)
    return decide(
        contract,
        recovery,
        env_name,
        now_ms,
        config=config,
        policy_dirs=policy_dirs,
        engine=engine,
        engine_options=engine_options,
    )


def decide(
    contract: Contract,
    recovery: RecoveryFacts,
    env_name: str,
    now_ms: int,
    *,
    config: Config | None = None,
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> GateResult:
    """The gate's decision on gathered recovery facts: every policy in ``gate`` mode, waivers
    applied; deny when an unwaived error remains. ``evidence`` renders this same decision."""
    findings, doc = evaluate(
        contract, recovery.facts, now_ms, env_name, "gate", policy_dirs, engine, config, engine_options
    )
    decision = "deny" if any(f.counts and f.severity == "error" for f in findings) else "allow"
    return GateResult(contract.name, env_name, decision, findings, doc, now_ms, contract.file, recovery)


def _restore_summary(savepoint: dict[str, Any]) -> dict[str, Any] | None:
    if not savepoint.get("configured"):
        return None
    keys = ("source", "location", "available", "error", "kind", "version", "checkpoint_id", "completed_ms", "job_id")
    out = {k: savepoint.get(k) for k in keys if k in savepoint}
    table = savepoint.get("table")
    if isinstance(table, dict):
        out["table"] = {
            k: table.get(k)
            for k in (
                "status",
                "max_committed_checkpoint_id",
                "matching_snapshot",
                "duplicates",
                "rollback_target",
                "reason",
            )
            if k in table
        }
    return out


def source_status(facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SOURCES:
        f = facts.get(name) or {}
        out[name] = {"configured": bool(f.get("configured")), "available": bool(f.get("available"))}
        if f.get("error"):
            out[name]["error"] = f["error"]
    return out


def gate_to_dict(result: GateResult) -> dict[str, Any]:
    facts = result.input.get("facts") or {}
    return {
        "version": 1,
        "decision": result.decision,
        "pipeline": result.pipeline,
        "environment": result.environment,
        "now_ms": result.now_ms,
        "restore_from": _restore_summary(facts.get("savepoint") or {}),
        "sources": source_status(facts),
        "reasons": [f.to_dict() for f in result.reasons],
        "warnings": [f.to_dict() for f in result.notes],
        "waived": [f.to_dict() for f in result.findings if f.waived],
    }


def render_json(result: GateResult) -> str:
    return json.dumps(gate_to_dict(result), indent=2, ensure_ascii=False) + "\n"


def render_text(result: GateResult) -> str:
    facts = result.input.get("facts") or {}
    sp = facts.get("savepoint") or {}
    lines = [f"gate: {result.decision.upper()} {result.pipeline} in {result.environment}"]
    if sp.get("available"):
        lines.append(
            f"  restore from {sp.get('location')} ({sp.get('kind') or 'snapshot'} of checkpoint "
            f"{sp.get('checkpoint_id')}, _metadata v{sp.get('version')}, "
            f"{sp.get('stateful_operators')} stateful operators)"
        )
        table = sp.get("table") or {}
        if table.get("status") in ("behind", "current"):
            match = table.get("matching_snapshot") or {}
            lines.append(
                f"  table: max committed checkpoint {table.get('max_committed_checkpoint_id')}, snapshot of the "
                f"savepoint's checkpoint: {match.get('snapshot_id', 'none')}, replay "
                f"{(table.get('replay') or {}).get('snapshots', 0)} commits"
            )
    elif sp.get("configured"):
        lines.append(f"  restore from {sp.get('location') or '?'}: unreadable")
    else:
        lines.append("  no savepoint or retained checkpoint to restore from")
    for f in result.reasons:
        lines.append(f"  ✗ {f.rule} {f.message}")
    for f in result.notes:
        lines.append(f"  ! {f.rule} ({f.severity}) {f.message}")
    waived = [f for f in result.findings if f.waived]
    if waived:
        lines.append(f"  {len(waived)} waived finding{'s' if len(waived) != 1 else ''}")
    if result.decision == "allow":
        lines.append("  allowed: every rule the gate evaluates passed")
    else:
        lines.append(f"  denied: {len(result.reasons)} reason{'s' if len(result.reasons) != 1 else ''}")
    return "\n".join(lines) + "\n"
