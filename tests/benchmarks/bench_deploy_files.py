"""Benchmark: what large deployment files cost a check (issue 26: "reading must be linear in the
file's size").

Each case writes one deployment file next to a clean contract and runs the real CLI in a fresh
process (``check --format json``, then ``facts``), printing wall time, CPU time, peak RSS, the
file's size and how many findings the report lists of how many. It runs each file kind at two
sizes, so the figures show how the cost grows: a linear reading costs about 4x at 4x the keys.

    python tests/benchmarks/bench_deploy_files.py [--quick]

The cases: a config.yaml whose keys are one flow mapping on one line (the issue's 16,000 keys),
a legacy flink-conf.yaml of one unknown key per line (the issue's 100,000 lines), a config.yaml
of nested blocks, a FlinkDeployment whose flinkConfiguration is one flow mapping, and a SQL
script of SET lines. Every key is unknown to Flink, so each is a finding (SW-DEPLOY-001) the
report caps at 20 per file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.conftest import CLEAN_CONTRACT  # noqa: E402

os.environ["STREAMWARDEN_SELF_CHECK"] = "0"  # a benchmark measures the product

WRAPPER = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, stdin=subprocess.DEVNULL)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.buffer.write(p.stderr)\n"
    "sys.stdout.write(f'{p.returncode} {u.ru_maxrss} {u.ru_utime + u.ru_stime}\\n')\n"
    "sys.stdout.buffer.write(p.stdout)\n"
)


def measure(cwd: Path, *args: str) -> tuple[float, float, float, int, str]:
    """(wall s, cpu s, peak RSS MB, exit code, stdout) of ``streamwarden ARGS`` in ``cwd``."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(cwd), sys.executable, "-m", "streamwarden.cli", *args],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    wall = time.perf_counter() - t0
    head, _, out = proc.stdout.partition("\n")
    code, rss, cpu = head.split()
    if "Traceback" in proc.stderr or "internal error" in proc.stderr:
        raise SystemExit(f"streamwarden {' '.join(args)} crashed:\n{proc.stderr}")
    return wall, float(cpu), int(rss) / 1024, int(code), out


def flow_config(n: int) -> str:
    return "{" + ", ".join(f"acme.k{i}: {i}" for i in range(n)) + "}\n"


def legacy_conf(n: int) -> str:
    return "".join(f"acme.key{i}: value{i}\n" for i in range(n))


def nested_config(n: int) -> str:
    lines = ((f"  group{i // 100}:\n" if i % 100 == 0 else "") + f"    k{i}: {i}\n" for i in range(n))
    return "acme:\n" + "".join(lines)


def flow_deployment(n: int) -> str:
    return (
        "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata:\n  name: orders-enrichment\n"
        "spec:\n  flinkConfiguration: " + flow_config(n)
    )


def sql_script(n: int) -> str:
    return "".join(f"SET 'acme.key{i}' = '{i}';\n" for i in range(n)) + "INSERT INTO t SELECT * FROM s;\n"


CASES: list[tuple[str, str, Callable[[int], str], int]] = [
    ("config.yaml, one flow mapping", "config.yaml", flow_config, 16_000),
    ("flink-conf.yaml, a key per line", "flink-conf.yaml", legacy_conf, 100_000),
    ("config.yaml, nested blocks", "config.yaml", nested_config, 100_000),
    ("FlinkDeployment, one flow mapping", "fd.yaml", flow_deployment, 16_000),
    ("SQL, a SET per line", "job.sql", sql_script, 100_000),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes (the script works; not the figures)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-deploy-"))
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    head = f"{'case':36} {'keys':>8} {'size':>8} {'wall':>7} {'cpu':>7} {'peak RSS':>9} {'listed':>7} {'of':>8}"
    print(head + f"  {'facts cpu':>9} {'facts RSS':>9}")
    rows = []
    for name, file, make, full in CASES:
        for n in (full // 40, full // 10) if args.quick else (full // 4, full):
            root = tmp / f"{file}-{n}"
            (root / "contracts").mkdir(parents=True)
            contract = CLEAN_CONTRACT.replace("job:\n", f"job:\n  deployment: [../{file}]\n", 1)
            (root / "contracts" / "orders.yaml").write_text(contract, encoding="utf-8")
            text = make(n)
            (root / file).write_text(text, encoding="utf-8")
            wall, cpu, rss, _, out = measure(root, "check", "--no-cache", "--format", "json")
            doc = json.loads(out)
            listed = len(doc["findings"])
            total = sum(doc["summary"][k] for k in ("errors", "warnings", "infos", "waived", "baselined"))
            _, fcpu, frss, _, _ = measure(root, "facts", "orders-enrichment")
            size = f"{len(text.encode()) / 1024 / 1024:.1f}MB"
            print(
                f"{name:36} {n:>8,} {size:>8} {wall:6.1f}s {cpu:6.1f}s {rss:7.0f}MB {listed:>7,} {total:>8,}"
                f"  {fcpu:8.1f}s {frss:7.0f}MB",
                flush=True,
            )
            rows.append({"case": name, "keys": n, "wall_s": wall, "cpu_s": cpu, "rss_mb": rss, "listed": listed})
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
