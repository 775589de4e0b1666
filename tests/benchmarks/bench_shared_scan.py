"""Benchmark: 1 contract against 12 contracts on the same table, through the real CLI.

Builds the example lake (scripts/make_example_lake.py) in a temporary copy of contracts/examples,
writes 12 copies of payments-cdc's contract (each its own pipeline name, all on finance.payments)
and times ``streamwarden check --env local`` on one of them and on all twelve (each run a new
process: Python, the JVM and the Spark session included). The contracts on one table share one
scan per run, so twelve cost about one scan plus twelve evaluations. ``--pythonpath DIR`` runs
another checkout's code (e.g. an older streamwarden, to compare). Prints the figures; asserts nothing
about time.

    python tests/benchmarks/bench_shared_scan.py [--repeat 2] [--copies 12] [--pythonpath OTHER/src]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXAMPLES = REPO / "contracts" / "examples"
SCRIPT = REPO / "scripts" / "make_example_lake.py"
CLI = Path(sys.executable).parent / "streamwarden"


def build(root: Path, now: str, copies: int) -> list[str]:
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake"))
    spec = importlib.util.spec_from_file_location("make_example_lake", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    assert module.main(["--root", str(root), "--now", now]) == 0
    text = (root / "payments-cdc" / "contract.yaml").read_text(encoding="utf-8")
    paths = []
    for i in range(1, copies + 1):
        name = f"payments-copy-{i:02d}"
        target = root / name / "contract.yaml"
        target.parent.mkdir()
        target.write_text(text.replace("name: payments-cdc", f"name: {name}", 1), encoding="utf-8")
        shutil.copytree(root / "payments-cdc" / "deploy", root / name / "deploy")
        paths.append(f"{name}/contract.yaml")
    return paths


def check(root: Path, now: str, paths: list[str], pythonpath: str | None) -> tuple[float, int, int]:
    env = {**os.environ, "NO_COLOR": "1"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(CLI), "check", "--env", "local", "--format", "json", "--now", now, *paths],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - t0
    assert proc.returncode in (0, 1), proc.stderr.decode()
    findings = json.loads(proc.stdout)["findings"]
    dups = sum(1 for f in findings if f["rule"] == "SW-DATA-002")
    return elapsed, dups, len({f["pipeline"] for f in findings})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--copies", type=int, default=12)
    ap.add_argument("--pythonpath", help="run the CLI with this PYTHONPATH (another checkout's src)")
    args = ap.parse_args()
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    top = Path(tempfile.mkdtemp(prefix="sw-bench-shared-"))
    try:
        paths = build(top / "examples", now, args.copies)
        report: dict[str, object] = {"load_average_before": os.getloadavg(), "cpu_count": os.cpu_count()}
        for label, chosen in (("1 contract", paths[:1]), (f"{args.copies} contracts", paths)):
            runs = [check(top / "examples", now, chosen, args.pythonpath) for _ in range(args.repeat)]
            report[label] = {"seconds": [round(r[0], 1) for r in runs], "SW-DATA-002 findings": runs[0][1]}
        report["load_average_after"] = os.getloadavg()
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
