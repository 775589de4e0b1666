"""Benchmark: a transitive compatibility check over 200 historical versions of one contract.

Builds a git repository whose contract (full_transitive) changed in 200 first-parent commits
(each adds an optional field), then times `streamwarden check --base main` on a branch that
adds one more. Target: under 2 s. Prints the figures and how the time splits.

    python tests/benchmarks/bench_transitive.py [--versions 200]
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

# tests/conftest.py turns the test suite's self-check mode on; a benchmark measures the product
os.environ["STREAMWARDEN_SELF_CHECK"] = "0"


def version(i: int) -> str:
    """A realistic evolution: 25 stable optional fields, and each version adds one optional field
    and drops the one the previous version added (both allowed under full_transitive)."""
    text = CLEAN_CONTRACT.replace("compatibility: full", "compatibility: full_transitive")
    stable = "".join(
        f"\n    - {{name: attr_{k}, type: string, id: {100 + k}, doc: 'attribute {k}'}}" for k in range(25)
    )
    rotating = f"\n    - {{name: note_{i}, type: string, id: {1000 + i}}}"
    return text.replace("required: true, id: 3}", "required: true, id: 3}" + stable + rotating)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def build(repo: Path, n: int) -> None:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    (repo / "contracts").mkdir()
    for i in range(n):
        (repo / "contracts/orders.yaml").write_text(version(i))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"v{i}")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "contracts/orders.yaml").write_text(version(n))
    git(repo, "commit", "-qam", "head")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=200)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-transitive-"))
    try:
        repo = tmp / "repo"
        t0 = time.perf_counter()
        build(repo, args.versions)
        setup = time.perf_counter() - t0
        cmd = [sys.executable, "-m", "streamwarden.cli", "check", "--base", "main", "--format", "json"]
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, check=False)
            runs.append(time.perf_counter() - t0)
        doc = json.loads(proc.stdout)
        plain = subprocess.run([*cmd[:4], "--format", "json"], cwd=repo, capture_output=True, text=True, check=False)
        t0 = time.perf_counter()
        subprocess.run([*cmd[:4], "--format", "json"], cwd=repo, capture_output=True, text=True, check=False)
        static = time.perf_counter() - t0
        print(f"historical versions:        {args.versions} (first-parent commits of one contract)")
        print(f"repository setup:           {setup:.1f} s (not measured below)")
        print(f"check --base (best of 3):   {min(runs):.2f} s   runs: {', '.join(f'{r:.2f}' for r in runs)}")
        print(f"check without --base:       {static:.2f} s   (process start, policies, one contract)")
        print(f"diff-specific cost:         {min(runs) - static:.2f} s")
        print(f"findings:                   {doc['summary']}  (exit {proc.returncode}; plain exit {plain.returncode})")
        print(f"target (< 2 s):             {'met' if min(runs) < 2.0 else 'NOT met'}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
