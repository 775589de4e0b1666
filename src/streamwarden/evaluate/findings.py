"""The finding model: one broken promise, with its rule, severity, location and fingerprint."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from streamwarden.core import exitcodes
from streamwarden.core.secrets import cut, scrub, scrub_tree

if TYPE_CHECKING:
    from streamwarden.engine.policyset import PolicySet

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
_PATH_TOKEN = re.compile(r'\.?([A-Za-z0-9_\-]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


@dataclass
class Finding:
    pipeline: str
    rule: str
    severity: str
    title: str
    message: str
    file: str | None
    line: int | None
    path: str
    source: str = "contract"
    remediation: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    fingerprint: str = ""
    waived: bool = False
    waiver: dict[str, Any] | None = None
    # in the --baseline file: an existing finding the repository adopted the tool with
    baselined: bool = False
    # the offending value (what the fingerprint is made from); not part of the JSON output
    value: Any = field(default=None, repr=False, compare=False)
    # a finding that stands for the findings of its rule in its file a report does not list (see
    # :func:`cap`): how many, by what they count as (``findings``, ``errors``, ``warnings``,
    # ``infos``, ``waived``, ``baselined``)
    more: dict[str, int] | None = None

    def __post_init__(self) -> None:
        # METADATA block scalars keep the policy file's line breaks: every format gets sentences
        self.remediation = unwrap(self.remediation)

    @property
    def counts(self) -> bool:
        """Whether it counts towards errors/warnings and the exit code."""
        return not self.waived and not self.baselined

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.file or "", self.line or 0, self.rule, self.path)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "pipeline": self.pipeline,
            "rule": self.rule,
            "severity": self.severity,
            "title": self.title,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "path": self.path,
            "source": self.source,
            "remediation": self.remediation,
            "evidence": self.evidence,
            "fingerprint": self.fingerprint,
            "waived": self.waived,
        }
        if self.waiver is not None:
            d["waiver"] = self.waiver
        if self.baselined:
            d["baselined"] = True
        if self.more is not None:
            d["more"] = dict(self.more)
        return d


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


@functools.lru_cache(maxsize=1024)  # a run's remediations are its rules' few texts, each seen many times
def unwrap(text: str) -> str:
    """METADATA prose as sentences: the lines of each paragraph joined with spaces (a YAML ``|``
    block keeps the policy file's hard wraps), paragraphs and list items kept on lines of their
    own, no trailing newline."""
    if not text or "\n" not in text:
        return text.strip() if text else text
    paragraphs: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines: list[str] = []
        for raw in block.splitlines():
            line = raw.strip()
            if lines and not _LIST_ITEM.match(raw):
                lines[-1] += " " + line
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def fingerprint(pipeline: str, rule: str, path: str, value: Any) -> str:
    """Stable across unrelated edits: pipeline, rule, path and the offending value; never lines."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256("\x1f".join([pipeline, rule, path, canonical]).encode("utf-8")).hexdigest()
    return digest[:16]


def split_path(path: str) -> list[str | int]:
    """``state.operators[1].ttl`` -> ["state", "operators", 1, "ttl"]."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if not m or m.end() == pos:
            break
        if m.group(1) is not None:
            parts.append(m.group(1))
        elif m.group(2) is not None:
            parts.append(int(m.group(2)))
        else:
            parts.append(m.group(3).replace('\\"', '"').replace("\\\\", "\\"))
        pos = m.end()
    return parts


def value_at(doc: Any, path: str) -> Any:
    node = doc
    for part in split_path(path):
        in_list = isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node)
        in_dict = isinstance(part, str) and isinstance(node, dict) and part in node
        if not (in_list or in_dict):
            return None
        node = node[part]
    return node


class Subject(Protocol):
    """What a finding is located against: a contract, or a stand-in for a removed pipeline."""

    @property
    def name(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...
    def line_of(self, path: str) -> int | None: ...


def to_finding(policy_set: PolicySet, package: str, rule_set: str, element: Any, subject: Subject) -> Finding:
    """One element of a rule set (``deny``/``warn``/``info``) as a Finding: the element is checked
    (an object with a string ``rule`` and ``message``; a custom package may not use the reserved
    ``SW-`` prefix), its severity comes from the element, the rule's METADATA or the rule set, its
    location from the element (``file``/``line``) or the subject's line of ``path``, and its
    fingerprint from pipeline, rule, path and the offending value. Its message and evidence quote
    contract values (and facts): they are scrubbed of credentials here, once, for every report and
    the result cache (``secrets.scrub``: a ``user:password@`` in a checkpoint URL, a
    ``password=`` pair, a configured secret)."""
    from streamwarden.core.errors import PolicyError
    from streamwarden.engine.policyset import RESERVED_PREFIX, SET_SEVERITY

    if (
        not isinstance(element, dict)
        or not isinstance(element.get("rule"), str)
        or not isinstance(element.get("message"), str)
    ):
        files = ", ".join(policy_set.package_files(package))
        raise PolicyError(
            f"data.{package}.{rule_set} produced {cut(str(element), 80)!r}: each element must be an object "
            'with a string "rule" id and a string "message"',
            file=files or None,
            hint='e.g. deny contains {"rule": "ACME-001", "message": "...", "path": "checkpoint.interval"} if { ... }',
        )
    rule = element["rule"]
    if rule.startswith(RESERVED_PREFIX) and policy_set.is_custom_package(package):
        files = ", ".join(policy_set.package_files(package))
        raise PolicyError(
            f"custom policy package {package} emits rule id {rule}: ids starting with {RESERVED_PREFIX} are reserved",
            file=files or None,
            hint="give custom rules ids of your own, e.g. ACME-001",
        )
    desc = policy_set.rules.get(rule)
    severity = element.get("severity") or (desc.severity if desc else SET_SEVERITY.get(rule_set, "error"))
    if severity not in ("error", "warning", "info"):
        severity = SET_SEVERITY.get(rule_set, "error")
    path: str = element["path"] if isinstance(element.get("path"), str) else ""
    source: str = element["source"] if isinstance(element.get("source"), str) else "contract"
    if isinstance(element.get("file"), str):
        file: str | None = element["file"]
        line = element.get("line") if isinstance(element.get("line"), int) else None
    else:
        file = subject.file
        line = subject.line_of(path)
    value = element["value"] if "value" in element else value_at(subject.data, path)
    evidence: dict[str, Any] = scrub_tree(element["evidence"]) if isinstance(element.get("evidence"), dict) else {}
    return Finding(
        pipeline=subject.name,
        rule=rule,
        severity=severity,
        title=desc.title if desc else rule,
        message=scrub(element["message"]),
        file=file,
        line=line,
        path=path,
        source=source,
        remediation=desc.remediation if desc else "",
        evidence=evidence,
        fingerprint=fingerprint(subject.name, rule, path, value),
        value=value,
    )


def tally(findings: list[Finding]) -> dict[str, int]:
    """How many findings count as what: a waived finding as waived only, a baselined one (not
    waived) as baselined only, every other one by its severity (``errors``, ``warnings``,
    ``infos``); a finding that stands for others (:func:`cap`) as the findings it stands for."""
    out = {"errors": 0, "warnings": 0, "infos": 0, "waived": 0, "baselined": 0}
    for f in findings:
        if f.more is not None:
            for k in out:
                out[k] += f.more.get(k, 0)
        elif f.waived:
            out["waived"] += 1
        elif f.baselined:
            out["baselined"] += 1
        elif f.severity in _PLURAL:
            out[_PLURAL[f.severity]] += 1
    return out


_PLURAL = {"error": "errors", "warning": "warnings", "info": "infos"}


def summarize(findings: list[Finding], pipelines: list[str]) -> dict[str, int]:
    """The report's counts (:func:`tally`) and how many pipelines passed (none of their findings is
    a counting error or warning). One pass (a warm pull request's report has thousands of findings)."""
    errors = warnings = infos = waived = baselined = 0
    failing: set[str] = set()
    for f in findings:
        if f.more is not None:
            more = f.more
            errors, warnings, infos = errors + more["errors"], warnings + more["warnings"], infos + more["infos"]
            waived, baselined = waived + more["waived"], baselined + more["baselined"]
            if more["errors"] or more["warnings"]:
                failing.add(f.pipeline)
        elif f.waived:
            waived += 1
        elif f.baselined:
            baselined += 1
        elif f.severity == "error":
            errors += 1
            failing.add(f.pipeline)
        elif f.severity == "warning":
            warnings += 1
            failing.add(f.pipeline)
        elif f.severity == "info":
            infos += 1
    return {
        "pipelines": len(pipelines),
        "errors": errors,
        "warnings": warnings,
        "infos": infos,
        "waived": waived,
        "baselined": baselined,
        "passed": sum(1 for p in pipelines if p not in failing),
    }


def exit_code(findings: list[Finding], fail_on: str, input_errors: int = 0) -> int:
    """``check``'s exit code (core/exitcodes.py): unusable input, else findings at/above fail_on."""
    return exitcodes.exit_code(unusable=input_errors > 0, failed=any(fails_run(f, fail_on) for f in findings))


def fails_run(finding: Finding, fail_on: str) -> bool:
    """Whether this finding alone fails the run: it counts (not waived, not baselined) and its
    severity is at or above ``fail_on`` (``never``: nothing fails). Reporters that mark failures
    (JUnit) ask this, so a report is red exactly when the exit code is 1."""
    if fail_on == "never":
        return False
    if finding.more is not None:  # the findings it stands for
        return finding.more["errors"] > 0 or (fail_on == "warning" and finding.more["warnings"] > 0)
    if not finding.counts:
        return False
    threshold = SEVERITY_ORDER["warning" if fail_on == "warning" else "error"]
    return SEVERITY_ORDER.get(finding.severity, 9) <= threshold


MAX_PER_RULE_FILE = 20  # the findings of one rule in one file a report lists


def cap(findings: list[Finding], limit: int = MAX_PER_RULE_FILE) -> list[Finding]:
    """The findings a report lists: at most ``limit`` of one rule in one file of one pipeline, and
    for the rest of them one finding that counts them (``more``). The ones listed are those that
    count before baselined and waived ones, the most severe first, then in report order; the
    counting finding follows the last of them. Waivers and the baseline apply to every finding
    before (each has its own fingerprint): the counts, the summary and the exit code come out the
    same from the capped list as from the whole one (:func:`tally`, :func:`fails_run`)."""
    groups: dict[tuple[str, str, str | None], list[int]] = {}
    for i, f in enumerate(findings):
        groups.setdefault((f.pipeline, f.rule, f.file), []).append(i)
    if all(len(g) <= limit for g in groups.values()):
        return findings
    hidden: set[int] = set()
    after: dict[int, Finding] = {}
    for indexes in groups.values():
        if len(indexes) <= limit:
            continue
        ranked = sorted(indexes, key=lambda i: (_state(findings[i]), SEVERITY_ORDER.get(findings[i].severity, 9), i))
        rest = sorted(ranked[limit:])
        hidden.update(rest)
        after[max(ranked[:limit])] = _standing_for([findings[i] for i in rest], limit)
    out: list[Finding] = []
    for i, f in enumerate(findings):
        if i not in hidden:
            out.append(f)
        if i in after:
            out.append(after[i])
    return out


def _state(f: Finding) -> int:
    return 2 if f.waived else 1 if f.baselined else 0


def _standing_for(rest: list[Finding], limit: int) -> Finding:
    """One finding for ``rest``, the findings of one rule in one file a report does not list."""
    first = rest[0]
    counts = tally(rest)
    more = {"findings": len(rest), **counts}
    counting = [f for f in rest if f.counts] or rest
    severity = min((f.severity for f in counting), key=lambda s: SEVERITY_ORDER.get(s, 9))
    parts = [f"{n:,} {k if n != 1 else k[:-1]}" for k, n in counts.items() if n]
    lines = [f.line for f in rest if f.line]
    where = f"{first.file}" + (f" (lines {min(lines)} to {max(lines)})" if len(lines) > 1 else "")
    rule = first.rule
    message = (
        f"{len(rest):,} more {rule} finding{'s' if len(rest) != 1 else ''} in {where} not listed "
        f"({', '.join(parts)}): a report lists at most {limit} findings of one rule in one file. They count "
        "in the summary and the exit code as the listed ones do; fix those listed and run the check again"
    )
    waived = all(f.waived for f in rest)
    return Finding(
        pipeline=first.pipeline,
        rule=rule,
        severity=severity,
        title=first.title,
        message=message,
        file=first.file,
        line=min(lines) if lines else first.line,
        path="",
        source=first.source,
        remediation=first.remediation,
        evidence={},
        fingerprint=fingerprint(first.pipeline, rule, "", {"more_in": first.file}),
        waived=waived,
        waiver=first.waiver if waived else None,
        baselined=not waived and all(f.waived or f.baselined for f in rest),
        more=more,
    )
