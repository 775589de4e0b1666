"""SW-REC-005 through the real CLI: a non-rewindable source breaks a SINK's exactly-once promise;
`checkpoint.mode: exactly_once` alone is no delivery promise, and the remediation silences it."""

from __future__ import annotations

from pathlib import Path

from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW

NOT_REWINDABLE = CLEAN_CONTRACT.replace("rewindable: true", "rewindable: false")
assert NOT_REWINDABLE != CLEAN_CONTRACT and "delivery: exactly_once" in NOT_REWINDABLE
assert "  mode: exactly_once" in NOT_REWINDABLE


def rec005(tmp_path: Path, contract: str) -> list[dict[str, object]]:
    (tmp_path / "contract.yaml").write_text(contract, encoding="utf-8")
    p = sw("check", "contract.yaml", "--format", "json", "--now", NOW, cwd=tmp_path)
    assert p.code in (0, 1), p
    return [f for f in p.json()["findings"] if f["rule"] == "SW-REC-005"]


def test_fires_for_a_non_rewindable_source_while_the_sink_promises_exactly_once(tmp_path: Path) -> None:
    (finding,) = rec005(tmp_path, NOT_REWINDABLE)
    assert finding["path"] == "job.sources[0].rewindable"
    assert finding["line"] == 19
    assert 'sink "orders-table" promises delivery exactly_once' in str(finding["message"])


def test_an_at_least_once_sink_with_exactly_once_checkpoints_does_not_fire(tmp_path: Path) -> None:
    contract = NOT_REWINDABLE.replace("delivery: exactly_once", "delivery: at_least_once")
    assert rec005(tmp_path, contract) == []


def test_a_sink_without_delivery_with_exactly_once_checkpoints_does_not_fire(tmp_path: Path) -> None:
    contract = NOT_REWINDABLE.replace("      delivery: exactly_once\n", "")
    assert "delivery" not in contract
    assert rec005(tmp_path, contract) == []


def test_following_the_remediation_silences_it(tmp_path: Path) -> None:
    (finding,) = rec005(tmp_path, NOT_REWINDABLE)
    remediation = str(finding["remediation"])
    # "make the source rewindable"
    assert "rewindable: true" in remediation
    assert rec005(tmp_path, CLEAN_CONTRACT) == []
    # "or declare the exactly_once sinks delivery: at_least_once" (checkpoint.mode stays exactly_once)
    assert "delivery: at_least_once" in remediation
    assert rec005(tmp_path, NOT_REWINDABLE.replace("delivery: exactly_once", "delivery: at_least_once")) == []
