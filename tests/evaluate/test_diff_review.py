"""The contract review (`streamwarden diff --base REF`) lists every change in meaning, through the
real CLI on a real git repository: a column moved is a listed `safe` change, a column removed from
a table with consumers is never `safe` (under every compatibility mode), and a file that changed
only in comments or formatting reads "no change in meaning", never nothing at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW, named_contract
from tests.gitrepo import Repo

COLUMNS = (
    "    - {name: order_id, type: long, required: true, id: 1}\n"
    '    - {name: amount, type: "decimal(12,2)", id: 2}\n'
    "    - {name: event_time, type: timestamptz, required: true, id: 3}\n"
)
assert COLUMNS in CLEAN_CONTRACT
MODES = ["none", "backward", "forward", "full", "backward_transitive", "forward_transitive", "full_transitive"]


def _pull_request(tmp_path: Path, base: str, head: str, *, others: dict[str, str] | None = None) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", base)
    for rel, text in (others or {}).items():
        repo.write(rel, text)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", head)
    repo.commit("head")
    return repo


def _review(repo: Repo, fmt: str = "json") -> Proc:
    p = sw("diff", "--base", "main", "--format", fmt, "--now", NOW, cwd=repo.path)
    assert p.code in (0, 1), p
    return p


def _pipeline(p: Proc, name: str = "orders-enrichment") -> dict[str, Any]:
    (found,) = [x for x in p.json()["pipelines"] if x["pipeline"] == name]
    return found


def _mode(text: str, mode: str) -> str:
    return text.replace("compatibility: full", f"compatibility: {mode}")


def test_a_column_moved_is_listed_as_a_safe_change(tmp_path: Path) -> None:
    moved = (
        "    - {name: event_time, type: timestamptz, required: true, id: 3}\n"
        "    - {name: order_id, type: long, required: true, id: 1}\n"
        '    - {name: amount, type: "decimal(12,2)", id: 2}\n'
    )
    repo = _pull_request(tmp_path, CLEAN_CONTRACT, CLEAN_CONTRACT.replace(COLUMNS, moved))
    p = _review(repo)
    assert p.code == 0
    pipeline = _pipeline(p)
    assert pipeline["status"] == "changed"
    (change,) = pipeline["changes"]
    assert change["path"] == "table.schema[0]"
    assert change["change"] == "moved"
    assert change["class"] == "safe"
    assert "moved from position 3 to 1" in change["reason"]
    assert '"event_time"' in change["reason"]
    markdown = _review(repo, "markdown").stdout
    assert "No contract changes" not in markdown
    assert "moved from position 3 to 1" in markdown


def test_a_partition_field_moved_is_listed_as_a_change_to_coordinate(tmp_path: Path) -> None:
    two = '    - {source: event_time, transform: day}\n    - {source: order_id, transform: "bucket[16]"}\n'
    swapped = '    - {source: order_id, transform: "bucket[16]"}\n    - {source: event_time, transform: day}\n'
    base = CLEAN_CONTRACT.replace("    - {source: event_time, transform: day}\n", two)
    repo = _pull_request(tmp_path, base, base.replace(two, swapped))
    (change,) = _pipeline(_review(repo))["changes"]
    assert (change["path"], change["change"], change["class"]) == ("table.partition_spec[1]", "moved", "coordinate")
    assert change["reason"].startswith('partition field "event_time" moved from position 1 to 2')
    assert change["consumers"] == ["finance-dashboard"]


def _unprotected(text: str) -> str:
    line = "  coordinate_with_state: true\n"
    return text.replace(line, line + "  protect_consumers: false\n")


@pytest.mark.parametrize("mode", MODES)
def test_a_column_removed_from_a_table_with_consumers_is_never_safe(tmp_path: Path, mode: str) -> None:
    # an optional column: no compatibility mode objects, the consumers' protection (the default) does
    without_amount = CLEAN_CONTRACT.replace('    - {name: amount, type: "decimal(12,2)", id: 2}\n', "")
    repo = _pull_request(tmp_path / "optional", _mode(CLEAN_CONTRACT, mode), _mode(without_amount, mode))
    p = _review(repo)
    (removed,) = [c for c in _pipeline(p)["changes"] if c["change"] == "removed"]
    assert removed["path"] == "table.schema[1]"
    assert (removed["class"], removed["rule"]) == ("breaking", "SW-SCHEMA-012"), removed
    assert removed["consumers"] == ["finance-dashboard"]
    assert 'column "amount" was removed, but the table\'s consumers (finance-dashboard) read it' in removed["reason"]
    assert p.code == 1
    assert "finance-dashboard" in _review(repo, "markdown").stdout

    # with protect_consumers: false the consumers must still be told: at least coordinate
    base, head = _unprotected(_mode(CLEAN_CONTRACT, mode)), _unprotected(_mode(without_amount, mode))
    repo = _pull_request(tmp_path / "unprotected", base, head)
    p = _review(repo)
    (removed,) = [c for c in _pipeline(p)["changes"] if c["change"] == "removed"]
    assert (removed["class"], removed["rule"]) == ("coordinate", None), removed
    assert 'column "amount" removed' in removed["reason"]
    assert p.code == 0

    # a required column: SW-SCHEMA-001 where old readers need it (forward, full and their transitive
    # forms), the consumers' protection under the other modes; without protection, coordinate there
    required = CLEAN_CONTRACT.replace('type: "decimal(12,2)", id: 2}', 'type: "decimal(12,2)", id: 2, required: true}')
    without = required.replace('    - {name: amount, type: "decimal(12,2)", id: 2, required: true}\n', "")
    forward = mode.startswith(("forward", "full"))
    for name, protect in (("required", True), ("required-unprotected", False)):
        base, head = _mode(required, mode), _mode(without, mode)
        if not protect:
            base, head = _unprotected(base), _unprotected(head)
        p = _review(_pull_request(tmp_path / name, base, head))
        (removed,) = [c for c in _pipeline(p)["changes"] if c["change"] == "removed"]
        rule = "SW-SCHEMA-001" if forward else "SW-SCHEMA-012" if protect else None
        assert (removed["class"], removed["rule"]) == ("breaking" if rule else "coordinate", rule), removed
        assert removed["consumers"] == ["finance-dashboard"]
        assert p.code == (1 if rule else 0)


def test_a_comment_only_edit_reads_no_change_in_meaning(tmp_path: Path) -> None:
    other = named_contract("orders-archive")
    head = "# Curated orders: reviewed by the data platform team.\n" + CLEAN_CONTRACT.replace(
        "  owner: payments-data", "  owner: 'payments-data'   # the team on call"
    )
    repo = _pull_request(tmp_path, CLEAN_CONTRACT, head, others={"contracts/archive.yaml": other})
    p = _review(repo)
    assert p.code == 0
    pipelines = p.json()["pipelines"]
    # the untouched contract is not listed (nothing changed); the edited one is, with no change in meaning
    assert [x["pipeline"] for x in pipelines] == ["orders-enrichment"]
    (pipeline,) = pipelines
    assert (pipeline["status"], pipeline["changes"]) == ("changed", [])
    assert pipeline["note"] == "No change in meaning: the file changed only in comments or formatting."
    markdown = _review(repo, "markdown").stdout
    assert "No contract changes" not in markdown
    assert "No change in meaning" in markdown
    # the pull-request comment of `check --base` says the same
    comment = sw("check", "--base", "main", "--format", "markdown", "--now", NOW, cwd=repo.path)
    assert comment.code == 0, comment
    assert "No change in meaning" in comment.stdout


def test_the_review_and_the_pull_request_comment_show_the_same_change_table(tmp_path: Path) -> None:
    documented = "timestamptz, required: true, id: 3, doc: placed}"
    head = (
        CLEAN_CONTRACT.replace("timestamptz, required: true, id: 3}", documented)
        .replace("{name: order_id, type: long,", "{name: order_id, type: int,")
        .replace('    - {name: amount, type: "decimal(12,2)", id: 2}\n', "")
    )
    repo = _pull_request(tmp_path, CLEAN_CONTRACT, head)
    review = _review(repo, "markdown").stdout
    comment = sw("check", "--base", "main", "--format", "markdown", "--now", NOW, cwd=repo.path)
    assert comment.code == 1, comment

    def table(text: str) -> list[str]:
        lines = text.splitlines()
        start = lines.index("| class | field | change | before | after | why | consumers |")
        end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
        return lines[start:end]

    rows = table(review)
    assert rows == table(comment.stdout)
    assert [r.split(" | ")[0] for r in rows[2:]] == ["| 🔴 breaking", "| 🔴 breaking", "| 🟢 safe"]
    assert "| `table.schema[0].type` | changed | `long` | `int` | SW-SCHEMA-002: " in rows[2]
    assert "| `table.schema[1]` | removed | " in rows[3] and "SW-SCHEMA-012: " in rows[3]
    assert "| `table.schema[1].doc` | added | — | `placed` | documentation only |" in rows[4]
