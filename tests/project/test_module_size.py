"""A module over about 600 lines says at its top why it is one module (ARCHITECTURE.md, "Layers"):
a reader who opens a long file learns first whether its length is a choice."""

from __future__ import annotations

import ast

from tests.conftest import REPO

SRC = REPO / "src" / "streamwarden"
LIMIT = 600


def test_every_long_module_says_why_at_its_top() -> None:
    silent = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= LIMIT:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Why one module of this size:" not in doc:
            silent.append(str(path.relative_to(SRC)))
    assert silent == []
