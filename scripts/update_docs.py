"""Regenerate the generated parts of the documentation:

- ``docs/rules.md``: the rule catalog (every rule's id, severity, title, what it checks, an example
  that fires and how to fix it), as ``streamwarden policy doc`` renders it from the policies' METADATA;
- the caller workflow in README.md, a copy of the one in docs/github.md (between the
  ``<!-- caller-workflow -->`` markers).

    python scripts/update_docs.py           # rewrite what is stale
    python scripts/update_docs.py --check   # exit 1 naming each stale file (scripts/generate.py --check)
"""

from __future__ import annotations

import re
import sys

from generated import ROOT, write_or_check

from streamwarden.engine import load_policy_set
from streamwarden.report.catalog import render_catalog

README = ROOT / "README.md"
RULES = ROOT / "docs" / "rules.md"
GITHUB = ROOT / "docs" / "github.md"
_CALLER = re.compile(r"<!-- caller-workflow -->\n.*?<!-- /caller-workflow -->\n", re.DOTALL)


def readme(text: str) -> str:
    """README.md with the caller workflow of docs/github.md."""
    source = _CALLER.search(GITHUB.read_text(encoding="utf-8"))
    if source is None:
        raise SystemExit("docs/github.md has no <!-- caller-workflow --> block")
    if not _CALLER.search(text):
        raise SystemExit("README.md has no <!-- caller-workflow --> block")
    return _CALLER.sub(lambda _: source.group(0), text, count=1)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    ok = write_or_check(RULES, render_catalog(load_policy_set()), "update_docs.py", check)
    ok &= write_or_check(README, readme(README.read_text(encoding="utf-8")), "update_docs.py", check)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
