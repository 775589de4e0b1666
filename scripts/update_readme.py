"""Regenerate the README's rule table from the policies' METADATA (tests/test_docs.py checks it)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from streamwarden.engine import load_policy_set
from streamwarden.report.catalog import rule_table

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def rendered(text: str) -> str:
    table = rule_table(load_policy_set())
    return re.sub(re.escape(START) + r".*?" + re.escape(END), f"{START}\n{table}{END}", text, flags=re.DOTALL)


if __name__ == "__main__":
    text = README.read_text(encoding="utf-8")
    new = rendered(text)
    if "--check" in sys.argv:
        sys.exit(0 if new == text else 1)
    README.write_text(new, encoding="utf-8")
