"""``--format sarif``: SARIF 2.1.0 as GitHub code scanning ingests it.

- one ``reportingDescriptor`` per rule of the catalog (METADATA), with help text; ``ruleId`` is the
  rule id, so every rule has its own stable id;
- ``partialFingerprints["streamwarden/v1"]`` is the finding's fingerprint (pipeline, rule, path,
  offending value; never line numbers), so alerts persist across runs and unrelated edits;
- the location is the repository-relative file and the line of the offending field;
- at most 5,000 results per run (GitHub's limit), the most severe first, with a notification
  saying how many were left out;
- a waived finding carries ``suppressions: [{kind: external, justification: <reason>}]``.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from streamwarden import __version__
from streamwarden.core.escape import json_text
from streamwarden.engine.policyset import RuleDescriptor
from streamwarden.evaluate.findings import SEVERITY_ORDER, Finding, unwrap
from streamwarden.report.interface import Report, Reporter

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
MAX_RESULTS = 5000
FINGERPRINT_KEY = "streamwarden/v1"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}


class SarifReporter(Reporter):
    def __init__(self, max_results: int = MAX_RESULTS) -> None:
        self.max_results = max_results

    def render(self, report: Report, *, color: bool = False) -> str:
        return json_text(json.dumps(build_sarif(report, self.max_results), indent=2, ensure_ascii=False)) + "\n"


def build_sarif(report: Report, max_results: int = MAX_RESULTS) -> dict[str, Any]:
    rules = _rule_list(report)
    index = {r["id"]: i for i, r in enumerate(rules)}
    kept, left_out = select_results(report.findings, max_results)
    seen: dict[str, int] = {}
    results = [_result(report, f, index, seen) for f in kept]
    notifications = [_error_notification(report, e) for e in report.errors]
    if left_out:
        notifications.append(
            {
                "level": "warning",
                "descriptor": {"id": "results-truncated"},
                "message": {
                    "text": (
                        f"{left_out} of {len(report.findings)} findings were left out: GitHub code scanning accepts "
                        f"at most {max_results:,} results per run, so the {max_results:,} most severe are included. "
                        "Run `streamwarden check --format json` for every finding."
                    )
                },
            }
        )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "streamwarden",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "invocations": [{"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications}],
        "results": results,
        "properties": {"summary": report.summary, "failOn": report.fail_on, "truncated": left_out > 0},
    }
    if left_out:
        run["properties"]["resultsLeftOut"] = left_out
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def select_results(findings: list[Finding], max_results: int) -> tuple[list[Finding], int]:
    """The findings that fit, most important first (active before baselined before waived, then
    severity), kept in the report's own order; and how many were left out."""
    if len(findings) <= max_results:
        return list(findings), 0

    def priority(item: tuple[int, Finding]) -> tuple[int, int, int]:
        i, f = item
        state = 2 if f.waived else 1 if f.baselined else 0
        return (state, SEVERITY_ORDER.get(f.severity, 9), i)

    chosen = sorted(enumerate(findings), key=priority)[:max_results]
    keep = sorted(i for i, _ in chosen)
    return [findings[i] for i in keep], len(findings) - max_results


def rule_name(title: str, rule_id: str) -> str:
    """A PascalCase friendly name (SARIF ``name``).

    "Checkpoint storage must be durable" -> CheckpointStorageMustBeDurable."""
    words = re.findall(r"[A-Za-z0-9]+", title)
    name = "".join(w[:1].upper() + w[1:] for w in words)
    if not name or name[0].isdigit():
        name = "".join(w.capitalize() for w in re.findall(r"[A-Za-z0-9]+", rule_id)) + name
    return name


def _descriptor(d: RuleDescriptor) -> dict[str, Any]:
    text = [d.title]
    markdown = [f"**{d.title}**"]
    if d.description:
        text.append(d.description)
        markdown.append(d.description)
    if d.remediation:
        remediation = unwrap(d.remediation)
        text.append(f"Remediation: {remediation}")
        markdown.append(f"**Remediation:** {remediation}")
    if d.example:
        text.append(f"Example:\n{d.example}")
        markdown.append(f"**Example:**\n\n```yaml\n{d.example}\n```")
    tags = ["streamwarden"]
    if d.package:
        tags.append(d.package.rsplit(".", 1)[-1])
    if not d.builtin:
        tags.append("custom")
    out: dict[str, Any] = {
        "id": d.id,
        "name": rule_name(d.title, d.id),
        "shortDescription": {"text": d.title},
        "fullDescription": {"text": d.description or d.title},
        "help": {"text": "\n\n".join(text), "markdown": "\n\n".join(markdown)},
        "defaultConfiguration": {"level": _LEVELS.get(d.severity, "warning")},
        "properties": {
            "tags": tags,
            "precision": "very-high",
            "problem.severity": _PROBLEM_SEVERITY.get(d.severity, "warning"),
        },
    }
    if d.file:
        out["properties"]["policyFile"] = d.file
    return out


def _rule_list(report: Report) -> list[dict[str, Any]]:
    descriptors = dict(report.rules)
    for f in report.findings:  # a custom rule without METADATA still gets a descriptor
        if f.rule not in descriptors:
            descriptors[f.rule] = RuleDescriptor(
                id=f.rule, title=f.title or f.rule, severity=f.severity, remediation=f.remediation, builtin=False
            )
    return [_descriptor(descriptors[rid]) for rid in sorted(descriptors)]


def artifact_uri(path: str) -> str:
    if path.startswith("/"):
        return "file://" + quote(path)
    return quote(path, safe="/")


def _location(report: Report, file: str | None, line: int | None) -> dict[str, Any] | None:
    path = report.repo_path(file)
    if not path:
        return None
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(path)}}
    if line and line > 0:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _result(report: Report, f: Finding, index: dict[str, int], seen: dict[str, int]) -> dict[str, Any]:
    file, line = f.file, f.line
    if not file:  # never a result without a location: fall back to the pipeline's contract
        file, line = report.pipeline_files.get(f.pipeline), 1
    location = _location(report, file, line) or {}
    if f.path:
        location["logicalLocations"] = [
            {"name": f.path, "fullyQualifiedName": f"{f.pipeline}:{f.path}", "kind": "property"}
        ]
    seen[f.fingerprint] = seen.get(f.fingerprint, 0) + 1
    n = seen[f.fingerprint]
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "kind": "fail",
        "level": _LEVELS.get(f.severity, "warning"),
        "message": {"text": f.message},
        "locations": [location] if location else [],
        # the same fingerprint twice in one run (same value in two files): number the repeats
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint if n == 1 else f"{f.fingerprint}:{n}"},
        "properties": {
            "pipeline": f.pipeline,
            "path": f.path,
            "source": f.source,
            "severity": f.severity,
            "evidence": f.evidence,
        },
    }
    if f.more is not None:  # the findings of its rule in its file the report does not list
        result["properties"]["more"] = dict(f.more)
    if report.baseline is not None:
        result["baselineState"] = "unchanged" if f.baselined else "new"
    if f.waived:
        w = f.waiver or {}
        suppression: dict[str, Any] = {
            "kind": "external",
            "status": "accepted",
            "justification": str(w.get("reason") or "waived in the contract"),
        }
        extra = {k: w[k] for k in ("expires", "approved_by") if w.get(k)}
        if extra:
            suppression["properties"] = extra
        result["suppressions"] = [suppression]
    return result


def _error_notification(report: Report, e: Any) -> dict[str, Any]:
    note: dict[str, Any] = {
        "level": "error",
        "descriptor": {"id": "unusable-input"},
        "message": {"text": e.render()},
    }
    location = _location(report, e.file, e.line)
    if location:
        note["locations"] = [location]
    return note
