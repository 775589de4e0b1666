"""The built-in pack's index (policies/index.json): each file's parse by the hash of its text, read
instead of parsing every METADATA block on each run. It must say exactly what parsing says and
never answer for a file whose text changed (tests/project/test_generated.py: that it is current)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.conftest import REPO

from streamwarden.engine import policyset
from streamwarden.engine.policyset import INDEX_NAME, builtin_index, builtin_policy_files, parse_policy

REPO = REPO


def _fields(f: policyset.PolicyFile) -> tuple[object, ...]:
    return (
        f.display,
        f.source,
        f.package,
        f.builtin,
        f.is_test,
        f.rule_sets,
        f.tests,
        f.requires,
        f.metadata,
        f.now_reads,
        f.data_refs,
    )


def test_every_file_read_from_the_index_is_what_parsing_it_gives() -> None:
    files = builtin_policy_files()
    assert len(builtin_index(policyset.policies_dir())) == len(files)  # every file has its entry
    for f in files:
        assert _fields(f) == _fields(parse_policy(f.source, f.display, True, f.path)), f.display


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the built-in pack, index included, that policyset reads as the built-in one."""
    base = tmp_path / "policies"
    shutil.copytree(policyset.policies_dir(), base)
    monkeypatch.setattr(policyset, "policies_dir", lambda: base)
    builtin_index.cache_clear()
    yield base
    builtin_index.cache_clear()


def test_a_file_edited_after_the_index_was_written_is_parsed(pack: Path) -> None:
    state = pack / "streamwarden" / "state" / "sw_state_003.rego"
    text = state.read_text(encoding="utf-8")
    old = "title: Keyed state must expire"
    assert old in text
    state.write_text(text.replace(old, "title: Keyed state must expire (edited)"), encoding="utf-8")
    rules = policyset.load_policy_set(builtin_tests=False).rules
    titles = {r.title for r in rules.values()}
    assert "Keyed state must expire (edited)" in titles
    assert "Keyed state must expire" not in titles


@pytest.mark.parametrize("index", ["{not json", json.dumps({"format": "another/9", "files": {}}), "[]"])
def test_an_index_that_cannot_be_read_means_every_file_is_parsed(pack: Path, index: str) -> None:
    (pack / INDEX_NAME).write_text(index, encoding="utf-8")
    assert builtin_index(pack) == {}
    files = builtin_policy_files()
    assert [_fields(f) for f in files] == [_fields(parse_policy(f.source, f.display, True, f.path)) for f in files]
