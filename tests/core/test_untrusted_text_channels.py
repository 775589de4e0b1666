"""The channels the report escapers do not cover, each through the real CLI: a custom policy's
``print`` during ``check`` (its text comes from the pull request's contract), ``policy test``'s
listing (file names, failing sources, prints), click's own usage errors (which quote what was
typed), a stderr message that quotes an ANSI sequence, and ``init``'s contract (a deployment
file's value printed with ``--dry-run``). None may start a GitHub workflow command (``::`` at a
line start after any line break the runner or a terminal honours, ``##[`` anywhere) or carry a raw
terminal control. Each test fails on a build that wrote that channel raw."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import yaml
from tests.cli import _SCRIPT
from tests.conftest import CLEAN_CONTRACT

HOSTILE = "x\n::error::pwned \u2028::warning::sep \x1b]8;;https://evil.example\x07osc\x1b[8mhidden ##[error]legacy"
# what a log must never hold: C0 controls but tab and newline, DEL, C1, line and paragraph separators
# contract text refuses terminal controls but may span lines
DESCRIPTION = "x\n::error::pwned ##[error]legacy\n  ::warning::indented"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def run(*args: str, cwd: Path) -> tuple[int, str, str]:
    """The CLI with its bytes decoded as they are (``universal newlines`` would hide a raw CR)."""
    proc = subprocess.run(
        [str(_SCRIPT), *args],
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def assert_log_safe(text: str) -> None:
    assert not RAW_CONTROL.search(text), repr(text)
    assert "##[" not in text, repr(text)
    for line in text.split("\n"):
        assert not line.lstrip().startswith("::"), repr(line)


def _policy_repo(root: Path) -> Path:
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(
        CLEAN_CONTRACT.replace(
            "  owner: payments-data\n", f"  owner: payments-data\n  description: {json.dumps(DESCRIPTION)}\n"
        )
    )
    (root / "policies").mkdir()
    (root / "policies" / "debug.rego").write_text(
        "package acme.debug\n\nimport rego.v1\n\n"
        "deny contains f if {\n"
        '\tprint("description:", input.contract.metadata.description)\n'
        "\tfalse\n"
        '\tf := {"rule": "ACME-001", "message": "never"}\n'
        "}\n"
    )
    return root


def test_a_custom_policys_print_of_contract_text_is_defused_on_stderr(tmp_path: Path) -> None:
    root = _policy_repo(tmp_path / "repo")
    code, out, err = run("check", "--no-cache", "--policy", "policies", cwd=root)
    assert code == 0, err
    assert "description: x" in err  # the print is still shown
    assert "pwned" in err
    assert_log_safe(err)
    assert_log_safe(out)


def test_policy_test_lists_hostile_file_names_sources_and_prints_escaped(tmp_path: Path) -> None:
    policies = tmp_path / "pol" / "x\n::error::dir"
    policies.mkdir(parents=True)
    (policies / "t.rego").write_text(
        "package acme.t\n\nimport rego.v1\n\n"
        "allow if input.x == 1\n\n"
        "test_fail if {\n"
        f"\tprint({json.dumps(HOSTILE)})\n"
        '\tallow with input as {"x": 2}\n'
        "}\n"
    )
    code, out, err = run("policy", "test", "--no-builtin", "--coverage", "pol", cwd=tmp_path)
    assert code == 1, out + err
    assert "FAIL " in out and "0 passed, 1 failed" in out
    assert "pwned" in out + err  # the print is shown, defused
    assert_log_safe(out)
    assert_log_safe(err)


def test_clicks_usage_errors_quote_an_argument_escaped(tmp_path: Path) -> None:
    for args in (
        ("savepoint", "inspect", "a", HOSTILE),  # "Got unexpected extra argument (...)": quoted raw by click
        (HOSTILE,),  # "No such command"
        ("check", "--fail-on", HOSTILE),  # "Invalid value"
    ):
        code, out, err = run(*args, cwd=tmp_path)
        assert code == 2, (args, err)
        assert "Error:" in err
        assert_log_safe(err)
        assert_log_safe(out)


def test_an_escape_sequence_in_a_path_is_shown_escaped_in_a_note(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(CLEAN_CONTRACT)
    # a directory that cannot be created: the note names it; only colour sequences were kept raw
    code, _, err = run("check", "--cache", "/proc/x\x1b[8mHIDDEN\x1b[0m", cwd=tmp_path)
    assert code == 0, err
    assert "HIDDEN" in err and "\\x1b[8m" in err
    assert_log_safe(err)


def test_init_prints_a_deployment_files_legacy_command_escaped_and_reads_it_back(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    name = "orders ##[error]legacy"
    (tmp_path / "deploy" / "config.yaml").write_text(
        f"pipeline.name: {json.dumps(name)}\nexecution.checkpointing.interval: 60 s\n"
    )
    code, out, err = run(
        "init", "--from-deployment", "deploy/config.yaml", "--dry-run", "-o", "contracts/orders.yaml", cwd=tmp_path
    )
    assert code == 0, err
    assert_log_safe(out)
    assert yaml.safe_load(out)["job"]["name"] == name  # the value is the deployment file's
