"""Regenerate the built-in policy pack's index, ``policies/index.json``.

Each built-in file's parse (package, rule sets, tests, ``custom.requires`` conditions and every
``# METADATA`` block with its lines), keyed by the SHA-256 of the file's text. A run reads the
index instead of parsing the METADATA YAML of every built-in file; a file whose text no longer has
the indexed hash is parsed as before, so a stale index costs time, never a wrong result.

    python scripts/update_policy_index.py           # rewrite it
    python scripts/update_policy_index.py --check   # exit 1 when it is stale (scripts/generate.py --check)
"""

from __future__ import annotations

import json
import sys

from generated import ROOT, write_or_check

from streamwarden.engine.policyset import INDEX_FORMAT, INDEX_NAME, _rego_files, index_entry, parse_policy

POLICIES = ROOT / "policies"


def render() -> str:
    files = {}
    for p in _rego_files(POLICIES):
        display = f"policies/{p.relative_to(POLICIES).as_posix()}"
        files[display] = index_entry(parse_policy(p.read_text(encoding="utf-8"), display, True, p))
    return json.dumps({"format": INDEX_FORMAT, "files": files}, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    check = "--check" in sys.argv[1:]
    return 0 if write_or_check(POLICIES / INDEX_NAME, render(), "update_policy_index.py", check) else 1


if __name__ == "__main__":
    sys.exit(main())
