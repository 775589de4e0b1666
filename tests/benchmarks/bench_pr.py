"""Benchmark: a pull request that touches one of N contracts, `check --base main` against a plain
`check` of the same tree (issue 17's "PR mode does work only where the PR changed something").

Builds a real git repository with N generated contracts (some use a transitive compatibility mode,
so history matters), commits a base, and on a branch changes one contract. Prints the median and
min-max of 3 runs of each command and their ratio. Goal: `check --base` at most 1.3x a plain check
(both without the result cache), and with a warm result cache (a plain check of the base ran
before) at most 1 s at 5,000 contracts (``--contracts 5000``).

    python tests/benchmarks/bench_pr.py [--contracts 1000] [--runs 3] [--json FILE]

Peak RSS of each kind of run is printed too (a fresh process per measurement); ``--json FILE``
also writes every measurement for ``run_all.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.benchmarks.bench_check import compile_bytecode, generate  # noqa: E402

os.environ["STREAMWARDEN_SELF_CHECK"] = "0"  # a benchmark measures the product


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def build(repo: Path, n: int) -> None:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    (repo / "streamwarden.yaml").write_text('contracts: ["contracts/**/contract.yaml"]\n', encoding="utf-8")
    generate(repo / "contracts", n)
    # a third of the contracts keep a transitive mode: their history is read in PR mode
    for i, p in enumerate(sorted((repo / "contracts").rglob("contract.yaml"))):
        if i % 3 == 0:
            p.write_text(p.read_text().replace("compatibility: full", "compatibility: full_transitive"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    # some history: two more commits that touch a few contracts each
    for round_ in range(2):
        for p in sorted((repo / "contracts").rglob("contract.yaml"))[round_::50]:
            p.write_text(p.read_text().replace("interval: 60s", f"interval: {61 + round_}s"))
        git(repo, "commit", "-q", "-am", f"history {round_}")
    git(repo, "checkout", "-q", "-b", "feature")
    first = sorted((repo / "contracts").rglob("contract.yaml"))[1]
    first.write_text(first.read_text().replace("min_pause: 30s", "min_pause: 20s"))
    git(repo, "commit", "-q", "-am", "the pull request: one contract changes")


# a fresh wrapper per measurement: ru_maxrss of children is the largest process it waited for
# (the wall time is the check process's, as the wrapper saw it: its own start is not the check's)
_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "wall = time.perf_counter() - t0\n"
    "sys.stderr.write(p.stderr)\n"
    "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, wall)\n"
)
PEAK: dict[str, float] = {}  # kind of run -> peak RSS (MB) of the check process and its workers


def timed(repo: Path, *args: str, kind: str = "") -> float:
    command = [sys.executable, "-m", "streamwarden.cli", "check", "--format", "json", "-o", os.devnull, *args]
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command], cwd=repo, capture_output=True, text=True, check=False
    )
    parts = proc.stdout.strip().rpartition("\n")[2].split(" ")
    code, rss, wall_text = parts if len(parts) == 3 else ("?", "0", "nan")
    wall = float(wall_text)
    if code not in ("0", "1"):
        raise SystemExit(f"check {' '.join(args)} failed ({code}): {proc.stderr[-2000:]}")
    if kind:
        PEAK[kind] = max(PEAK.get(kind, 0.0), int(rss) / 1024)
    return wall


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--contracts", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the measurements to this file")
    args = ap.parse_args()
    compile_bytecode()
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-pr-"))
    try:
        repo = tmp / "repo"
        build(repo, args.contracts)
        timed(repo, "--no-cache")  # warm the page cache and the interpreter's imports
        plain: list[float] = []
        pr: list[float] = []
        warm: list[float] = []
        cache = str(tmp / "cache")
        for i in range(args.runs):  # alternate the order, so neither gets the warmer cache
            order = [(plain, ("--no-cache",), "plain"), (pr, ("--no-cache", "--base", "main"), "--base")]
            for bucket, extra, kind in order if i % 2 == 0 else reversed(order):
                bucket.append(timed(repo, *extra, kind=kind))
            # the cache as the base branch's run left it (the pull request's one file differs)
            shutil.rmtree(cache, ignore_errors=True)
            git(repo, "checkout", "-q", "main")
            timed(repo, "--cache", cache, kind="plain, filling the cache")
            git(repo, "checkout", "-q", "feature")
            warm.append(timed(repo, "--cache", cache, "--base", "main", kind="--base, warm cache"))
        # the contract review (diff --base) and the review report of check --base
        review = [timed(repo, "--no-cache", "--base", "main", "--format", "markdown", kind="--base --format markdown")]
        med_plain, med_pr = statistics.median(plain), statistics.median(pr)
        print(f"contracts:              {args.contracts} (one changed by the pull request), {os.cpu_count()} cores")
        print(f"check (plain):          median {med_plain:.2f} s   min-max {min(plain):.2f}-{max(plain):.2f} s")
        print(f"check --base main:      median {med_pr:.2f} s   min-max {min(pr):.2f}-{max(pr):.2f} s")
        ratio = med_pr / med_plain
        print(f"ratio --base / plain:   {ratio:.2f}x   (goal <= 1.3x: {'met' if ratio <= 1.3 else 'NOT met'})")
        med_warm = statistics.median(warm)
        print(
            f"--base, warm cache:     median {med_warm:.2f} s   min-max {min(warm):.2f}-{max(warm):.2f} s   "
            f"(goal <= 1 s: {'met' if med_warm <= 1 else 'NOT met'})"
        )
        print(f"--base, markdown review: {review[0]:.2f} s (no cache)")
        print("peak RSS:               " + ", ".join(f"{k} {v:.0f} MB" for k, v in PEAK.items()))
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "contracts": args.contracts,
                        "plain": plain,
                        "pr": pr,
                        "warm": warm,
                        "review": review,
                        "rss_mb": PEAK,
                    }
                ),
                encoding="utf-8",
            )
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
