"""Markdown (the PR comment): per pipeline, by severity; waived findings with reason, expiry and
approver; the contract review when a diff is given; pull-request text escaped; within GitHub's size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.reporting import EXAMPLES, findings_json, make_finding, run_check

from streamwarden.evaluate.findings import Finding
from streamwarden.report import Report
from streamwarden.report.markdown import MARKER, MarkdownReporter, cell, code
from streamwarden.report.review import value_cell


@pytest.fixture(scope="module")
def examples() -> tuple[str, dict[str, Any]]:
    result = run_check(*EXAMPLES, "--format", "markdown")
    assert result.exit_code == 1
    return result.stdout, findings_json(*EXAMPLES)


def section(text: str, pipeline: str) -> str:
    start = text.index(f" {pipeline}\n")
    end = text.find("\n### ", start)
    return text[start : end if end != -1 else len(text)]


def test_comment_starts_with_the_marker_and_a_verdict(examples: tuple[str, dict[str, Any]]) -> None:
    text, doc = examples
    s = doc["summary"]
    lines = text.splitlines()
    assert lines[0] == MARKER
    assert lines[1] == f"## ❌ streamwarden: {s['errors']} errors, {s['warnings']} warnings"


def test_each_pipeline_lists_its_findings_by_severity(examples: tuple[str, dict[str, Any]]) -> None:
    text, doc = examples
    for pipeline in {f["pipeline"] for f in doc["findings"]}:
        body = section(text, pipeline)
        mine = [f for f in doc["findings"] if f["pipeline"] == pipeline and not f["waived"]]
        for severity, label in (("error", "Errors"), ("warning", "Warnings")):
            n = sum(1 for f in mine if f["severity"] == severity)
            assert (f"**{label} ({n})**" in body) == (n > 0)
        rows = [line for line in body.splitlines() if line.startswith("| `")]
        assert len(rows) == sum(1 for f in doc["findings"] if f["pipeline"] == pipeline)
        if "**Warnings" in body and "**Errors" in body:
            assert body.index("**Errors") < body.index("**Warnings")
    assert "### ✅ orders-enrichment" in text and "No findings." in section(text, "orders-enrichment")


def test_waived_findings_show_reason_expiry_and_approver_escaped(examples: tuple[str, dict[str, Any]]) -> None:
    body = section(examples[0], "ledger-compaction")
    assert "**Waived (1)**" in body
    (row,) = [line for line in body.splitlines() if line.startswith("| `SW-CKPT-004`")]
    assert "Local checkpoints while the S3 bucket is provisioned (PLAT-1234)" in row
    assert "\\| &lt;b&gt;not&lt;/b&gt; @\u200bdata-platform" in row
    assert "| 2027-01-31 | data-platform |" in row
    assert "<b>" not in row


def finding(**kw: Any) -> Finding:
    return make_finding(**{"pipeline": "orders", "title": "Acme", "file": "contracts/orders.yaml", **kw})


DIFF = [
    {
        "pipeline": "orders",
        "status": "changed",
        "changes": [
            {
                "path": "table.schema[1].type",
                "change": "changed",
                "before": "int",
                "after": "string",
                "class": "safe",
                "rule": None,
                "reason": "docs only",
                "consumers": [],
            },
            {
                "path": "table.schema[0].type",
                "change": "changed",
                "before": "long",
                "after": "int",
                "class": "breaking",
                "rule": "SW-SCHEMA-001",
                "reason": "narrowing",
                "consumers": ["finance", "fraud"],
            },
            {
                "path": "state.operators[0].schema_version",
                "change": "changed",
                "before": 3,
                "after": 4,
                "class": "coordinate",
                "rule": None,
                "reason": "state schema bump",
                "consumers": [],
            },
        ],
    },
    {"pipeline": "clicks", "status": "added", "changes": []},
]


def test_the_contract_review_is_rendered_when_a_diff_is_given() -> None:
    text = MarkdownReporter().render(Report(findings=[finding()], pipelines=["orders"], diff=DIFF))
    review = text[text.index("### Contract changes") :]
    assert "#### 🛑 orders: changed (1 breaking, 1 coordinate, 1 safe)" in review
    rows = [line for line in review.splitlines() if line.startswith(("| 🔴", "| 🟡", "| 🟢"))]
    assert [r.split("|")[1].strip() for r in rows] == ["🔴 breaking", "🟡 coordinate", "🟢 safe"]
    assert "SW-SCHEMA-001: narrowing" in rows[0] and "finance, fraud" in rows[0]
    assert "| `long` | `int` |" in rows[0] and "| `3` | `4` |" in rows[1]
    assert "#### ✅ clicks: added" in review


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "—"),
        ("long", "`long`"),
        ("decimal(12,2)", "`decimal(12,2)`"),
        ("3", '`"3"`'),  # a string that reads as a number, a boolean or null is quoted
        (3, "`3`"),
        ("true", '`"true"`'),
        ("", '`""`'),
        (" padded", '`" padded"`'),
        ({"b": 1, "a": [2]}, '`{"a": [2], "b": 1}`'),
        ("x" * 80, f"`{'x' * 80}`"),
        ("x" * 81, f"`{'x' * 79}…`"),
    ],
)
def test_a_changed_value_is_shown_as_written_quoted_only_where_it_would_read_as_another(value: Any, shown: str) -> None:
    assert value_cell(value) == shown


def test_no_review_section_without_a_diff_and_an_empty_review_says_so() -> None:
    assert "Contract changes" not in MarkdownReporter().render(Report(findings=[], pipelines=["orders"]))
    empty = MarkdownReporter().render(Report(findings=[], pipelines=["orders"], diff=[]))
    assert "### Contract changes\n\nNo contract changed." in empty


def test_pull_request_text_cannot_inject_markup_links_or_mentions() -> None:
    evil = "x | y <img src=x onerror=alert(1)> [click](https://evil.example) @org/team **bold**\n# heading"
    out = cell(evil)
    assert "<img" not in out and "\n" not in out
    assert "\\|" in out and "\\[click\\]" in out and "@\u200borg" in out and "\\*\\*bold" in out
    assert code("a`b|c") == "`` a`b\\|c ``"


def test_a_huge_report_stays_under_githubs_comment_limit_and_says_what_was_left_out() -> None:
    findings = [finding(message="x" * 300, path=f"p[{i}]") for i in range(2000)]
    text = MarkdownReporter().render(Report(findings=findings, pipelines=["orders"]))
    assert len(text) <= 65_536
    shown = sum(1 for line in text.splitlines() if line.startswith("| `ACME-001`"))
    assert 0 < shown < 2000
    assert f"**Cut to fit in 65,536 characters:** {2000 - shown:,} of 2,000 rows" in text


def test_baselined_findings_are_collapsed_and_do_not_fail() -> None:
    old = finding(rule="ACME-002")
    old.baselined = True
    text = MarkdownReporter().render(Report(findings=[old], pipelines=["orders"], baseline="baseline.json"))
    assert text.splitlines()[1] == "## ✅ streamwarden: 0 errors, 0 warnings"
    assert "<details><summary>Baselined (1)" in text and "1 baselined" in text
    assert "baseline baseline.json" in text.splitlines()[-1]


def test_check_with_base_puts_the_contract_review_in_the_comment_and_the_job_summary(tmp_path: Path) -> None:
    from tests.conftest import CLEAN_CONTRACT
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("interval: 60s", "interval: 45s"))
    repo.commit("faster checkpoints")
    comment = run_check("--base", "main", "--format", "markdown", cwd=repo.path)
    assert comment.exit_code == 0, comment.output
    review = comment.stdout[comment.stdout.index("### Contract changes") :]
    # no rule judges a checkpoint interval's change: reviewed, never called safe
    assert "#### ⚠️ orders-enrichment: changed (1 coordinate)" in review
    assert "| 🟡 coordinate | `checkpoint.interval` | changed | `60000` | `45000` |" in review
    summary = tmp_path / "summary.md"
    run_check("--base", "main", "--format", "github", cwd=repo.path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert summary.read_text(encoding="utf-8") == comment.stdout + "\n"
