"""Benchmark: what the recovery ledger adds to a gate on the example lake (the goal: recording adds
at most 1 s). The real CLI, in a subprocess, as `make demo` runs it, on a copy of the examples
with a fresh example lake and the recorded `before-rename` savepoint:

- the gate with no `ledger:` configured;
- the gate with a ledger configured, without --record (the ledger's rows are read: facts.ledger);
- `gate --record` writing a new row each run (a new --note: another decision);
- `gate --record` of a decision already recorded (the retry: read, no commit).

Prints the median and min-max of each over ``--runs`` runs (interleaved, so load spikes spread),
and the median differences. On a loaded machine a whole gate varies by seconds, so the ledger's
own work is also timed in this process (``ops``): opening the ledger, the read-back of a decision
id, and the one-row append commit, each over ``--runs`` runs. Figures only: nothing here passes
or fails.

    python tests/benchmarks/bench_ledger.py [--runs 5] [--ops-only]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import shutil
import statistics
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


def build(root: Path, now: str) -> None:
    spec = importlib.util.spec_from_file_location("make_example_lake", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    assert module.main(["--root", str(root), "--now", now]) == 0


def gate(root: Path, config: str, now: str, *extra: str) -> tuple[float, int]:
    (savepoint,) = sorted(root.glob(".lake/savepoints/before-rename/savepoint-*"))
    args = [str(CLI), "gate", "orders-enrichment", "--env", "local", "--config", config, "--now", now]
    args += ["--restore-from", str(savepoint), *extra]
    env = {**os.environ, "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, check=False)
    return time.perf_counter() - start, proc.returncode


def ops(root: Path, now: str, runs: int) -> None:
    """The ledger's own work in this process, on the ledger one recorded gate created."""
    from streamwarden.contracts.config import load_config
    from streamwarden.ledger.store import append_once, has_decision, open_ledger

    assert gate(root, "streamwarden.yaml", now, "--record", "--note", "the first row")[1] == 0
    config = load_config(str(root / "streamwarden.yaml"), root)
    env = config.environment("local")
    times: dict[str, list[float]] = {"open the ledger": [], "read back a decision id": [], "append one row": []}
    for i in range(runs):
        start = time.perf_counter()
        ledger = open_ledger(env["ledger"], env.get("iceberg"), config.root, create=True)
        times["open the ledger"].append(time.perf_counter() - start)
        (row,) = ledger.table.scan(limit=1).to_arrow().to_pylist()
        start = time.perf_counter()
        has_decision(ledger, f"bench-{i}")
        times["read back a decision id"].append(time.perf_counter() - start)
        start = time.perf_counter()
        append_once(ledger, {**row, "decision_id": f"bench-{i}"})
        times["append one row"].append(time.perf_counter() - start)
    print(f"the ledger's own work, in process, {runs} runs each")
    for name, values in times.items():
        print(f"{name:<36} {statistics.median(values):>8.3f}s {min(values):>7.3f}s-{max(values):.3f}s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ops-only", action="store_true", help="only the ledger's own work, in process")
    args = parser.parse_args(argv)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake"))
        build(root, now)
        ops(root, now, args.runs)
        if args.ops_only:
            return 0
        text = (root / "streamwarden.yaml").read_text(encoding="utf-8")
        plain = "\n".join(line for line in text.splitlines() if not line.startswith("ledger:")) + "\n"
        (root / "no-ledger.yaml").write_text(plain, encoding="utf-8")
        assert gate(root, "streamwarden.yaml", now, "--record", "--note", "the retried decision")[1] == 0
        cases = {
            "gate, no ledger configured": lambda i: gate(root, "no-ledger.yaml", now),
            "gate, ledger read (no --record)": lambda i: gate(root, "streamwarden.yaml", now),
            "gate --record (a new row)": lambda i: gate(
                root, "streamwarden.yaml", now, "--record", "--note", f"run {i}"
            ),
            "gate --record (retry: no row)": lambda i: gate(
                root, "streamwarden.yaml", now, "--record", "--note", "the retried decision"
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for i in range(args.runs):
            for name, run in cases.items():
                took, code = run(i)
                assert code == 0, (name, code)
                times[name].append(took)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"gate on the example lake, {args.runs} runs each (load average {load:.1f})")
    print(f"{'case':<36} {'median':>9} {'min-max':>17}")
    for name, values in times.items():
        print(f"{name:<36} {statistics.median(values):>8.2f}s {min(values):>7.2f}s-{max(values):.2f}s")
    base = statistics.median(times["gate, no ledger configured"])
    read = statistics.median(times["gate, ledger read (no --record)"])
    print(f"reading the ledger adds {read - base:+.2f}s (median)")
    print(f"recording a new row adds {statistics.median(times['gate --record (a new row)']) - read:+.2f}s to the gate")
    print(f"a retried record adds {statistics.median(times['gate --record (retry: no row)']) - read:+.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
