"""One run: load contracts -> gather facts -> build the input document -> evaluate -> waive."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.config import Config
from streamwarden.contracts import Contract, discover_contracts, load_contract, load_contracts
from streamwarden.engine import Engine, PolicySet, load_policy_set, make_engine
from streamwarden.engine.policyset import RESERVED_PREFIX, SET_SEVERITY
from streamwarden.errors import ContractErrors, InputError, PolicyError, StreamwardenError
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


@dataclass(frozen=True)
class PipelineRef:
    name: str
    file: str


@dataclass
class RunResult:
    pipelines: list[PipelineRef]
    findings: list[Finding]
    errors: list[StreamwardenError]
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    policy_set: PolicySet | None = None

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.pipelines]


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


PARALLEL_THRESHOLD = 200  # contracts; below it a second process costs more than it saves


def run_check(config: Config, options: RunOptions) -> RunResult:
    """Check every contract. Large sets are split across the machine's cores (fork), each worker
    loading, gathering and evaluating its share; results are merged in file order."""
    files, errors = discover_contracts(options.paths, config.root, config.contracts)
    now = options.now_ms if options.now_ms is not None else now_ms()
    workers = _worker_count(len(files))
    if workers > 1:
        chunks = [files[i::workers] for i in range(workers)]
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers) as pool:
            parts = pool.starmap(_check_files, [(chunk, config, options, now) for chunk in chunks])
        order = {p.resolve(): i for i, p in enumerate(files)}
        merged = [item for part in parts for item in part[0]]
        merged.sort(key=lambda item: order.get(item[0], 0))
        for part in parts:
            errors.extend(part[1])
    else:
        part = _check_files(files, config, options, now)
        merged, errors = part[0], errors + part[1]
    pipelines: list[PipelineRef] = []
    findings: list[Finding] = []
    inputs: dict[str, dict[str, Any]] = {}
    seen: dict[str, PipelineRef] = {}
    for _, ref, found, doc, name_line in merged:
        if ref.name in seen:
            errors.append(_duplicate_name(ref, seen[ref.name], name_line))
            continue
        seen[ref.name] = ref
        pipelines.append(ref)
        findings.extend(found)
        if doc is not None:
            inputs[ref.name] = doc
    findings.sort(key=Finding.sort_key)
    return RunResult(pipelines=pipelines, findings=findings, errors=errors, inputs=inputs)


def _worker_count(n_files: int) -> int:
    forced = os.environ.get("STREAMWARDEN_WORKERS", "")
    if forced.isdigit() and int(forced) > 0:
        return min(int(forced), max(1, n_files))
    cpus = os.cpu_count() or 1
    if n_files < PARALLEL_THRESHOLD or cpus < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(cpus, 4, n_files // (PARALLEL_THRESHOLD // 2)))


_Checked = tuple[Path, PipelineRef, list[Finding], "dict[str, Any] | None", int]


def _check_files(
    files: Sequence[Path], config: Config, options: RunOptions, now: int
) -> tuple[list[_Checked], list[StreamwardenError]]:
    policy_set = load_policy_set([*config.policies, *options.policy_dirs], root=config.root)
    engine = make_engine(options.engine, policy_set)
    out: list[_Checked] = []
    errors: list[StreamwardenError] = []
    keep_inputs = len(files) < PARALLEL_THRESHOLD
    for f in files:
        try:
            contract = load_contract(f, config.root)
        except ContractErrors as exc:
            errors.extend(exc.errors)
            continue
        except StreamwardenError as exc:
            errors.append(exc)
            continue
        facts = gather_static_facts(contract, config.root)
        doc = build_input(contract, facts, now, options.environment, options.mode)
        found = evaluate_contract(engine, policy_set, contract, doc)
        apply_waivers(found, contract.data)
        ref = PipelineRef(contract.name, contract.file)
        out.append((f.resolve(), ref, found, doc if keep_inputs else None, contract.line_of("metadata.name")))
    return out, errors


def _duplicate_name(ref: PipelineRef, first: PipelineRef, line: int) -> InputError:
    return InputError(
        f"pipeline name '{ref.name}' is already used by {first.file}",
        file=ref.file,
        line=line,
        path="metadata.name",
        hint="metadata.name must be unique: it pairs contracts across branches",
    )


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
