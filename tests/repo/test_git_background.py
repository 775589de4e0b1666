"""Git commands run in the background while the check discovers the head's contracts
(git.Pending, pullrequest.begin_base): the same results as the foreground commands, output larger
than a pipe holds, and nothing left running when the run stops before it needs the result."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from tests.conftest import CLEAN_CONTRACT
from tests.gitrepo import Repo

from streamwarden.contracts.config import load_config
from streamwarden.core.errors import StreamwardenError
from streamwarden.repo.git import GitRepo, blob_ids_result, grep_result
from streamwarden.repo.pullrequest import _KIND_PATTERN, begin_base, load_base


def _repo(tmp_path: Path, contracts: int) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    for i in range(contracts):
        # long paths: the grep's output (one path per file) outgrows a 64 KiB pipe
        name = f"pipeline-{i:04d}"
        repo.write(
            f"contracts/a-rather-long-team-directory-name-{i % 7}/{name}/contract.yaml",
            CLEAN_CONTRACT.replace("orders-enrichment", name),
        )
    repo.commit("base")
    return repo


def test_background_git_gives_the_foreground_results_beyond_a_pipe(tmp_path: Path) -> None:
    repo = _repo(tmp_path, 1200)
    git = GitRepo(repo.path)
    commit = git.resolve("HEAD")
    specs = ["contracts"]
    grep = git.start_grep_files(commit, _KIND_PATTERN, specs)
    ids = git.start_blob_ids(commit, specs)
    found = grep_result(grep.result(), commit)
    assert len("\0".join(found)) > 64 * 1024  # more than a pipe's buffer
    assert sorted(found) == sorted(git.grep_files(commit, _KIND_PATTERN, specs))
    assert len(found) == 1200
    assert blob_ids_result(ids.result()) == git.blob_ids(commit, specs)


def test_a_result_is_taken_once(tmp_path: Path) -> None:
    repo = _repo(tmp_path, 1)
    pending = GitRepo(repo.path).start("rev-parse", "HEAD")
    assert pending.result().returncode == 0
    with pytest.raises(RuntimeError):
        pending.result()
    pending.close()  # idempotent after the result


def test_close_stops_a_running_command(tmp_path: Path) -> None:
    repo = _repo(tmp_path, 1)
    # `git hash-object --stdin-paths` reading a FIFO nobody writes: it runs until stopped
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    pending = GitRepo(repo.path).start("hash-object", str(fifo))
    proc = pending._proc
    assert proc is not None and proc.poll() is None
    t0 = time.monotonic()
    pending.close()
    assert proc.poll() is not None  # killed and reaped
    assert time.monotonic() - t0 < 10


def test_begin_base_finishes_as_load_base(tmp_path: Path) -> None:
    repo = _repo(tmp_path, 30)
    repo.branch("feature")
    changed = repo.path / "contracts/a-rather-long-team-directory-name-1/pipeline-0001/contract.yaml"
    changed.write_text(changed.read_text().replace("min_pause: 30s", "min_pause: 20s"))
    repo.commit("one change")
    config = load_config(cwd=repo.path)
    git = GitRepo(repo.path)
    for reuse in (False, True):
        pending = begin_base(git, "main", config, [], reuse_unchanged=reuse)
        try:
            background = pending.finish()
        finally:
            pending.close()
        foreground = load_base(git, "main", config, [], reuse_unchanged=reuse)
        assert background.by_path.keys() == foreground.by_path.keys()
        assert {k: (v.unchanged, v.contract) for k, v in background.by_path.items()} == {
            k: (v.unchanged, v.contract) for k, v in foreground.by_path.items()
        }
        if reuse:  # every file but the changed one is told unchanged, without a parse
            assert sum(1 for v in background.by_path.values() if not v.unchanged) == 1


def test_a_run_that_fails_during_discovery_leaves_no_git_running(tmp_path: Path) -> None:
    """A broken head (discovery raises) stops the base's background commands: the check's
    `finally` closes them, so no git process outlives the run."""
    repo = _repo(tmp_path, 5)
    config = load_config(cwd=repo.path)
    pending = begin_base(GitRepo(repo.path), "main", config, [], reuse_unchanged=True)
    procs = [p._proc for p in (pending._grep, pending._ids) if p is not None]
    with pytest.raises(StreamwardenError):
        try:
            raise StreamwardenError("discovery failed")
        finally:
            pending.close()
    assert procs and all(p is not None and p.poll() is not None for p in procs)
    with pytest.raises(RuntimeError):
        pending.finish()


def test_unchanged_answers_for_a_path_however_it_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BaseSnapshot.unchanged: the file's path in the repository, as GitRepo.relpath finds it from
    any spelling of the head file (absolute, relative to the working directory, through a symbolic
    link to the repository), is a file the pull request leaves as it is; the changed file, an
    added one and a file outside the repository are not."""
    repo = _repo(tmp_path, 3)
    repo.branch("feature")
    team = "contracts/a-rather-long-team-directory-name-1"
    changed = repo.path / team / "pipeline-0001/contract.yaml"
    changed.write_text(changed.read_text().replace("min_pause: 30s", "min_pause: 20s"))
    added = repo.write(f"{team}/pipeline-0009/contract.yaml", CLEAN_CONTRACT.replace("orders-enrichment", "p9"))
    repo.commit("one change, one addition")
    config = load_config(cwd=repo.path)
    snapshot = load_base(GitRepo(repo.path), "main", config, [], reuse_unchanged=True)
    same = repo.path / "contracts/a-rather-long-team-directory-name-0/pipeline-0000/contract.yaml"
    link = tmp_path / "link"
    link.symlink_to(repo.path)
    monkeypatch.chdir(repo.path / "contracts")
    spellings = {
        same: True,
        Path("a-rather-long-team-directory-name-0/pipeline-0000/contract.yaml"): True,
        link / "contracts/a-rather-long-team-directory-name-0/pipeline-0000/contract.yaml": True,
        changed: False,
        link / team / "pipeline-0001/contract.yaml": False,
        added: False,
        tmp_path / "elsewhere.yaml": False,
    }
    for path, expected in spellings.items():
        assert snapshot.unchanged(path) is expected, path
