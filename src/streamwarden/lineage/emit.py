"""OpenLineage run events, sent through the openlineage-python client's own configuration.

**Off unless configured.** The client reads its configuration from ``OPENLINEAGE_CONFIG`` (a
file), ``openlineage.yml`` in the working directory or in ``~/.openlineage/``, the
``OPENLINEAGE__*`` variables, and ``OPENLINEAGE_URL``; ``OPENLINEAGE_DISABLED=true`` turns it
off. Without any of them the client would fall back to printing events on the console:
streamwarden emits nothing then. The test is the client's own, in two steps: nothing of the
client is imported unless one of those variables or files exists (:func:`maybe_configured`, so
a plain ``check`` never imports it); then ``OpenLineageClient()`` is built and its resolved
configuration asked whether a transport was configured (a ``transport.type``, or
``OPENLINEAGE_URL``) and not disabled.

**Never the decision's business.** A client configured but not installed, a configuration the
client refuses, an event a transport cannot deliver: each is one warning on stderr (scrubbed),
and the command's output and exit code are what they would have been without lineage. Lineage
is a record of the decision, not part of it (docs/openlineage.md).

**One run, two events.** START (when the command began) then COMPLETE (a decision was made,
allow or deny alike) or FAIL (the command stopped on an error), with one run id (a UUIDv7).
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from streamwarden import __version__
from streamwarden.core import secrets
from streamwarden.lineage import naming

if TYPE_CHECKING:
    from streamwarden.check.options import RunResult
    from streamwarden.contracts.config import Config
    from streamwarden.engine.policyset import PolicySet
    from streamwarden.evaluate.findings import Finding
    from streamwarden.verbs.gate import GateResult

PRODUCER = f"https://streamwarden.dev/releases/{__version__}"
FACET_SCHEMA = "streamwarden-openlineage-run-facet.v1.schema.json"
FACET_SCHEMA_URL = (
    "https://streamwarden.dev/schemas/streamwarden-openlineage-run-facet.v1.json#/$defs/StreamwardenRunFacet"
)
DEFAULT_NAMESPACE = "default"  # what OpenLineage's integrations use when OPENLINEAGE_NAMESPACE is not set
INTEGRATION = "STREAMWARDEN"
MESSAGE_LIMIT = 2000
CLOSE_TIMEOUT_S = 10.0
_SEVERITY = {"error": "error", "warning": "warn", "info": "info"}

Warn = Callable[[str], None]
F = TypeVar("F", bound=Callable[..., Any])


def maybe_configured(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> bool:
    """Whether the client could find a configuration: a variable or a file it reads exists (and
    it is not disabled). False here means the client is not even imported."""
    env = os.environ if environ is None else environ
    if env.get("OPENLINEAGE_DISABLED", "").lower().strip() == "true":
        return False
    if env.get("OPENLINEAGE_CONFIG") or env.get("OPENLINEAGE_URL"):
        return True
    if any(k.startswith("OPENLINEAGE__") for k in env):
        return True
    here = cwd or Path.cwd()
    candidates = (here / "openlineage.yml", Path(os.path.expanduser("~/.openlineage")) / "openlineage.yml")
    return any(p.is_file() for p in candidates)


def job_namespace() -> str:
    return secrets.scrub(os.environ.get("OPENLINEAGE_NAMESPACE") or DEFAULT_NAMESPACE)


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _quiet_client_logs() -> None:
    """The client logs to the root logger (a warning would reach stderr unscrubbed); streamwarden
    reports what matters itself. ``OPENLINEAGE_CLIENT_LOGGING`` (the client's own switch) keeps them."""
    if os.environ.get("OPENLINEAGE_CLIENT_LOGGING"):
        return
    log = logging.getLogger("openlineage")
    log.addHandler(logging.NullHandler())
    log.propagate = False


def open_client(warn: Warn) -> Any:
    """The configured ``OpenLineageClient``, or None (not configured, not installed, refused)."""
    if not maybe_configured():
        return None
    try:
        from openlineage.client import OpenLineageClient
    except ImportError:
        warn(
            "OpenLineage is configured (openlineage.yml or OPENLINEAGE_* variables) but the openlineage-python "
            "client is not installed: no lineage events were sent (pip install 'streamwarden[openlineage]')"
        )
        return None
    _quiet_client_logs()
    try:
        client = OpenLineageClient()
        transport = client.config.transport or {}
        configured = bool(transport.get("type")) or bool(os.environ.get("OPENLINEAGE_URL"))
    except Exception as exc:
        warn(f"OpenLineage: the client's configuration was refused, no lineage events were sent: {_why(exc)}")
        return None
    if not configured or client.transport.kind == "noop":
        return None
    if client.transport.kind == "console":
        _console_on_stderr()
    return client


def _console_on_stderr() -> None:
    """The console transport logs each event at INFO (a CLI configures no logging, so it would
    print nothing): one JSON event per line on stderr, stdout stays the report."""
    log = logging.getLogger("openlineage.client.transport.console")
    if not any(getattr(h, "_streamwarden", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler._streamwarden = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    log.setLevel(logging.INFO)


def _why(exc: BaseException) -> str:
    return secrets.cut(f"{type(exc).__name__}: {exc}", MESSAGE_LIMIT)


class LineageRun:
    """One command's run: ``with LineageRun(...) as run: ...; run.complete(...)``. Leaving the block
    on an exception (not an exit) emits START and FAIL; ``complete`` emits START and COMPLETE."""

    def __init__(self, verb: str, pipeline: str, environment: str | None, warn: Warn) -> None:
        self.verb = verb
        self.pipeline = pipeline
        self.environment = environment
        self.warn = warn
        self.started = _now_iso()
        self.started_s = time.time()
        self.done = False
        self._client: Any = None
        self._opened = False
        self.closes = True  # close the client after this run's events (check --env closes it once, at the end)

    def __enter__(self) -> LineageRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None or self.done or not isinstance(exc, Exception):
            return
        self.done = True
        client = self.client()
        if client is None:
            return
        try:
            message = getattr(exc, "render", None)
            text = message() if callable(message) else f"{type(exc).__name__}: {exc}"
            build = _Builder(self, client)
            events = [build.start(), build.fail(secrets.cut(str(text), MESSAGE_LIMIT))]
        except Exception as problem:  # the command's own error is the one to report
            self.warn(f"OpenLineage: the events of {self.pipeline} could not be built: {_why(problem)}")
            return
        self._send(client, events)

    def client(self) -> Any:
        if not self._opened:
            self._opened = True
            self._client = open_client(self.warn)
        return self._client

    def complete(
        self,
        doc: Mapping[str, Any],
        findings: Iterable[Finding],
        *,
        decision: str,
        reasons: Iterable[str],
        policy_set: PolicySet | Callable[[], PolicySet] | None,
        undecided: str | None = None,
    ) -> None:
        """START and COMPLETE for a decision made on ``doc`` (the pipeline's input document)."""
        self.done = True
        client = self.client()
        if client is None:
            return
        try:
            rules = policy_set() if callable(policy_set) else policy_set
            build = _Builder(self, client)
            events = [
                build.start(),
                build.complete(doc, list(findings), decision, sorted(set(reasons)), rules, undecided),
            ]
        except Exception as exc:  # a bug here must not cost the user the decision
            self.warn(f"OpenLineage: the events of {self.pipeline} could not be built: {_why(exc)}")
            return
        self._send(client, events)

    def _send(self, client: Any, events: list[Any]) -> None:
        for event in events:
            try:
                client.emit(event)
            except Exception as exc:
                self.warn(
                    f"OpenLineage: the {event.eventType.value} event of {self.pipeline} could not be sent: {_why(exc)}"
                )
                break
        if self.closes:
            close(client, self.warn)


def close(client: Any, warn: Warn) -> None:
    """Wait for what the transport still holds (async transports), bounded."""
    try:
        client.close(CLOSE_TIMEOUT_S)
    except Exception as exc:
        warn(f"OpenLineage: the transport did not close cleanly: {_why(exc)}")


_current: LineageRun | None = None  # the command's run (lineage_run), for gate_finished


def lineage_run(verb: str, warn: Warn) -> Callable[[F], F]:
    """A click command's run (``pipeline`` and ``env_name`` from its parameters): START and FAIL
    when the command stops on an error; its decision is reported by :func:`gate_finished`."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            global _current
            env = kwargs.get("env_name")
            run = LineageRun(verb, str(kwargs.get("pipeline") or ""), env if isinstance(env, str) else None, warn)
            _current = run
            try:
                with run:
                    return fn(*args, **kwargs)
            finally:
                _current = None

        return wrapper  # type: ignore[return-value]

    return decorate


def gate_finished(result: GateResult | None, config: Config, policy_dirs: Iterable[Path]) -> None:
    """``gate`` and ``evidence``: the gate's decision, on its input document (START and COMPLETE
    of the command's run, when OpenLineage is configured)."""
    run = _current
    if run is None or result is None:
        return
    dirs = list(policy_dirs)

    def rules() -> PolicySet:
        from streamwarden.engine.policyset import load_policy_set

        return load_policy_set([*config.policies, *dirs], root=config.root, builtin_tests=False)

    run.complete(
        result.input,
        result.findings,
        decision=result.decision,
        reasons=[f.rule for f in result.reasons],
        policy_set=rules,
        undecided=result.undecided,
    )


def check_finished(result: RunResult, environment: str, fail_on: str, warn: Warn, started: float) -> None:
    """``check --env``: one run per pipeline checked, pass or fail against ``fail_on``."""
    from streamwarden.evaluate.findings import fails_run

    if not maybe_configured():
        return
    client: Any = None
    for ref in result.pipelines:
        doc = result.inputs.get(ref.name)
        if doc is None or "facts" not in doc:
            continue
        run = LineageRun("check", ref.name, environment, warn)
        run.started_s = started
        run.started = datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="milliseconds")
        run.closes = False
        if client is None:
            client = run.client()
            if client is None:
                return
        run._opened, run._client = True, client
        own = [f for f in result.findings if f.pipeline == ref.name]
        failing = [f.rule for f in own if fails_run(f, fail_on)]
        run.complete(
            doc,
            own,
            decision="fail" if failing else "pass",
            reasons=failing,
            policy_set=result.policy_set,
        )
    if client is not None:
        close(client, warn)


class _Builder:
    """The events of one run, with the client's classes (imported only here)."""

    def __init__(self, run: LineageRun, client: Any) -> None:
        from openlineage.client.uuid import generate_new_uuid

        self.run = run
        self.client = client
        self.run_id = str(generate_new_uuid(datetime.fromtimestamp(run.started_s, timezone.utc)))
        self.namespace = job_namespace()

    def _event(self, state: str, when: str, run_facets: dict[str, Any], job_facets: dict[str, Any], **kw: Any) -> Any:
        from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
        from openlineage.client.facet_v2 import job_type_job, processing_engine_run

        run_facets = {
            "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
                version=__version__, name="streamwarden", producer=PRODUCER
            ),
            **run_facets,
        }
        job_facets = {
            "jobType": job_type_job.JobTypeJobFacet(
                processingType="BATCH", integration=INTEGRATION, jobType=self.run.verb.upper(), producer=PRODUCER
            ),
            **job_facets,
        }
        return RunEvent(
            eventType=getattr(RunState, state),
            eventTime=when,
            run=Run(runId=self.run_id, facets=run_facets),
            job=Job(namespace=self.namespace, name=secrets.scrub(self.run.pipeline), facets=job_facets),
            producer=PRODUCER,
            **kw,
        )

    def start(self) -> Any:
        return self._event("START", self.run.started, {}, {})

    def fail(self, message: str) -> Any:
        from openlineage.client.facet_v2 import error_message_run

        facets = {
            "errorMessage": error_message_run.ErrorMessageRunFacet(
                message=message, programmingLanguage="PYTHON", producer=PRODUCER
            ),
            "streamwarden": _facet(self.run, None, [], None, None),
        }
        return self._event("FAIL", _now_iso(), facets, {})

    def complete(
        self,
        doc: Mapping[str, Any],
        findings: list[Finding],
        decision: str,
        reasons: list[str],
        rules: PolicySet | None,
        undecided: str | None,
    ) -> Any:
        from openlineage.client.event_v2 import InputDataset, OutputDataset
        from openlineage.client.facet_v2 import documentation_job, ownership_dataset, ownership_job

        contract = doc.get("contract") or {}
        facts = doc.get("facts") or {}
        meta = contract.get("metadata") or {}
        raw_owner = meta.get("owner")
        owner = raw_owner.strip() if isinstance(raw_owner, str) and raw_owner.strip() else None
        job_facets: dict[str, Any] = {}
        if owner:
            job_facets["ownership"] = ownership_job.OwnershipJobFacet(
                owners=[ownership_job.Owner(name=secrets.scrub(owner))], producer=PRODUCER
            )
        description = meta.get("description")
        if isinstance(description, str) and description.strip():
            job_facets["documentation"] = documentation_job.DocumentationJobFacet(
                description=secrets.cut(description, MESSAGE_LIMIT), contentType="text/plain", producer=PRODUCER
            )
        inputs = [
            InputDataset(namespace=s.dataset.namespace, name=s.dataset.name)
            for s in naming.sources(contract, facts)
            if s.dataset is not None
        ]
        outputs = []
        table = naming.table(contract, facts)
        if table is not None and table.dataset is not None:
            facets = _table_facets(table, findings, rules, doc)
            if owner:
                facets["ownership"] = ownership_dataset.OwnershipDatasetFacet(
                    owners=[ownership_dataset.Owner(name=secrets.scrub(owner))], producer=PRODUCER
                )
            outputs.append(OutputDataset(namespace=table.dataset.namespace, name=table.dataset.name, facets=facets))
        run_facets = {"streamwarden": _facet(self.run, decision, reasons, undecided, facts)}
        return self._event("COMPLETE", _now_iso(), run_facets, job_facets, inputs=inputs, outputs=outputs)


def _table_facets(
    table: naming.Table, findings: list[Finding], rules: PolicySet | None, doc: Mapping[str, Any]
) -> dict[str, Any]:
    from openlineage.client.facet_v2 import data_quality_assertions_dataset as dq
    from openlineage.client.facet_v2 import dataset_version_dataset, schema_dataset

    facets: dict[str, Any] = {}
    if table.fields:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(
            fields=[
                schema_dataset.SchemaDatasetFacetFields(
                    name=f["name"], type=f["type"] or None, description=f.get("description"), ordinal_position=i
                )
                for i, f in enumerate(table.fields, 1)
            ],
            producer=PRODUCER,
        )
    if table.snapshot_id is not None:
        facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(
            datasetVersion=str(table.snapshot_id), producer=PRODUCER
        )
    assertions = [
        dq.Assertion(
            assertion=rule,
            success=not failed,
            severity=_SEVERITY.get(severity, severity),
            name=rule,
            description=secrets.cut(title, MESSAGE_LIMIT) if title else None,
        )
        for rule, severity, title, failed in _assertions(findings, rules, doc)
    ]
    if assertions:
        # the spec files this facet under a dataset's input facets (a test reads what it asserts on);
        # the table is the pipeline's output here, so it rides on the output's facets, where lineage
        # backends index a dataset's facets by name (docs/openlineage.md)
        facets["dataQualityAssertions"] = dq.DataQualityAssertionsDatasetFacet(assertions=assertions, producer=PRODUCER)
    return facets


def _assertions(
    findings: list[Finding], rules: PolicySet | None, doc: Mapping[str, Any]
) -> list[tuple[str, str, str, bool]]:
    """One per rule evaluated on ``doc`` (the policy files the document selects, by their
    ``custom.requires``), plus any rule a finding names: (id, severity, title, failed). A rule
    failed when a finding of it counts (waived and baselined findings were accepted)."""
    failed = {f.rule for f in findings if f.counts}
    seen: dict[str, tuple[str, str]] = {}
    if rules is not None:
        for policy in rules.files_for(dict(doc)):
            for block in policy.metadata:
                custom = block.meta.get("custom") if isinstance(block.meta, Mapping) else None
                rid = custom.get("id") if isinstance(custom, Mapping) else None
                if rid and str(rid) in rules.rules:
                    d = rules.rules[str(rid)]
                    seen[d.id] = (d.severity, d.title)
    for f in findings:
        seen.setdefault(f.rule, (f.severity, f.title))
    return [(rid, sev, secrets.scrub(title), rid in failed) for rid, (sev, title) in sorted(seen.items())]


def _facet(
    run: LineageRun, decision: str | None, reasons: list[str], undecided: str | None, facts: Mapping[str, Any] | None
) -> Any:
    """The ``streamwarden`` run facet (its schema: contracts/schema/, FACET_SCHEMA)."""
    return _facet_class()(
        version=1,
        verb=run.verb,
        environment=secrets.scrub(run.environment) if run.environment else None,
        decision=decision,
        undecided=secrets.cut(undecided, MESSAGE_LIMIT) if undecided else None,
        reasons=[secrets.scrub(r) for r in reasons],
        restore_point=_restore_point(facts or {}),
        replay=_replay(facts or {}),
        rollback_target=_rollback_target(facts or {}),
        producer=PRODUCER,
    )


_FACET_CLASS: Any = None


def _facet_class() -> Any:
    """A ``RunFacet`` of the client's (attrs) with the fields of the shipped schema."""
    global _FACET_CLASS
    if _FACET_CLASS is None:
        import attr
        from openlineage.client.facet_v2 import RunFacet

        @attr.define
        class StreamwardenRunFacet(RunFacet):
            version: int
            verb: str
            environment: str | None
            decision: str | None
            undecided: str | None
            reasons: list[str]
            restore_point: dict[str, Any] | None
            replay: dict[str, Any] | None
            rollback_target: int | None

            @staticmethod
            def _get_schema() -> str:
                return FACET_SCHEMA_URL

        _FACET_CLASS = StreamwardenRunFacet
    return _FACET_CLASS


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _plan(facts: Mapping[str, Any]) -> Mapping[str, Any]:
    sp = facts.get("savepoint")
    plan = sp.get("table") if isinstance(sp, Mapping) else None
    return plan if isinstance(plan, Mapping) else {}


def _restore_point(facts: Mapping[str, Any]) -> dict[str, Any] | None:
    sp = facts.get("savepoint")
    if not isinstance(sp, Mapping) or not sp.get("configured"):
        return None
    match = _plan(facts).get("matching_snapshot")
    match = match if isinstance(match, Mapping) else {}
    location = sp.get("location")
    job = sp.get("job_id") or _plan(facts).get("job_id")
    return {
        "location": secrets.scrub(location) if isinstance(location, str) else None,
        "kind": sp.get("kind") if isinstance(sp.get("kind"), str) else None,
        "checkpoint_id": _int(sp.get("checkpoint_id")),
        "job_id": secrets.scrub(job) if isinstance(job, str) else None,
        "completed_ms": _int(sp.get("completed_ms")),
        "snapshot_id": _int(match.get("snapshot_id")),
        "snapshot_ms": _int(match.get("timestamp_ms")),
    }


def _replay(facts: Mapping[str, Any]) -> dict[str, Any] | None:
    replay = _plan(facts).get("replay")
    if not isinstance(replay, Mapping):
        return None
    return {
        "snapshots": _int(replay.get("snapshots")) or 0,
        **{
            k: _int(replay.get(k))
            for k in ("first_checkpoint_id", "last_checkpoint_id", "first_snapshot_id", "last_snapshot_id")
        },
    }


def _rollback_target(facts: Mapping[str, Any]) -> int | None:
    plan = _plan(facts)
    match = plan.get("matching_snapshot")
    if not plan.get("behind") or not isinstance(match, Mapping):
        return None
    return _int(match.get("snapshot_id"))
