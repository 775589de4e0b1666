"""JUnit XML: parses, its counts equal the JSON findings (read back by ElementTree and by
junitparser, a real consumer), waived findings are skipped with their reason."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest
from tests.reporting import EXAMPLES, findings_json, make_finding, missing_tool, run_check

from streamwarden.errors import InputError
from streamwarden.findings import Finding
from streamwarden.report import Report
from streamwarden.report.junit import ERRORS_SUITE, JunitReporter


@pytest.fixture(scope="module")
def examples() -> tuple[ET.Element, dict[str, Any], str]:
    result = run_check(*EXAMPLES, "--format", "junit")
    assert result.exit_code == 1
    return ET.fromstring(result.stdout.encode("utf-8")), findings_json(*EXAMPLES), result.stdout


def test_counts_equal_the_json_findings(examples: tuple[ET.Element, dict[str, Any], str]) -> None:
    root, doc, _ = examples
    s = doc["summary"]
    cases = root.findall("./testsuite/testcase")
    assert int(root.get("tests", "-1")) == len(cases) == len(doc["findings"])
    assert (
        int(root.get("failures", "-1"))
        == s["errors"] + s["warnings"]
        == len(root.findall("./testsuite/testcase/failure"))
    )
    assert int(root.get("errors", "-1")) == 0
    assert int(root.get("skipped", "-1")) == len(root.findall("./testsuite/testcase/skipped")) == s["waived"] == 1
    suites = root.findall("testsuite")
    assert {x.get("name") for x in suites} == {f["pipeline"] for f in doc["findings"]} | {"orders-enrichment"}
    assert len(suites) == doc["summary"]["pipelines"]
    for suite in suites:
        mine = [f for f in doc["findings"] if f["pipeline"] == suite.get("name")]
        assert int(suite.get("tests", "-1")) == len(mine) == len(suite.findall("testcase"))
        assert int(suite.get("skipped", "-1")) == sum(1 for f in mine if f["waived"])
        assert int(suite.get("failures", "-1")) == sum(1 for f in mine if not f["waived"] and f["severity"] != "info")


def test_each_failure_names_the_rule_file_and_line(examples: tuple[ET.Element, dict[str, Any], str]) -> None:
    root, doc, _ = examples
    cases = root.findall("./testsuite/testcase")
    by_pipeline = {}
    for f in doc["findings"]:
        by_pipeline.setdefault(f["pipeline"], []).append(f)
    ordered = [f for suite in root.findall("testsuite") for f in by_pipeline.get(suite.get("name", ""), [])]
    for case, f in zip(cases, ordered, strict=True):
        assert case.get("name", "").startswith(f"{f['rule']} {f['path']}")
        outcome = case.find("failure") if case.find("failure") is not None else case.find("skipped")
        assert outcome is not None
        assert f"at {f['file']}:{f['line']}" in (outcome.text or "")


def test_waived_finding_is_skipped_with_reason_expiry_and_approver(
    examples: tuple[ET.Element, dict[str, Any], str],
) -> None:
    root, _, _ = examples
    (skipped,) = root.findall("./testsuite/testcase/skipped")
    message = skipped.get("message", "")
    assert message.startswith("waived: Local checkpoints while the S3 bucket is provisioned")
    assert "(expires 2027-01-31, approved by data-platform)" in message


def test_a_junit_consumer_reads_the_same_counts(examples: tuple[ET.Element, dict[str, Any], str]) -> None:
    try:
        from junitparser import Failure, JUnitXml, Skipped
    except ImportError:
        missing_tool("junitparser (PyPI), a JUnit consumer", "pip install junitparser")
    _, doc, text = examples
    xml = JUnitXml.fromstring(text.encode("utf-8"))
    declared = (xml.tests, xml.failures, xml.errors, xml.skipped)
    xml.update_statistics()  # recount from the testcases: the declared totals must agree
    assert declared == (xml.tests, xml.failures, xml.errors, xml.skipped)
    s = doc["summary"]
    assert declared == (len(doc["findings"]), s["errors"] + s["warnings"], 0, s["waived"])
    results = [type(r) for suite in xml for case in suite for r in case.result]
    assert results.count(Failure) == s["errors"] + s["warnings"]
    assert results.count(Skipped) == s["waived"]


def finding(**kw: Any) -> Finding:
    return make_finding(**{"rule": "SW-X-001", "title": "t", **kw})


def test_baselined_is_skipped_info_passes_and_unusable_inputs_are_errors() -> None:
    baselined = finding(rule="SW-X-002")
    baselined.baselined = True
    report = Report(
        findings=[finding(), baselined, finding(rule="SW-X-003", severity="info")],
        pipelines=["p"],
        errors=[InputError("not valid YAML", file="bad.yaml", line=2)],
        baseline="baseline.json",
    )
    root = ET.fromstring(JunitReporter().render(report).encode("utf-8"))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")
    p = root.find("testsuite[@name='p']")
    assert p is not None and p.get("skipped") == "1"
    skipped = p.find("testcase[@name='SW-X-002 a.b']/skipped")
    assert skipped is not None and skipped.get("message", "").startswith("baselined")
    info = p.find("testcase[@name='SW-X-003 a.b']")
    assert info is not None and info.find("failure") is None and info.find("system-out") is not None
    errors = root.find(f"testsuite[@name='{ERRORS_SUITE}']")
    assert errors is not None and errors.find("testcase/error") is not None
    assert errors.find("testcase").get("name") == "bad.yaml:2"  # type: ignore[union-attr]


def test_control_characters_from_a_contract_cannot_break_the_xml() -> None:
    report = Report(findings=[finding(message="bad \x00\x1b value <&>")], pipelines=["p"])
    root = ET.fromstring(JunitReporter().render(report).encode("utf-8"))
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None and "<&>" in failure.get("message", "")


def test_twin_findings_get_distinct_case_names() -> None:
    a, b = finding(file="a.yaml"), finding(file="b.yaml")
    root = ET.fromstring(JunitReporter().render(Report(findings=[a, b], pipelines=["p"])).encode("utf-8"))
    names = [c.get("name") for c in root.findall("./testsuite/testcase")]
    assert names == ["SW-X-001 a.b (a.yaml)", "SW-X-001 a.b (b.yaml)"]
