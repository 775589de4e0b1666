"""Contract text that reaches CI logs and pull-request comments has limits: names at most 253
characters, one-line fields (owner, contact, approved_by) without line breaks, free text (reasons,
descriptions, column docs) at most 1,000 characters, and no control characters in any of them.
The message names the file, line and field, and says what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT

WAIVER = "waivers:\n  - rule: SW-CKPT-004\n    reason: {reason}\n    expires: 2027-01-01\n    approved_by: {approver}\n"


def contract(tmp_path: Path, *, name: str = "orders-enrichment", owner: str = "payments-data", **waiver: str) -> Path:
    text = CLEAN_CONTRACT.replace("name: orders-enrichment\n", f"name: {json.dumps(name)}\n", 1)
    text = text.replace("owner: payments-data", f"owner: {json.dumps(owner)}")
    if waiver:
        text += WAIVER.format(
            reason=json.dumps(waiver.get("reason", "ok")), approver=json.dumps(waiver.get("approver", "ana"))
        )
    path = tmp_path / "orders.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_free_text_may_span_lines_and_names_fit(tmp_path: Path) -> None:
    contract(tmp_path, name="n" * 253, reason="line one\n\tline two\n" + "x" * 900)
    p = sw("validate", "orders.yaml", cwd=tmp_path)
    assert p.code == 0, p


def test_a_too_long_reason_is_refused_with_its_line_and_what_to_do(tmp_path: Path) -> None:
    contract(tmp_path, reason="x" * 1001)
    p = sw("validate", "orders.yaml", cwd=tmp_path)
    assert p.code == 2
    line = CLEAN_CONTRACT.count("\n") + 3
    assert f"orders.yaml:{line}: waivers[0].reason: is 1,001 characters long, more than the 1,000 allowed" in p.stderr
    assert "hint: shorten it" in p.stderr


def test_a_too_long_name_is_refused(tmp_path: Path) -> None:
    contract(tmp_path, name="n" * 254)
    p = sw("validate", "orders.yaml", cwd=tmp_path)
    assert p.code == 2
    assert "orders.yaml:4: metadata.name: is 254 characters long, more than the 253 allowed" in p.stderr


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("name", "orders\x1b[31m", "\\x1b"),
        ("owner", "team\r::set-output name=x::y", "\\r"),
        ("owner", "team\nother", "\\n"),
        ("approver", "ana\x00", "\\0"),
        ("reason", "ok \x1b]8;;http://x\x07 link", "\\x1b"),
    ],
)
def test_a_control_character_is_refused_by_name(tmp_path: Path, field: str, value: str, shown: str) -> None:
    if field in ("name", "owner"):
        contract(tmp_path, **{field: value})
        path = f"metadata.{field}"
    else:
        contract(tmp_path, **{field: value})
        path = "waivers[0].reason" if field == "reason" else "waivers[0].approved_by"
    p = sw("validate", "orders.yaml", cwd=tmp_path)
    assert p.code == 2
    assert f": {path}: contains the control character {shown} at character " in p.stderr, p
    assert "hint: " in p.stderr
    assert "\x1b" not in p.stderr and "\x00" not in p.stderr and "\r" not in p.stderr
    # check says the same (an unusable input, exit 2)
    c = sw("check", "orders.yaml", cwd=tmp_path)
    assert c.code == 2 and f"{path}: contains the control character {shown}" in c.output
