"""A pull request cannot hide its base through git's own configuration (issue 26, point 1).

Git reads ``.gitattributes`` from the work tree, and a pull request commits those: ``*.yaml -diff``
or ``binary`` made the base side's ``git grep -I`` skip every base contract (each head contract
then read as "added, nothing to compare"), and an attribute on an old path made ``git log -M``
miss a rename in the history the transitive modes read. Each test runs the installed
``streamwarden`` in a subprocess on a real git repository and checks that the base is still read
as committed: a column type change (SW-SCHEMA-002), a deleted contract that consumers read
(SW-SCHEMA-011) and an earlier version's required field (SW-SCHEMA-001) still fail the check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

# A second pipeline, so that the pull request that deletes orders still has a contract to check.
PAYMENTS = (
    CLEAN_CONTRACT.replace("name: orders-enrichment", "name: payments")
    .replace("sales.orders", "sales.payments")
    .replace("orders-enrichment", "payments")
)
STRING_ID = CLEAN_CONTRACT.replace("type: long, required: true, id: 1", "type: string, required: true, id: 1")

# What a pull request commits to make git call the contracts binary (so `git grep -I` skips them):
# the top-level file, a subdirectory's own file, a macro attribute.
ATTRIBUTES = {
    "yaml-minus-diff": (".gitattributes", "*.yaml -diff\n"),
    "contracts-binary": (".gitattributes", "contracts/** binary\n"),
    "subdirectory-file": ("contracts/.gitattributes", "* -diff\n"),
    "macro": (".gitattributes", "[attr]opaque -diff -text\n*.yaml opaque\n"),
}


def _repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.write("contracts/payments.yaml", PAYMENTS)
    repo.commit("base")
    repo.branch("pr")
    return repo


def _check(repo: Repo) -> Proc:
    return sw("check", "--base", "main", "--no-cache", "--format", "json", "--now", NOW, cwd=repo.path)


def _diff(repo: Repo) -> Proc:
    return sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)


def _rules(p: Proc) -> list[str]:
    return sorted(f["rule"] for f in p.json()["findings"] if not f["waived"])


@pytest.mark.parametrize("vector", list(ATTRIBUTES))
def test_attributes_the_pull_request_commits_do_not_hide_a_type_change(tmp_path: Path, vector: str) -> None:
    repo = _repo(tmp_path)
    rel, text = ATTRIBUTES[vector]
    repo.write(rel, text)
    repo.write("contracts/orders.yaml", STRING_ID)
    repo.commit("order_id becomes a string, and git is told the contracts are binary")
    c = _check(repo)
    assert c.code == 1, c
    assert "SW-SCHEMA-002" in _rules(c), c
    d = _diff(repo)
    assert d.code == 1, d
    orders = [p for p in d.json()["pipelines"] if p["pipeline"] == "orders-enrichment"]
    assert [p["status"] for p in orders] == ["changed"], d  # compared with its base, not "added"
    assert [(x["path"], x["class"], x["rule"]) for x in orders[0]["changes"]] == [
        ("table.schema[0].type", "breaking", "SW-SCHEMA-002")
    ], d


@pytest.mark.parametrize("vector", list(ATTRIBUTES))
def test_attributes_the_pull_request_commits_do_not_hide_a_deleted_contract(tmp_path: Path, vector: str) -> None:
    repo = _repo(tmp_path)
    rel, text = ATTRIBUTES[vector]
    repo.write(rel, text)
    repo.remove("contracts/orders.yaml")
    repo.commit("delete orders, which finance-dashboard reads")
    c = _check(repo)
    assert c.code == 1, c
    (removed,) = [f for f in c.json()["findings"] if f["rule"] == "SW-SCHEMA-011"]
    assert removed["pipeline"] == "orders-enrichment"
    assert "finance-dashboard" in removed["message"]
    d = _diff(repo)
    assert d.code == 1, d
    assert [(p["pipeline"], p["status"]) for p in d.json()["pipelines"]] == [("orders-enrichment", "removed")], d


# Under forward_transitive a field required in any earlier version may not go. The first version
# was written with CRLF line ends at contracts/old.yaml; the second renamed it to orders.yaml with
# LF ends and made `legacy` optional. Git pairs the rename by content similarity, and for a path
# whose `diff` attribute is unset it counts the CR of every line: an attribute on the old path
# alone (which grep never reads: the file is gone at the base) hides the first version.
EVENT_TIME = "    - {name: event_time, type: timestamptz, required: true, id: 3}\n"
TRANSITIVE = CLEAN_CONTRACT.replace("compatibility: full", "compatibility: forward_transitive").replace(
    EVENT_TIME, EVENT_TIME + "    - {name: legacy, type: string, required: true, id: 4}\n"
)
assert "legacy" in TRANSITIVE


def test_an_attribute_on_an_old_path_does_not_cut_the_history_the_transitive_modes_read(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/old.yaml", TRANSITIVE.replace("\n", "\r\n"))
    repo.commit("v1: legacy is required")
    repo.git("mv", "contracts/old.yaml", "contracts/orders.yaml")
    optional = TRANSITIVE.replace("type: string, required: true, id: 4", "type: string, id: 4")
    repo.write("contracts/orders.yaml", optional)
    repo.commit("v2: renamed, LF line ends, legacy optional")
    repo.branch("pr")
    repo.write(".gitattributes", "contracts/old.yaml -diff\n")
    head = CLEAN_CONTRACT.replace("compatibility: full", "compatibility: forward_transitive")
    repo.write("contracts/orders.yaml", head)
    repo.commit("drop legacy (optional at the base)")
    c = _check(repo)
    assert c.code == 1, c
    (gone,) = [f for f in c.json()["findings"] if f["rule"] == "SW-SCHEMA-001"]
    assert 'field "legacy" was removed, but it is required in the earlier version' in gone["message"], gone


def test_a_replace_ref_does_not_change_what_the_base_holds(tmp_path: Path) -> None:
    """``refs/replace/*`` makes git show one object in place of another: the base's contract read
    as the pull request's own would compare the head with itself."""
    repo = _repo(tmp_path)
    base_blob = repo.git("rev-parse", "main:contracts/orders.yaml").strip()
    repo.write("contracts/orders.yaml", STRING_ID)
    repo.commit("order_id becomes a string")
    head_blob = repo.git("rev-parse", "HEAD:contracts/orders.yaml").strip()
    repo.git("replace", base_blob, head_blob)
    assert repo.git("cat-file", "-p", "main:contracts/orders.yaml") == STRING_ID  # what git shows now
    c = _check(repo)
    assert c.code == 1, c
    assert "SW-SCHEMA-002" in _rules(c), c


def test_a_graft_does_not_change_the_merge_base(tmp_path: Path) -> None:
    """A graft file gives a commit other parents: the pull request's branch grafted onto a commit
    after its change would make the merge base hold the change already."""
    repo = _repo(tmp_path)
    repo.write("contracts/orders.yaml", STRING_ID)
    head = repo.commit("order_id becomes a string")
    repo.checkout("main")
    repo.write("contracts/orders.yaml", STRING_ID)
    later = repo.commit("main takes the same change")
    repo.checkout("pr")
    (repo.path / ".git/info").mkdir(exist_ok=True)
    (repo.path / ".git/info/grafts").write_text(f"{head} {later}\n", encoding="utf-8")
    assert repo.git("merge-base", "main", "HEAD").strip() == later  # what git says now
    c = _check(repo)
    assert c.code == 1, c
    assert "SW-SCHEMA-002" in _rules(c), c
