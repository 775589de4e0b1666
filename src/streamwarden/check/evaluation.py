"""Evaluation: one pipeline's input document through every policy of the run, then the waivers in
force (``evaluate_pipeline``: check, gate and evidence all go through it); the run-wide documents
(removed pipelines, the repository's changes, the tables several contracts write); the one-pipeline
entry points of gate, evidence and ``facts``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.check.context import RunContext
from streamwarden.check.options import RunOptions
from streamwarden.contracts import Contract
from streamwarden.contracts.config import Config
from streamwarden.core import selfcheck
from streamwarden.engine import Engine, PolicySet, RawResults
from streamwarden.evaluate import inputdoc, writers
from streamwarden.evaluate.findings import Finding, to_finding
from streamwarden.evaluate.waivers import apply_waivers

if TYPE_CHECKING:
    from streamwarden.repo.pullrequest import TrustedPolicies


@dataclass
class _Subject:
    """What a finding is located against when there is no head contract (a removed pipeline)."""

    name: str
    file: str
    data: dict[str, Any]

    def line_of(self, path: str) -> int:
        return 1


REMOVAL_PACKAGE = "streamwarden.removal"


REPOSITORY_PACKAGE = "streamwarden.policy"


REPOSITORY = "(repository)"


def repository_findings(
    ctx: RunContext, policy_set: PolicySet, head_names: set[str], trusted: TrustedPolicies
) -> list[Finding]:
    """Pipelines the pull request removes, and changes to policies or configuration."""
    assert ctx.base is not None
    engine = ctx.engine()
    out: list[Finding] = []
    for removed in ctx.base.removed(head_names):
        base_doc = inputdoc.base_section(
            ref=ctx.base.ref, commit=ctx.base.commit, file=removed.file, status="removed", contract=removed.contract
        )
        doc = inputdoc.removed_pipeline(
            base_doc, ctx.now, ctx.options.environment, ctx.options.mode, config=ctx.policy_settings
        )
        subject = _Subject(removed.name or removed.file, removed.file, removed.contract or {})
        out.extend(evaluate_subject(engine, policy_set, subject, doc, [REMOVAL_PACKAGE]))
    doc = inputdoc.repository(trusted.ref, trusted.commit, trusted.changes, ctx.now)
    out.extend(evaluate_subject(engine, policy_set, _Subject(REPOSITORY, "", {}), doc, [REPOSITORY_PACKAGE]))
    return out


def writer_findings(ctx: RunContext, policy_set: PolicySet, written: list[writers.Writer]) -> list[Finding]:
    """SW-TABLE-014 and the other rules of package streamwarden.writers, once per run, on the tables
    more than one contract writes (none: nothing is evaluated). Each finding belongs to the writer
    the rule names (``pipeline``), is located in its file, and is waived by its waivers in force."""
    shared = writers.shared_tables(written)
    if not shared:
        return []
    doc = inputdoc.writers(shared, ctx.now, ctx.base.ref if ctx.base is not None else None)
    by_name = {w.pipeline: w for w in written}
    if selfcheck.enabled():
        selfcheck.check_input(doc)
    out: list[Finding] = []
    for (package, rule_set), elements in ctx.engine().evaluate(doc, [writers.PACKAGE]).items():
        for element in elements:
            name = element.get("pipeline") if isinstance(element, dict) else None
            writer = by_name.get(name) if isinstance(name, str) else None
            subject = _Subject(writer.pipeline, writer.file, {}) if writer else _Subject(REPOSITORY, "", {})
            f = to_finding(policy_set, package, rule_set, element, subject)
            if writer is not None:
                own = {"waivers": writer.waivers}
                if writer.trusted_waivers is None:
                    apply_waivers([f], own)
                else:
                    apply_waivers([f], own, trusted=writer.trusted_waivers, now_ms=ctx.now)
            out.append(f)
    return out


def base_named_deployment(ctx: RunContext, contract: Contract) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """In a pull request whose contract no longer names a file its base's ``job.deployment`` names,
    the base's files (``BaseSnapshot.named_deployment``): the contract's data naming them instead,
    and their ``facts.deployment``. None otherwise (the usual case)."""
    assert ctx.base is not None
    entries = ctx.base.named_deployment(contract.name, contract.path, contract.data)
    if not entries:
        return None
    from streamwarden.facts.deployment import gather_named_deployment

    job = contract.data.get("job")
    data = {**contract.data, "job": {**(job if isinstance(job, dict) else {}), "deployment": entries}}
    top = ctx.base.repo.top_resolved()
    return data, gather_named_deployment(data, top, ctx.config.root, ctx.known_keys)


@dataclass
class _NamedDeployment:
    """A contract judged on the files its base names (:func:`base_named_deployment`): its
    ``job.deployment`` entries are the base's, located at the head's ``job.deployment``."""

    contract: Contract
    data: dict[str, Any]

    @property
    def name(self) -> str:
        return self.contract.name

    @property
    def file(self) -> str:
        return self.contract.file

    def line_of(self, path: str) -> int:
        return self.contract.line_of("job.deployment" if path.startswith("job.deployment") else path)


def _base_named_findings(
    ctx: RunContext,
    contract: Contract,
    doc: dict[str, Any],
    base_named: tuple[dict[str, Any], dict[str, Any]],
    found: list[Finding],
) -> list[Finding]:
    """Every policy over the files a pull request's base contract names, judged against the head
    contract: repointing or dropping ``job.deployment`` never hides what those files say. A finding
    the pipeline's own evaluation has (the same rule, fingerprint and place: the contract's own
    findings, and those of a file both name) is not repeated."""
    data, deployment = base_named
    named = inputdoc.with_deployment(doc, data, deployment)
    seen = {(f.rule, f.fingerprint, f.file, f.line) for f in found}
    out: list[Finding] = []
    for f in evaluate_subject(ctx.engine(), ctx.policy_set(), _NamedDeployment(contract, data), named, None):
        key = (f.rule, f.fingerprint, f.file, f.line)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def evaluate_pipeline(
    ctx: RunContext,
    contract: Contract,
    facts: dict[str, Any],
    base: dict[str, Any] | None = None,
    *,
    compare_base: bool = True,
    before_waivers: Callable[[dict[str, Any], list[Finding], frozenset[str]], None] | None = None,
    base_named: tuple[dict[str, Any], dict[str, Any]] | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """Evaluate one pipeline; every verb that evaluates (check, gate, evidence) goes through here.

    The input document (inputdoc.pipeline: the run's mode, time and environment), every policy of
    the run, then the waivers in force: the contract's own, or in a pull request (``base``) the
    base's. ``compare_base`` false: the base is left out of the evaluated document (an unchanged
    contract under unchanged policies) but kept in the returned one (the contract review reads it).
    ``before_waivers`` sees the evaluated document, the findings before waivers and the policy
    files that may have read the time in the evaluation (the result cache stores the findings for
    as long as those reads allow; never those of a contract judged on its base's files too).
    ``base_named``: in a pull request whose contract no longer names a file its base names, the
    base's files, also judged (:func:`base_named_deployment`). Returns the findings in report
    order and the document."""
    doc = inputdoc.pipeline(
        contract, facts, ctx.now, ctx.options.environment, ctx.options.mode, base, config=ctx.policy_settings
    )
    evaluated = doc if base is None or compare_base else inputdoc.without_base(doc)
    remember = before_waivers if base_named is None else None
    if remember is None:
        found = evaluate_contract(ctx.engine(), ctx.policy_set(), contract, evaluated)
    else:
        found, reads = evaluate_reading(ctx.engine(), ctx.policy_set(), contract, evaluated)
        remember(evaluated, found, reads)
    if base_named is not None:
        found += _base_named_findings(ctx, contract, doc, base_named, found)
    if base is None:
        apply_waivers(found, contract.data)
    else:  # the trusted ref's waivers are the ones in force in a pull request (the merge base's,
        # unless the trusted ref changed the contract since)
        base_waivers = (base.get("contract") or {}).get("waivers") or []
        if ctx.base is not None:
            base_waivers = ctx.base.waivers_in_force(contract.name, base_waivers)
        apply_waivers(found, contract.data, trusted=base_waivers, now_ms=ctx.now, horizon_ms=ctx.waiver_horizon_ms)
    found.sort(key=Finding.sort_key)
    return found, doc


def _one_pipeline(
    config: Config,
    mode: str,
    now: int,
    environment: str | None,
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> RunContext:
    options = RunOptions(
        policy_dirs=policy_dirs,
        engine=engine,
        now_ms=now,
        environment=environment,
        mode=mode,
        engine_options=dict(engine_options or {}),
    )
    return RunContext(config=config, options=options, now=now)


def evaluate_one(
    config: Config,
    contract: Contract,
    facts: dict[str, Any],
    *,
    mode: str,
    now_ms: int,
    environment: str | None,
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """One pipeline on facts gathered elsewhere (gate, evidence): the configuration's policies
    plus ``policy_dirs``, under its limits, through :func:`evaluate_pipeline`."""
    ctx = _one_pipeline(config, mode, now_ms, environment, policy_dirs, engine, engine_options)
    return evaluate_pipeline(ctx, contract, facts)


def pipeline_document(config: Config, contract: Contract, *, now_ms: int, environment: str | None) -> dict[str, Any]:
    """The ``facts`` command's document: the facts check gathers for ``contract`` (the repository's,
    and with ``environment`` the live sources'), in the shape check evaluates, mode ``facts``."""
    ctx = _one_pipeline(config, "facts", now_ms, environment)
    if environment:
        ctx.env = config.environment(environment)
    facts = gather_facts(ctx, contract, ctx.live_facts([contract])[0])
    return inputdoc.pipeline(contract, facts, now_ms, environment, "facts", config=ctx.policy_settings)


def gather_facts(ctx: RunContext, contract: Contract, live: dict[str, Any]) -> dict[str, Any]:
    """A pipeline's facts: the repository's (static), then the live sections gathered for it."""
    from streamwarden.facts import pipeline
    from streamwarden.facts.deployment_source import DeploymentSettings
    from streamwarden.facts.source import GatherContext, Subject

    subject = Subject(contract.data, contract.path)
    gathering = GatherContext.of(ctx.config.root, ctx.now, [DeploymentSettings(ctx.known_keys)])
    pipeline.gather([subject], None, gathering, pipeline.STATIC)
    subject.facts.update(live)
    return subject.facts


def evaluate_contract(engine: Engine, policy_set: PolicySet, contract: Contract, doc: dict[str, Any]) -> list[Finding]:
    """Every policy over ``doc``, as findings (no waivers): see :func:`evaluate_pipeline`."""
    return evaluate_subject(engine, policy_set, contract, doc, None)


def evaluate_reading(
    engine: Engine, policy_set: PolicySet, contract: Contract, doc: dict[str, Any]
) -> tuple[list[Finding], frozenset[str]]:
    """:func:`evaluate_contract`, and the policy files that may have read ``input.now_ms`` in
    the evaluation: the ones whose read sites the engine ran, or where it cannot tell, every
    selected file that has one (engine/timeread.py)."""
    if selfcheck.enabled():
        selfcheck.check_input(doc)
    raw, ran = engine.evaluate_reading(doc, None)
    if ran is None:
        ran = frozenset(f.display for f in policy_set.files_for(doc) if f.now_reads)
    return _findings(policy_set, contract, raw), ran


def evaluate_subject(
    engine: Engine, policy_set: PolicySet, subject: Any, doc: dict[str, Any], packages: list[str] | None
) -> list[Finding]:
    if selfcheck.enabled():
        selfcheck.check_input(doc)
    return _findings(policy_set, subject, engine.evaluate(doc, packages))


def _findings(policy_set: PolicySet, subject: Any, raw: RawResults) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[Any, ...]] = set()
    for (package, rule_set), elements in raw.items():
        for element in elements:
            f = to_finding(policy_set, package, rule_set, element, subject)
            key = (f.rule, f.path, f.message, f.file, f.line)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out
