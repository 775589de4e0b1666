"""Deployment facts: the effective Flink configuration of the files a contract names.

``job.deployment`` lists repository files relative to the contract's directory: Flink 2.x
``config.yaml``, legacy ``flink-conf.yaml``, Flink Kubernetes Operator manifests
(``FlinkDeployment`` / ``FlinkSessionJob``) and SQL scripts with ``SET`` lines. The result is the
``facts.deployment`` document of docs/facts-deployment.md (its "Shape" section).

Precedence (which value Flink gets when several places set a key):

1. Precedence classes, lowest first: ``flink-conf.yaml`` / ``config.yaml`` < a CR's
   ``spec.flinkConfiguration`` < CR fields the operator turns into configuration
   (``spec.job.allowNonRestoredState`` -> ``execution.state-recovery.ignore-unclaimed-state``,
   ``spec.job.parallelism`` -> ``parallelism.default``, ``spec.jobManager/taskManager.resource.memory``
   -> ``*.memory.process.size``; the operator sets them over ``flinkConfiguration``) < SQL
   ``SET`` lines (a SET applies to the job's session, the most specific place).
2. Within one class, files apply in the order ``job.deployment`` lists them, and within a file a
   later line overrides an earlier one (``RESET 'key'`` drops what earlier SQL ``SET``\\ s did).
3. This decides the value of each key *as written*. Then, as Flink's ``Configuration`` does, a
   2.x key wins over its deprecated aliases wherever they come from (the aliases in the order
   Flink falls back to them); when they disagree a ``conflicts`` entry says which one Flink uses.
4. A key left unset gets Flink's default (``"default": true``) for every option the policies read.

Values are normalized as streamwarden.flink.values parses them (a bare number as a duration is
milliseconds). A manifest with several Flink resources uses the one named after the contract's
job (``metadata.name``, or ``pipeline.name`` in its configuration), else the first, and records
a problem; a FlinkSessionJob brings the FlinkDeployment its ``deploymentName`` names when that is
in the same manifest (cluster first, job over it). ``spec.job.initialSavepointPath`` and
``upgradeMode`` stay under ``job`` only: the operator uses them for the first deployment and for
upgrades, not as the job's configuration.

Every effective value keeps its provenance: file (relative to the repository root), line, the
key as written and the raw text; values it replaced are listed under ``overridden``.

Failures: an entry naming a file that does not exist is listed under ``missing`` (its index in
``job.deployment``, the entry as written, the file); an entry naming a file that cannot be read
(invalid YAML with file:line, a path outside the repository, a file type streamwarden does not
read, a path that is not a regular file, a file too large) is listed under ``unreadable`` with the
reason. SW-FACT-001 reports each as an error at that entry of the contract, and the other files
are still read and judged: one broken file never hides the others. When none is left to read, the
source is unavailable (``{"available": false, "configured": true, "error": ...}``) with the same
lists. Values Flink would refuse, unknown keys and ambiguous manifests are facts of their own
(``problems``, ``unknown_keys``) that policies report (SW-DEPLOY-*).

Each file is read and parsed once per :class:`DeploymentGatherer` (cache by resolved path, checked
against the file's mtime and size); :func:`gather_deployment` shares one gatherer per root.

Why one module of this size: Flink's precedence is decided across every file a contract names at
once (defaults, config files, manifests, SQL ``SET``), so the merge, its provenance and the secret
masking stay in one place.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.core import secrets
from streamwarden.core.errors import StreamwardenError
from streamwarden.core.escape import shown_name
from streamwarden.core.paths import relative_posix, resolved
from streamwarden.core.runstate import current
from streamwarden.facts.source import available, not_configured, unavailable
from streamwarden.flink.config import (
    KeyInfo,
    KeyStatus,
    ValueType,
    explicit_defaults,
    lookup,
    matches_known,
    suggestion,
)
from streamwarden.flink.deployment_files import (
    KIND_CONF,
    KIND_SESSION_JOB,
    KIND_SQL,
    RANK_SQL,
    Assignment,
    ParsedFile,
    Problem,
    Resource,
    is_legacy_name,
    mapping,
    placeholder,
    placeholder_message,
    read_flink_conf,
    read_sql,
    read_yaml,
)
from streamwarden.flink.values import FlinkValueError
from streamwarden.yamlsafe.read import decode_utf8, read_text

_YAML_SUFFIXES = (".yaml", ".yml")
# a did-you-mean compares a key with every known key (about 2 ms): the first unknown keys of a file
# get one, which are more than a report shows of one rule in one file (findings.MAX_PER_RULE_FILE)
MAX_SUGGESTED = 100
# the errors Path.exists() and Path.is_file() answer False for (pathlib._IGNORED_ERRNOS)
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _stat(path: Path) -> os.stat_result | OSError | None:
    """``os.stat``; None where ``Path.exists()`` is False; the error where the system refuses the
    name otherwise (a name too long, a directory without permission): that file cannot be read."""
    try:
        return os.stat(path)
    except OSError as exc:
        if exc.errno not in _ABSENT:
            return exc
        return None
    except ValueError:  # an embedded NUL, as Path.exists()
        return None


@dataclass(slots=True)
class _Setting:
    """An assignment placed in the run: which file, in which order."""

    a: Assignment
    file: str
    kind: str
    seq: int
    value: Any = None
    error: str | None = None

    def parse(self, info: KeyInfo | None = None) -> None:
        """Normalize the value once; the result is kept on the (cached) assignment. A placeholder
        (``${VAR}``, ``{{ .Values.x }}``) is decided at deploy time: no value, no error. ``info``:
        the key's :func:`lookup`, when the caller has it."""
        if self.a.parsed is None and self.a.key is not None and placeholder(self.a.raw):
            self.a.placeholder = placeholder(self.a.raw)
            self.a.parsed = (None, None)
        if self.a.parsed is None:
            option = (info or lookup(self.a.key or "")).option
            read = self.a.raw if self.a.read_as is None else self.a.read_as  # what Flink gets
            try:
                self.a.parsed = (read if option is None else option.parse(read), None)
            except FlinkValueError as exc:
                error = str(exc)
                if self.a.read_as is not None:
                    error += (
                        f" (the file writes {self.a.raw}, which {self.a.read_by or 'Flink reads as'}: "
                        f"{self.a.read_as}; quote the value to keep it as text)"
                    )
                if self.kind == KIND_CONF and isinstance(self.a.raw, str) and self.a.raw[:1] in ("'", '"'):
                    error += (
                        "; Flink 1.x reads flink-conf.yaml line by line and keeps the quotes as part of the value: "
                        "remove them"
                    )
                self.a.parsed = (None, error)
        self.value, self.error = self.a.parsed

    def provenance(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": self.value,
            "raw": self.a.raw,
            "key": self.a.written,
            "file": self.file,
            "line": self.a.line,
            "kind": self.kind,
            "default": self.a.default,
        }
        if self.error:
            out["error"] = self.error
        if self.a.placeholder:
            out["placeholder"] = self.a.placeholder
        return out


@dataclass(frozen=True)
class _SqlJob:
    """A SQL statement that submits a job; it sees the settings whose ``seq`` is below ``threshold``."""

    file: str
    line: int
    kind: str
    threshold: int


_JOB_WORDS = {
    "insert": "INSERT",
    "statement-set": "statement set",
    "plan": "EXECUTE PLAN",
    "create-table-as": "CREATE TABLE AS",
    "query": "query",
}


def _after_last_job(s: _Setting, last: _SqlJob) -> dict[str, Any]:
    what = ("RESET " + s.a.written if s.a.key else "RESET") if s.a.reset else f"SET {s.a.written}"
    item: dict[str, Any] = {
        "file": s.file,
        "line": s.a.line,
        "code": "set-after-last-job",
        "severity": "warning",
        "message": (
            f"{what} comes after the last job of the script ({_JOB_WORDS[last.kind]} at {last.file}:{last.line}): "
            "a SET applies only to the statements after it, so this one applies to nothing; move it before the "
            "job it is meant for"
        ),
    }
    if s.a.key:
        item["key"] = s.a.key
    if s.a.raw is not None:
        item["raw"] = s.a.raw
    return item


def _view_name(config: dict[str, Any]) -> str | None:
    entry = config.get("pipeline.name")
    if isinstance(entry, dict) and not entry.get("default") and isinstance(entry.get("value"), str):
        return str(entry["value"])
    return None


def _extend_unique(out: list[Any], items: list[Any]) -> None:
    have = [json.dumps(x, sort_keys=True, default=str) for x in out]
    for item in items:
        text = json.dumps(item, sort_keys=True, default=str)
        if text not in have:
            have.append(text)
            out.append(item)


class DeploymentGatherer:
    """Gathers ``facts.deployment`` for many contracts of one repository, reading each file once."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        # resolved path -> (mtime and size when read, what was read): a file edited since is read again
        self._cache: dict[Path, tuple[tuple[int, int] | None, ParsedFile | StreamwardenError]] = {}

    def gather(
        self,
        contract: dict[str, Any],
        contract_file: Path,
        known_keys: tuple[str, ...] = (),
        directory: Path | None = None,
    ) -> dict[str, Any]:
        """``directory``: the entries are relative to it (an absolute, resolved directory), not to
        the contract file's, and every file they name must lie in the repository."""
        job = mapping(contract.get("job"))
        entries = job.get("deployment")
        if entries is None or entries == [] or entries == "":
            return not_configured()
        if isinstance(entries, str):
            entries = [entries]
        # each directory resolved once per run, not per file
        base = directory if directory is not None else resolved(contract_file).parent
        # a contract in the repository names files in it
        confined = directory is not None or relative_posix(base, self.root) is not None
        loaded: list[tuple[str, ParsedFile]] = []
        missing: list[dict[str, Any]] = []
        unreadable: list[dict[str, Any]] = []
        for index, entry in enumerate(entries if isinstance(entries, list) else [entries]):
            shown_entry = entry if isinstance(entry, str) else repr(entry)

            def cannot(file: str, error: str, index: int = index, shown_entry: str = shown_entry) -> None:
                unreadable.append({"index": index, "entry": shown_entry, "file": file, "error": error})

            if not isinstance(entry, str) or not entry.strip():
                cannot(shown_entry, f"{shown_entry} is not a file path")
                continue
            target = resolved(base / entry)
            display = self._display(target, entry)
            if confined and relative_posix(target, self.root) is None:
                cannot(entry, f"{entry} is outside the repository; deployment files must live in the repository")
                continue
            st = _stat(target)  # one stat: Path.exists and Path.is_file, and the cache's signature
            if st is None:  # a broken symlink too
                missing.append({"index": index, "entry": entry, "file": display})
                continue
            if isinstance(st, OSError):
                cannot(display, f"{display}: cannot read: {st.strerror or st}")
                continue
            if not stat.S_ISREG(st.st_mode):
                cannot(display, f"{display} is not a regular file (a directory or a device); name a file")
                continue
            result = self._load(target, display, (st.st_mtime_ns, st.st_size))
            if isinstance(result, StreamwardenError):
                where = result.where()
                cannot(display, f"{where}: {result.message}" if where else f"{display}: {result.message}")
            else:
                loaded.append((display, result))
        gaps: dict[str, Any] = {}
        if missing:
            gaps["missing"] = missing
        if unreadable:
            gaps["unreadable"] = unreadable
        if not loaded:  # nothing left to read: SW-FACT-001 reports each entry at its place
            failed = [f"{m['file']}: file does not exist" for m in missing] + [u["error"] for u in unreadable]
            return unavailable("; ".join(failed), **gaps)
        return {**_Builder(contract, job, known_keys).build(loaded), **gaps}

    def _display(self, resolved: Path, entry: str) -> str:
        rel = relative_posix(resolved, self.root)  # resolved paths: compared as strings
        if rel is not None:  # a directory name that is not UTF-8 is shown escaped
            return shown_name(rel)
        return entry

    def _load(self, resolved: Path, shown: str, signature: tuple[int, int]) -> ParsedFile | StreamwardenError:
        """The file as read; ``signature``: its (mtime, size), from the caller's stat."""
        cached = self._cache.get(resolved)
        if cached is not None and cached[0] == signature:
            return cached[1]
        result: ParsedFile | StreamwardenError
        try:
            result = self._read(resolved, shown)
        except StreamwardenError as exc:
            result = exc
        self._cache[resolved] = (signature, result)
        return result

    def _read(self, resolved: Path, shown: str) -> ParsedFile:
        suffix = resolved.suffix.lower()
        if suffix not in _YAML_SUFFIXES and suffix != ".sql":
            if not resolved.exists():
                raise StreamwardenError("file does not exist", file=shown)
            raise StreamwardenError(
                "is not a deployment file streamwarden can read (expected .yaml, .yml or .sql)", file=shown
            )
        # a file discovery read already (beside the contracts) is not read again
        raw = current().get(os.fspath(resolved))
        text = decode_utf8(raw, shown) if raw is not None else read_text(resolved, shown)
        if suffix == ".sql":
            return _masked(read_sql(text))
        if is_legacy_name(shown):
            return _masked(read_flink_conf(text))
        return _masked(read_yaml(text, shown))


def _masked(parsed: ParsedFile) -> ParsedFile:
    """The file as read, with no secret left in it (``secrets.mask_setting``): the value of a key
    named like a secret (``s3.secret-key``, ``security.ssl.keystore-password``,
    ``properties.sasl.jaas.config``) is ``***``, and a secret inside another value (a JVM option's
    ``-Djavax.net.ssl.trustStorePassword=...``, a URL's ``?secretKey=...`` or ``user:password@``)
    is masked in it. Done once, where the file is read: no fact, finding, ``facts`` output or
    contract ``init`` writes can show them. A key Flink types (a duration, a size, a flag) keeps
    its value, so that it parses as Flink would; only secrets written into it are masked."""
    for a in _all_assignments(parsed):
        _mask_assignment(a)
    for p in [*parsed.problems, *(q for r in parsed.resources for q in r.problems)]:
        p.message = secrets.scrub(p.message)
        if p.raw is not None:
            p.raw = secrets.mask_setting(p.key or "", p.raw)
    return parsed


def _all_assignments(parsed: ParsedFile) -> list[Assignment]:
    out = list(parsed.assignments)
    for r in parsed.resources:
        out += r.assignments
        out += r.job.values()
    return out


def _mask_assignment(a: Assignment) -> None:
    option = lookup(a.key).option if a.key else None
    typed = option is not None and option.type not in (ValueType.STRING, ValueType.MAP)
    secret = not typed and any(secrets.secret_name(n) for n in (a.key, a.written) if n)
    a.raw = _shown(a.raw, secret)
    if a.parsed is not None:
        value, error = a.parsed
        a.parsed = (_shown(value, secret), secrets.scrub(error) if error else error)


def _shown(value: Any, secret: bool) -> Any:
    """``value`` as it may be shown: all of it masked when its key names a secret; else the
    secrets in it (a mapping's values by their own keys)."""
    if value is None or isinstance(value, bool):
        return value
    if secret:
        return secrets.MASK
    if isinstance(value, str):
        return secrets.scrub(value, strict=True)
    if isinstance(value, dict):
        return {k: secrets.mask_setting(str(k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v, False) for v in value]
    return value


def gather_named_deployment(
    data: dict[str, Any], directory: Path, root: Path, known_keys: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``facts.deployment`` of a contract's data whose ``job.deployment`` entries are relative to
    ``directory`` (a resolved directory in the repository), not to the contract's file, and must
    lie in the repository: in a pull request, the files the base's contract names
    (``BaseSnapshot.named_deployment``)."""
    return gather_deployment(data, directory, root, known_keys=known_keys, directory=directory)


def gather_deployment(
    contract: dict[str, Any],
    contract_file: Path,
    root: Path,
    gatherer: DeploymentGatherer | None = None,
    known_keys: tuple[str, ...] = (),
    directory: Path | None = None,
) -> dict[str, Any]:
    """``facts.deployment`` for one contract; ``known_keys`` are the repository's own keys
    (``flink.known_keys`` of streamwarden.yaml), never reported as unknown; ``directory``: where
    the entries are relative to, when not the contract file's (:meth:`DeploymentGatherer.gather`).

    Without ``gatherer``, the run's one per repository root is used (core/runstate.py), so a run
    over many contracts parses each file once (a file changed on disk since is read again).
    """
    if gatherer is None:
        key = resolved(root)
        gatherer = current().shared(f"deployment:{key}", lambda: DeploymentGatherer(key))
    return gatherer.gather(contract, contract_file, known_keys, directory)


def _names(contract: dict[str, Any], job: dict[str, Any]) -> set[str]:
    meta = mapping(contract.get("metadata"))
    return {str(n) for n in (job.get("name"), meta.get("name")) if n}


class _Builder:
    def __init__(self, contract: dict[str, Any], job: dict[str, Any], known_keys: tuple[str, ...] = ()) -> None:
        self.known_keys = known_keys
        self.names = _names(contract, job)
        self.job_name = job.get("name")
        self.settings: list[_Setting] = []
        self.files: list[dict[str, Any]] = []
        self.problems: list[dict[str, Any]] = []
        self.job: dict[str, Any] = {}
        self.anchor: dict[str, Any] | None = None
        self.fallback_anchor: dict[str, Any] | None = None
        self.sql_jobs: list[_SqlJob] = []

    def build(self, loaded: list[tuple[str, ParsedFile]]) -> dict[str, Any]:
        for display, parsed in loaded:
            self._add_file(display, parsed)
        self._legacy_files_under_flink_2()
        anchor = self.anchor or self.fallback_anchor or {"file": loaded[0][0], "line": 1}
        if not self.sql_jobs:
            config, conflicts = _effective(self.settings, self.problems)
            unknown = _unknown_keys(self.settings, self.known_keys)
            jobs: list[dict[str, Any]] = []
        else:
            config, conflicts, unknown, jobs = self._by_job()
        return available(
            files=self.files,
            anchor=anchor,
            config=config,
            job=self.job,
            jobs=jobs,
            conflicts=conflicts,
            unknown_keys=unknown,
            problems=self.problems,
        )

    def _by_job(self) -> tuple[dict[str, Any], list[Any], list[Any], list[dict[str, Any]]]:
        """SQL scripts with jobs: each job sees the configuration files and the SQL settings of the
        statements before it (the SQL files in the order job.deployment lists them, as one session);
        a SET or RESET after the last job applies to nothing and is reported. The jobs this
        contract's job is (``pipeline.name`` among its names; every job when none is) are judged,
        each on its own configuration; ``config`` is the first one's."""
        last = self.sql_jobs[-1]
        for s in self.settings:
            if s.a.rank == RANK_SQL and s.seq >= last.threshold:
                self.problems.append(_after_last_job(s, last))
        views: list[tuple[_SqlJob, dict[str, Any], list[Any], list[dict[str, Any]], list[_Setting]]] = []
        for job in self.sql_jobs:
            seen = [s for s in self.settings if s.a.rank != RANK_SQL or s.seq < job.threshold]
            problems: list[dict[str, Any]] = []
            config, conflicts = _effective(seen, problems)
            views.append((job, config, conflicts, problems, seen))
        names = [_view_name(config) for _, config, _, _, _ in views]
        chosen = [i for i, name in enumerate(names) if name in self.names] or list(range(len(views)))
        jobs: list[dict[str, Any]] = []
        for i, (job, config, _, _, _) in enumerate(views):
            entry: dict[str, Any] = {"file": job.file, "line": job.line, "kind": job.kind, "name": names[i]}
            jobs.append({**entry, "selected": i in chosen, "config": config})
        conflicts_out: list[Any] = []
        judged: list[_Setting] = []
        for i in chosen:
            _, _, conflicts, problems, seen = views[i]
            _extend_unique(conflicts_out, conflicts)
            _extend_unique(self.problems, problems)
            judged.extend(seen)
        judged.extend(s for s in self.settings if s.a.rank == RANK_SQL and s.seq >= last.threshold)
        unknown = _unknown_keys(sorted({s.seq: s for s in judged}.values(), key=lambda s: s.seq), self.known_keys)
        return views[chosen[0]][1], conflicts_out, unknown, jobs

    def _legacy_files_under_flink_2(self) -> None:
        """A resource that runs Flink 2.x (``flinkVersion: v2_*``) never reads a legacy
        ``flink-conf.yaml``: Flink 2 loads ``config.yaml`` only. Its settings are not applied, and
        each such file is an error (SW-DEPLOY-004) naming the version and where it is set."""
        version = self.job.get("flink_version") or {}
        value = version.get("value")
        if not isinstance(value, str) or not re.match(r"(?i)v?2[_.]", value.strip()):
            return
        legacy = sorted({s.file for s in self.settings if s.kind == KIND_CONF})
        if not legacy:
            return
        self.settings = [s for s in self.settings if s.kind != KIND_CONF]
        for display in legacy:
            self.problems.append(
                {
                    "file": display,
                    "line": 1,
                    "message": (
                        f"{display} is a legacy flink-conf.yaml, and the job runs Flink {value} "
                        f"(flinkVersion, {version.get('file')}:{version.get('line')}), which reads config.yaml only: "
                        "none of its settings are applied; move them to config.yaml in Flink 2's format "
                        "(or into the resource's flinkConfiguration)"
                    ),
                    "code": "legacy-config-ignored",
                    "severity": "error",
                }
            )

    def _add_file(self, display: str, parsed: ParsedFile) -> None:
        entry: dict[str, Any] = {"file": display, "kind": parsed.kind}
        self._problems(display, parsed.problems)
        assignments = list(parsed.assignments)
        if parsed.resources:
            chosen = self._choose(display, parsed.resources)
            entry["resources"] = [f"{r.api_kind}/{r.name}" for r in chosen]
            for res in chosen:
                self._problems(display, res.problems)
                assignments.extend(res.assignments)
                for fact, a in res.job.items():
                    s = _Setting(a, display, res.kind, 0)
                    s.parse()
                    self.job[fact] = s.provenance()
            if self.anchor is None:
                self.anchor = {"file": display, "line": chosen[-1].anchor_line}
        elif parsed.kind != KIND_SQL and self.fallback_anchor is None:
            self.fallback_anchor = {"file": display, "line": 1}
        self.files.append(entry)
        before = len(self.settings)
        for job in parsed.jobs:  # a job sees the SQL settings of the statements before it
            preceding = sum(1 for a in assignments if a.order is not None and a.order < job.order)
            self.sql_jobs.append(_SqlJob(display, job.line, job.kind, before + preceding))
        for a in assignments:
            self.settings.append(_Setting(a, display, parsed.kind, len(self.settings)))

    def _problems(self, display: str, problems: list[Problem]) -> None:
        for p in problems:
            item: dict[str, Any] = {
                "file": display,
                "line": p.line,
                "message": p.message,
                "code": p.code,
                "severity": p.severity,
            }
            if p.key:
                item["key"] = p.key
            if p.raw is not None:
                item["raw"] = p.raw
            self.problems.append(item)

    def _choose(self, display: str, resources: list[Resource]) -> list[Resource]:
        """The resource for this job; a FlinkSessionJob brings the FlinkDeployment it runs on."""
        if len(resources) == 1:
            return resources
        matching = [r for r in resources if r.name in self.names or r.pipeline_name in self.names]
        jobs = [r for r in matching if r.kind == KIND_SESSION_JOB] or matching
        chosen = jobs[0] if jobs else resources[0]
        picked = [chosen]
        cluster = [r for r in resources if r.kind == "flink-deployment" and r.name == chosen.deployment_name]
        if chosen.deployment_name and cluster:
            picked = [cluster[0], chosen]
        rest = [r for r in resources if r not in picked]
        if rest:
            why = "its name matches the contract's job" if jobs else f"the first; none is named {self.job_name!r}"
            listed = ", ".join(
                f"{r.api_kind} {r.name} ({'namespace ' + r.namespace + ', ' if r.namespace else ''}line {r.line})"
                for r in resources
            )
            self.problems.append(
                {
                    "file": display,
                    "line": rest[0].line,
                    "code": "several-resources",
                    "severity": "warning",
                    "message": f"{len(resources)} Flink resources in one manifest ({listed}); using "
                    f"{chosen.api_kind} {chosen.name} ({why}) and ignoring the others",
                }
            )
        return picked


def _unknown_keys(settings: list[_Setting], known_keys: tuple[str, ...]) -> list[Any]:
    """Each line that sets a key Flink does not know (RESETs included), with a did-you-mean for the
    first ``MAX_SUGGESTED`` of each file (a did-you-mean compares the key with every known one)."""
    unknown: list[dict[str, Any]] = []
    seen_unknown: set[tuple[str, str, int]] = set()
    suggested: dict[str, int] = {}  # file -> unknown keys given a did-you-mean
    for s in settings:
        if s.a.key is None:
            continue
        info = lookup(s.a.key)
        if (
            info.status is KeyStatus.UNKNOWN
            and (s.a.key, s.file, s.a.line) not in seen_unknown
            and not matches_known(s.a.key, known_keys)
        ):
            seen_unknown.add((s.a.key, s.file, s.a.line))
            item: dict[str, Any] = {"key": s.a.key, "file": s.file, "line": s.a.line}
            if suggested.get(s.file, 0) < MAX_SUGGESTED:
                suggested[s.file] = suggested.get(s.file, 0) + 1
                guess = suggestion(s.a.key)
                if guess:
                    item["suggestion"] = guess
            unknown.append(item)
    return unknown


def _effective(settings: list[_Setting], problems: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    """The effective configuration of ``settings`` (Flink's default for each option the policies
    read and the repository leaves unset), and the alias conflicts; value problems go to ``problems``."""
    live: list[_Setting] = []
    for s in settings:  # RESET drops earlier SQL SETs (of one key, or of all keys)
        if s.a.reset:
            live = [x for x in live if not (x.a.rank == RANK_SQL and (s.a.key is None or x.a.key == s.a.key))]
        else:
            live.append(s)
    by_key: dict[str, list[_Setting]] = {}
    for s in live:
        by_key.setdefault(s.a.key or "", []).append(s)
    winners: dict[str, _Setting] = {}
    overridden: dict[str, list[_Setting]] = {}
    for key, group in by_key.items():
        ordered = sorted(group, key=lambda x: (x.a.rank, x.seq))
        winners[key], overridden[key] = ordered[-1], ordered[:-1]

    config: dict[str, Any] = {}
    conflicts: list[dict[str, Any]] = []
    groups: dict[str, list[str]] = {}
    infos: dict[str, KeyInfo] = {}  # each key classified once (lookup's cache holds 4,096)
    for key in winners:
        info = infos.get(key) or infos.setdefault(key, lookup(key))
        groups.setdefault(info.canonical, []).append(key)
    for canonical, keys in groups.items():
        info = infos.get(canonical) or lookup(canonical)
        order = [info.option.key, *info.option.aliases] if info.option else keys
        present = [k for k in order if k in winners]
        chosen = winners[present[0]]
        chosen.parse(infos.get(present[0]))
        entry = chosen.provenance()
        if overridden[present[0]]:
            entry["overridden"] = [
                {"file": o.file, "line": o.a.line, "key": o.a.written, "raw": o.a.raw} for o in overridden[present[0]]
            ]
        config[canonical] = entry
        if chosen.a.placeholder and info.option is not None:  # a key the rules read: say it is not judged
            problems.append(
                {
                    "file": chosen.file,
                    "line": chosen.a.line,
                    "code": "placeholder",
                    "severity": "info",
                    "key": canonical,
                    "raw": chosen.a.raw,
                    "message": placeholder_message(chosen.a.written, chosen.a.placeholder, chosen.a.line),
                }
            )
        if chosen.error:
            problems.append(
                {
                    "file": chosen.file,
                    "line": chosen.a.line,
                    "code": "invalid-value",
                    "severity": "error",
                    "key": canonical,
                    "raw": chosen.a.raw,
                    "message": f"{chosen.a.written}: {chosen.error}",
                }
            )
        for other_key in present[1:]:
            other = winners[other_key]
            other.parse()
            same = (other.value == chosen.value) if not (other.error or chosen.error) else other.a.raw == chosen.a.raw
            if not same:
                conflicts.append(
                    {
                        "key": canonical,
                        "alias": other.a.written,
                        "value": chosen.value,
                        "alias_value": other.value,
                        "raw": chosen.a.raw,
                        "alias_raw": other.a.raw,
                        "file": chosen.file,
                        "line": chosen.a.line,
                        "alias_file": other.file,
                        "alias_line": other.a.line,
                        "wins": chosen.a.written,
                        # why Flink takes it: the 2.x key always beats its deprecated aliases;
                        # among aliases alone, Flink's fallback order decides
                        "wins_by": "2.x-key" if present[0] == canonical else "fallback-order",
                    }
                )
    for option in explicit_defaults():
        if option.key not in config:
            config[option.key] = {
                "value": option.default,
                "raw": None,
                "key": option.key,
                "file": None,
                "line": None,
                "kind": None,
                "default": True,
            }
    return config, conflicts
