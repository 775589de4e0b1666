"""A contract value still a ``TODO(...)`` marker (what ``streamwarden init`` could not derive) is an
error in check and validate, however the YAML writes it: plainly, through an escape, or as a tag.
The loader skips its walk for a text that cannot hold one; these cases must never be skipped."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT

SPELLINGS = {
    "plain": "TODO(owner)",
    "quoted": '"TODO(owner)"',
    "escaped": '"\\x54ODO(owner)"',  # a double-quoted escape: the text never writes TODO
    "unicode escape": '"\\u0054ODO(owner)"',
    "binary tag": "!!binary " + base64.b64encode(b"TODO(owner)").decode(),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_todo_marker_is_an_error_however_it_is_written(tmp_path: Path, name: str) -> None:
    text = CLEAN_CONTRACT.replace("  owner: payments-data", f"  owner: {SPELLINGS[name]}")
    assert text != CLEAN_CONTRACT
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    for verb in ("check", "validate"):
        p = sw(verb, "c.yaml", cwd=tmp_path)
        assert p.code == 2, (verb, p)
        assert "fill the TODO" in p.output and "metadata.owner" in p.output, (verb, p)


def test_a_contract_without_a_marker_is_not_walked_for_one_and_still_loads(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    assert "TODO" not in CLEAN_CONTRACT and "\\" not in CLEAN_CONTRACT and "!" not in CLEAN_CONTRACT
    assert sw("check", "c.yaml", cwd=tmp_path).code == 0
