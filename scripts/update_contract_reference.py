"""Regenerate docs/contract-reference.md from the contract's JSON Schema and the built-in policies
(tests/test_docs.py checks that it is up to date)."""

from __future__ import annotations

import sys
from pathlib import Path

from streamwarden.core.resources import CONTRACT_SCHEMA, load_schema
from streamwarden.engine import load_policy_set
from streamwarden.verbs.reference import render

DOC = Path(__file__).resolve().parent.parent / "docs" / "contract-reference.md"


def rendered() -> str:
    return render(load_schema(CONTRACT_SCHEMA), load_policy_set())


if __name__ == "__main__":
    new = rendered()
    if "--check" in sys.argv:
        sys.exit(0 if DOC.is_file() and DOC.read_text(encoding="utf-8") == new else 1)
    DOC.write_text(new, encoding="utf-8")
