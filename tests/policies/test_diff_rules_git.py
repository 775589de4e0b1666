"""Every diff rule on a real git repository: base commit on main, head commit on a branch.

Each case edits the clean contract on both sides, commits, and runs `check --base main` and
`diff --base main`. Safe changes must not fire any diff rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import CLEAN_CONTRACT, NOW, invoke
from tests.gitrepo import Repo

from streamwarden.engine import load_policy_set

Edit = Callable[[str], str]
DIFF_RULES = load_policy_set().diff_rule_ids()  # METADATA custom.kind: diff


def _r(old: str, new: str) -> Edit:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


def _chain(*edits: Edit) -> Edit:
    def edit(text: str) -> str:
        for e in edits:
            text = e(text)
        return text

    return edit


SAME: Edit = _chain()
BACKWARD = _r("compatibility: full", "compatibility: backward")
FORWARD = _r("compatibility: full", "compatibility: forward")
ADD_OPTIONAL = _r(
    "    - {name: event_time, type: timestamptz, required: true, id: 3}",
    "    - {name: event_time, type: timestamptz, required: true, id: 3}\n    - {name: channel, type: string, id: 4}",
)
WITH_INT = _r('{name: amount, type: "decimal(12,2)", id: 2}', "{name: quantity, type: int, id: 2}")
WITH_STATE_TABLE = _r("      schema_version: 3", "      schema_version: 3\n      carries_table_schema: true")

CASES: list[tuple[str, Edit, Edit, str | None]] = [
    # (name, base edit, head edit, the diff rule that must fire — None: no diff rule may fire)
    ("optional column added under backward", BACKWARD, _chain(BACKWARD, ADD_OPTIONAL), None),
    (
        "int to long under backward",
        _chain(BACKWARD, WITH_INT),
        _chain(BACKWARD, WITH_INT, _r("type: int, id: 2", "type: long, id: 2")),
        None,
    ),
    (
        "decimal precision widening under backward",
        BACKWARD,
        _chain(BACKWARD, _r("decimal(12,2)", "decimal(16,2)")),
        None,
    ),
    (
        "description edit",
        SAME,
        _r("  owner: payments-data", "  owner: payments-data\n  description: Curated orders."),
        None,
    ),
    (
        "consumer added",
        SAME,
        _r(
            '      contact: "#finance-data"',
            '      contact: "#finance-data"\n    - {name: fraud, freshness: 30m, contact: fraud@example.com}',
        ),
        None,
    ),
    (
        "required field removed under forward",
        FORWARD,
        _chain(FORWARD, _r("    - {name: order_id, type: long, required: true, id: 1}\n", "")),
        "SW-SCHEMA-001",
    ),
    ("type change that is not a promotion", SAME, _r("decimal(12,2)", "decimal(12,4)"), "SW-SCHEMA-002"),
    (
        "optional made required",
        SAME,
        _r('type: "decimal(12,2)", id: 2}', 'type: "decimal(12,2)", id: 2, required: true}'),
        "SW-SCHEMA-003",
    ),
    (
        "required field added without default",
        BACKWARD,
        _chain(
            BACKWARD,
            _r(
                "required: true, id: 3}",
                "required: true, id: 3}\n    - {name: region, type: string, required: true, id: 9}",
            ),
        ),
        "SW-SCHEMA-004",
    ),
    (
        "rename while renames are not allowed",
        SAME,
        _r("{name: amount, type:", "{name: total_amount, type:"),
        "SW-SCHEMA-005",
    ),
    (
        "date to timestamp on an identity partition source (v3)",
        _chain(
            _r("format_version: 2", "format_version: 3"),
            BACKWARD,
            _r("{name: event_time, type: timestamptz", "{name: event_day, type: date"),
            _r("{source: event_time, transform: day}", "{source: event_day, transform: identity}"),
        ),
        _chain(
            _r("format_version: 2", "format_version: 3"),
            BACKWARD,
            _r("{name: event_time, type: timestamptz", "{name: event_day, type: timestamp"),
            _r("{source: event_time, transform: day}", "{source: event_day, transform: identity}"),
        ),
        "SW-SCHEMA-006",
    ),
    (
        "table schema changed, state schema_version kept",
        WITH_STATE_TABLE,
        _chain(WITH_STATE_TABLE, ADD_OPTIONAL),
        "SW-SCHEMA-007",
    ),
    ("compatibility weakened", SAME, _r("compatibility: full", "compatibility: none"), "SW-SCHEMA-009"),
    ("promotion under full", WITH_INT, _chain(WITH_INT, _r("type: int, id: 2", "type: long, id: 2")), "SW-SCHEMA-010"),
    ("operator uid removed", SAME, _r("    - uid: orders-dedup", "    - uid: orders-dedup-v2"), "SW-STATE-006"),
    ("max parallelism changed", SAME, _r("max_parallelism: 128", "max_parallelism: 256"), "SW-STATE-007"),
    ("state key changed", SAME, _r("key: [order_id]", "key: [order_id, customer_id]"), "SW-STATE-008"),
    (
        "waiver added",
        SAME,
        lambda t: t + "waivers:\n  - {rule: SW-RET-002, reason: migration, expires: 2027-01-31}\n",
        "SW-WAIVER-002",
    ),
    (
        "backfill boundary widened",
        lambda t: (
            t
            + "backfills:\n  - {job: orders-backfill, branch: backfill, from: '2026-01-01T00:00:00Z',"
            + " to: '2026-02-01T00:00:00Z', reason: replay}\n"
        ),
        lambda t: (
            t
            + "backfills:\n  - {job: orders-backfill, branch: backfill, from: '2026-01-01T00:00:00Z',"
            + " to: '2026-06-01T00:00:00Z', reason: replay}\n"
        ),
        "SW-REC-004",
    ),
]


@pytest.mark.parametrize(("name", "base_edit", "head_edit", "rule"), CASES, ids=[c[0] for c in CASES])
def test_diff_rule_on_a_real_repository(
    runner: CliRunner, tmp_path: Path, name: str, base_edit: Edit, head_edit: Edit, rule: str | None
) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", base_edit(CLEAN_CONTRACT))
    repo.commit("base")
    repo.branch("feature")
    head_text = head_edit(CLEAN_CONTRACT)
    repo.write("contracts/orders.yaml", head_text)
    repo.commit(name)
    r = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert r.exit_code in (0, 1), r.output
    findings = json.loads(r.stdout)["findings"]
    fired = sorted({f["rule"] for f in findings if f["rule"] in DIFF_RULES})
    review = invoke(runner, "diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    classes = [c["class"] for p in json.loads(review.stdout)["pipelines"] for c in p["changes"]]
    if rule is None:
        assert fired == [], f"{name}: a safe change fired {fired}"
        assert "breaking" not in classes
        assert review.exit_code == 0
    else:
        assert rule in fired, f"{name}: expected {rule}, fired {fired}"
        f = next(f for f in findings if f["rule"] == rule)
        # the finding points at a real line of the head contract
        assert 1 <= f["line"] <= len(head_text.splitlines())
        severity = f["severity"]
        assert ("breaking" if severity == "error" else "coordinate") in classes
        assert review.exit_code == (1 if severity == "error" else 0)


def _version(i: int, *, required_channel: bool) -> str:
    text = _chain(_r("compatibility: full", "compatibility: forward_transitive"))(CLEAN_CONTRACT)
    extra = f"\n    - {{name: note_{i}, type: string, id: {10 + i}}}"
    if required_channel:
        extra += "\n    - {name: channel, type: string, required: true, id: 50, default: web}"
    return text.replace("required: true, id: 3}", "required: true, id: 3}" + extra)


def test_transitive_mode_checks_every_earlier_version(runner: CliRunner, tmp_path: Path) -> None:
    """v1 has a required `channel`; v2 and v3 (base) drop it while it is still optional...; the head
    is checked against all of them: forward_transitive fires for the field required in v1."""
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", _version(1, required_channel=True))
    repo.commit("v1")
    repo.write("contracts/orders.yaml", _version(2, required_channel=True).replace("required: true, id: 50", "id: 50"))
    repo.commit("v2: channel optional")
    repo.write("contracts/orders.yaml", _version(3, required_channel=False).replace("note_3", "note_3"))
    repo.commit("v3: channel dropped (optional, allowed against v2)")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", _version(4, required_channel=False))
    repo.commit("v4")
    r = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    findings = json.loads(r.stdout)["findings"]
    s001 = [f for f in findings if f["rule"] == "SW-SCHEMA-001"]
    assert s001, [f["rule"] for f in findings]
    assert "channel" in s001[0]["message"]
    # the same head under plain `forward` (base v3 only) does not fire: channel was optional at v3
    repo2 = Repo(tmp_path / "repo2")
    for i, text in enumerate([_version(1, required_channel=True), _version(3, required_channel=False)], start=1):
        repo2.write("contracts/orders.yaml", text.replace("forward_transitive", "forward"))
        repo2.commit(f"v{i}")
    repo2.branch("feature")
    repo2.write("contracts/orders.yaml", _version(4, required_channel=False).replace("forward_transitive", "forward"))
    repo2.commit("v4")
    r2 = invoke(runner, "check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo2.path)
    assert not [f for f in json.loads(r2.stdout)["findings"] if f["rule"] == "SW-SCHEMA-001"]
