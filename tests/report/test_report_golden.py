"""Golden files: every output format of `check` on the example contracts and the golden fixture
(a waived finding with reason, expiry and approver), at a fixed --now.

The built-in policies decide the findings, so a policy change changes these files. In the SARIF
golden the rule descriptors keep their id, name, title and level but not their long help text
(METADATA prose, checked by test_report_sarif.py), so rewording a description does not churn it.
Regenerate them and review the diff:

    UPDATE_GOLDEN=1 python -m pytest tests/report/test_report_golden.py
"""

from __future__ import annotations

import difflib
import json
import os

import pytest
from tests.conftest import TESTS
from tests.reporting import EXAMPLES, run_check

from streamwarden.report import FORMATS

GOLDEN = TESTS / "golden"
FILES = {
    "text": "check.txt",
    "json": "check.json",
    "sarif": "check.sarif.json",  # *.sarif is git-ignored (users' outputs)
    "junit": "check.junit.xml",
    "github": "check.github.txt",
    "markdown": "check.md",
}
REGENERATE = "UPDATE_GOLDEN=1 python -m pytest tests/report/test_report_golden.py"


def comparable(fmt: str, text: str) -> str:
    if fmt != "sarif":
        return text
    doc = json.loads(text)
    for run in doc["runs"]:
        for rule in run["tool"]["driver"]["rules"]:
            rule.pop("fullDescription", None)
            rule.pop("help", None)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def test_every_format_has_a_golden_file() -> None:
    # ARCHITECTURE.md "An output format": a format added to report._REPORTERS gets its golden file here
    assert sorted(FILES) == sorted(FORMATS)


@pytest.mark.parametrize("fmt", list(FILES))
def test_check_output_matches_its_golden_file(fmt: str) -> None:
    result = run_check(*EXAMPLES, "--format", fmt)
    assert result.exit_code == 1, result.output
    actual = comparable(fmt, result.stdout)
    golden = GOLDEN / FILES[fmt]
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(actual, encoding="utf-8")
    assert golden.is_file(), f"{golden} is missing: create it with `{REGENERATE}`"
    expected = golden.read_text(encoding="utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), str(golden), f"check --format {fmt}", lineterm="", n=1
        )
        shown = "\n".join(list(diff)[:80])
        pytest.fail(f"--format {fmt} differs from {golden.name}; if intended, run `{REGENERATE}` and review:\n{shown}")


def test_the_golden_run_covers_errors_warnings_a_waiver_and_a_repository_file() -> None:
    doc = json.loads((GOLDEN / FILES["json"]).read_text(encoding="utf-8"))
    severities = {f["severity"] for f in doc["findings"]}
    assert {"error", "warning"} <= severities
    assert any(f["waived"] and f["waiver"]["approved_by"] for f in doc["findings"])
    assert any(f["source"] == "deployment" for f in doc["findings"])
