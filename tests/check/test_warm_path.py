"""The warm path of check --cache: a run's entries are written in one pack that the next run reads
at once, and a run whose contracts are all cache hits imports neither jsonschema, the engine nor
PyYAML.

Self-check mode (tests/conftest.py) stays on: every hit, from a pack too, is evaluated again and
compared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
from tests.check.test_result_cache import check, findings, make_repo, stats

from streamwarden.check.cache import FORMAT
from streamwarden.core.resources import CONFIG_SCHEMA, CONTRACT_SCHEMA, load_schema


def packs(root: Path) -> list[Path]:
    return sorted((root / ".streamwarden-cache" / "packs").glob("*.json"))


def test_the_run_leaves_a_pack_and_a_change_makes_a_new_one(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=3)
    first = check(root)
    assert stats(first) == (0, 3)
    assert len(packs(root)) == 1
    pack = json.loads(packs(root)[0].read_text())
    assert sorted(e["name"] for e in pack["entries"].values()) == ["pipeline-0", "pipeline-1", "pipeline-2"]
    second = check(root)
    assert stats(second) == (3, 0) and findings(second) == findings(first)
    assert len(packs(root)) == 1  # it held every entry: not written again
    # a deployment file changes: that contract misses (its entry's dependency), the others hit
    deploy = root / "contracts" / "p1" / "deploy" / "config.yaml"
    deploy.write_text(deploy.read_text().replace("60 s", "90 s"), encoding="utf-8")
    assert stats(check(root)) == (2, 1)
    assert stats(check(root)) == (3, 0)
    c = root / "contracts" / "p2" / "contract.yaml"
    c.write_text(c.read_text().replace("min_pause: 30s", "min_pause: 90s"), encoding="utf-8")
    p = check(root)
    assert stats(p) == (2, 1)
    assert any(f[1] == "SW-CKPT-002" and f[0] == "pipeline-2" for f in findings(p))
    assert len(packs(root)) == 2
    assert stats(check(root)) == (3, 0)


def test_a_corrupt_pack_is_a_miss_and_the_entries_still_answer(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=2)
    check(root)
    (pack,) = packs(root)
    entries = json.loads(pack.read_text())["entries"]
    first = sorted(entries)[0]
    entries[first]["findings"] = [{"rule": "FORGED"}]  # not a valid entry: ignored, its own file answers
    entries[sorted(entries)[1]]["key"] = "another key"
    pack.write_text(json.dumps({"format": FORMAT, "entries": entries}), encoding="utf-8")
    assert stats(check(root)) == (2, 0)
    pack.write_text("{not json", encoding="utf-8")
    assert stats(check(root)) == (2, 0)


def test_an_entry_only_in_the_pack_still_answers_and_is_checked(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=2)
    check(root)
    for f in (root / ".streamwarden-cache" / "v1").rglob("*.json"):
        f.unlink()
    assert stats(check(root)) == (2, 0)
    deploy = root / "contracts" / "p0" / "deploy" / "config.yaml"
    deploy.write_text(deploy.read_text().replace("rocksdb", "hashmap"), encoding="utf-8")
    assert stats(check(root)) == (1, 1)


def test_a_full_hit_run_imports_neither_jsonschema_nor_the_engine_nor_pyyaml(tmp_path: Path) -> None:
    """Nothing is parsed: no contract (the cache answers), no METADATA (the built-in pack's index),
    no streamwarden.yaml (this repository has none)."""
    root = make_repo(tmp_path, n=2)
    check(root)
    code = (
        "import atexit, sys, json\n"
        "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('jsonschema', 'regorus', 'referencing', 'yaml'))), file=sys.stderr))\n"
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


def test_the_review_of_a_pull_request_uses_the_cache_and_says_the_same(tmp_path: Path) -> None:
    """check --base --format markdown|github: the contracts the pull request leaves as they are
    come from the cache; the review (changed, reworded, added contracts) is the same."""
    from tests.conftest import named_contract
    from tests.gitrepo import Repo

    repo = Repo(tmp_path)
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    for i in range(4):
        repo.write(f"contracts/p{i}.yaml", named_contract(f"p-{i}"))
    repo.commit("base")
    repo.branch("feature")
    p1 = named_contract("p-1")
    repo.write("contracts/p1.yaml", p1.replace("min_pause: 30s", "min_pause: 90s"))  # changed
    repo.write("contracts/p2.yaml", "# reworded\n" + named_contract("p-2"))
    repo.write("contracts/p4.yaml", named_contract("p-4"))  # added
    repo.commit("the pull request")
    for fmt in ("markdown", "github"):
        outputs = []
        for args in (("--no-cache",), (), ()):  # without the cache, filling it, from it
            summary = tmp_path / f"summary-{fmt}-{len(outputs)}.md"
            p = check(repo.path, *args, "--base", "main", "--format", fmt, env={"GITHUB_STEP_SUMMARY": str(summary)})
            review = p.stdout if fmt == "markdown" else summary.read_text(encoding="utf-8")
            assert "p-1" in review and "p-2" in review and "p-4" in review
            outputs.append((p.stdout, review))
        assert stats(p) == (2, 0)  # p0 and p3; the others are evaluated with their base
        assert outputs[2] == outputs[0]
