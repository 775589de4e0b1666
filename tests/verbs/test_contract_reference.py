"""docs/contract-reference.md: generated from the contract schema and the policies (kept fresh:
tests/project/test_generated.py), complete, and its rules column found by the policy scan (spot checks
against known readers)."""

from __future__ import annotations

import re

import pytest
from tests.conftest import REPO

from streamwarden.core.resources import CONTRACT_SCHEMA, load_schema
from streamwarden.engine import load_policy_set
from streamwarden.verbs.reference import fields

DOC = REPO / "docs" / "contract-reference.md"
_ROW = re.compile(r"^\| `([^`]+)` \| (.*?) \| (yes)? \| (.*?) \| (.*?) \| (.*?) \| (.*) \|$", re.MULTILINE)


def rows() -> dict[str, dict[str, str]]:
    out = {}
    for m in _ROW.finditer(DOC.read_text(encoding="utf-8")):
        out[m.group(1)] = {"type": m.group(2), "allowed": m.group(4), "default": m.group(5), "rules": m.group(6)}
    return out


def test_contract_reference_has_a_row_for_every_schema_field() -> None:
    assert list(rows()) == list(fields(load_schema(CONTRACT_SCHEMA)))


def test_contract_reference_gives_unit_grammar_enums_and_flink_defaults() -> None:
    text = DOC.read_text(encoding="utf-8")
    r = rows()
    assert r["checkpoint.interval"]["type"] == "[duration](#duration)"
    assert r["state.max_size"]["type"] == "[size](#size)"
    assert r["waivers[].expires"]["type"] == "[date](#date)"
    for unit in ("ms, s, m, h, d", "B, KiB, MiB, GiB, TiB", "YYYY-MM-DD"):
        assert unit in text
    assert r["state.backend"]["allowed"] == "`hashmap`, `rocksdb`, `forst`"
    assert r["job.max_parallelism"]["allowed"] == "1 to 32768"
    assert r["checkpoint.timeout"]["default"] == "Flink: 10m (`execution.checkpointing.timeout`)"
    assert r["metadata.name"]["default"] == ""


def test_an_enum_fields_flink_default_is_one_of_its_values() -> None:
    enums = {path: row for path, row in rows().items() if row["type"] == "enum" and row["default"]}
    assert {"checkpoint.externalized", "state.auto_generated_uids", "state.backend"} <= set(enums)
    for path, row in enums.items():
        values = re.findall(r"`([^`]+)`", row["allowed"])
        # a default Flink decides ("Flink: none (...)") or one streamwarden fills in ("`backward` (...)")
        shown = re.match(r"Flink: (\S+) ", row["default"]) or re.match(r"`([^`]+)` \(filled in", row["default"])
        assert shown and (shown.group(1) in values or shown.group(1) == "unset"), (path, row)
    assert enums["checkpoint.externalized"]["default"] == (
        "Flink: none (`execution.checkpointing.externalized-checkpoint-retention`: no_externalized_checkpoints)"
    )
    assert enums["state.auto_generated_uids"]["default"] == "Flink: allowed (`pipeline.auto-generate-uids`: true)"


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("checkpoint.min_pause", "SW-CKPT-002"),  # contract side, compared with the interval
        ("checkpoint.tolerable_failures", "SW-CKPT-003"),  # a computed key: input.contract.checkpoint[s.setting]
        ("metadata.consumers[].freshness", "SW-TABLE-006"),
        ("job.sinks[].delivery", "SW-CKPT-007"),  # through `some s in object.get(...)`
        ("quality.freshness.max_lag", "SW-DATA-001"),  # the id passed to a helper
        ("table.commit.lineage", "SW-TABLE-007"),  # through a package-level name
        ("retention.snapshots.max_age", "SW-RET-001"),
        ("state.operators[].ttl", "SW-STATE-003"),
        ("waivers[].expires", "SW-WAIVER-001"),
        ("backfills[].job", "SW-TABLE-010"),  # a name used before `some` binds it in a comprehension
    ],
)
def test_the_rules_column_names_a_rule_known_to_read_the_field(path: str, rule: str) -> None:
    assert rule in rows()[path]["rules"].split(", ")


def test_the_rules_column_names_only_real_rules() -> None:
    known = set(load_policy_set().rules)
    named = {rid for r in rows().values() for rid in r["rules"].split(", ") if rid}
    assert named and named <= known


def test_the_readme_links_the_contract_reference() -> None:
    assert "(docs/contract-reference.md)" in (REPO / "README.md").read_text(encoding="utf-8")
