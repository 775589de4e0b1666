"""One evaluation, one pipeline lookup: `gate` and `evidence` on the same repository, environment
and savepoint give the same verdict for the same reasons (rule ids and field paths), deny and
allow alike; `facts`, `gate` and `evidence` find (or fail to find) a pipeline the same way.

Real processes (tests/cli.py) on a real repository (tests/recovery_repo.py): streamwarden.yaml
with a `prod` environment, the example contract, a PyIceberg SQLite catalog holding the table the
Iceberg Flink sink committed checkpoints 1..20 into, and savepoint files.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.recovery_repo import DAY_MS, RecoveryRepo

WAIVER = (
    "waivers:\n"
    "  - rule: SW-STATE-009\n"
    "    reason: the dedup operator is rebuilt from the source\n"
    "    expires: {expires}\n"
    "    approved_by: data-platform\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> RecoveryRepo:
    r = RecoveryRepo(tmp_path)
    r.commit(1, 20)
    return r


def _run(repo: RecoveryRepo, command: str, *args: str) -> Proc:
    common = ("--env", "prod", "--config", str(repo.root / "streamwarden.yaml"), "--now", repo.now_arg())
    return sw(command, "orders-enrichment", *common, *args, "--format", "json", cwd=repo.root)


def _why(items: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return sorted((r["rule"], r["path"], r["severity"], r["message"]) for r in items)


def _verdicts(repo: RecoveryRepo, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The gate's decision and the evidence record's verdict, each with reasons and warnings."""
    g = _run(repo, "gate", *args)
    e = _run(repo, "evidence", *args)
    assert e.code == 0, e  # the record was written, whatever its verdict
    gate, verdict = g.json(), e.json()["verdict"]
    assert g.code == (0 if gate["decision"] == "allow" else 1), g
    return (
        {"decision": gate["decision"], "reasons": _why(gate["reasons"]), "warnings": _why(gate["warnings"])},
        {"decision": verdict["decision"], "reasons": _why(verdict["reasons"]), "warnings": _why(verdict["warnings"])},
    )


def test_a_deny_has_the_same_verdict_rules_and_paths_in_gate_and_evidence(repo: RecoveryRepo) -> None:
    # a job that lost a uid (SW-STATE-009 at state.operators[0].uid), from a savepoint older than
    # its retention (SW-REC-003), with a catalog that cannot be read (SW-FACT-001: a gap in the
    # facts, an error in gate mode only)
    repo.edit_contract("- uid: orders-dedup", "- uid: orders-dedupe")
    sp = str(repo.savepoint(20, age_ms=8 * DAY_MS))
    (repo.root / "lake" / "catalog.db").unlink()
    gate, evidence = _verdicts(repo, "--restore-from", sp)
    assert gate["decision"] == "deny"
    assert [(rule, path) for rule, path, _, _ in gate["reasons"]] == [
        ("SW-FACT-001", "facts.iceberg"),
        ("SW-REC-003", "retention.savepoints.max_age"),
        ("SW-STATE-009", "state.operators[0].uid"),
    ]
    assert evidence == gate


def test_an_allow_has_the_same_verdict_and_notes_in_gate_and_evidence(repo: RecoveryRepo) -> None:
    gate, evidence = _verdicts(repo, "--restore-from", str(repo.savepoint(20)))
    assert gate["decision"] == "allow" and gate["reasons"] == []
    assert evidence == gate


def test_a_waived_reason_allows_in_gate_and_evidence_alike(repo: RecoveryRepo) -> None:
    repo.edit_contract("- uid: orders-dedup", "- uid: orders-dedupe")
    # a waiver that holds for another 30 days (within waivers.max_horizon)
    expires = dt.datetime.fromtimestamp(repo.now_ms / 1000 + 30 * 86_400, tz=dt.timezone.utc).date().isoformat()
    repo.write_contract(repo.contract_text + WAIVER.format(expires=expires))
    gate, evidence = _verdicts(repo, "--restore-from", str(repo.savepoint(20)))
    assert gate["decision"] == "allow" and gate["reasons"] == []
    assert evidence == gate


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope",), "unknown pipeline 'nope' (known: orders-enrichment)"),
        (("orders-enrichment", "--contracts", "nowhere"), "nowhere"),
    ],
)
def test_facts_gate_and_evidence_look_a_pipeline_up_the_same_way(
    repo: RecoveryRepo, args: tuple[str, ...], message: str
) -> None:
    config = ("--config", str(repo.root / "streamwarden.yaml"))
    found = {
        command: sw(command, *args, *config, *(("--env", "prod") if command != "facts" else ()), cwd=repo.root)
        for command in ("facts", "gate", "evidence")
    }
    for command, p in found.items():
        assert p.code == 2 and message in p.stderr, (command, p)
    assert len({p.stderr for p in found.values()}) == 1, found
