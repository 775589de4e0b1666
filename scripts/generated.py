"""What every generator in scripts/ shares: write a generated file, or in check mode say it is stale.

python scripts/generate.py           # every generator: `make generate`
python scripts/generate.py --check   # exit 1 naming each stale file (tests/project/test_generated.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(path: Path, text: str, script: str, check: bool) -> bool:
    """Write ``text`` to ``path``; with ``check``, only compare. False (and one line on stderr naming
    the file and the command that regenerates it) when the file is not ``text``."""
    rel = path.relative_to(ROOT).as_posix()
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if check:
        if current != text:
            print(f"{rel} is stale: run `make generate` (or `python scripts/{script}`)", file=sys.stderr)
            return False
        return True
    if current != text:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {rel}")
    return True
