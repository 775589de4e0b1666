"""Regenerate docs/contract-reference.md from the contract's JSON Schema and the built-in policies.

python scripts/update_contract_reference.py           # rewrite it
python scripts/update_contract_reference.py --check   # exit 1 when it is stale (scripts/generate.py --check)
"""

from __future__ import annotations

import sys

from generated import ROOT, write_or_check

from streamwarden.core.resources import CONTRACT_SCHEMA, load_schema
from streamwarden.engine import load_policy_set
from streamwarden.verbs.reference import render

DOC = ROOT / "docs" / "contract-reference.md"


def rendered() -> str:
    return render(load_schema(CONTRACT_SCHEMA), load_policy_set())


if __name__ == "__main__":
    sys.exit(0 if write_or_check(DOC, rendered(), "update_contract_reference.py", "--check" in sys.argv) else 1)
