"""JUnit XML: parses, its counts equal the JSON findings (read back by ElementTree and by
junitparser, a real consumer), waived findings are skipped with their reason, and what fails the
run (findings at or above --fail-on) is exactly what fails the report."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.reporting import EXAMPLES, findings_json, make_finding, missing_tool, run_check

from streamwarden.core.errors import InputError
from streamwarden.evaluate.findings import Finding
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
    # the examples fail on errors (fail_on: error): warnings are listed, not failures
    assert s["warnings"] > 0
    assert int(root.get("failures", "-1")) == s["errors"] == len(root.findall("./testsuite/testcase/failure"))
    assert int(root.get("errors", "-1")) == 0
    assert int(root.get("skipped", "-1")) == len(root.findall("./testsuite/testcase/skipped")) == s["waived"] == 1
    suites = root.findall("testsuite")
    assert {x.get("name") for x in suites} == {f["pipeline"] for f in doc["findings"]} | {"orders-enrichment"}
    assert len(suites) == doc["summary"]["pipelines"]
    for suite in suites:
        mine = [f for f in doc["findings"] if f["pipeline"] == suite.get("name")]
        assert int(suite.get("tests", "-1")) == len(mine) == len(suite.findall("testcase"))
        assert int(suite.get("skipped", "-1")) == sum(1 for f in mine if f["waived"])
        assert int(suite.get("failures", "-1")) == sum(1 for f in mine if not f["waived"] and f["severity"] == "error")


def test_each_failure_names_the_rule_file_and_line(examples: tuple[ET.Element, dict[str, Any], str]) -> None:
    root, doc, _ = examples
    cases = root.findall("./testsuite/testcase")
    by_pipeline = {}
    for f in doc["findings"]:
        by_pipeline.setdefault(f["pipeline"], []).append(f)
    ordered = [f for suite in root.findall("testsuite") for f in by_pipeline.get(suite.get("name", ""), [])]
    for case, f in zip(cases, ordered, strict=True):
        assert case.get("name", "").startswith(f"{f['rule']} {f['path']}")
        outcomes = [case.find(tag) for tag in ("failure", "skipped", "system-out")]
        (outcome,) = [o for o in outcomes if o is not None]
        assert (outcome.tag == "failure") == (f["severity"] == "error" and not f["waived"])
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
    assert declared == (len(doc["findings"]), s["errors"], 0, s["waived"])
    results = [type(r) for suite in xml for case in suite for r in case.result]
    assert results.count(Failure) == s["errors"]
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


# ---- what fails the run fails the report: the real CLI in a subprocess, on a real contract


def _warning_only_contract(tmp_path: Path) -> None:
    """A contract whose only finding is a warning (SW-REC-005: a non-rewindable source while the
    sink promises exactly-once)."""
    contract = CLEAN_CONTRACT.replace("rewindable: true", "rewindable: false")
    (tmp_path / "contract.yaml").write_text(contract, encoding="utf-8")


def _junit(tmp_path: Path, *args: str) -> tuple[int, ET.Element]:
    p = sw("check", "contract.yaml", "--format", "junit", "--now", NOW, *args, cwd=tmp_path)
    return p.code, ET.fromstring(p.stdout.encode("utf-8"))


def test_a_warning_below_fail_on_error_is_listed_but_not_a_failure(tmp_path: Path) -> None:
    _warning_only_contract(tmp_path)
    code, root = _junit(tmp_path, "--fail-on", "error")
    assert code == 0
    assert root.get("failures") == "0" and root.findall(".//failure") == []
    (case,) = root.findall("./testsuite/testcase")
    assert case.get("name") == "SW-REC-005 job.sources[0].rewindable"
    assert case.find("skipped") is None  # a passing test case: skipped is for waived and baselined
    out = case.find("system-out")
    assert out is not None and "SW-REC-005" in (out.text or "") and "is not rewindable" in (out.text or "")
    assert (out.text or "").startswith("not a failure (--fail-on error: warning is below it)")
    assert (root.get("tests"), root.find("testsuite").get("failures")) == ("1", "0")  # type: ignore[union-attr]
    # the same contract, failing on warnings: now the warning is a failure
    code, root = _junit(tmp_path, "--fail-on", "warning")
    assert code == 1 and root.get("failures") == "1"
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None and failure.get("type") == "warning"
    assert failure.get("message", "").startswith("SW-REC-005: ")


def test_fail_on_of_streamwarden_yaml_decides_the_failures_and_the_default_is_error(tmp_path: Path) -> None:
    _warning_only_contract(tmp_path)
    code, root = _junit(tmp_path)
    assert code == 0 and root.get("failures") == "0"
    (tmp_path / "streamwarden.yaml").write_text('contracts: ["contract.yaml"]\nfail_on: warning\n', encoding="utf-8")
    code, root = _junit(tmp_path)
    assert code == 1 and root.get("failures") == "1"


def test_fail_on_never_has_no_failures_even_for_errors(tmp_path: Path) -> None:
    contract = CLEAN_CONTRACT.replace("min_pause: 30s", "min_pause: 60s")  # SW-CKPT-002, an error
    (tmp_path / "contract.yaml").write_text(contract, encoding="utf-8")
    code, root = _junit(tmp_path, "--fail-on", "never")
    assert code == 0
    assert root.get("failures") == "0" and root.findall(".//failure") == []
    assert any(c.get("name", "").startswith("SW-CKPT-002 ") for c in root.iter("testcase"))
    code, root = _junit(tmp_path)
    assert code == 1 and root.get("failures") == "1"
