"""The pre-deploy gate: may this job version be restored (from this savepoint) into the live table?

``run_gate`` gathers the contract, repository, Flink, Iceberg and savepoint facts of one pipeline
in one environment (facts/recovery.py), evaluates every policy with ``input.mode == "gate"`` (so
SW-FACT-001 is an error: the gate fails closed), applies the contract's waivers, and decides:
``allow`` when no unwaived error finding remains, else ``deny`` with the findings as reasons.
Exit codes (``GateResult.exit_code``): 0 allow, 1 deny; unusable input raises a StreamwardenError
(exit 2 in the CLI). A savepoint that cannot be read is a gap in the facts (deny, SW-FACT-001).
"""

from __future__ import annotations

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


def source_status(facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SOURCES:
        f = facts.get(name) or {}
        out[name] = {"configured": bool(f.get("configured")), "available": bool(f.get("available"))}
        if f.get("error"):
            out[name]["error"] = f["error"]
    return out
