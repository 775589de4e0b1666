"""Benchmark: `streamwarden check` on 1,000 generated contracts (static check, no live facts).

Prints ms per contract, the ratio to the floor (only reading and YAML-parsing the same files), the
peak RSS of the check process, and whether any JVM module was imported. Target on the 2-core
machine: at most 3 s for 1,000 contracts, no JVM, peak RSS at most 300 MB.

    python tests/benchmarks/bench_check.py [--contracts 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.conftest import CLEAN_CONTRACT  # noqa: E402

# tests/conftest.py turns the test suite's self-check mode on; a benchmark measures the product
os.environ["STREAMWARDEN_SELF_CHECK"] = "0"

VARIANTS = [
    ("  min_pause: 30s", "  min_pause: 90s"),  # SW-CKPT-002
    ("  backend: rocksdb", "  backend: hashmap"),  # SW-STATE-002
    ("  storage: s3://lake-checkpoints/orders-enrichment", "  storage: file:///tmp/ckpt"),  # SW-CKPT-004
    ("      freshness: 30m", "      freshness: 1m"),  # SW-TABLE-006
    ("  owner: payments-data", '  owner: ""'),  # SW-REC-001
]


def generate(directory: Path, n: int) -> None:
    rng = random.Random(42)
    for i in range(n):
        text = CLEAN_CONTRACT.replace("orders-enrichment", f"pipeline-{i:04d}")
        for old, new in rng.sample(VARIANTS, rng.randint(0, 3)):
            text = text.replace(old, new)
        d = directory / f"team-{i % 20:02d}" / f"pipeline-{i:04d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "contract.yaml").write_text(text, encoding="utf-8")


def floor(directory: Path) -> float:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    t0 = time.perf_counter()
    for p in sorted(directory.rglob("*.yaml")):
        yaml.load(p.read_text(encoding="utf-8"), Loader=loader)
    return time.perf_counter() - t0


def run_check(directory: Path, workers: str = "") -> tuple[float, float, dict[str, object]]:
    """One `streamwarden check` process: wall time, its peak RSS (MB), the JSON summary."""
    code = (
        "import sys, json, runpy\n"
        "sys.argv = ['streamwarden', 'check', sys.argv[1], '--format', 'json', '--output', sys.argv[2]]\n"
        "try:\n    runpy.run_module('streamwarden.cli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "jvm = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'pyarrow', 'pyiceberg'))\n"
        "print(json.dumps({'heavy_modules': jvm}))\n"
    )
    out = directory.parent / "findings.json"
    env = {**os.environ, "STREAMWARDEN_WORKERS": workers}
    # a fresh interpreter per measurement: ru_maxrss of children is the largest process seen so far
    wrapper = (
        "import resource, subprocess, sys, json\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else json.dumps({'stderr': p.stderr}))\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-c", code, str(directory), str(out)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    wall = time.perf_counter() - t0
    lines = proc.stdout.strip().splitlines()
    rss_mb = int(lines[-1]) / 1024 if lines else float("nan")
    proc.stdout = "\n".join(lines[:-1])
    info = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {"stderr": proc.stderr}
    info["summary"] = json.loads(out.read_text())["summary"] if out.exists() else None
    return wall, rss_mb, info


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--contracts", type=int, default=1000)
    ap.add_argument("--keep", type=Path)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="sw-bench-"))
    directory = base / "contracts"
    try:
        generate(directory, args.contracts)
        floor(directory)  # warm the page cache
        floor_s = min(floor(directory) for _ in range(3))
        wall, rss, info = run_check(directory)
        wall1, rss1, _ = run_check(directory, workers="1")
        n = args.contracts
        print(f"contracts:            {n}")
        print(f"cores:                {os.cpu_count()}")
        print(f"floor (read+YAML):    {floor_s:.3f} s  ({1000 * floor_s / n:.2f} ms/contract)")
        print(f"streamwarden check:   {wall:.3f} s  ({1000 * wall / n:.2f} ms/contract, process start included)")
        print(f"ratio to floor:       {wall / floor_s:.1f}x")
        print(f"  one process only:   {wall1:.3f} s  ({1000 * wall1 / n:.2f} ms/contract; STREAMWARDEN_WORKERS=1)")
        print(f"peak RSS:             {rss:.0f} MB per process (default run); {rss1:.0f} MB in one process")
        print(f"JVM/heavy modules:    {info.get('heavy_modules') or 'none imported'}")
        print(f"summary:              {info.get('summary')}")
        ok = wall <= 3.0 and max(rss, rss1) <= 300 and not info.get("heavy_modules")
        print(f"target (<=3 s, <=300 MB, no JVM): {'met' if ok else 'NOT met'}")
        return 0
    finally:
        if args.keep:
            shutil.copytree(directory, args.keep, dirs_exist_ok=True)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
