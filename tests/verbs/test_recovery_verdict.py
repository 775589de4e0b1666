"""`gate` and `evidence` give one verdict: the evidence record renders the gate's own decision
(same evaluation, same reasons), and `--restore-from` is read the same way by both.

A `--restore-from` path that does not exist is unusable input (exit 2 naming the path, as for
`savepoint inspect`); a savepoint that exists but cannot be used (truncated or corrupt
`_metadata`, a directory without one) is a gap in the facts: SW-FACT-001, a deny.

Real processes (tests/cli.py) on a real repository: streamwarden.yaml, the example contract, a
PyIceberg SQLite catalog with the table the Iceberg Flink sink committed into, and savepoint files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.recovery_repo import DAY_MS, RecoveryRepo
from tests.savepoint_files import metadata_bytes, orders_job


@pytest.fixture
def append_repo(tmp_path: Path) -> RecoveryRepo:
    """Checkpoints 1..20 committed into an append-only (not idempotent) table."""
    r = RecoveryRepo(tmp_path, upsert=False)
    r.commit(1, 20)
    return r


def _run(repo: RecoveryRepo, command: str, *args: str) -> Proc:
    common = ("--env", "prod", "--config", str(repo.root / "streamwarden.yaml"), "--now", repo.now_arg())
    return sw(command, "orders-enrichment", *common, *args, "--format", "json", cwd=repo.root)


def _gate_and_evidence(repo: RecoveryRepo, *args: str) -> tuple[Proc, dict[str, Any], Proc, dict[str, Any]]:
    g = _run(repo, "gate", *args)
    e = _run(repo, "evidence", *args)
    return g, g.json(), e, e.json()


def _rules(reasons: list[dict[str, Any]]) -> list[str]:
    return sorted(r["rule"] for r in reasons)


def test_evidence_shows_the_gates_deny_with_the_same_reasons(append_repo: RecoveryRepo) -> None:
    # the savepoint is 8 days old (SW-REC-003: the contract keeps savepoints 7d) and the catalog
    # cannot be read (SW-FACT-001): the gate denies for both; the record must say so too
    sp = str(append_repo.savepoint(20, age_ms=8 * DAY_MS))
    (append_repo.root / "lake" / "catalog.db").unlink()
    g, gate, e, record = _gate_and_evidence(append_repo, "--restore-from", sp)
    assert g.code == 1, g
    assert gate["decision"] == "deny"
    assert _rules(gate["reasons"]) == ["SW-FACT-001", "SW-REC-003"]
    assert e.code == 0, e  # the record was written; the verdict is inside it
    assert record["verdict"]["decision"] == "deny"
    assert _rules(record["verdict"]["reasons"]) == _rules(gate["reasons"])
    assert [r["message"] for r in record["verdict"]["reasons"]] == [r["message"] for r in gate["reasons"]]
    assert _rules(record["verdict"]["warnings"]) == _rules(gate["warnings"])
    md = sw(
        "evidence",
        "orders-enrichment",
        *("--env", "prod", "--config", "streamwarden.yaml", "--now", append_repo.now_arg(), "--restore-from", sp),
        cwd=append_repo.root,
    )
    assert "**Verdict: DENY**" in md.stdout, md
    reasons = [ln for ln in md.stdout.splitlines() if ln.startswith("- `SW-")]
    assert sorted(ln.split("`")[1] for ln in reasons) == ["SW-FACT-001", "SW-REC-003"], md
    assert not any("(warning)" in ln for ln in reasons), md  # both are reasons, as in the gate


def test_evidence_and_gate_allow_the_same_restore(tmp_path: Path) -> None:
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 20)
    g, gate, e, record = _gate_and_evidence(repo, "--restore-from", str(repo.savepoint(20)))
    assert (g.code, gate["decision"], record["verdict"]["decision"]) == (0, "allow", "allow"), (g, e)
    assert record["verdict"]["reasons"] == [] and gate["reasons"] == []


def test_evidence_without_a_savepoint_denies_like_the_gate(append_repo: RecoveryRepo) -> None:
    # a stateful pipeline with nothing to restore from: SW-REC-003 in both
    g, gate, _, record = _gate_and_evidence(append_repo)
    assert g.code == 1 and _rules(gate["reasons"]) == ["SW-REC-003"], g
    assert record["verdict"]["decision"] == "deny"
    assert _rules(record["verdict"]["reasons"]) == ["SW-REC-003"]


@pytest.mark.parametrize("command", ["gate", "evidence"])
@pytest.mark.parametrize("form", ["path", "file-uri"])
def test_a_restore_from_path_that_does_not_exist_exits_2_naming_it(
    append_repo: RecoveryRepo, command: str, form: str
) -> None:
    missing = append_repo.root / "savepoints" / "savepoint-typo"
    given = str(missing) if form == "path" else missing.as_uri()
    p = _run(append_repo, command, "--restore-from", given)
    assert p.code == 2, p
    assert p.stdout == ""
    assert f"--restore-from {given} does not exist" in p.stderr, p
    assert "hint: give the savepoint or retained checkpoint directory" in p.stderr, p


def test_savepoint_inspect_of_a_path_that_does_not_exist_exits_2_naming_it(tmp_path: Path) -> None:
    p = sw("savepoint", "inspect", "savepoints/nope", cwd=tmp_path)
    assert p.code == 2, p
    assert "savepoints/nope does not exist" in p.stderr, p
    assert "hint: give the savepoint or retained checkpoint directory" in p.stderr, p


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: (d / "_metadata").write_bytes(metadata_bytes(orders_job())[:90]), "truncated"),
        (lambda d: (d / "_metadata").write_bytes(b"\x00" * 128), "not a Flink _metadata file"),
        (lambda d: None, "has no _metadata file"),  # it exists, but holds no savepoint
    ],
    ids=["truncated", "corrupt", "directory-without-metadata"],
)
def test_a_savepoint_that_exists_but_cannot_be_read_denies_with_fact001_in_both(
    append_repo: RecoveryRepo, make: Any, needle: str
) -> None:
    d = append_repo.root / "savepoints" / "broken"
    d.mkdir(parents=True)
    make(d)
    g, gate, e, record = _gate_and_evidence(append_repo, "--restore-from", str(d))
    assert g.code == 1, g
    assert gate["decision"] == "deny" and _rules(gate["reasons"]) == ["SW-FACT-001"]
    assert needle in gate["reasons"][0]["message"]
    assert e.code == 0, e
    assert record["verdict"]["decision"] == "deny"
    assert _rules(record["verdict"]["reasons"]) == ["SW-FACT-001"]
    assert record["candidate"]["available"] is False and needle in record["candidate"]["error"]


def test_the_evidence_record_escapes_contract_and_server_text(append_repo: RecoveryRepo) -> None:
    """The record is pasted into incident channels and pull requests: a consumer contact such as
    `[docs](https://evil.example) @org/admins` must not become a live link or a team mention."""
    hostile = "[docs](https://evil.example) @org/admins <b>x</b> `tick`"
    append_repo.edit_contract('contact: "#finance-data"', f"contact: {json.dumps(hostile)}")
    sp = str(append_repo.savepoint(20))
    md = sw(
        "evidence",
        "orders-enrichment",
        *("--env", "prod", "--config", "streamwarden.yaml", "--now", append_repo.now_arg(), "--restore-from", sp),
        cwd=append_repo.root,
    )
    assert md.code == 0, md
    (line,) = [ln for ln in md.stdout.splitlines() if ln.startswith("- finance") and "freshness" in ln]
    assert "](https://evil.example)" not in line and "https://evil" not in line, line
    assert "@org" not in line and "<b>" not in line, line
    assert "evil" in line  # still shown, as text
