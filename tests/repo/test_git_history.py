"""History for transitive modes in one pass: one ``git log --name-status -M`` over the contract
folders, walked per file, lists what ``git log --follow`` lists (renames, a merge's first parent,
a file added again after a delete), and every kind of git work is one process for all files."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

from tests.gitrepo import Repo

from streamwarden.repo.git import GitRepo, blob_id, follow, literal_prefix

BODY = "kind: PipelineContract\n" + "".join(f"line{i}: {i}\n" for i in range(20))
OTHER = "kind: PipelineContract\n" + "".join(f"other_{i}: [{i * 7}, {i * 13}]\n" for i in range(30))


def _follow_by_git(repo: Repo, commit: str, path: str) -> list[tuple[str, str]]:
    out = repo.git("log", "-z", "--first-parent", "--follow", "--format=%x00%H", "--name-only", commit, "--", path)
    tokens = out.split("\0")
    return [(t, n[1:]) for t, n in itertools.pairwise(tokens) if len(t) == 40 and n.startswith("\n")]


def _history_repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path)
    repo.write("contracts/a.yaml", BODY)
    repo.write("contracts/other.yaml", OTHER)
    repo.commit("v1")
    repo.write("contracts/a.yaml", BODY.replace("line5: 5", "line5: 50"))
    repo.commit("v2")
    repo.git("mv", "contracts/a.yaml", "contracts/renamed.yaml")
    repo.commit("rename")
    repo.branch("side")
    repo.write("contracts/other.yaml", OTHER + "extra: 1\n")
    repo.commit("side change")
    repo.checkout("main")
    repo.write("contracts/renamed.yaml", BODY.replace("line5: 5", "line5: 51"))
    repo.commit("v3")
    repo.git("merge", "-q", "--no-edit", "side")
    repo.remove("contracts/other.yaml")
    repo.commit("delete")
    repo.write("contracts/other.yaml", OTHER.replace("other_9", "again_9"))
    repo.commit("added again")
    return repo


def test_one_log_walked_per_file_lists_what_follow_lists(tmp_path: Path) -> None:
    repo = _history_repo(tmp_path)
    head = repo.git("rev-parse", "HEAD").strip()
    git = GitRepo(tmp_path)
    log = git.first_parent_log(head, ["contracts"])
    for path in ("contracts/renamed.yaml", "contracts/other.yaml"):
        assert follow(log, path, 1000) == _follow_by_git(repo, head, path), path
    names = [p for _, p in follow(log, "contracts/renamed.yaml", 1000)]
    assert names == ["contracts/renamed.yaml", "contracts/renamed.yaml", "contracts/a.yaml", "contracts/a.yaml"]
    assert len(follow(log, "contracts/renamed.yaml", 2)) == 2


def test_blob_ids_from_one_ls_tree_match_the_work_tree(tmp_path: Path) -> None:
    repo = _history_repo(tmp_path)
    head = repo.git("rev-parse", "HEAD").strip()
    ids = GitRepo(tmp_path).blob_ids(head, [":(glob)contracts/**/*.yaml"])
    assert set(ids) == {"contracts/renamed.yaml", "contracts/other.yaml"}
    for path, oid in ids.items():
        assert blob_id((tmp_path / path).read_bytes(), oid) == oid
        assert oid == repo.git("hash-object", path).strip()


def test_literal_prefix() -> None:
    assert literal_prefix(":(glob)contracts/**/contract.yaml") == "contracts"
    assert literal_prefix(":(glob)**/*.yaml") == ""
    assert literal_prefix("contracts/a.yaml") == "contracts/a.yaml"
    assert literal_prefix(".") == ""


def test_a_pull_request_check_runs_each_git_command_once(tmp_path: Path) -> None:
    """Git work is O(1) processes whatever the number of contracts: the trace of a pull-request
    check over transitive contracts names each command a fixed number of times."""
    from tests.conftest import CLEAN_CONTRACT

    repo = Repo(tmp_path)
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    text = CLEAN_CONTRACT.replace("compatibility: full", "compatibility: forward_transitive")
    for i in range(6):
        repo.write(f"contracts/p{i}.yaml", text.replace("orders-enrichment", f"p-{i}"))
    repo.commit("base")
    for i in range(6):
        repo.write(f"contracts/p{i}.yaml", text.replace("orders-enrichment", f"p-{i}").replace("60s", "61s"))
    repo.commit("history")
    repo.branch("feature")
    for i in range(3):
        repo.write(f"contracts/p{i}.yaml", text.replace("orders-enrichment", f"p-{i}").replace("30s", "20s"))
    repo.commit("change three")
    trace = tmp_path / "trace.txt"
    env = {**os.environ, "GIT_TRACE": str(trace), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "streamwarden.cli", "check", "--no-cache", "--base", "main", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    commands = [
        line.split("built-in: git ", 1)[1].split(" ")[0]
        for line in trace.read_text().splitlines()
        if "built-in: git " in line
    ]
    assert commands.count("log") == 1
    assert commands.count("grep") == 1
    assert commands.count("ls-tree") <= 2  # the contracts' ids; the trusted policies
    assert commands.count("cat-file") <= 4
