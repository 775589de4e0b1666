#!/usr/bin/env python3
"""Show the recovery ledger's rows about one pipeline: the query ``make demo`` runs after
``gate --record`` (docs/ledger.md has the same question in Spark SQL: "which savepoint was used").

Reads the ledger ``streamwarden.yaml`` names for the environment, with PyIceberg, through the
catalog the checker uses: ``python scripts/ledger_query.py PIPELINE [--root DIR] [--env NAME]``.
Every value is escaped for the terminal (a note is an operator's free text)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from streamwarden.contracts.config import load_config
from streamwarden.core.escape import terminal
from streamwarden.ledger.store import LedgerError, open_ledger

COLUMNS = ("recorded_at", "verb", "decision", "decision_id", "checkpoint_id", "restore_snapshot_id", "savepoint_path")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline")
    parser.add_argument("--root", default=".", help="the directory of streamwarden.yaml")
    parser.add_argument("--env", default="local")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    config = load_config(str(root / "streamwarden.yaml"), root)
    ledger = config.ledger_for(args.env)
    if ledger is None:
        print(f"environment {args.env} has no ledger", file=sys.stderr)
        return 2
    env = config.environment(args.env)
    try:
        opened = open_ledger(env["ledger"], env.get("iceberg"), config.root, create=False)
    except LedgerError as exc:
        print(terminal(exc.message), file=sys.stderr)
        return 2
    from pyiceberg.expressions import EqualTo

    equal: Any = EqualTo  # its constructor takes (term, literal)
    rows = opened.table.scan(row_filter=equal("pipeline", args.pipeline), selected_fields=COLUMNS).to_arrow()
    print(f"-- SELECT {', '.join(COLUMNS)} FROM {ledger.catalog}.{ledger.table} WHERE pipeline = '{args.pipeline}'")
    for row in sorted(rows.to_pylist(), key=lambda r: r["recorded_at"]):
        print("  ".join(f"{k}={terminal(row[k])}" for k in COLUMNS))
    print(f"({rows.num_rows} row{'s' if rows.num_rows != 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
