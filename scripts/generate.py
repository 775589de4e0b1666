"""Regenerate every generated file of the repository (`make generate`), in dependency order:

- ``policies/index.json``: the built-in policies' parse (scripts/update_policy_index.py);
- ``docs/rules.md``: the rule catalog, and the README's copy of the caller workflow from
  docs/github.md (scripts/update_docs.py);
- ``docs/contract-reference.md``: every contract field and the rules that read it
  (scripts/update_contract_reference.py);
- the normalized-contract part of ``contracts/schema/streamwarden-input.v1.schema.json``
  (scripts/update_input_schema.py).

    python scripts/generate.py           # rewrite what is stale
    python scripts/generate.py --check   # exit 1 naming each stale file and the command (tests/project/test_generated.py)

Not here: ``src/streamwarden/flink/keys/flink.txt`` (read from Flink's released jars by
scripts/update_flink_keys.py, a download) and the golden files of tests/golden (expected outputs a
reviewer accepts: ``UPDATE_GOLDEN=1 python -m pytest tests/report/test_report_golden.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
GENERATORS = (
    "update_policy_index.py",  # first: the others load the policy set, which reads the index
    "update_docs.py",
    "update_contract_reference.py",
    "update_input_schema.py",
)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for script in GENERATORS:
        proc = subprocess.run([sys.executable, str(SCRIPTS / script), *(["--check"] if check else [])], check=False)
        if proc.returncode != 0:
            stale.append(script)
    if stale and check:
        print("generated files are stale (above): run `make generate`", file=sys.stderr)
    elif stale:
        print(f"failed: {', '.join(stale)}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
