"""The warm path of check --cache: one manifest per run answers every file with one read, and a
run whose contracts are all cache hits imports neither jsonschema nor the Rego engine.

Self-check mode (tests/conftest.py) stays on: a manifest that held is compared with the results
evaluated again (run._finish_cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
from tests.test_result_cache import check, findings, make_repo, stats

from streamwarden.resources import CONFIG_SCHEMA, CONTRACT_SCHEMA, load_schema


def runs(root: Path) -> list[Path]:
    return sorted((root / ".streamwarden-cache" / "runs").glob("*.json"))


def test_the_run_leaves_one_manifest_for_its_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=3)
    first = check(root)
    assert stats(first) == (0, 3)
    assert len(runs(root)) == 1
    manifest = json.loads(runs(root)[0].read_text())
    assert [e["name"] for e in manifest["entries"]] == ["pipeline-0", "pipeline-1", "pipeline-2"]
    second = check(root)
    assert stats(second) == (3, 0) and findings(second) == findings(first)
    # a deployment file changes: that contract misses (its entry's dependency), the others hit
    deploy = root / "contracts" / "p1" / "deploy" / "config.yaml"
    deploy.write_text(deploy.read_text().replace("60 s", "90 s"), encoding="utf-8")
    assert stats(check(root)) == (2, 1)
    assert len(runs(root)) == 1  # the same files: their manifest is written again, with the new entry
    assert stats(check(root)) == (3, 0)
    c = root / "contracts" / "p2" / "contract.yaml"
    c.write_text(c.read_text() + "# a comment\n", encoding="utf-8")
    assert stats(check(root)) == (2, 1)
    assert len(runs(root)) == 2  # other bytes: another manifest


def test_a_corrupt_manifest_is_a_miss_and_the_entries_still_answer(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=2)
    check(root)
    for m in runs(root):
        m.write_text('{"format": "streamwarden-cache/1", "key": "x", "entries": [1]}', encoding="utf-8")
    p = check(root)
    assert stats(p) == (2, 0)


def test_a_manifest_for_other_files_is_not_used(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=2)
    check(root)
    c = root / "contracts" / "p0" / "contract.yaml"
    c.write_text(c.read_text().replace("min_pause: 30s", "min_pause: 90s"), encoding="utf-8")
    p = check(root)
    assert stats(p) == (1, 1)
    assert any(f[1] == "SW-CKPT-002" for f in findings(p))


def test_a_full_hit_run_imports_neither_jsonschema_nor_the_engine(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=2)
    check(root)
    code = (
        "import atexit, sys, json\n"
        "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('jsonschema', 'regorus', 'referencing'))), file=sys.stderr))\n"
        "from streamwarden.cli import main\n"
        "sys.argv = ['streamwarden', 'check', '-v', '--format', 'json', '--now', '2026-12-30T12:00:00Z']\n"
        "main()\n"
    )
    env = {**os.environ, "NO_COLOR": "1", "STREAMWARDEN_SELF_CHECK": "0"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    assert "cache 2 hits, 0 misses" in proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_shipped_schemas_are_valid_json_schemas() -> None:
    """The compiled fast check trusts the schema it compiles: a run does not check it again."""
    for name in (CONTRACT_SCHEMA, CONFIG_SCHEMA):
        jsonschema.Draft202012Validator.check_schema(load_schema(name))
