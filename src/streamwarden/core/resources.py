"""Where the shipped data lives: the built-in policies and the JSON Schemas.

In a wheel they are package data (``streamwarden/_policies``, ``streamwarden/_schema``); in a
source checkout (editable install, tests) they are the repository's ``policies/`` and
``contracts/schema/``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent  # src/streamwarden (or site-packages/streamwarden)
_PKG = PACKAGE
_REPO = _PKG.parent.parent


def _first(*candidates: Path) -> Path:
    for c in candidates:
        if c.exists():
            return c
    return candidates[-1]


def policies_dir() -> Path:
    return _first(_PKG / "_policies", _REPO / "policies")


def schema_dir() -> Path:
    return _first(_PKG / "_schema", _REPO / "contracts" / "schema")


@cache
def load_schema(name: str) -> dict[str, Any]:
    with (schema_dir() / name).open(encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


CONTRACT_SCHEMA = "pipeline-contract.v1.schema.json"
CONFIG_SCHEMA = "streamwarden-config.v1.schema.json"
