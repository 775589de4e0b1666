"""Every generated file is current: `make generate` (scripts/generate.py) runs every generator, and
in check mode names each stale file and the command that regenerates it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

GENERATE = REPO / "scripts" / "generate.py"
# each generated file, and the generator that writes it
OUTPUTS = {
    "policies/index.json": "update_policy_index.py",
    "docs/rules.md": "update_docs.py",
    "README.md": "update_docs.py",
    "docs/contract-reference.md": "update_contract_reference.py",
    "contracts/schema/streamwarden-input.v1.schema.json": "update_input_schema.py",
}


def generate(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "generate.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_generated_file_is_current() -> None:
    proc = generate(REPO, "--check")
    assert proc.returncode == 0, proc.stderr


def test_make_generate_runs_every_generator() -> None:
    recipe = (REPO / "Makefile").read_text(encoding="utf-8").split("\ngenerate:", 1)[1].split("\n\n", 1)[0]
    assert "scripts/generate.py" in recipe
    listed = re.findall(r'"(update_\w+\.py)"', GENERATE.read_text(encoding="utf-8"))
    # update_flink_keys.py reads Flink's released jars (a download): it is run by hand
    scripts = {p.name for p in (REPO / "scripts").glob("update_*.py")} - {"update_flink_keys.py"}
    assert sorted(listed) == sorted(scripts) == sorted(set(OUTPUTS.values()))


def test_a_stale_file_is_named_with_the_command_and_make_generate_rewrites_it(tmp_path: Path) -> None:
    for rel in ("scripts", "policies", "docs", "contracts/schema"):
        shutil.copytree(REPO / rel, tmp_path / rel, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("pr-comment: true", "pr-comment: false"), "utf-8")
    for rel in OUTPUTS:
        if rel != "README.md":
            with (tmp_path / rel).open("a", encoding="utf-8") as f:
                f.write("\n")
    proc = generate(tmp_path, "--check")
    assert proc.returncode == 1, proc
    for rel, script in OUTPUTS.items():
        assert f"{rel} is stale: run `make generate` (or `python scripts/{script}`)" in proc.stderr, proc.stderr
    written = generate(tmp_path)
    assert written.returncode == 0, written.stderr
    assert sorted(re.findall(r"^wrote (\S+)$", written.stdout, re.MULTILINE)) == sorted(OUTPUTS)
    for rel in OUTPUTS:
        assert (tmp_path / rel).read_text(encoding="utf-8") == (REPO / rel).read_text(encoding="utf-8"), rel
    assert generate(tmp_path, "--check").returncode == 0
