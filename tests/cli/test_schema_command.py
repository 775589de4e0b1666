"""``streamwarden schema``: the shipped JSON Schemas for editors and policy authors, and the
examples' modelines that point an editor at them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.cli import sw
from tests.conftest import REPO

SCHEMA_DIR = REPO / "contracts" / "schema"
FILES = {
    "contract": "pipeline-contract.v1.schema.json",
    "config": "streamwarden-config.v1.schema.json",
    "input": "streamwarden-input.v1.schema.json",
    "findings": "streamwarden-findings.v1.schema.json",
    "openlineage": "streamwarden-openlineage-run-facet.v1.schema.json",
}
MODELINE = "# yaml-language-server: $schema="


def test_schema_prints_the_contract_schema_by_default(tmp_path: Path) -> None:
    p = sw("schema", cwd=tmp_path)
    assert p.code == 0, p
    assert p.json() == json.loads((SCHEMA_DIR / FILES["contract"]).read_text(encoding="utf-8"))


@pytest.mark.parametrize("which", list(FILES))
def test_schema_prints_each_named_schema_byte_for_byte(which: str, tmp_path: Path) -> None:
    p = sw("schema", which, cwd=tmp_path)
    assert p.code == 0, p
    assert p.stdout == (SCHEMA_DIR / FILES[which]).read_text(encoding="utf-8")


@pytest.mark.parametrize("which", list(FILES))
def test_schema_path_prints_the_file_the_schema_is_read_from(which: str, tmp_path: Path) -> None:
    p = sw("schema", which, "--path", cwd=tmp_path)
    assert p.code == 0, p
    path = Path(p.stdout.strip())
    assert path.is_absolute() and path.name == FILES[which]
    assert path.read_text(encoding="utf-8") == sw("schema", which, cwd=tmp_path).stdout


def test_schema_refuses_an_unknown_name_with_exit_2(tmp_path: Path) -> None:
    p = sw("schema", "contracts", cwd=tmp_path)
    assert p.code == 2
    assert "'contract', 'config', 'input'" in p.stderr


def test_schema_path_points_into_the_package_when_installed_as_a_wheel(tmp_path: Path) -> None:
    # the wheel's layout (pyproject force-include: contracts/schema -> streamwarden/_schema)
    site = tmp_path / "site"
    shutil.copytree(REPO / "src" / "streamwarden", site / "streamwarden", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(SCHEMA_DIR, site / "streamwarden" / "_schema")
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-m", "streamwarden.cli", "schema", "config", "--path"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == site / "streamwarden" / "_schema" / FILES["config"]


EXAMPLES = sorted((REPO / "contracts" / "examples").glob("*/contract.yaml"))


@pytest.mark.parametrize(
    ("path", "which"),
    [(p, "contract") for p in EXAMPLES] + [(REPO / "contracts" / "examples" / "streamwarden.yaml", "config")],
    ids=lambda v: str(v.relative_to(REPO)) if isinstance(v, Path) else v,
)
def test_examples_carry_a_first_line_modeline_naming_their_schema_in_this_repo(path: Path, which: str) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(MODELINE), first
    target = (path.parent / first[len(MODELINE) :].strip()).resolve()
    assert target == (SCHEMA_DIR / FILES[which]).resolve()
    assert yaml.safe_load(path.read_text(encoding="utf-8"))  # a comment: the document is unchanged


def test_the_modeline_does_not_disturb_validation_or_line_numbers() -> None:
    p = sw("validate", *(str(e) for e in EXAMPLES), cwd=REPO)
    assert p.code == 0, p
    p = sw("check", *(str(e.parent) for e in EXAMPLES), "--format", "json", "--fail-on", "never", cwd=REPO)
    assert p.code == 0, p
    findings = [f for f in p.json()["findings"] if f["file"].endswith("contract.yaml") and f["line"]]
    assert findings
    for f in findings:  # each line still names the field (or, when it is absent, the item holding it)
        line = (REPO / f["file"]).read_text(encoding="utf-8").splitlines()[f["line"] - 1]
        keys = [k.split("[")[0] for k in f["path"].split(".")]
        assert any(f"{k}:" in line for k in keys) or line.lstrip().startswith("- "), (f["path"], f["line"], line)
