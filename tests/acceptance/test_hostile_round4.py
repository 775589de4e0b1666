"""What a fourth hostile round (issue 26) found open, through the real CLI on real git repositories.

A contract file or directory named on the command line (the action's ``paths`` input) followed a
symbolic link that a pull request committed to a file outside the repository, and the errors quoted
that file's keys and values: a PR could read YAML or JSON files of the CI runner
(``~/.config/gh/hosts.yml``, ``~/.docker/config.json``) into its own check's output. The globs of
``streamwarden.yaml`` already refused such a link; a named path now does too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

TOKEN = "gho_R4nd0mRunn3rT0k3nAbCdEf12"
# what a runner may hold outside the checkout, in YAML (gh's hosts.yml)
HOSTS_YML = f"github.com:\n  user: ci-bot\n  oauth_token: {TOKEN}\n  git_protocol: https\n"


def _pr_linking_outside(tmp_path: Path) -> Repo:
    outside = tmp_path / "runner-home" / ".config" / "gh"
    outside.mkdir(parents=True)
    (outside / "hosts.yml").write_text(HOSTS_YML, encoding="utf-8")
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("base")
    repo.branch("pr")
    (repo.path / "contracts" / "hosts.yaml").symlink_to(outside / "hosts.yml")
    repo.commit("pr: a link")
    return repo


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--now", NOW, "contracts"),
        ("check", "--now", NOW, "contracts/hosts.yaml"),
        ("check", "--base", "main", "--now", NOW, "--format", "github", "--", "contracts"),
        ("validate", "contracts/hosts.yaml"),
    ],
    ids=["check-dir", "check-file", "check-base-github", "validate-file"],
)
def test_a_named_path_does_not_follow_a_link_out_of_the_repository(tmp_path: Path, args: tuple[str, ...]) -> None:
    repo = _pr_linking_outside(tmp_path)
    p = sw(*args, cwd=repo.path)
    assert p.code == 2, p
    assert "hosts.yaml: leads outside the repository (a symbolic link?): it is not read" in p.output, p
    for leaked in (TOKEN, "oauth_token", "git_protocol", "ci-bot"):
        assert leaked not in p.output, p


def test_a_file_named_outside_the_repository_is_still_read(tmp_path: Path) -> None:
    """Naming a file outside the repository on purpose still works: only the link is refused."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "orders.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    repo = Repo(tmp_path / "repo")
    repo.write("README.md", "x\n")
    repo.commit("base")
    p = sw("validate", str(elsewhere / "orders.yaml"), cwd=repo.path)
    assert p.code == 0, p
