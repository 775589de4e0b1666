"""The pre-deploy gate: may this job version be restored (from this savepoint) into the live table?

``run_gate`` gathers the contract, repository, Flink, Iceberg and savepoint facts of one pipeline
in one environment (facts/recovery.py), evaluates every policy with ``input.mode == "gate"`` (so
SW-FACT-001 is an error: the gate fails closed), applies the contract's waivers, and decides:
``allow`` when no unwaived error finding remains, else ``deny`` with the findings as reasons. An
engine that gives no decision at all (``UndefinedDecision``: an OPA server without the policies)
is a ``deny`` too, ``undecided`` saying why: undefined is not empty.
Exit codes (``GateResult.exit_code``): 0 allow, 1 deny; unusable input raises a StreamwardenError
(exit 2 in the CLI). A savepoint that cannot be read is a gap in the facts (deny, SW-FACT-001).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.contracts import Contract
from streamwarden.contracts.config import Config
from streamwarden.core import exitcodes
from streamwarden.engine.interface import UndefinedDecision
from streamwarden.evaluate import inputdoc
from streamwarden.evaluate.findings import Finding
from streamwarden.facts.pipeline import recovery_sources
from streamwarden.facts.recovery import RecoveryFacts, gather_recovery


@dataclass
class GateResult:
    pipeline: str
    environment: str
    decision: str  # allow | deny
    findings: list[Finding]
    input: dict[str, Any]
    now_ms: int
    contract: Contract = field(repr=False)  # what the evidence record reads beside the decision
    recovery: RecoveryFacts = field(repr=False)
    undecided: str | None = None  # why the policies gave no decision (then the gate denies)

    @property
    def reasons(self) -> list[Finding]:
        return [f for f in self.findings if f.counts and f.severity == "error"]

    @property
    def notes(self) -> list[Finding]:
        return [f for f in self.findings if f.counts and f.severity != "error"]

    @property
    def exit_code(self) -> int:
        return exitcodes.exit_code(failed=self.decision != "allow")


def run_gate(
    config: Config,
    pipeline: str,
    env_name: str,
    restore_from: str | None,
    now_ms: int,
    *,
    rollback_to: str | None = None,
    since_ms: int | None = None,
    paths: Sequence[str] = (),
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> GateResult:
    """The gate's decision on ``pipeline`` in ``env_name``: the contract found, its recovery facts
    gathered (``since_ms``: also what the table and Flink did since then, for the evidence record),
    every policy evaluated in ``gate`` mode (the one evaluation of check, check/evaluation.py evaluate_pipeline),
    waivers applied; deny when an unwaived error remains. ``evidence.build_evidence`` renders this
    same result."""
    from streamwarden.check.evaluation import evaluate_one
    from streamwarden.check.run import find_pipeline

    contract = find_pipeline(config, pipeline, paths)
    recovery = gather_recovery(
        contract, config, env_name, now_ms, restore_from=restore_from, rollback_to=rollback_to, since_ms=since_ms
    )
    try:
        findings, doc = evaluate_one(
            config,
            contract,
            recovery.facts,
            mode="gate",
            now_ms=now_ms,
            environment=env_name,
            policy_dirs=policy_dirs,
            engine=engine,
            engine_options=engine_options,
        )
    except UndefinedDecision as exc:  # no decision is no allow: the gate fails closed
        doc = inputdoc.pipeline(contract, recovery.facts, now_ms, env_name, "gate", config=config.policy_settings())
        return GateResult(contract.name, env_name, "deny", [], doc, now_ms, contract, recovery, exc.message)
    decision = "deny" if any(f.counts and f.severity == "error" for f in findings) else "allow"
    return GateResult(contract.name, env_name, decision, findings, doc, now_ms, contract, recovery)


def source_status(facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in recovery_sources():
        f = facts.get(name) or {}
        out[name] = {"configured": bool(f.get("configured")), "available": bool(f.get("available"))}
        if f.get("error"):
            out[name]["error"] = f["error"]
    return out
