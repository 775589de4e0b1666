"""The contract review never calls a weakened promise, or a change no rule judges, safe (issue 26,
point 9).

A pull request that weakens what the table's consumers were promised (a sink's delivery, the
rollback window, the snapshots' lineage, a consumer's freshness) is at least ``coordinate``, with
the consumers to tell named (SW-REC-008); a change to a field no diff rule knows is reviewed
(``coordinate``), never ``safe``. The same class reads in ``diff --format json``, ``diff --format
markdown`` and the pull-request comment (``check --base --format markdown``). Each test runs the
installed ``streamwarden`` in a subprocess on a real git repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

# (what the pull request writes, the field, before, after); finance-dashboard is the one consumer
WEAKENED = {
    "delivery": (
        ("delivery: exactly_once", "delivery: at_least_once"),
        "job.sinks[0].delivery",
        "exactly_once",
        "at_least_once",
    ),
    "rollback-window": (("rollback_window: 3d", "rollback_window: 1h"), "retention.rollback_window", "3d", "1h"),
    "lineage": (("lineage: required", "lineage: optional"), "table.commit.lineage", "required", "optional"),
    "consumer-freshness": (("freshness: 30m", "freshness: 2h"), "metadata.consumers[0].freshness", "30m", "2h"),
}


def _pull_request(tmp_path: Path, head: str) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("base")
    repo.branch("pr")
    assert head != CLEAN_CONTRACT
    repo.write("contracts/orders.yaml", head)
    repo.commit("head")
    return repo


def _diff(repo: Repo, fmt: str) -> Proc:
    return sw("diff", "--base", "main", "--format", fmt, "--now", NOW, cwd=repo.path)


def _check(repo: Repo, fmt: str) -> Proc:
    return sw("check", "--base", "main", "--no-cache", "--format", fmt, "--now", NOW, cwd=repo.path)


def _changes(p: Proc) -> list[dict[str, Any]]:
    (pipeline,) = p.json()["pipelines"]
    changes: list[dict[str, Any]] = pipeline["changes"]
    return changes


def _row(markdown: str, field: str) -> str:
    (row,) = [line for line in markdown.splitlines() if line.startswith("| ") and f"| `{field}` |" in line]
    return row


@pytest.mark.parametrize("case", list(WEAKENED))
def test_a_weakened_promise_is_coordinate_with_its_consumers_named(tmp_path: Path, case: str) -> None:
    (old, new), field, before, after = WEAKENED[case]
    repo = _pull_request(tmp_path, CLEAN_CONTRACT.replace(old, new, 1))
    d = _diff(repo, "json")
    assert d.code == 0, d  # diff fails on breaking changes only
    (change,) = _changes(d)
    assert (change["path"], change["class"], change["rule"]) == (field, "coordinate", "SW-REC-008"), d
    assert change["consumers"] == ["finance-dashboard"], d
    assert "is weakened from " + before in change["reason"] and f"to {after}" in change["reason"], d
    assert "finance-dashboard" in change["reason"]
    md = _diff(repo, "markdown")
    row = _row(md.stdout, field)
    assert row.startswith("| 🟡 coordinate |") and "SW-REC-008: " in row and row.endswith("| finance-dashboard |"), row
    assert "🟢" not in md.stdout, md
    comment = _check(repo, "markdown")
    assert comment.code == 0, comment  # a warning: the pull request is not failed, it is reviewed
    assert _row(comment.stdout, field) == row  # the same row in the pull-request comment
    findings = [f for f in _check(repo, "json").json()["findings"] if f["rule"] == "SW-REC-008"]
    assert [(f["path"], f["severity"]) for f in findings] == [(field, "warning")]


def test_several_weakened_promises_are_each_reviewed(tmp_path: Path) -> None:
    head = CLEAN_CONTRACT
    for (old, new), *_ in WEAKENED.values():
        head = head.replace(old, new, 1)
    repo = _pull_request(tmp_path, head)
    changes = _changes(_diff(repo, "json"))
    assert sorted((c["path"], c["class"], c["rule"]) for c in changes) == sorted(
        (field, "coordinate", "SW-REC-008") for _, field, _, _ in WEAKENED.values()
    )


@pytest.mark.parametrize(
    "old,new,field",
    [
        ("owner: payments-data", "owner: someone-else", "metadata.owner"),
        ("parallelism: 4", "parallelism: 8", "job.parallelism"),
        ('write.upsert.enabled: "true"', 'write.upsert.enabled: "false"', 'table.properties["write.upsert.enabled"]'),
        ("rollback_window: 3d", "rollback_window: 7d", "retention.rollback_window"),  # stronger: still reviewed
    ],
    ids=["owner", "parallelism", "table-property", "promise-made-stronger"],
)
def test_a_change_no_rule_judges_is_reviewed_never_safe(tmp_path: Path, old: str, new: str, field: str) -> None:
    repo = _pull_request(tmp_path, CLEAN_CONTRACT.replace(old, new, 1))
    d = _diff(repo, "json")
    assert d.code == 0, d
    (change,) = _changes(d)
    assert (change["path"], change["class"], change["rule"]) == (field, "coordinate", None), d
    assert "no rule judges this change, so it is not known to be safe" in change["reason"]
    md = _diff(repo, "markdown").stdout
    assert _row(md, field).startswith("| 🟡 coordinate |"), md
    assert _row(_check(repo, "markdown").stdout, field) == _row(md, field)


def test_a_documentation_change_is_still_safe(tmp_path: Path) -> None:
    """The guard: a change known to be harmless keeps its class."""
    head = CLEAN_CONTRACT.replace(
        "timestamptz, required: true, id: 3}", "timestamptz, required: true, id: 3, doc: placed}"
    )
    repo = _pull_request(tmp_path, head)
    (change,) = _changes(_diff(repo, "json"))
    assert (change["path"], change["class"], change["reason"]) == ("table.schema[2].doc", "safe", "documentation only")


def test_a_consumer_dropped_is_reviewed_and_one_added_is_safe(tmp_path: Path) -> None:
    consumer = '    - name: finance-dashboard\n      freshness: 30m\n      contact: "#finance-data"\n'
    added = consumer + '    - name: audit\n      freshness: 1d\n      contact: "#audit"\n'
    repo = _pull_request(tmp_path, CLEAN_CONTRACT.replace(consumer, added, 1))
    (change,) = _changes(_diff(repo, "json"))
    assert (change["path"], change["change"], change["class"]) == ("metadata.consumers[1]", "added", "safe")
    dropped = CLEAN_CONTRACT.replace("  consumers:\n" + consumer, "", 1)
    repo2 = _pull_request(tmp_path / "2", dropped)
    (change,) = _changes(_diff(repo2, "json"))
    assert (change["path"], change["change"], change["class"]) == ("metadata.consumers", "removed", "coordinate")
