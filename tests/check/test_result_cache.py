"""check --cache: a hit reuses findings, and every input a result depends on makes it miss.

Every test runs in self-check mode (tests/conftest.py): a hit is evaluated again and compared, so
a stale entry fails the run (exit 2) instead of passing unnoticed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, named_contract
from tests.gitrepo import Repo

from streamwarden.check.cache import FORMAT, file_state
from streamwarden.check.cache.disk import evict
from streamwarden.check.cache.entry import _STORED
from streamwarden.check.cache.key import _sha
from streamwarden.contracts.load import discover_contracts

NOW = "2026-12-30T12:00:00Z"
DEPLOYMENT = (
    "execution.checkpointing.interval: 60 s\n"
    "execution.checkpointing.mode: EXACTLY_ONCE\n"
    "state.backend.type: rocksdb\n"
    "pipeline.max-parallelism: 128\n"
)
WAIVER = "waivers:\n  - {rule: SW-STATE-002, reason: migration, expires: 2026-12-31, approved_by: platform}\n"


def contract(name: str = "orders-enrichment") -> str:
    text = named_contract(name) if name != "orders-enrichment" else CLEAN_CONTRACT  # a table of its own
    text = text.replace(f"job:\n  name: {name}\n", f"job:\n  name: {name}\n  deployment: [deploy/config.yaml]\n")
    return text.replace("  backend: rocksdb", "  backend: hashmap") + WAIVER  # SW-STATE-002, waived


def make_repo(root: Path, n: int = 2) -> Path:
    for i in range(n):
        d = root / "contracts" / f"p{i}"
        (d / "deploy").mkdir(parents=True)
        (d / "contract.yaml").write_text(contract(f"pipeline-{i}"), encoding="utf-8")
        (d / "deploy" / "config.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    return root


def stats(p: Proc) -> tuple[int, int] | None:
    m = re.search(r"cache (\d+) hits?, (\d+) miss(?:es)?", p.stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check(root: Path, *args: str, now: str = NOW, env: dict[str, str] | None = None) -> Proc:
    p = sw("check", "-v", "--format", "json", "--now", now, *args, cwd=root, env=env)
    assert p.code in (0, 1), p
    return p


def findings(p: Proc) -> list[tuple[str, str, str, bool]]:
    return sorted((f["pipeline"], f["rule"], f["message"], f["waived"]) for f in p.json()["findings"])


def test_second_run_hits_and_reports_the_same(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    first = check(root)
    assert stats(first) == (0, 2)
    second = check(root)
    assert stats(second) == (2, 0)
    assert second.stdout == first.stdout
    assert (root / ".streamwarden-cache" / ".gitignore").read_text().strip().endswith("*")
    off = check(root, "--no-cache")
    assert stats(off) is None and findings(off) == findings(first)
    assert stats(check(root, env={"STREAMWARDEN_CACHE": ""})) is None
    elsewhere = tmp_path / "elsewhere"
    assert stats(check(root, env={"STREAMWARDEN_CACHE": str(elsewhere)})) == (0, 2)
    assert stats(check(root, "--cache", str(elsewhere))) == (2, 0)
    assert not list((root / ".streamwarden-cache").rglob(".tmp-*"))  # written atomically, nothing left over


def test_each_input_kind_misses(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    (root / "streamwarden.yaml").write_text("policies: [policies]\n", encoding="utf-8")
    policy = root / "policies" / "acme.rego"
    policy.parent.mkdir()
    policy.write_text(
        'package acme\n\nimport rego.v1\n\nwarn contains {"rule": "ACME-001", "message": "one", "path": "job.name"} '
        "if input.contract.job.parallelism > 100\n",
        encoding="utf-8",
    )
    check(root)
    assert stats(check(root)) == (2, 0)

    # the contract's bytes
    c0 = root / "contracts" / "p0" / "contract.yaml"
    c0.write_text(c0.read_text().replace("interval: 60s", "interval: 61s"), encoding="utf-8")
    assert stats(check(root)) == (1, 1)

    # a deployment file it names: the finding about it appears
    dep = root / "contracts" / "p1" / "deploy" / "config.yaml"
    dep.write_text(DEPLOYMENT.replace("60 s", "90 s"), encoding="utf-8")
    p = check(root)
    assert stats(p) == (1, 1)
    assert any(f[0] == "pipeline-1" and f[1] == "SW-CKPT-003" for f in findings(p))

    # a policy file of streamwarden.yaml's policy directory
    policy.write_text(policy.read_text().replace("> 100", "> 1"), encoding="utf-8")
    p = check(root)
    assert stats(p) == (0, 2)
    assert {f[0] for f in findings(p) if f[1] == "ACME-001"} == {"pipeline-0", "pipeline-1"}

    # a custom policy added with --policy
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "more.rego").write_text(
        'package more\n\nimport rego.v1\n\ninfo contains {"rule": "MORE-001", "message": "m"} if true\n',
        encoding="utf-8",
    )
    p = check(root, "--policy", str(extra))
    assert stats(p) == (0, 2)
    assert sum(1 for f in findings(p) if f[1] == "MORE-001") == 2
    assert stats(check(root, "--policy", str(extra))) == (2, 0)
    assert stats(check(root)) == (2, 0)  # the run without it still has its own entries


def run_patched(root: Path, patch: str, *args: str) -> Proc:
    """The real CLI in a subprocess, with one thing changed before it runs."""
    code = f"import sys\n{patch}\nfrom streamwarden.cli import main\n"
    code += "sys.argv = ['streamwarden', *sys.argv[1:]]\nmain()\n"
    proc = subprocess.run(
        [sys.executable, "-c", code, "check", "-v", "--format", "json", "--now", NOW, *args],
        cwd=root,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
        timeout=120,
    )
    p = Proc(proc)
    assert p.code in (0, 1) and "Traceback" not in p.output, p
    return p


def test_tool_version_and_engine_version_miss(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=1)
    check(root)
    assert stats(check(root)) == (1, 0)
    assert stats(run_patched(root, "import streamwarden.check.cache.key as c; c.__version__ = '9.9.9'")) == (0, 1)
    # another build of the engine (its installed files differ)
    engine = (
        "import streamwarden.check.cache.key as c; real = c.engine_build\nc.engine_build = lambda n: 'other:' + real(n)"
    )
    assert stats(run_patched(root, engine)) == (0, 1)


def test_engine_is_part_of_the_key(tmp_path: Path) -> None:
    from streamwarden.check.cache import make_context

    common = {"policy_files": [], "root": tmp_path, "known_keys": (), "mode": "check", "waiver_horizon_ms": 0}
    regorus = make_context(engine="regorus", engine_options={}, **common)  # type: ignore[arg-type]
    opa = make_context(engine="opa", engine_options={"url": "http://opa:8181"}, **common)  # type: ignore[arg-type]
    assert regorus.key != opa.key


def test_now_crossing_a_waiver_expiry_misses(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=1)
    before = check(root, now="2026-12-30T12:00:00Z")
    assert not any(f[1] == "SW-WAIVER-001" for f in findings(before))
    # another time on the same side of every waiver's end: the same result, a hit
    assert stats(check(root, now="2026-12-15T00:00:00Z")) == (1, 0)
    after = check(root, now="2027-01-01T00:00:00Z")
    assert stats(after) == (0, 1)
    assert any(f[1] == "SW-WAIVER-001" for f in findings(after))
    assert any(f[1] == "SW-STATE-002" and not f[3] for f in findings(after))  # no longer waived
    # an expired waiver's finding shows now_ms: the entry holds until the next waiver end (here
    # none), and a hit shows its own time there (self-check mode evaluates it again and compares)
    assert stats(check(root, now="2027-01-01T00:00:00Z")) == (1, 0)
    later = check(root, now="2027-01-02T00:00:00Z")
    assert stats(later) == (1, 0)
    (expired,) = [f for f in later.json()["findings"] if f["rule"] == "SW-WAIVER-001"]
    assert expired["evidence"]["now_ms"] == 1798848000000  # 2027-01-02T00:00:00Z


def test_now_bringing_a_waiver_within_the_horizon_misses(tmp_path: Path) -> None:
    # 2027-12-31 begins more than 365 days after 2026-11-25 (SW-WAIVER-001 refuses the waiver),
    # and within them from 2026-12-31 on: the entry holds on each side of that day only
    root = make_repo(tmp_path, n=1)
    c = root / "contracts" / "p0" / "contract.yaml"
    c.write_text(c.read_text(encoding="utf-8").replace("2026-12-31", "2027-12-31"), encoding="utf-8")
    before = check(root, now="2026-11-25T12:00:00Z")
    assert any(f[1] == "SW-WAIVER-001" and "more than waivers.max_horizon" in f[2] for f in findings(before))
    assert any(f[1] == "SW-STATE-002" and not f[3] for f in findings(before))  # not waived
    assert stats(check(root, now="2026-12-20T00:00:00Z")) == (1, 0)  # still beyond: a hit
    after = check(root, now="2027-01-02T00:00:00Z")
    assert stats(after) == (0, 1)
    assert not any(f[1] == "SW-WAIVER-001" for f in findings(after))
    assert any(f[1] == "SW-STATE-002" and f[3] for f in findings(after))  # waived now
    assert stats(check(root, now="2027-02-01T00:00:00Z")) == (1, 0)


def test_pull_request_base(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    make_repo(repo.path, n=2)
    (repo.path / ".gitignore").write_text(".streamwarden-cache/\n", encoding="utf-8")
    c0 = repo.path / "contracts" / "p0" / "contract.yaml"
    c0.write_text(c0.read_text().replace("max_parallelism: 128", "max_parallelism: 256"), encoding="utf-8")
    repo.commit("older: p0 had another max parallelism")
    repo.git("tag", "older")
    c0.write_text(c0.read_text().replace("max_parallelism: 256", "max_parallelism: 128"), encoding="utf-8")
    repo.commit("base")
    repo.branch("feature")
    (repo.path / "contracts" / "p0" / "README.md").write_text("docs only\n", encoding="utf-8")
    repo.commit("a change that leaves both contracts as they are")
    plain = check(repo.path)
    assert stats(plain) == (0, 2)
    # unchanged contracts under unchanged policies: evaluated without their base, the plain entries
    pr = check(repo.path, "--base", "main")
    assert stats(pr) == (2, 0)
    assert findings(pr) == findings(plain)
    # another base, on which p0 differs: p0 is evaluated against it (never from the cache)
    pr = check(repo.path, "--base", "older")
    assert stats(pr) == (1, 0)  # p1 only: p0 is not looked up
    assert any(f[0] == "pipeline-0" and f[1] == "SW-STATE-007" for f in findings(pr))


def entries(root: Path) -> list[Path]:
    """The entry files, once the packs (which would answer first) are gone."""
    for pack in (root / ".streamwarden-cache" / "packs").glob("*.json"):
        pack.unlink()
    return sorted((root / ".streamwarden-cache" / "v1").rglob("*.json"))


def test_corrupt_and_foreign_entries_are_misses(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=2)
    first = check(root)
    a, b = entries(root)
    a.write_text("{not json", encoding="utf-8")
    data = json.loads(b.read_text())
    data["key"] = "0" * 64  # an entry copied under another key
    b.write_text(json.dumps(data), encoding="utf-8")
    p = check(root)
    assert stats(p) == (0, 2) and findings(p) == findings(first)
    entries(root)
    assert stats(check(root)) == (2, 0)  # rewritten
    # an entry that is a symbolic link is not followed
    a, _ = entries(root)
    target = tmp_path / "elsewhere.json"
    target.write_text(a.read_text(), encoding="utf-8")
    a.unlink()
    a.symlink_to(target)
    assert stats(check(root)) == (1, 1)


def test_entries_leave_the_rules_text_to_the_policy_set(tmp_path: Path) -> None:
    """An entry stores a finding without its rule's title and remediation (the policy set, part of
    the key, restores them: the hit's report is byte for byte the fresh one); a stored finding that
    carries them, or lacks a field, is not a valid entry (a miss)."""
    root = make_repo(tmp_path, n=1)
    first = check(root)
    assert first.json()["findings"][0]["remediation"]
    (entry,) = entries(root)
    data = json.loads(entry.read_text())
    assert data["format"] == FORMAT and data["findings"]
    # each finding an array of its stored fields, in order: no title, remediation or waiver state
    assert set(_STORED).isdisjoint({"title", "remediation", "waived", "waiver", "baselined"})
    assert all(isinstance(f, list) and len(f) == len(_STORED) for f in data["findings"])
    stored = dict(zip(_STORED, data["findings"][0], strict=True))
    (shown,) = [f for f in first.json()["findings"] if f["fingerprint"] == stored["fingerprint"]]
    assert all(shown[name] == stored[name] for name in _STORED if name != "value")  # value: not in the output
    assert check(root).stdout == first.stdout
    row = data["findings"][0]
    path_at = _STORED.index("path")
    for forged in (
        [*row, "Forged title"],  # a field more
        row[:path_at] + row[path_at + 1 :],  # a field less
        [*row[:path_at], 7, *row[path_at + 1 :]],  # a path that is no string
        {name: row[i] for i, name in enumerate(_STORED)},  # the fields by name (format 2)
    ):
        entry.write_text(json.dumps({**data, "findings": [forged, *data["findings"][1:]]}), encoding="utf-8")
        for pack in (root / ".streamwarden-cache" / "packs").glob("*.json"):
            pack.unlink()
        p = check(root)
        assert stats(p) == (0, 1) and p.stdout == first.stdout


def test_a_file_discovery_read_is_hashed_as_when_read_again(tmp_path: Path) -> None:
    """The deployment files discovery reads (to tell they are no contract) are hashed from those
    bytes: the same state as reading the file again, so runs that read them (a directory argument,
    the configuration's globs) and runs that do not (contract files named) share their entries."""
    root = make_repo(tmp_path)
    assert stats(check(root, "contracts")) == (0, 2)
    assert stats(check(root)) == (2, 0)
    assert stats(check(root, "contracts/p0/contract.yaml", "contracts/p1/contract.yaml")) == (2, 0)
    others: dict[str, bytes] = {}
    for args in (([str(root / "contracts")], root, ()), ((), root, ["contracts/**/*.yaml"])):
        found, _ = discover_contracts(*args, texts={}, others=others)
        assert len(found) == 2
    assert sorted(Path(p).name for p in others) == ["config.yaml", "config.yaml"]
    assert all(_sha(p, raw) == file_state(p) for p, raw in others.items())
    deploy = root / "contracts" / "p1" / "deploy" / "config.yaml"
    deploy.write_text(deploy.read_text().replace("rocksdb", "hashmap"), encoding="utf-8")
    assert stats(check(root, "contracts")) == (1, 1)


def test_a_stale_entry_fails_self_check(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=1)
    check(root)
    (entry,) = entries(root)
    data = json.loads(entry.read_text())
    assert data["findings"]
    data["findings"] = data["findings"][1:]  # a well-formed entry that lies
    entry.write_text(json.dumps(data), encoding="utf-8")
    p = sw("check", "--format", "json", "--now", NOW, cwd=root)
    assert p.code == 2 and "stale result" in p.stderr, p
    # the same lie in a pack (the entry's file gone): self-check mode catches it there too
    pack = {"format": FORMAT, "entries": {entry.parent.name + entry.stem: data}}
    entry.unlink()
    packs = root / ".streamwarden-cache" / "packs"
    packs.mkdir(exist_ok=True)
    (packs / "forged.json").write_text(json.dumps(pack), encoding="utf-8")
    p = sw("check", "--format", "json", "--now", NOW, cwd=root)
    assert p.code == 2 and "stale result" in p.stderr, p


def test_a_committed_cache_directory_is_not_used(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    make_repo(repo.path, n=1)
    check(repo.path)
    (entry,) = entries(repo.path)
    data = json.loads(entry.read_text())
    data["findings"] = []  # a pull request plants "no findings"
    entry.write_text(json.dumps(data), encoding="utf-8")
    repo.git("add", "-f", ".streamwarden-cache")
    repo.commit("planted")
    p = check(repo.path)
    assert stats(p) is None
    assert findings(p)
    # -v says why the cache was not used
    assert "note: the result cache .streamwarden-cache is not used: git tracks files in it" in p.stderr, p


def test_a_cache_asked_for_that_cannot_be_used_is_a_note_and_changes_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=1)
    (root / "in-the-way").write_text("a file, not a directory\n", encoding="utf-8")
    plain = sw("check", "--format", "json", "--now", NOW, "--no-cache", cwd=root)
    for args, env, why in (
        (("--cache", "in-the-way"), None, "a file of that name is in the way"),
        ((), {"STREAMWARDEN_CACHE": "in-the-way/sub"}, "it cannot be created or written (Not a directory)"),
    ):
        p = sw("check", "--format", "json", "--now", NOW, *args, cwd=root, env=env)
        assert (p.code, p.stdout) == (plain.code, plain.stdout), p  # the same check, without the cache
        cache = "in-the-way/sub" if env else "in-the-way"
        assert f"streamwarden: note: the result cache {cache} is not used: {why}; the check ran without it" in (
            p.stderr
        ), p


def test_the_default_cache_directory_that_cannot_be_used_is_silent_without_v(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=1)
    (root / ".streamwarden-cache").write_text("in the way\n", encoding="utf-8")  # a read-only checkout, say
    p = sw("check", "--format", "json", "--now", NOW, cwd=root)
    assert p.code in (0, 1) and p.stderr == "", p  # the cache is an optimisation: no noise on every run
    p = check(root)  # -v
    assert "note: the result cache .streamwarden-cache is not used: a file of that name is in the way" in p.stderr


def test_live_runs_bypass_the_cache(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=1)
    (root / "streamwarden.yaml").write_text(
        "environments:\n  prod:\n    flink:\n      rest_url: http://127.0.0.1:9\n      retries: 0\n", encoding="utf-8"
    )
    check(root)
    p = check(root, "--env", "prod")
    assert stats(p) is None
    assert any(f[1] == "SW-FACT-001" for f in findings(p))


def test_eviction_keeps_the_newest(tmp_path: Path) -> None:
    entries_dir = tmp_path / "v1"
    for i in range(30):
        d = entries_dir / f"{i:02x}"
        d.mkdir(parents=True)
        p = d / "x.json"
        p.write_text("{}", encoding="utf-8")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))
    removed = evict(entries_dir, 20)
    left = sorted(p.parent.name for p in entries_dir.rglob("*.json"))
    assert removed == 12 and len(left) == 18
    assert left[0] == f"{12:02x}"  # the oldest went first
    assert evict(entries_dir, 20) == 0
