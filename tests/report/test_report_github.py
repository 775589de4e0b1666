"""GitHub format: one workflow-command annotation per finding that counts, on its file and line;
nothing for waived or baselined findings; values that cannot forge a command; the job summary."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from tests.reporting import EXAMPLES, findings_json, make_finding, run_check

from streamwarden.evaluate.findings import Finding
from streamwarden.report import Report
from streamwarden.report.github import GithubReporter, escape_property, write_step_summary

_ANNOTATION = re.compile(r"^::(error|warning|notice)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


def unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def parse(stdout: str) -> list[dict[str, Any]]:
    """Workflow commands the way the Actions runner reads them (one per line)."""
    out = []
    for line in stdout.splitlines():
        m = _ANNOTATION.match(line)
        if not m:
            continue
        props = dict(p.split("=", 1) for p in (m.group("props") or "").split(",") if p)
        out.append(
            {"level": m.group(1), **{k: unescape(v) for k, v in props.items()}, "message": unescape(m.group("message"))}
        )
    return out


@pytest.fixture(scope="module")
def examples() -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    result = run_check(*EXAMPLES, "--format", "github")
    assert result.exit_code == 1
    return parse(result.stdout), findings_json(*EXAMPLES), result.stdout


def test_annotations_match_the_findings_one_to_one(examples: tuple[list[dict[str, Any]], dict[str, Any], str]) -> None:
    annotations, doc, _ = examples
    counted = [f for f in doc["findings"] if not f["waived"]]
    assert len(annotations) == len(counted) > 0
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for a, f in zip(annotations, counted, strict=True):
        assert a["level"] == level[f["severity"]]
        assert a["file"] == f["file"]
        assert int(a["line"]) == f["line"]
        assert a["title"].startswith(f["rule"] + ": ")
        assert a["message"].startswith(f["message"])


def test_waived_findings_are_not_annotated(examples: tuple[list[dict[str, Any]], dict[str, Any], str]) -> None:
    annotations, doc, _ = examples
    (waived,) = [f for f in doc["findings"] if f["waived"]]
    assert not [a for a in annotations if a["file"] == waived["file"] and int(a["line"]) == waived["line"]]


def test_the_log_ends_with_a_plain_summary_line(examples: tuple[list[dict[str, Any]], dict[str, Any], str]) -> None:
    s = examples[1]["summary"]
    last = examples[2].rstrip().splitlines()[-1]
    # the plural forms; the singular ones: tests/cli/test_cli_small_defects.py
    assert s["pipelines"] > 1 and s["errors"] > 1 and s["warnings"] > 1
    expected = f"{s['pipelines']} pipelines, {s['passed']} passed, {s['errors']} errors, {s['warnings']} warnings"
    assert last == f"streamwarden: {expected}, {s['waived']} waived"


def finding(**kw: Any) -> Finding:
    return make_finding(**kw)


def test_a_contract_value_cannot_end_the_annotation_or_start_a_command() -> None:
    evil = "100%\n::add-mask::secret\r\n::error file=x::forged, really: yes"
    report = Report(findings=[finding(message=evil, file="dir,x:y/c.yaml", title="a, b: c")], pipelines=["p"])
    out = GithubReporter().render(report)
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("::error ") and not lines[1].startswith("::")
    (a,) = parse(out)
    assert a["message"] == evil + " [a.b]"
    assert a["file"] == "dir,x:y/c.yaml"
    assert a["title"] == "ACME-001: a, b: c"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_baselined_findings_are_not_annotated_and_info_is_a_notice() -> None:
    old = finding(rule="ACME-002")
    old.baselined = True
    report = Report(
        findings=[finding(), old, finding(rule="ACME-003", severity="info")], pipelines=["p"], baseline="b.json"
    )
    annotations = parse(GithubReporter().render(report))
    assert [(a["level"], a["title"].split(":")[0]) for a in annotations] == [
        ("error", "ACME-001"),
        ("notice", "ACME-003"),
    ]


def test_repository_prefix_is_applied_to_annotation_files() -> None:
    report = Report(findings=[finding()], pipelines=["p"], repo_prefix="pipelines/team-a")
    (a,) = parse(GithubReporter().render(report))
    assert a["file"] == "pipelines/team-a/c.yaml"


def test_job_summary_goes_to_github_step_summary_when_set(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    result = run_check(*EXAMPLES, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n")  # appended, never overwritten
    markdown = run_check(*EXAMPLES, "--format", "markdown").stdout
    assert text == "earlier step\n" + markdown + "\n"


def test_no_summary_file_is_written_without_the_variable(tmp_path: Path) -> None:
    report = Report(findings=[finding()], pipelines=["p"])
    assert write_step_summary(report, {}) is None
    assert write_step_summary(report, {"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")}) == str(tmp_path / "s.md")
