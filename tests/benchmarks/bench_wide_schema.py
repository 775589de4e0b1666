"""Benchmark: `check --base` on one contract with many schema fields (issue 17: "linear; at most 3x a
plain check").

For each width, builds a git repository whose one contract has N columns, commits it, and on a
branch changes one column's doc and adds one optional column. Prints the plain check, the check
with --base, their ratio, and the growth from one width to the next (linear: ~2x when N doubles).

    python tests/benchmarks/bench_wide_schema.py [--widths 1250 2500 5000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.conftest import CLEAN_CONTRACT  # noqa: E402

os.environ["STREAMWARDEN_SELF_CHECK"] = "0"  # a benchmark measures the product


def contract(n: int, extra: bool = False) -> str:
    fields = "".join(f"\n    - {{name: col_{k}, type: string, id: {100 + k}, doc: 'column {k}'}}" for k in range(n))
    if extra:
        fields = fields.replace("doc: 'column 7'", "doc: 'column seven'")
        fields += f"\n    - {{name: col_new, type: long, id: {100 + n}}}"
    return CLEAN_CONTRACT.replace("required: true, id: 3}", "required: true, id: 3}" + fields)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def timed(repo: Path, *args: str) -> float:
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        proc = subprocess.run(
            # --no-cache: the second plain run would be a cache hit (a pull request's changed
            # contract never is), and the ratio would compare a lookup with an evaluation
            [sys.executable, "-m", "streamwarden.cli", "check", "--format", "json", "--no-cache", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        best = min(best, time.perf_counter() - t0)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--widths", type=int, nargs="+", default=[1250, 2500, 5000])
    ap.add_argument("--json", type=Path, help="also write the measurements to this file")
    args = ap.parse_args()
    rows: list[dict[str, float]] = []
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-wide-"))
    previous: float | None = None
    try:
        print(f"{'fields':>7} {'plain':>8} {'--base':>8} {'ratio':>6} {'growth':>7}")
        for n in args.widths:
            repo = tmp / f"w{n}"
            repo.mkdir()
            git(repo, "init", "-q", "-b", "main")
            git(repo, "config", "user.email", "bench@example.com")
            git(repo, "config", "user.name", "bench")
            (repo / "contracts").mkdir()
            (repo / "contracts/orders.yaml").write_text(contract(n))
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "base")
            git(repo, "checkout", "-q", "-b", "feature")
            (repo / "contracts/orders.yaml").write_text(contract(n, extra=True))
            git(repo, "commit", "-qam", "one doc edited, one column added")
            plain = timed(repo)
            pr = timed(repo, "--base", "main")
            growth = f"{pr / previous:.2f}x" if previous else "-"
            print(f"{n:>7} {plain:7.2f}s {pr:7.2f}s {pr / plain:5.2f}x {growth:>7}")
            rows.append({"fields": n, "plain": plain, "base": pr})
            previous = pr
        print("goal: --base at most 3x plain, growth about 2x per doubling (linear)")
        if args.json:
            args.json.write_text(json.dumps(rows), encoding="utf-8")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
