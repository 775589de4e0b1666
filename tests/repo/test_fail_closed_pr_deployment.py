"""A pull request cannot hide its deployment files by moving ``job.deployment`` (issue 26, point 2).

The base branch's contract names ``deploy/config.yaml``; the pull request sets
``execution.state-recovery.ignore-unclaimed-state: true`` there (SW-STATE-012: a restore would drop
state silently) and points ``job.deployment`` at a benign copy, or drops the entry. The files the
base contract names are still read and judged, and the change of pointer is reviewed of its own
(SW-DEPLOY-006, ``coordinate`` in the review). Each test runs the installed ``streamwarden`` in a
subprocess on a real git repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW, TESTS
from tests.gitrepo import Repo

# A Flink 2.x config.yaml that agrees with the clean contract.
CONFIG = (TESTS / "fixtures" / "deploy" / "flink2" / "config.yaml").read_text(encoding="utf-8")
DROP_STATE = CONFIG + "execution.state-recovery.ignore-unclaimed-state: true\n"


def _contract(entries: list[str] | None) -> str:
    listed = "  deployment:\n" + "".join(f"    - {e}\n" for e in entries) if entries else ""
    return CLEAN_CONTRACT.replace(
        "  restart_strategy: exponential-delay\n", "  restart_strategy: exponential-delay\n" + listed, 1
    )


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.write("contracts/orders.yaml", _contract(["../deploy/config.yaml"]))
    r.write("deploy/config.yaml", CONFIG)
    r.commit("base: the job's configuration")
    r.branch("pr")
    return r


def _check(repo: Repo, fmt: str = "json") -> Proc:
    return sw("check", "--base", "main", "--no-cache", "--format", fmt, "--now", NOW, cwd=repo.path)


def _diff(repo: Repo, fmt: str = "json") -> Proc:
    return sw("diff", "--base", "main", "--format", fmt, "--now", NOW, cwd=repo.path)


def _findings(p: Proc, rule: str) -> list[dict[str, Any]]:
    return [f for f in p.json()["findings"] if f["rule"] == rule and not f["waived"]]


def _changes(p: Proc) -> list[dict[str, Any]]:
    (pipeline,) = p.json()["pipelines"]
    changes: list[dict[str, Any]] = pipeline["changes"]
    return changes


def _line(repo: Repo, rel: str, needle: str) -> int:
    text = (repo.path / rel).read_text(encoding="utf-8")
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_base_passes_as_the_baseline_for_these_tests(repo: Repo) -> None:
    repo.write("contracts/orders.yaml", _contract(["../deploy/config.yaml"]) + "# reviewed\n")
    repo.commit("a comment")
    p = _check(repo)
    assert p.code == 0, p
    assert p.json()["findings"] == [], p


def test_changing_the_named_file_alone_fails(repo: Repo) -> None:
    """The guard: what the pull request below tries to hide by moving the pointer."""
    repo.write("deploy/config.yaml", DROP_STATE)
    repo.commit("drop unclaimed state on restore")
    p = _check(repo)
    assert p.code == 1, p
    (f,) = _findings(p, "SW-STATE-012")
    assert (f["file"], f["line"]) == ("deploy/config.yaml", _line(repo, "deploy/config.yaml", "ignore-unclaimed"))


@pytest.mark.parametrize("head_entries", [["../deploy/benign.yaml"], None], ids=["repointed", "entry-removed"])
def test_moving_the_pointer_away_does_not_hide_the_file_the_base_names(
    repo: Repo, head_entries: list[str] | None
) -> None:
    repo.write("deploy/benign.yaml", CONFIG)
    repo.write("deploy/config.yaml", DROP_STATE)
    repo.write("contracts/orders.yaml", _contract(head_entries))
    repo.commit("drop unclaimed state, and point the contract elsewhere")
    p = _check(repo)
    assert p.code == 1, p
    (f,) = _findings(p, "SW-STATE-012")
    assert (f["file"], f["line"]) == ("deploy/config.yaml", _line(repo, "deploy/config.yaml", "ignore-unclaimed"))
    assert f["source"] == "deployment"
    (moved,) = _findings(p, "SW-DEPLOY-006")
    assert moved["severity"] == "warning"
    assert moved["path"] == "job.deployment"
    assert moved["evidence"]["removed"] == ["../deploy/config.yaml"], moved
    assert "still read and checked" in moved["message"]
    # the review: the pointer's change needs coordination, never "safe"; diff exits 1 only on breaking
    d = _diff(repo)
    assert d.code == 0, d
    (change,) = _changes(d)
    assert (change["path"], change["class"], change["rule"]) == ("job.deployment", "coordinate", "SW-DEPLOY-006")
    md = _diff(repo, "markdown")
    assert "🟡 coordinate | `job.deployment`" in md.stdout, md
    assert "🟢 safe" not in md.stdout, md
    cm = _check(repo, "markdown")
    assert cm.code == 1, cm
    assert "SW-STATE-012" in cm.stdout and "SW-DEPLOY-006" in cm.stdout, cm


def test_adding_an_entry_is_reviewed(repo: Repo) -> None:
    repo.write("deploy/job.sql", "SET 'parallelism.default' = '4';\n")
    repo.write("contracts/orders.yaml", _contract(["../deploy/config.yaml", "../deploy/job.sql"]))
    repo.commit("the job's SQL too")
    p = _check(repo)
    assert p.code == 0, p
    (moved,) = _findings(p, "SW-DEPLOY-006")
    assert moved["evidence"]["added"] == ["../deploy/job.sql"], moved
    (change,) = _changes(_diff(repo))
    assert (change["class"], change["rule"]) == ("coordinate", "SW-DEPLOY-006")


def test_a_file_moved_with_its_entry_is_reviewed_and_the_old_path_is_not_missing(repo: Repo) -> None:
    """A legitimate move: the old file is gone, so nothing is left to judge there (no SW-FACT-001)."""
    repo.path.joinpath("deploy/prod").mkdir()
    repo.git("mv", "deploy/config.yaml", "deploy/prod/config.yaml")
    repo.write("contracts/orders.yaml", _contract(["../deploy/prod/config.yaml"]))
    repo.commit("move the configuration")
    p = _check(repo)
    assert p.code == 0, p
    assert sorted(f["rule"] for f in p.json()["findings"]) == ["SW-DEPLOY-006"], p


def test_a_moved_contract_still_has_the_files_its_base_names_judged(repo: Repo) -> None:
    """The contract moves one directory down and keeps its entry as written: the entry now names
    a file that does not exist (SW-FACT-001), and the file the base named is still judged."""
    repo.path.joinpath("contracts/team").mkdir()
    repo.git("mv", "contracts/orders.yaml", "contracts/team/orders.yaml")
    repo.write("deploy/config.yaml", DROP_STATE)
    repo.commit("move the contract, drop unclaimed state")
    p = _check(repo)
    assert p.code == 1, p
    (f,) = _findings(p, "SW-STATE-012")
    assert f["file"] == "deploy/config.yaml"
    assert [x["path"] for x in _findings(p, "SW-FACT-001")] == ["job.deployment[0]"], p


def test_a_symbolic_link_in_place_of_the_contracts_directory_does_not_move_the_base_files(repo: Repo) -> None:
    """The base's entries are joined to the base contract's directory as text: a pull request that
    turns ``contracts`` into a link elsewhere cannot make ``../deploy/config.yaml`` mean another file."""
    repo.write("elsewhere/inner/orders.yaml", _contract(["../deploy/config.yaml"]))
    repo.write("elsewhere/deploy/config.yaml", CONFIG)
    repo.remove("contracts/orders.yaml")
    (repo.path / "contracts").symlink_to("elsewhere/inner")
    repo.write("deploy/config.yaml", DROP_STATE)
    repo.commit("contracts is a link now")
    p = _check(repo)
    assert p.code == 1, p
    (f,) = _findings(p, "SW-STATE-012")
    assert f["file"] == "deploy/config.yaml", p


def test_the_base_files_are_judged_together_as_the_base_read_them(tmp_path: Path) -> None:
    """The base names two files, the later overriding the earlier's checkpoint interval; the pull
    request drops the earlier one. The base's files are judged together, in the base's order: the
    interval the later file overrides is no finding (judged alone, the shared file would break
    SW-CKPT-003 and every rule whose key it leaves at Flink's default)."""
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", _contract(["../deploy/shared.yaml", "../deploy/config.yaml"]))
    repo.write("deploy/shared.yaml", "execution.checkpointing.interval: 30 s\n")
    repo.write("deploy/config.yaml", CONFIG)
    repo.commit("base: a shared file, overridden by the job's own")
    repo.branch("pr")
    assert _check(repo).json()["findings"] == []
    repo.write("contracts/orders.yaml", _contract(["../deploy/config.yaml"]))
    repo.commit("the shared file is not the job's any more")
    p = _check(repo)
    assert p.code == 0, p
    assert sorted(f["rule"] for f in p.json()["findings"]) == ["SW-DEPLOY-006"], p
