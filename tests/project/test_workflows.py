"""The GitHub workflows (ours and the reusable one), the caller snippet users copy, and the
pre-commit hooks: valid for actionlint, GitHub's workflow schema, shellcheck and pre-commit, and
read-only except where a job has to write."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import REPO
from tests.reporting import check_jsonschema, missing_tool, run_actionlint

WORKFLOWS = REPO / ".github" / "workflows"
REUSABLE = WORKFLOWS / "streamwarden.yml"
CI = WORKFLOWS / "ci.yml"
DOCS = REPO / "docs" / "github.md"
_SNIPPET = re.compile(r"<!-- caller-workflow -->\n```yaml\n(?P<yaml>.*?)```\n<!-- /caller-workflow -->", re.DOTALL)


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in doc:  # YAML 1.1 reads the key `on` as a boolean
        doc["on"] = doc.pop(True)
    return doc


def caller_snippet(text: str | None = None) -> str:
    m = _SNIPPET.search(text if text is not None else DOCS.read_text(encoding="utf-8"))
    assert m, "docs/github.md must hold the caller workflow between <!-- caller-workflow --> markers"
    return m.group("yaml")


@pytest.fixture
def caller(tmp_path: Path) -> Path:
    path = tmp_path / ".github" / "workflows" / "caller.yml"
    path.parent.mkdir(parents=True)
    path.write_text(caller_snippet(), encoding="utf-8")
    return path


def all_workflows(caller: Path) -> list[Path]:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert {f.name for f in files} >= {"ci.yml", "streamwarden.yml"}
    return [*files, caller]


def test_workflows_and_the_caller_snippet_pass_actionlint(caller: Path, tmp_path: Path) -> None:
    files = all_workflows(caller)
    proc = run_actionlint(files, tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert f"Checking {len(files)} workflow file(s)" in proc.stdout
    assert "All workflow files passed lint checks" in proc.stdout


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n        with:\n          no-such-input: 1\n"
        "      - run: echo ${{ github.event.no_such_thing.x }}\n        if: ${{ inputs.nope }}\n",
        encoding="utf-8",
    )
    proc = run_actionlint([broken], tmp_path)
    assert proc.returncode != 0
    assert "no-such-input" in proc.stdout


def test_workflows_and_the_caller_snippet_match_githubs_workflow_schema(caller: Path) -> None:
    files = [str(f) for f in all_workflows(caller)]
    proc = subprocess.run(
        [*check_jsonschema(), "--builtin-schema", "vendor.github-workflows", *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_catches_an_invalid_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    stepz: []\n", encoding="utf-8")
    proc = subprocess.run(
        [*check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(bad)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0


def run_scripts(path: Path) -> list[tuple[str, str]]:
    out = []
    for job_id, job in load(path)["jobs"].items():
        for i, step in enumerate(job.get("steps") or []):
            if "run" in step:
                out.append((f"{path.name}:{job_id}:{step.get('name', i)}", step["run"]))
    return out


@pytest.mark.parametrize("path", [REUSABLE, CI], ids=lambda p: p.name)
def test_run_scripts_take_inputs_only_from_the_environment(path: Path) -> None:
    for where, script in run_scripts(path):
        assert "${{" not in script, f"{where}: use env: for expressions, never interpolate them into a script"


@pytest.mark.parametrize("path", [REUSABLE, CI], ids=lambda p: p.name)
def test_run_scripts_pass_shellcheck(path: Path, tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        missing_tool("shellcheck", "apt-get install shellcheck (preinstalled on GitHub's ubuntu runners)")
    for n, (where, script) in enumerate(run_scripts(path)):
        f = tmp_path / f"step{n}.sh"
        f.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + script, encoding="utf-8")
        proc = subprocess.run(["shellcheck", "-s", "bash", str(f)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{where}:\n{proc.stdout}"


def test_the_reusable_workflow_is_read_only_except_the_sarif_upload() -> None:
    doc = load(REUSABLE)
    assert "workflow_call" in doc["on"]
    assert "permissions" not in doc  # jobs declare their own; the comment job inherits the caller's grant
    jobs = doc["jobs"]
    assert jobs["check"]["permissions"] == {"contents": "read"}
    assert jobs["code-scanning"]["permissions"] == {"actions": "read", "contents": "read", "security-events": "write"}
    assert "permissions" not in jobs["comment"] and "inputs.pr-comment" in jobs["comment"]["if"]
    writes = {(j, k) for j, job in jobs.items() for k, v in (job.get("permissions") or {}).items() if v == "write"}
    assert writes == {("code-scanning", "security-events")}
    uses = [s["uses"] for s in jobs["code-scanning"]["steps"] if "uses" in s]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    for job in jobs.values():
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_the_check_job_writes_the_job_summary_and_every_report() -> None:
    script = dict(run_scripts(REUSABLE))["streamwarden.yml:check:Check contracts"]
    assert "--format github" in script  # annotations, and the job summary via $GITHUB_STEP_SUMMARY
    for fmt in ("sarif", "markdown", "json"):
        assert f'--report "{fmt}=' in script
    assert "--baseline" in script and "--base" in script


def test_the_caller_snippet_grants_what_the_reusable_workflow_needs_and_uses_real_inputs() -> None:
    caller = yaml.safe_load(caller_snippet())
    (job,) = caller["jobs"].values()
    uses = re.fullmatch(r"[\w.-]+/[\w.-]+/\.github/workflows/streamwarden\.yml@(?P<sha>[0-9a-f]{40})", job["uses"])
    assert uses, job["uses"]  # pinned by commit, never by a tag that can move
    assert re.search(rf"uses: \S+@{uses['sha']} # v\d+\.\d+\.\d+\n", caller_snippet())  # the release, readable
    assert job["with"]["install"] == f"git+https://github.com/your-org/streamwarden@{uses['sha']}"  # the same commit
    assert job["permissions"]["security-events"] == "write" and job["permissions"]["actions"] == "read"
    inputs = load(REUSABLE)["on"]["workflow_call"]["inputs"]
    assert set(job["with"]) <= set(inputs)
    assert caller["permissions"] == {"contents": "read"}


def test_the_readme_copy_of_the_caller_snippet_matches_the_docs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "<!-- caller-workflow -->" in readme, "README.md must hold the caller workflow (make generate copies it)"
    assert caller_snippet(readme) == caller_snippet()


def test_ci_runs_tests_lint_policy_tests_workflow_lint_and_the_reusable_workflow() -> None:
    doc = load(CI)
    assert doc["permissions"] == {"contents": "read"}
    jobs = doc["jobs"]
    assert {"tests", "lint", "policy-tests", "workflow-lint", "dogfood"} <= set(jobs)
    steps = {s.get("uses", "").split("@")[0] for s in jobs["tests"]["steps"]}
    assert "open-policy-agent/setup-opa" in steps  # the OPA integration test runs there
    assert jobs["dogfood"]["uses"] == "./.github/workflows/streamwarden.yml"
    assert doc["env"]["STREAMWARDEN_REQUIRE_TOOLS"] == "1"


def test_pre_commit_hooks_validate_and_check() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    by_id = {h["id"]: h for h in hooks}
    assert by_id["streamwarden-validate"]["entry"] == "streamwarden validate"
    assert by_id["streamwarden-check"]["entry"] == "streamwarden check"
    for h in hooks:
        assert h["language"] == "python" and h["pass_filenames"] is False
        assert re.search(h["files"], "contracts/orders.yaml")
    exe = shutil.which("pre-commit") or str(Path(__import__("sys").executable).parent / "pre-commit")
    if not Path(exe).is_file():
        missing_tool("pre-commit (PyPI)", "pip install pre-commit")
    proc = subprocess.run(
        [exe, "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


SHA = "0123456789abcdef0123456789abcdef01234567"
PINNED = [
    ".",
    "/home/runner/work/streamwarden",
    f"git+https://github.com/your-org/streamwarden@{SHA}",
    f"streamwarden[iceberg] @ git+https://github.com/your-org/streamwarden@{SHA}",
    f"git+ssh://git@github.com/your-org/streamwarden@{SHA}#egg=streamwarden",
    "https://example.org/streamwarden-0.1.0-py3-none-any.whl#sha256=" + "ab" * 32,
]
UNPINNED = [
    "streamwarden",  # whatever is published under the name
    "streamwarden==0.1.0",  # whoever registers the name publishes 0.1.0 too
    "streamwarden[iceberg]==0.1.0",
    "git+https://github.com/your-org/streamwarden@v0.1.0",  # a tag can be moved
    "git+https://github.com/your-org/streamwarden@main",
    "git+https://github.com/your-org/streamwarden",
    "https://example.org/streamwarden-0.1.0-py3-none-any.whl",
    f"git+https://github.com/your-org/streamwarden@{SHA} --index-url http://127.0.0.1:1/simple",
    ". --extra-index-url http://127.0.0.1:1/simple",
]


def recording_python(bin_dir: Path, log: Path) -> None:
    """A ``python`` on PATH that records its arguments: installing from GitHub or the index cannot
    run here (no network); what the step hands pip is what is tested."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "python"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\n', encoding="utf-8")
    script.chmod(0o755)


def run_install_step(spec: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    script = dict(run_scripts(REUSABLE))["streamwarden.yml:check:Install streamwarden"]
    log = tmp_path / "pip.log"
    recording_python(tmp_path / "bin", log)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "SW_INSTALL": spec}
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", script], env=env, capture_output=True, text=True)
    return proc, log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.mark.parametrize("spec", PINNED)
def test_the_reusable_workflow_installs_a_pinned_spec(spec: str, tmp_path: Path) -> None:
    proc, calls = run_install_step(spec, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert calls == f"-m pip install --disable-pip-version-check --quiet {spec}\n"


@pytest.mark.parametrize("spec", UNPINNED)
def test_the_reusable_workflow_refuses_a_package_name_or_a_ref_that_can_move(spec: str, tmp_path: Path) -> None:
    proc, calls = run_install_step(spec, tmp_path)
    assert proc.returncode == 2 and calls == "", proc.stdout + calls
    assert proc.stdout.startswith("::error title=streamwarden::install must be pinned: a git URL at a commit SHA")
    assert proc.stdout.count("\n") == 1  # one line, which does not echo the value into a workflow command


def test_the_install_input_is_required_without_a_default() -> None:
    spec = load(REUSABLE)["on"]["workflow_call"]["inputs"]["install"]
    assert spec["required"] is True and "default" not in spec
