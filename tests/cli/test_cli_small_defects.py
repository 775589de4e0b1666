"""Small defects a new user meets, each through the real CLI: ``-v`` before the command, the
``github`` summary line's singular, the published schema of ``check --format json`` (real output
validates against it), and the README's shell completion lines (run as a shell runs them)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW, REPO

EXAMPLES = REPO / "contracts" / "examples"
FINDINGS_SCHEMA = REPO / "contracts" / "schema" / "streamwarden-findings.v1.schema.json"
BIN = Path(sys.executable).parent


def examples_copy(tmp_path: Path) -> Path:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake", ".streamwarden-cache"))
    return root


# ------------------------------------------------------------------------------------- -v first


def test_verbose_before_the_command_is_verbose_after_it(tmp_path: Path) -> None:
    root = examples_copy(tmp_path)
    before = sw("-v", "check", "--no-cache", "--now", NOW, cwd=root)
    after = sw("check", "-v", "--no-cache", "--now", NOW, cwd=root)
    plain = sw("check", "--no-cache", "--now", NOW, cwd=root)
    assert before.code == after.code == plain.code == 1, before
    assert re.search(r"^streamwarden: checked 3 pipelines in [\d.]+s \(engine regorus\)$", before.stderr, re.M), before
    assert re.search(r"^streamwarden: checked 3 pipelines in ", after.stderr, re.M), after
    assert "checked 3 pipelines" not in plain.stderr
    assert before.stdout == after.stdout == plain.stdout


def test_verbose_before_policy_test_lists_every_test(tmp_path: Path) -> None:
    p = sw("--verbose", "policy", "test", cwd=REPO)
    assert p.code == 0, p
    assert re.search(r"^PASS policies/streamwarden/\S+_test\.rego:\d+ ", p.stdout, re.M), p
    assert sw("-v", "validate", str(EXAMPLES / "orders-enrichment" / "contract.yaml"), cwd=tmp_path).code == 0


# --------------------------------------------------------------------------- github summary line


def test_the_github_summary_line_says_one_pipeline_one_error_one_warning(tmp_path: Path) -> None:
    contract = CLEAN_CONTRACT.replace("storage: s3://", "storage: file:///tmp/").replace(
        "  num_retained: 3\n  unaligned", "  num_retained: 1\n  unaligned", 1
    )
    assert contract.count("num_retained: 1") == 1, "the clean contract changed: find one error and one warning anew"
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(contract, encoding="utf-8")
    p = sw("check", "--format", "github", "--now", NOW, cwd=tmp_path)
    assert p.code == 1, p
    assert p.stdout.splitlines()[-1] == "streamwarden: 1 pipeline, 0 passed, 1 error, 1 warning, 0 waived", p


# ------------------------------------------------------------------------------ findings schema


def validate_findings(text: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(text)
    schema = json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    errors = sorted(Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return doc


def test_schema_findings_prints_the_shipped_schema(tmp_path: Path) -> None:
    p = sw("schema", "findings", cwd=tmp_path)
    assert p.code == 0, p
    assert p.stdout == FINDINGS_SCHEMA.read_text(encoding="utf-8")
    path = sw("schema", "findings", "--path", cwd=tmp_path).stdout.strip()
    assert Path(path).read_text(encoding="utf-8") == p.stdout


def test_check_json_output_validates_against_the_findings_schema(tmp_path: Path) -> None:
    root = examples_copy(tmp_path)
    # the examples: findings from the contract and from the deployment files
    plain = validate_findings(sw("check", "--format", "json", "--no-cache", "--now", NOW, cwd=root).stdout)
    assert {f["source"] for f in plain["findings"]} >= {"contract", "deployment"}
    assert plain["errors"] == []

    # a waiver, a baseline, and an unusable file, in one document
    assert sw("check", "--write-baseline", "baseline.json", "--now", NOW, cwd=root).code == 0
    found = next(f for f in plain["findings"] if f["source"] == "contract" and f["rule"].startswith("SW-CKPT"))
    contract = root / found["file"]
    waiver = f"  - {{rule: {found['rule']}, reason: migration, expires: 2026-12-31, approved_by: data-platform}}\n"
    text = contract.read_text(encoding="utf-8")
    text = (
        text.replace("\nwaivers:\n", "\nwaivers:\n" + waiver, 1)
        if "\nwaivers:\n" in text
        else f"{text}waivers:\n{waiver}"
    )
    contract.write_text(text, encoding="utf-8")
    (root / "broken").mkdir()
    (root / "broken" / "contract.yaml").write_text("apiVersion: streamwarden/v1\nkind: PipelineContract\n")
    p = sw("check", "--format", "json", "--no-cache", "--baseline", "baseline.json", "--now", NOW, cwd=root)
    assert p.code == 2, p
    doc = validate_findings(p.stdout)
    assert any(f["waived"] and f["waiver"]["reason"] == "migration" for f in doc["findings"]), doc["findings"]
    assert any(f.get("baselined") for f in doc["findings"])
    assert doc["errors"] and doc["errors"][0]["file"].endswith("broken/contract.yaml")


def test_the_findings_schema_refuses_what_the_document_never_holds(tmp_path: Path) -> None:
    schema = json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    good = json.loads(sw("check", "--format", "json", "--no-cache", "--now", NOW, cwd=examples_copy(tmp_path)).stdout)
    assert not list(validator.iter_errors(good))
    bad = json.loads(json.dumps(good))
    bad["findings"][0]["severity"] = "fatal"
    bad["findings"][0]["fingerprint"] = "not hex"
    del bad["summary"]["passed"]
    messages = {e.message for e in validator.iter_errors(bad)}
    assert len(messages) == 3, messages


# ---------------------------------------------------------------------------- shell completion


def completion_lines() -> dict[str, str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- shell-completion -->\n```sh\n(?P<sh>.*?)```\n<!-- /shell-completion -->", readme, re.S)
    assert block, "README.md must hold the shell completion lines between <!-- shell-completion --> markers"
    lines = [line.split("#")[0].strip() for line in block.group("sh").splitlines() if line.strip()]
    return {shell: next(line for line in lines if f"={shell}_source" in line) for shell in ("bash", "zsh", "fish")}


def test_the_readme_bash_completion_line_completes_commands_and_choices(tmp_path: Path) -> None:
    line = completion_lines()["bash"]
    script = (
        f"{line}\n"
        "complete_line() {\n"  # what bash does on TAB: COMP_WORDS, COMP_CWORD, then the function
        '  COMPREPLY=(); COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _streamwarden_completion streamwarden\n'
        '  echo "${COMPREPLY[*]}"\n'
        "}\n"
        "complete_line streamwarden sch\n"
        "complete_line streamwarden schema f\n"
        "complete_line streamwarden check --format s\n"
    )
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["schema", "findings", "sarif"], proc.stdout + proc.stderr


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_the_readme_completion_lines_for_zsh_and_fish_print_their_scripts(shell: str, tmp_path: Path) -> None:
    variable, _, _ = completion_lines()[shell].partition(" streamwarden")
    name, _, value = variable.removeprefix('eval "$(').partition("=")
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path), name: value}
    proc = subprocess.run([str(BIN / "streamwarden")], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "_streamwarden_completion" in proc.stdout and "_STREAMWARDEN_COMPLETE" in proc.stdout
