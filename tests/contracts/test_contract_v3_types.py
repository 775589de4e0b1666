"""Iceberg format-v3 types in the contract: ``variant``, ``unknown``, ``geometry(C)``,
``geography(C, A)`` are accepted when ``table.format_version`` is 3, refused (exit 2, at the
field's line) otherwise; ``decimal(39,2)`` is no type (precision 1-38); and SW-SCHEMA-002 lets a v3
``unknown`` column become any type while a decimal still only grows within 38."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW


def _contract(fields: str, version: int) -> str:
    text = CLEAN_CONTRACT.replace("  format_version: 2\n", f"  format_version: {version}\n")
    assert f"format_version: {version}" in text and "event_time, type: timestamptz" in text
    return text.replace(
        "    - {name: event_time, type: timestamptz, required: true, id: 3}\n",
        "    - {name: event_time, type: timestamptz, required: true, id: 3}\n" + fields,
    )


def _repo(tmp_path: Path, text: str) -> Path:
    (tmp_path / "contracts").mkdir(parents=True)
    (tmp_path / "contracts/orders.yaml").write_text(text, encoding="utf-8")
    return tmp_path


V3_FIELDS = (
    "    - {name: shape, type: 'geometry(srid:4326)', id: 4}\n"
    "    - {name: area, type: 'geography(srid:4326, spherical)', id: 5}\n"
    "    - {name: payload, type: variant, id: 6}\n"
    "    - {name: later, type: unknown, id: 7}\n"
    "    - {name: raw_shape, type: geometry, id: 8}\n"
)


def test_v3_types_are_accepted_on_a_v3_table(tmp_path: Path) -> None:
    r = sw("check", "--now", NOW, "--format", "json", cwd=_repo(tmp_path, _contract(V3_FIELDS, 3)))
    assert r.code == 0, r


@pytest.mark.parametrize("field", ["variant", "'geometry(srid:4326)'", "'list<variant>'"])
def test_v3_types_are_refused_below_format_version_3(tmp_path: Path, field: str) -> None:
    text = _contract(f"    - {{name: x, type: {field}, id: 4}}\n", 2)
    r = sw("check", "--now", NOW, "--format", "json", cwd=_repo(tmp_path, text))
    assert r.code == 2, r
    assert "format_version" in r.stderr and "orders.yaml" in r.stderr


@pytest.mark.parametrize("field", ["'decimal(39,2)'", "'geography(srid:4326, flat)'"])
def test_what_is_no_iceberg_type_is_refused(tmp_path: Path, field: str) -> None:
    text = _contract(f"    - {{name: x, type: {field}, id: 4}}\n", 3)
    r = sw("check", "--now", NOW, "--format", "json", cwd=_repo(tmp_path, text))
    assert r.code == 2, r


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.parametrize(
    ("old", "new", "fires"),
    [
        ("unknown", "'struct<a:int>'", False),
        ("unknown", "long", False),
        ("'decimal(12,2)'", "'decimal(38,2)'", False),
        ("'geometry(srid:4326)'", "'geometry(srid:3857)'", True),
    ],
)
def test_v3_promotions_in_a_pull_request(tmp_path: Path, old: str, new: str, fires: bool) -> None:
    repo = _repo(tmp_path, _contract(f"    - {{name: x, type: {old}, id: 4}}\n", 3))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    (repo / "contracts/orders.yaml").write_text(
        _contract(f"    - {{name: x, type: {new}, id: 4}}\n", 3), encoding="utf-8"
    )
    r = sw("check", "--now", NOW, "--format", "json", "--base", "main", cwd=repo)
    assert r.code in (0, 1), r
    assert any(f["rule"] == "SW-SCHEMA-002" for f in r.json()["findings"]) is fires
