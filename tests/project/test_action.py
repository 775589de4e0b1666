"""The composite GitHub Action (`action.yml`): valid for GitHub's action schema, its steps valid
for actionlint (linted as the steps of a workflow whose inputs are the action's, since actionlint
lints workflows, not action metadata), inputs that exist and are used, a shell on every run step,
inputs passed to scripts only through `env:`, and the check script doing what the reusable
workflow's does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import REPO
from tests.reporting import check_jsonschema, missing_tool, run_actionlint

ACTION = REPO / "action.yml"
DOCS = REPO / "docs" / "github.md"
_SNIPPET = re.compile(r"<!-- action-workflow -->\n```yaml\n(?P<yaml>.*?)```\n<!-- /action-workflow -->", re.DOTALL)
_INPUT_REF = re.compile(r"\binputs\.([A-Za-z_][A-Za-z0-9_-]*)")


def action() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return doc


def as_workflow(doc: dict[str, Any]) -> dict[str, Any]:
    """The action's steps as the one job of a reusable workflow with the same inputs."""
    inputs = {
        name: {"type": "string", "description": spec["description"], "default": spec.get("default", "")}
        for name, spec in doc["inputs"].items()
    }
    return {
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": doc["runs"]["steps"]}},
    }


def snippet() -> str:
    m = _SNIPPET.search(DOCS.read_text(encoding="utf-8"))
    assert m, "docs/github.md must hold the action example between <!-- action-workflow --> markers"
    return m.group("yaml")


def run_steps() -> dict[str, dict[str, Any]]:
    return {s.get("name", str(i)): s for i, s in enumerate(action()["runs"]["steps"]) if "run" in s}


def test_action_matches_githubs_action_schema() -> None:
    proc = subprocess.run(
        [*check_jsonschema(), "--builtin-schema", "vendor.github-actions", str(ACTION)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_action_steps_and_the_docs_example_pass_actionlint(tmp_path: Path) -> None:
    steps = tmp_path / "action-steps.yml"
    steps.write_text(yaml.safe_dump(as_workflow(action()), sort_keys=False), encoding="utf-8")
    example = tmp_path / "example.yml"
    example.write_text(snippet(), encoding="utf-8")
    proc = run_actionlint([steps, example], tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "Checking 2 workflow file(s)" in proc.stdout


def test_actionlint_of_the_action_steps_catches_an_undeclared_input(tmp_path: Path) -> None:
    doc = action()
    del doc["inputs"]["fail"]
    broken = tmp_path / "broken.yml"
    broken.write_text(yaml.safe_dump(as_workflow(doc), sort_keys=False), encoding="utf-8")
    proc = run_actionlint([broken], tmp_path)
    assert proc.returncode != 0
    assert 'property "fail" is not defined' in proc.stdout


def test_action_has_the_required_keys_and_runs_composite_steps() -> None:
    doc = action()
    assert {"name", "description", "inputs", "outputs", "runs"} <= set(doc)
    assert doc["runs"]["using"] == "composite" and doc["runs"]["steps"]
    for name, spec in doc["inputs"].items():
        assert spec.get("description"), f"input {name} has no description"
        assert isinstance(spec.get("default", ""), str), f"input {name}: action inputs are strings"
    for name, spec in doc["outputs"].items():
        assert spec.get("description") and "${{ steps." in spec["value"], name


def test_every_input_used_is_declared_and_every_declared_input_is_used() -> None:
    doc = action()
    used = set(_INPUT_REF.findall(yaml.safe_dump(doc["runs"])))
    assert used == set(doc["inputs"])


def test_every_run_step_has_a_shell() -> None:
    for name, step in run_steps().items():
        assert step.get("shell") == "bash", f"{name}: a composite run step needs shell:"


def test_run_scripts_take_inputs_only_from_the_environment() -> None:
    for name, step in run_steps().items():
        assert "${{" not in step["run"], f"{name}: pass expressions through env:, never into the script"


def test_run_scripts_pass_shellcheck(tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        missing_tool("shellcheck", "apt-get install shellcheck (preinstalled on GitHub's ubuntu runners)")
    for n, (name, step) in enumerate(run_steps().items()):
        f = tmp_path / f"step{n}.sh"
        f.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"], encoding="utf-8")
        proc = subprocess.run(["shellcheck", "-s", "bash", str(f)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{name}:\n{proc.stdout}"


def test_the_action_reports_like_the_reusable_workflow() -> None:
    doc = action()
    script = run_steps()["Check contracts"]["run"]
    assert "--format github" in script  # annotations, and the job summary via $GITHUB_STEP_SUMMARY
    for fmt in ("sarif", "markdown", "json"):
        assert f'--report "{fmt}=' in script
    assert "--baseline" in script and "--base" in script
    (upload,) = [s for s in doc["runs"]["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    assert "head.repo.full_name == github.repository" in upload["if"]  # forks cannot write


def test_the_docs_example_checks_out_the_history_grants_the_upload_and_uses_real_inputs() -> None:
    caller = yaml.safe_load(snippet())
    (job,) = caller["jobs"].values()
    checkout, step = job["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["fetch-depth"] == 0
    assert checkout["with"]["persist-credentials"] is False
    assert re.fullmatch(r"[\w-]+/streamwarden@[0-9a-f]{40}", step["uses"])  # a commit: a tag can be moved
    assert re.search(r"/streamwarden@[0-9a-f]{40} # v\d+\.\d+\.\d+\n", snippet())  # the release, readable
    assert "install" not in step.get("with", {})  # the action's own copy, the commit in uses:
    assert set(step.get("with") or {}) <= set(action()["inputs"])
    assert job["permissions"]["security-events"] == "write" and job["permissions"]["actions"] == "read"
    assert caller["permissions"] == {"contents": "read"}


def test_the_docs_table_lists_every_input_with_its_default() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## The composite action") :]
    section = section[: section.index("\n## ", 3)]
    for name, spec in action()["inputs"].items():
        default = spec.get("default", "")
        row = next((r for r in section.splitlines() if r.startswith(f"| `{name}` |")), None)
        assert row, f"docs/github.md: no row for input {name}"
        cell = row.split("|")[2].strip().strip("`")
        assert cell.strip('"') == default, f"{name}: documented default {cell} is not {default!r}"


@pytest.mark.parametrize(("base_ref", "shallow"), [("", False), ("main", True)], ids=["push", "shallow-pr"])
def test_the_check_step_runs_streamwarden_and_records_its_exit_code(
    base_ref: str, shallow: bool, tmp_path: Path
) -> None:
    """The step's script run by bash as the runner would, on the examples (two break rules)."""
    work = tmp_path / "repo"
    shutil.copytree(REPO / "contracts" / "examples", work)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    if shallow:
        (work / ".git" / "shallow").write_text("0" * 40 + "\n", encoding="utf-8")
    bin_ = Path(os.environ.get("VIRTUAL_ENV", "")) / "bin" / "streamwarden"
    if not bin_.is_file():
        bin_ = Path(__import__("sys").executable).parent / "streamwarden"
    out, summary = tmp_path / "github_output", tmp_path / "summary.md"
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "GITHUB_OUTPUT": str(out),
        "GITHUB_STEP_SUMMARY": str(summary),
        "SW_PATHS": "",
        "SW_FAIL_ON": "",
        "SW_BASELINE": "",
        "SW_EXTRA_ARGS": "--now 2026-11-25T12:00:00Z",
        "SW_BASE_REF": base_ref,
        "SW_BIN": str(bin_),
        "SW_OUT": str(tmp_path / "reports"),
    }
    script = run_steps()["Check contracts"]["run"]
    proc = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the Verdict step decides, not this one
    outputs = dict(line.split("=", 1) for line in out.read_text(encoding="utf-8").splitlines())
    if shallow:
        assert outputs["exit-code"] == "2" and "fetch-depth: 0" in proc.stdout
        return
    assert outputs["exit-code"] == "1" and outputs["reports"] == "true"
    assert outputs["dir"] == str(tmp_path / "reports")
    for name in ("streamwarden.sarif", "comment.md", "findings.json"):
        assert (tmp_path / "reports" / name).is_file(), name
    assert "::error file=" in proc.stdout and "SW-TABLE-006" in summary.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("code", "fail", "expected"), [("0", "true", 0), ("1", "true", 1), ("", "true", 2), ("1", "false", 0)]
)
def test_the_verdict_step_fails_on_findings_or_unusable_input_unless_told_not_to(
    code: str, fail: str, expected: int
) -> None:
    script = run_steps()["Verdict"]["run"]
    env = {**os.environ, "SW_CODE": code, "SW_FAIL": fail}
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", script], env=env, capture_output=True, text=True)
    assert proc.returncode == expected, proc.stdout


SHA = "0123456789abcdef0123456789abcdef01234567"


def run_install_step(tmp_path: Path, install: str, extras: str = "") -> tuple[subprocess.CompletedProcess[str], str]:
    """The action's install step as bash runs it, with a ``python3`` on PATH whose venv records what
    its pip is asked to install (installing from GitHub or the index cannot run here: no network)."""
    log, bin_dir = tmp_path / "pip.log", tmp_path / "bin"
    bin_dir.mkdir()
    python3 = bin_dir / "python3"
    python3.write_text(
        "#!/bin/sh\n"  # python3 -m venv DIR: a venv whose python records its arguments
        'mkdir -p "$3/bin"\n'
        f'printf \'#!/bin/sh\\nprintf "%%s\\\\n" "$*" >> "{log}"\\n\' > "$3/bin/python"\n'
        'printf \'#!/bin/sh\\necho "streamwarden 0.1.0"\\n\' > "$3/bin/streamwarden"\n'
        'chmod +x "$3/bin/python" "$3/bin/streamwarden"\n',
        encoding="utf-8",
    )
    python3.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "SW_INSTALL": install,
        "SW_EXTRAS": extras,
        "SW_ACTION_PATH": "/home/runner/work/_actions/your-org/streamwarden/" + SHA,
        "SW_VENV": str(tmp_path / "venv"),
    }
    script = run_steps()["Install streamwarden"]["run"]
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", script], env=env, capture_output=True, text=True)
    return proc, log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.mark.parametrize(
    ("install", "extras", "target"),
    [
        ("", "", f"/home/runner/work/_actions/your-org/streamwarden/{SHA}"),
        ("", "iceberg,spark", f"/home/runner/work/_actions/your-org/streamwarden/{SHA}[iceberg,spark]"),
        (
            f"git+https://github.com/your-org/streamwarden@{SHA}",
            "",
            f"git+https://github.com/your-org/streamwarden@{SHA}",
        ),
        (".", "", "."),
    ],
    ids=["own-copy", "own-copy-with-extras", "git-at-a-commit", "checkout-path"],
)
def test_the_action_installs_its_own_copy_or_a_pinned_spec(
    tmp_path: Path, install: str, extras: str, target: str
) -> None:
    proc, calls = run_install_step(tmp_path, install, extras)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert calls == f"-m pip install --disable-pip-version-check --quiet {target}\n"


@pytest.mark.parametrize(
    ("install", "extras"),
    [
        ("streamwarden", ""),
        ("streamwarden[iceberg]==0.1.0", ""),
        ("git+https://github.com/your-org/streamwarden@v0.1.0", ""),
        ("", "iceberg] @ https://example.org/other.whl #"),
    ],
    ids=["index-name", "index-version", "tag", "extras-that-are-not-extras"],
)
def test_the_action_refuses_a_package_name_or_a_ref_that_can_move(tmp_path: Path, install: str, extras: str) -> None:
    proc, calls = run_install_step(tmp_path, install, extras)
    assert proc.returncode == 2 and calls == "", proc.stdout + calls
    assert proc.stdout.startswith("::error title=streamwarden::")
    assert not (tmp_path / "venv").exists()  # refused before anything is installed
