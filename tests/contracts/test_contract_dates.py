"""Every date and timestamp in a contract is a real calendar date: an impossible one (2026-02-31,
year 0000, 2027-02-29) is unusable input, exit 2 at its line with the field path, on both
``validate`` and ``check``, quoted or not. Otherwise a waiver would waive forever."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW


def _write(tmp_path: Path, tail: str) -> Path:
    p = tmp_path / "contracts" / "orders.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(CLEAN_CONTRACT + tail, encoding="utf-8")
    return p


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def _waiver(expires: str) -> str:
    return (
        "waivers:\n  - rule: SW-STATE-003\n    reason: migration\n"
        f"    approved_by: data-platform\n    expires: {expires}\n"
    )


def _backfill(start: str, end: str = '"2026-10-01T00:00:00Z"') -> str:
    return (
        "backfills:\n  - job: orders-backfill\n    branch: backfill\n"
        f"    from: {start}\n    to: {end}\n    reason: re-run\n"
    )


@pytest.mark.parametrize("command", ["validate", "check"])
@pytest.mark.parametrize(
    "expires",
    ['"2026-02-31"', "2026-02-31", '"0000-01-01"', "0000-01-01", '"2027-02-29"', "2027-02-29", '"2026-04-31"'],
)
def test_an_impossible_waiver_expiry_is_unusable_input(tmp_path: Path, command: str, expires: str) -> None:
    p = _write(tmp_path, _waiver(expires))
    args = ["check", "--now", NOW] if command == "check" else ["validate"]
    r = sw(*args, "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 2, r
    line = _line_of(p, "expires:")
    assert f"contracts/orders.yaml:{line}" in r.output and "waivers[0].expires" in r.output, r
    assert "not a real calendar date" in r.output, r


@pytest.mark.parametrize("command", ["validate", "check"])
@pytest.mark.parametrize(
    ("tail", "path", "needle"),
    [
        (_backfill('"2026-02-30T00:00:00Z"'), "backfills[0].from", "from:"),
        (_backfill("2026-02-30T00:00:00Z"), "backfills[0].from", "from:"),
        (_backfill('"0000-01-01T00:00:00Z"'), "backfills[0].from", "from:"),
        (_backfill('"2026-07-01T00:00:00Z"', '"2027-02-29T00:00:00+01:00"'), "backfills[0].to", "to:"),
    ],
)
def test_an_impossible_backfill_time_is_unusable_input(
    tmp_path: Path, command: str, tail: str, path: str, needle: str
) -> None:
    p = _write(tmp_path, tail)
    args = ["check", "--now", NOW] if command == "check" else ["validate"]
    r = sw(*args, "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 2, r
    line = _line_of(p, needle)
    assert f"contracts/orders.yaml:{line}" in r.output and path in r.output, r
    assert "not a real calendar date" in r.output, r


def test_a_leap_day_in_a_leap_year_is_a_date(tmp_path: Path) -> None:
    _write(tmp_path, _waiver('"2028-02-29"'))
    # (checked as of a day within waivers.max_horizon, 365 days, of it)
    r = sw("check", "--now", "2027-06-01T00:00:00Z", "--format", "json", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 0, r
    assert r.json()["summary"]["errors"] == 0
    assert sw("validate", "contracts/orders.yaml", cwd=tmp_path).code == 0


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ('"2028-02-29T00:00:00Z"', '"2028-03-01T00:00:00z"'),  # leap day; lower-case z
        ('"2026-06-30T23:59:60Z"', '"2026-12-31T23:59:60+00:00"'),  # leap seconds
        ('"2026-07-01 00:00:00+02:00"', '"2026-10-01t00:00:00.123456-05:30"'),  # space / t separators, offsets
        ("2026-07-01T00:00:00Z", "2026-10-01T00:00:00.5+01:00"),  # YAML timestamps (unquoted)
    ],
)
def test_timestamp_forms_accepted_before_still_pass(tmp_path: Path, start: str, end: str) -> None:
    _write(tmp_path, _backfill(start, end))
    r = sw("validate", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 0, r
    r = sw("check", "--now", NOW, "--format", "json", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 0, r


@pytest.mark.parametrize(
    ("field", "value", "valid"),
    [
        ("expires", "2026-02-31", False),
        ("expires", "0000-01-01", False),
        ("expires", "2027-02-29", False),
        ("expires", "2028-02-29", True),
    ],
)
def test_the_fast_path_and_jsonschema_agree_on_calendar_dates(field: str, value: str, valid: bool) -> None:
    from streamwarden.contracts.validate import fast_check_for, validator_for
    from streamwarden.core.resources import CONTRACT_SCHEMA, load_schema
    from streamwarden.yamlsafe.read import parse_documents

    schema = load_schema(CONTRACT_SCHEMA)
    data = parse_documents(CLEAN_CONTRACT, "c.yaml")[0].data
    data["waivers"] = [{"rule": "SW-STATE-003", "reason": "r", field: value}]
    fast = fast_check_for(schema)
    assert fast is not None
    assert fast(data) is valid
    assert validator_for(schema).is_valid(data) is valid
