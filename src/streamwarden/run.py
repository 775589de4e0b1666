"""One run: load contracts -> gather facts -> build the input document -> evaluate -> waive."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.config import Config
from streamwarden.contracts import Contract, discover_contracts, load_contracts
from streamwarden.engine import Engine, PolicySet, load_policy_set, make_engine
from streamwarden.engine.policyset import RESERVED_PREFIX, SET_SEVERITY
from streamwarden.errors import PolicyError, StreamwardenError
from streamwarden.facts.static import gather_static_facts
from streamwarden.findings import Finding, fingerprint, value_at
from streamwarden.waivers import apply_waivers


@dataclass
class RunOptions:
    paths: Sequence[str] = ()
    policy_dirs: Sequence[Path] = ()
    engine: str = "regorus"
    now_ms: int | None = None
    environment: str | None = None
    mode: str = "check"


@dataclass
class RunResult:
    contracts: list[Contract]
    findings: list[Finding]
    errors: list[StreamwardenError]
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    policy_set: PolicySet | None = None

    @property
    def pipelines(self) -> list[str]:
        return [c.name for c in self.contracts]


def now_ms() -> int:
    return int(time.time() * 1000)


def load_for_run(config: Config, paths: Sequence[str]) -> tuple[list[Contract], list[StreamwardenError]]:
    files, errors = discover_contracts(paths, config.root, config.contracts)
    contracts, load_errors = load_contracts(files, config.root)
    return contracts, errors + load_errors


def build_input(
    contract: Contract,
    facts: dict[str, Any],
    now: int,
    environment: str | None,
    mode: str = "check",
    base: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "contract": contract.data,
        "base": base,
        "facts": facts,
        "now_ms": now,
        "environment": environment,
        "mode": mode,
    }


def run_check(config: Config, options: RunOptions) -> RunResult:
    contracts, errors = load_for_run(config, options.paths)
    policy_set = load_policy_set([*config.policies, *options.policy_dirs], root=config.root)
    engine = make_engine(options.engine, policy_set)
    now = options.now_ms if options.now_ms is not None else now_ms()
    findings: list[Finding] = []
    inputs: dict[str, dict[str, Any]] = {}
    for contract in contracts:
        facts = gather_static_facts(contract, config.root)
        doc = build_input(contract, facts, now, options.environment, options.mode)
        inputs[contract.name] = doc
        found = evaluate_contract(engine, policy_set, contract, doc)
        apply_waivers(found, contract.data)
        findings.extend(found)
    findings.sort(key=Finding.sort_key)
    return RunResult(contracts=contracts, findings=findings, errors=errors, inputs=inputs, policy_set=policy_set)


def evaluate_contract(engine: Engine, policy_set: PolicySet, contract: Contract, doc: dict[str, Any]) -> list[Finding]:
    raw = engine.evaluate(doc)
    out: list[Finding] = []
    seen: set[tuple[Any, ...]] = set()
    for (package, rule_set), elements in raw.items():
        for element in elements:
            f = to_finding(policy_set, package, rule_set, element, contract)
            key = (f.rule, f.path, f.message, f.file, f.line)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def to_finding(policy_set: PolicySet, package: str, rule_set: str, element: Any, contract: Contract) -> Finding:
    files = ", ".join(policy_set.package_files(package))
    if not isinstance(element, dict) or not isinstance(element.get("rule"), str) or not isinstance(
        element.get("message"), str
    ):
        raise PolicyError(
            f"data.{package}.{rule_set} produced {str(element)[:80]!r}: each element must be an object "
            'with a string "rule" id and a string "message"',
            file=files or None,
            hint='e.g. deny contains {"rule": "ACME-001", "message": "...", "path": "checkpoint.interval"} if { ... }',
        )
    rule = element["rule"]
    if policy_set.is_custom_package(package) and rule.startswith(RESERVED_PREFIX):
        raise PolicyError(
            f"custom policy package {package} emits rule id {rule}: ids starting with {RESERVED_PREFIX} are reserved",
            file=files or None,
            hint="give custom rules ids of your own, e.g. ACME-001",
        )
    desc = policy_set.rules.get(rule)
    severity = element.get("severity") or (desc.severity if desc else SET_SEVERITY.get(rule_set, "error"))
    if severity not in ("error", "warning", "info"):
        severity = SET_SEVERITY.get(rule_set, "error")
    path = element.get("path") if isinstance(element.get("path"), str) else ""
    source = element.get("source") if isinstance(element.get("source"), str) else "contract"
    if isinstance(element.get("file"), str):
        file: str | None = element["file"]
        line = element.get("line") if isinstance(element.get("line"), int) else None
    else:
        file = contract.file
        line = contract.line_of(path)
    value = element["value"] if "value" in element else value_at(contract.data, path)
    evidence = element.get("evidence") if isinstance(element.get("evidence"), dict) else {}
    return Finding(
        pipeline=contract.name,
        rule=rule,
        severity=severity,
        title=desc.title if desc else rule,
        message=element["message"],
        file=file,
        line=line,
        path=path,
        source=source,
        remediation=desc.remediation if desc else "",
        evidence=evidence,
        fingerprint=fingerprint(contract.name, rule, path, value),
    )
