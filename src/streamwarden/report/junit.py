"""``--format junit``: JUnit XML, one testsuite per pipeline and one testcase per finding.

What fails the run fails the report: ``tests`` is the number of findings (plus unusable inputs),
``failures`` the findings that fail the run (at or above ``--fail-on``, neither waived nor
baselined), ``skipped`` the waived (with the waiver's reason) and baselined findings, ``errors``
the unusable inputs. A finding below ``--fail-on`` (an info, a warning under ``--fail-on error``,
anything under ``never``) is a passing testcase whose message is in ``system-out``, so a
dashboard is red exactly when the exit code is 1. Testcase attributes stay within the common
JUnit schema (name, classname, time), so strict consumers accept the file; the location is in
the text.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from streamwarden.core.errors import StreamwardenError
from streamwarden.core.escape import xml_text
from streamwarden.evaluate.findings import Finding, fails_run
from streamwarden.report.interface import Report, Reporter

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
ERRORS_SUITE = "unusable inputs"


def _x(text: object) -> str:
    return _XML_INVALID.sub("\ufffd", str(text))


class JunitReporter(Reporter):
    def render(self, report: Report, *, color: bool = False) -> str:
        root = ET.Element("testsuites", {"name": "streamwarden"})
        totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for pipeline, findings in report.by_pipeline().items():
            suite = _suite(report, pipeline, findings)
            root.append(suite)
            for k in totals:
                totals[k] += int(suite.get(k, "0"))
        if report.errors:
            root.append(_errors_suite(report, report.errors))
            totals["tests"] += len(report.errors)
            totals["errors"] += len(report.errors)
        root.set("tests", str(totals["tests"]))
        root.set("failures", str(totals["failures"]))
        root.set("errors", str(totals["errors"]))
        root.set("skipped", str(totals["skipped"]))
        root.set("time", "0")
        ET.indent(root, space="  ")
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml_text(ET.tostring(root, encoding="unicode")) + "\n"


def _case_names(findings: list[Finding], report: Report) -> list[str]:
    """``<rule> <path>``: stable across edits (no line numbers); the file is added only to tell twins apart."""
    base = [f"{f.rule} {f.path}".strip() for f in findings]
    names = []
    for f, name in zip(findings, base, strict=True):
        if base.count(name) > 1:
            name = f"{name} ({report.repo_path(f.file)})"
        names.append(name)
    return names


def _detail(report: Report, f: Finding) -> str:
    where = report.repo_path(f.file) or ""
    if f.line:
        where += f":{f.line}"
    lines = [f"{f.severity} {f.rule} {f.title}".rstrip(), f"at {where} {f.path}".rstrip(), "", f.message]
    if f.remediation:
        lines += ["", f"fix: {f.remediation}"]
    if f.evidence:
        lines += ["", "evidence: " + json.dumps(f.evidence, sort_keys=True, ensure_ascii=False, default=str)]
    lines += ["", f"fingerprint: {f.fingerprint}"]
    return _x("\n".join(lines))


def _suite(report: Report, pipeline: str, findings: list[Finding]) -> ET.Element:
    failures = skipped = 0
    suite = ET.Element("testsuite", {"name": _x(pipeline)})
    contract = report.repo_path(report.pipeline_files.get(pipeline))
    if contract:
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", {"name": "contract", "value": _x(contract)})
    for f, name in zip(findings, _case_names(findings, report), strict=True):
        case = ET.SubElement(
            suite, "testcase", {"classname": _x(f"streamwarden.{pipeline}"), "name": _x(name), "time": "0"}
        )
        if f.waived:
            w = f.waiver or {}
            text = f"waived: {w.get('reason') or 'no reason given'}"
            if w.get("expires"):
                text += f" (expires {w.get('expires')}"
                text += f", approved by {w.get('approved_by')})" if w.get("approved_by") else ")"
            ET.SubElement(case, "skipped", {"type": "waived", "message": _x(text)}).text = _detail(report, f)
            skipped += 1
        elif f.baselined:
            message = f"baselined: an existing finding accepted by the baseline {report.baseline or ''}".rstrip()
            ET.SubElement(case, "skipped", {"type": "baselined", "message": _x(message)}).text = _detail(report, f)
            skipped += 1
        elif fails_run(f, report.fail_on):
            ET.SubElement(
                case, "failure", {"type": f.severity, "message": _x(f"{f.rule}: {f.message}")}
            ).text = _detail(report, f)
            failures += 1
        else:
            below = "nothing fails" if report.fail_on == "never" else f"{f.severity} is below it"
            note = f"not a failure (--fail-on {report.fail_on}: {below})"
            ET.SubElement(case, "system-out").text = _x(note) + "\n\n" + _detail(report, f)
    suite.set("tests", str(len(findings)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", "0")
    if contract:
        suite.set("file", _x(contract))
    return suite


def _errors_suite(report: Report, errors: list[StreamwardenError]) -> ET.Element:
    suite = ET.Element(
        "testsuite",
        {"name": ERRORS_SUITE, "tests": str(len(errors)), "failures": "0", "errors": str(len(errors)), "skipped": "0"},
    )
    suite.set("time", "0")
    for i, e in enumerate(errors):
        where = report.repo_path(e.file) or f"input {i + 1}"
        if e.file and e.line:
            where += f":{e.line}"
        case = ET.SubElement(suite, "testcase", {"classname": "streamwarden.inputs", "name": _x(where), "time": "0"})
        ET.SubElement(case, "error", {"type": type(e).__name__, "message": _x(e.message)}).text = _x(e.render())
    return suite
