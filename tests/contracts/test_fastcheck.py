"""The compiled fast check (contracts/fastcheck.py) must give jsonschema's verdict, always.

It decides alone when a contract or config is valid, so any disagreement would let an invalid
file through silently. These tests compare it with ``Draft202012Validator.is_valid`` on every
example and on thousands of seeded mutations of real contracts and configs.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import CLEAN_CONTRACT, REPO

from streamwarden.contracts.fastcheck import compile_schema, equal
from streamwarden.contracts.normalize import lower_enums
from streamwarden.contracts.schemawalk import walker_for
from streamwarden.contracts.validate import fast_check_for, validator_for
from streamwarden.core.resources import CONFIG_SCHEMA, CONTRACT_SCHEMA, load_schema

VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    2.5,
    10**12,
    "",
    "x",
    "30s",
    "PT1M",
    "1z",
    "10 GiB",
    "ROCKSDB",
    "rocksdb",
    "exactly_once",
    "backward",
    "s3://b/p",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    [],
    ["a"],
    ["a", "a"],
    [1, True],
    {},
    {"unknown": 1},
    {"name": "x"},
    [{"name": "id", "type": "long"}],
    # the text limits: control characters (allowed or not by field), a line break, too long
    "a\x1b[31mb",
    "team\r::x",
    "line\nline",
    "tab\there",
    "a\n",
    "n" * 254,
    "x" * 1001,
]
KEYS = ["unknown", "name", "type", "interval", "columns", "max_age", "required", "owner", "uid", "mode"]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def mutate(doc: Any, rng: random.Random) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent, last = _at(doc, path[:-1]), path[-1]
        op = rng.random()
        same = [v for v in VALUES if type(v) is type(parent[last])]
        if op < 0.35 and same:  # same type, maybe out of range, pattern or enum: the hard cases
            parent[last] = copy.deepcopy(rng.choice(same))
        elif op < 0.55:
            parent[last] = copy.deepcopy(rng.choice(VALUES))
        elif op < 0.7 and isinstance(parent, dict):
            del parent[last]
        elif op < 0.8 and isinstance(parent, dict):
            parent[rng.choice(KEYS)] = copy.deepcopy(rng.choice(VALUES))
        elif op < 0.9 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))  # a duplicate (uniqueItems)
        elif isinstance(parent[last], str):
            parent[last] = parent[last].upper()
        elif isinstance(parent[last], (int, float)) and not isinstance(parent[last], bool):
            parent[last] = rng.choice([0, -parent[last], parent[last] * 1000, float(parent[last])])
    return doc


def _examples(kind: str) -> list[Any]:
    docs: list[Any] = []
    for p in sorted((REPO / "contracts" / "examples").rglob("*.yaml")) + sorted((REPO / "tests").rglob("*.yaml")):
        try:
            d = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        if not isinstance(d, dict):
            continue
        is_contract = d.get("kind") == "PipelineContract"
        if (kind == "contract") == is_contract and (is_contract or p.name.startswith("streamwarden")):
            docs.append(d)
    return docs


CONFIG_SEEDS: list[dict[str, Any]] = [
    {
        "contracts": ["contracts/**/*.yaml"],
        "policies": ["policies/acme"],
        "fail_on": "warning",
        "environments": {
            "prod": {
                "flink": {
                    "rest_url": "https://flink.example:8081",
                    "auth": {"bearer_token_env": "FLINK_TOKEN"},
                    "ca_file": "ca.pem",
                    "client_cert": "c.pem",
                    "client_key": "k.pem",
                    "timeout": "10s",
                    "retries": 2,
                    "concurrency": 4,
                },
                "iceberg": {"catalogs": {"lake": {"type": "rest", "uri": "https://cat", "s3.path-style-access": True}}},
                "spark": {"remote": "sc://spark:15002", "conf": {"spark.sql.shuffle.partitions": 8}},
            },
            "staging": {
                "flink": {"rest_url": "${FLINK_URL}/api", "auth": {"basic": {"username_env": "U", "password_env": "P"}}}
            },
        },
    },
    {"fail_on": "never", "environments": {"local": {"spark": {"master": "local[2]"}}}},
]


@pytest.mark.parametrize("which", ["contract", "config"])
def test_fast_check_agrees_with_jsonschema_on_examples_and_mutations(which: str) -> None:
    schema = load_schema(CONTRACT_SCHEMA if which == "contract" else CONFIG_SCHEMA)
    fast = fast_check_for(schema)
    assert fast is not None, "the shipped schema must compile to the fast check"
    validator = validator_for(schema)
    seeds = _examples(which) + ([yaml.safe_load(CLEAN_CONTRACT)] if which == "contract" else CONFIG_SEEDS)
    assert len(seeds) >= 3
    rng = random.Random(20261126)
    docs = list(seeds)
    for _ in range(3000 if which == "contract" else 1500):
        docs.append(mutate(rng.choice(seeds), rng))
    walker = walker_for(schema)
    verdicts = []
    for d in docs:
        for data in (d, lower_enums(walker, schema, d)):  # raw and as the loader prepares it
            want = validator.is_valid(data)
            assert fast(data) == want, f"fast check says {not want}, jsonschema says {want} for {data!r}"
            verdicts.append(want)
    # the corpus must exercise both answers, or this test could not fail
    valid = sum(verdicts)
    assert valid >= 200 and len(verdicts) - valid >= 200, (valid, len(verdicts))


def test_equality_follows_json_schema_not_python() -> None:
    assert not equal(True, 1) and not equal(False, 0) and not equal([True], [1])
    assert equal(1, 1.0) and equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not equal({"a": 1}, {"a": 1, "b": 2}) and not equal("1", 1) and not equal([], {})


@pytest.mark.parametrize(
    "schema, good, bad",
    [
        ({"type": "integer"}, 3.0, True),
        ({"enum": [1, "a"]}, 1.0, True),
        ({"uniqueItems": True}, [1, True], [1, 1.0]),
        ({"pattern": "b"}, "abc", "xyz"),
        ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x"}, {"b": 1}),
        ({"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False}, {"x-a": 1}, {"x-a": "1"}),
        ({"dependentRequired": {"key": ["cert"]}}, {"cert": 1}, {"key": 1}),
        ({"not": {"type": "null"}, "minimum": 0}, "not a number", -1),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1.5, 1),
    ],
)
def test_keywords_match_jsonschema(schema: dict[str, Any], good: Any, bad: Any) -> None:
    import jsonschema

    fast = compile_schema(schema)
    assert fast is not None
    validator = jsonschema.Draft202012Validator(schema)
    assert fast(good) and validator.is_valid(good)
    assert not fast(bad) and not validator.is_valid(bad)


def test_an_unknown_keyword_leaves_validation_to_jsonschema() -> None:
    assert compile_schema({"if": {"type": "string"}, "then": {"minLength": 2}}) is None
    assert compile_schema({"properties": {"a": {"$ref": "#/$defs/x"}}}) is None
    assert compile_schema({"properties": {"a": {"description": "only an annotation"}}}) is not None


def test_an_invalid_contract_still_gets_jsonschema_messages(tmp_path: Path) -> None:
    from streamwarden.contracts.load import load_contract
    from streamwarden.core.errors import ContractErrors

    path = tmp_path / "c.yaml"
    path.write_text(CLEAN_CONTRACT.replace("  backend: rocksdb", "  backend: rocksdb\n  bakend: x"), encoding="utf-8")
    with pytest.raises(ContractErrors) as err:
        load_contract(path, tmp_path)
    (e,) = err.value.errors
    assert "bakend" in str(e) and "backend" in (e.hint or ""), (str(e), e.hint)
    assert e.path == "state.bakend" and e.line == CLEAN_CONTRACT.splitlines().index("  backend: rocksdb") + 2
