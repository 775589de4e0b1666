"""A source says how long it keeps what a restore re-reads (`job.sources[].retention`), through the
real CLI: `validate` accepts it, SW-REC-006 refuses savepoint windows the source cannot serve
(with the arithmetic in the message), SW-SRC-001 warns about a rewindable source without one."""

from __future__ import annotations

from pathlib import Path

from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW

# CLEAN_CONTRACT: orders-topic (rewindable, retention 14d), savepoints.max_age 7d, rollback_window 3d
SEVEN_DAYS = CLEAN_CONTRACT.replace("retention: 14d", "retention: 7d").replace(
    "savepoints: {max_age: 7d, min_keep: 5}", "savepoints: {max_age: 10d, min_keep: 5}"
)
NO_RETENTION = CLEAN_CONTRACT.replace("      retention: 14d\n", "")
assert SEVEN_DAYS != CLEAN_CONTRACT and "max_age: 10d" in SEVEN_DAYS and NO_RETENTION != CLEAN_CONTRACT


def check(tmp_path: Path, contract: str, *args: str) -> tuple[int, list[dict[str, object]]]:
    (tmp_path / "contract.yaml").write_text(contract, encoding="utf-8")
    p = sw("check", "contract.yaml", "--format", "json", "--now", NOW, *args, cwd=tmp_path)
    assert p.code in (0, 1), p
    return p.code, p.json()["findings"]


def test_validate_accepts_a_source_retention_and_margin(tmp_path: Path) -> None:
    contract = SEVEN_DAYS.replace("retention: 7d", "retention: 7d\n      retention_margin: 12h")
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(contract, encoding="utf-8")
    p = sw("validate", "contracts/orders.yaml", cwd=tmp_path)
    assert p.code == 0, p
    facts = sw("facts", "orders-enrichment", cwd=tmp_path)
    assert facts.code == 0, facts
    source = facts.json()["contract"]["job"]["sources"][0]
    assert source["retention"] == 7 * 86_400_000 and source["retention_margin"] == 12 * 3_600_000


def test_a_retention_that_is_no_duration_is_unusable_input(tmp_path: Path) -> None:
    (tmp_path / "contract.yaml").write_text(CLEAN_CONTRACT.replace("retention: 14d", "retention: 7 days"), "utf-8")
    p = sw("validate", "contract.yaml", cwd=tmp_path)
    assert p.code == 2, p
    assert "contract.yaml:20" in p.output and "job.sources[0].retention" in p.output


def test_savepoints_older_than_the_topic_keeps_are_an_error_with_the_arithmetic(tmp_path: Path) -> None:
    code, findings = check(tmp_path, SEVEN_DAYS)
    assert code == 1
    (f,) = [f for f in findings if f["rule"] == "SW-REC-006"]
    assert f["severity"] == "error" and f["path"] == "retention.savepoints.max_age"
    assert f["line"] == CLEAN_CONTRACT.splitlines().index("  savepoints: {max_age: 7d, min_keep: 5}") + 1
    assert f["message"] == (
        'retention.savepoints.max_age 10d allows restoring a savepoint that source "orders-topic" (job.sources[0]) '
        "no longer holds: it keeps 7d, less a margin of 16h48m (a tenth of its retention, at least 1h), is 6d7h12m, "
        "and 10d is not below that; a restore that old skips the records deleted in between"
    )
    assert f["evidence"]["limit_ms"] == 7 * 86_400_000 - 60_480_000


def test_the_rollback_window_is_judged_too(tmp_path: Path) -> None:
    contract = CLEAN_CONTRACT.replace("retention: 14d", "retention: 3d").replace(
        "savepoints: {max_age: 7d, min_keep: 5}", "savepoints: {max_age: 1d, min_keep: 5}"
    )
    _, findings = check(tmp_path, contract)
    assert [f["path"] for f in findings if f["rule"] == "SW-REC-006"] == ["retention.rollback_window"]


def test_a_declared_margin_replaces_the_default(tmp_path: Path) -> None:
    # 7d less 16h48m leaves 6d7h12m: a 6d max_age passes with the default margin...
    six_days = SEVEN_DAYS.replace("max_age: 10d, min_keep: 5", "max_age: 6d, min_keep: 5")
    _, findings = check(tmp_path, six_days)
    assert not [f for f in findings if f["rule"] == "SW-REC-006"]
    # ...and fails when the team keeps a day in reserve
    _, findings = check(tmp_path, six_days.replace("retention: 7d", "retention: 7d\n      retention_margin: 1d"))
    (f,) = [f for f in findings if f["rule"] == "SW-REC-006"]
    assert "it keeps 7d, less retention_margin 1d, is 6d, and 6d is not below that" in str(f["message"])


def test_the_clean_contract_passes(tmp_path: Path) -> None:
    code, findings = check(tmp_path, CLEAN_CONTRACT, "--fail-on", "warning")
    assert code == 0, findings


def test_a_rewindable_source_without_retention_is_a_warning(tmp_path: Path) -> None:
    code, findings = check(tmp_path, NO_RETENTION)
    assert code == 0  # a warning does not fail the default --fail-on error
    (f,) = [f for f in findings if f["rule"] == "SW-SRC-001"]
    assert f["severity"] == "warning" and f["path"] == "job.sources[0].retention"
    assert f["line"] == 16  # the source's mapping: the field is missing
    assert 'source "orders-topic" (job.sources[0]) is rewindable but declares no retention' in str(f["message"])
    assert not [f for f in findings if f["rule"] == "SW-REC-006"]  # nothing to compare
    code, _ = check(tmp_path, NO_RETENTION, "--fail-on", "warning")
    assert code == 1
