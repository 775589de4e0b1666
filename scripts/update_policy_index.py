"""Regenerate the built-in policy pack's index, ``policies/index.json``.

Each built-in file's parse (package, rule sets, tests, ``custom.requires`` conditions and every
``# METADATA`` block with its lines), keyed by the SHA-256 of the file's text. A run reads the
index instead of parsing the METADATA YAML of every built-in file; a file whose text no longer has
the indexed hash is parsed as before, so a stale index costs time, never a wrong result.

    python scripts/update_policy_index.py           # rewrite it
    python scripts/update_policy_index.py --check   # exit 1 when it is stale (tests/test_policy_index.py)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamwarden.engine.policyset import INDEX_FORMAT, INDEX_NAME, _rego_files, index_entry, parse_policy

POLICIES = Path(__file__).resolve().parent.parent / "policies"


def render() -> str:
    files = {}
    for p in _rego_files(POLICIES):
        display = f"policies/{p.relative_to(POLICIES).as_posix()}"
        files[display] = index_entry(parse_policy(p.read_text(encoding="utf-8"), display, True, p))
    return json.dumps({"format": INDEX_FORMAT, "files": files}, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    target = POLICIES / INDEX_NAME
    text = render()
    if "--check" in sys.argv[1:]:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is stale: run python scripts/update_policy_index.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target} ({len(json.loads(text)['files'])} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
