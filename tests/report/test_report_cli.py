"""`check` flags for reports: several formats in one run, each to its own file; bad combinations
are usage errors (exit 2) that say what to do."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.reporting import EXAMPLES, run_check


def test_several_formats_in_one_run_each_to_its_own_file(tmp_path: Path) -> None:
    targets = {fmt: tmp_path / f"out.{fmt}" for fmt in ("sarif", "junit", "markdown", "json", "github")}
    args = [a for fmt, p in targets.items() for a in ("--report", f"{fmt}={p}")]
    result = run_check(*EXAMPLES, *args)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1].startswith("4 pipelines:")  # the text report still goes to stdout
    doc = json.loads(targets["json"].read_text(encoding="utf-8"))
    assert json.loads(targets["sarif"].read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert ET.parse(targets["junit"]).getroot().get("tests") == str(len(doc["findings"]))
    assert targets["markdown"].read_text(encoding="utf-8").startswith("<!-- streamwarden -->")
    assert targets["github"].read_text(encoding="utf-8").startswith("::")
    for fmt in targets:  # each file equals the same format printed on its own
        alone = run_check(*EXAMPLES, "--format", fmt).stdout
        assert targets[fmt].read_text(encoding="utf-8") == alone, fmt


def test_format_and_output_still_write_the_single_report(tmp_path: Path) -> None:
    out = tmp_path / "r.sarif"
    result = run_check(*EXAMPLES, "--format", "sarif", "--output", str(out))
    assert result.exit_code == 1 and result.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8"))["runs"][0]["results"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--report", "sarif"), "is not FORMAT=FILE"),
        (("--report", "pdf=x.pdf"), "unknown format 'pdf'"),
        (("--report", "sarif=-"), "a report needs a file"),
        (("--report", "sarif=x.out", "--report", "junit=x.out"), "two reports would write x.out"),
        (("--output", "x.out", "--report", "junit=x.out"), "two reports would write x.out"),
        (("--opa-url", "http://localhost:8181"), "--opa-url is only used with --engine opa"),
    ],
)
def test_bad_report_flags_exit_2_with_a_message(args: tuple[str, ...], message: str) -> None:
    result = run_check(*EXAMPLES, *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_unusable_inputs_are_on_stderr_when_the_report_is_not_text_on_stdout(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "broken.yaml").write_text(
        "apiVersion: streamwarden/v1\nkind: PipelineContract\n", encoding="utf-8"
    )
    result = run_check("contracts", "--format", "sarif", cwd=tmp_path)
    assert result.exit_code == 2
    assert "broken.yaml" in result.stderr
    run = json.loads(result.stdout)["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False


def test_help_lists_every_format_and_the_new_flags() -> None:
    from click.testing import CliRunner

    from streamwarden.cli import main

    text = CliRunner().invoke(main, ["check", "--help"]).output
    for word in (
        "sarif",
        "junit",
        "github",
        "markdown",
        "--report",
        "--baseline",
        "--write-baseline",
        "--opa-url",
        "--verbose",
    ):
        assert word in text
