"""Benchmark: `streamwarden check` on 1,000 generated contracts, each naming a Flink deployment
file (a static check, no live facts).

Prints, as median and min-max of ``--runs`` runs: the floor (only reading and YAML-parsing the
same 2,000 files with libyaml), a cold check (``--no-cache``), a second check with nothing changed
(``--cache``, warm), one process only (``STREAMWARDEN_WORKERS=1``); the ratios to the floor, the
peak RSS of the check process, and whether any JVM module was imported. Goals on the 2-core
machine: cold at most 2x the floor, warm at most 0.3x, peak RSS at most 300 MB (at 5,000
contracts too: ``--contracts 5000``), no JVM.

``--expired-waivers 5``: that percentage of the contracts carries a waiver that has expired
(SW-WAIVER-001 shows the time of the run in its evidence); the warm run, at a later time than the
run that filled the cache, must still be answered from it (the same goal: 0.3x the floor).

    python tests/benchmarks/bench_check.py [--contracts 1000] [--runs 3] [--expired-waivers PERCENT]
        [--keep DIR] [--json FILE] [--one-table]

``--json FILE`` also writes every measurement (seconds, MB) for ``run_all.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.conftest import CLEAN_CONTRACT  # noqa: E402

VARIANTS = [
    ("  min_pause: 30s", "  min_pause: 90s"),  # SW-CKPT-002
    ("  backend: rocksdb", "  backend: hashmap"),  # SW-STATE-002
    ("  storage: s3://lake-checkpoints/orders-enrichment", "  storage: file:///tmp/ckpt"),  # SW-CKPT-004
    ("      freshness: 30m", "      freshness: 1m"),  # SW-TABLE-006
    ("  owner: payments-data", '  owner: ""'),  # SW-REC-001
]

DEPLOYMENT = """\
# FlinkDeployment of orders-enrichment (Flink Kubernetes Operator, Flink 2.1)
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: orders-enrichment
  namespace: data-pipelines
  labels: {app.kubernetes.io/name: orders-enrichment, team: payments-data}
spec:
  image: registry.example.com/data/orders-enrichment:2026.11.3
  flinkVersion: v2_1
  serviceAccount: flink-orders
  flinkConfiguration:
    execution.checkpointing.interval: "60 s"
    execution.checkpointing.mode: "EXACTLY_ONCE"
    execution.checkpointing.timeout: "10 min"
    execution.checkpointing.min-pause: "30 s"
    execution.checkpointing.max-concurrent-checkpoints: "1"
    execution.checkpointing.externalized-checkpoint-retention: "RETAIN_ON_CANCELLATION"
    execution.checkpointing.num-retained: "3"
    execution.checkpointing.tolerable-failed-checkpoints: "3"
    execution.checkpointing.unaligned.enabled: "false"
    execution.checkpointing.dir: "s3://lake-checkpoints/orders-enrichment"
    state.backend.type: "rocksdb"
    execution.checkpointing.incremental: "true"
    pipeline.max-parallelism: "128"
    pipeline.auto-generate-uids: "false"
    restart-strategy.type: "exponential-delay"
    taskmanager.numberOfTaskSlots: "2"
  jobManager: {resource: {memory: "2048m", cpu: 1}}
  taskManager: {resource: {memory: "8192m", cpu: 2}}
  job:
    jarURI: local:///opt/flink/usrlib/orders-enrichment.jar
    parallelism: 4
    upgradeMode: savepoint
    allowNonRestoredState: false
    state: running
"""


EXPIRED_WAIVER = "waivers:\n  - {rule: SW-STATE-002, reason: migration, expires: 2024-01-31, approved_by: platform}\n"


def generate(
    directory: Path, n: int, deployment: bool = True, expired_percent: float = 0, one_table: bool = False
) -> None:
    """``n`` contracts under ``directory``; with ``deployment`` each names its own FlinkDeployment;
    ``expired_percent`` of them (evenly spread) carry a waiver that has expired. Each writes a
    table of its own, as in a repository where one contract owns each table; with ``one_table``
    every one writes sales.orders (SW-TABLE-014 then fires for each of them)."""
    rng = random.Random(42)
    every = round(100 / expired_percent) if expired_percent > 0 else 0
    for i in range(n):
        name = f"pipeline-{i:04d}"
        text = CLEAN_CONTRACT.replace("orders-enrichment", name)
        if not one_table:
            text = text.replace("sales.orders", f"sales.orders_{i:04d}")
        for old, new in rng.sample(VARIANTS, rng.randint(0, 3)):
            text = text.replace(old, new)
        if every and i % every == 0:
            text += EXPIRED_WAIVER
        d = directory / f"team-{i % 20:02d}" / name
        d.mkdir(parents=True, exist_ok=True)
        if deployment:
            text = text.replace(f"job:\n  name: {name}\n", f"job:\n  name: {name}\n  deployment: [deploy/flink.yaml]\n")
            (d / "deploy").mkdir(exist_ok=True)
            (d / "deploy" / "flink.yaml").write_text(DEPLOYMENT.replace("orders-enrichment", name), encoding="utf-8")
        (d / "contract.yaml").write_text(text, encoding="utf-8")


def floor(directory: Path) -> float:
    """Read and parse (libyaml) every YAML file: the contracts and their deployment files."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    t0 = time.perf_counter()
    for p in sorted(directory.rglob("*.yaml")):
        yaml.load(p.read_text(encoding="utf-8"), Loader=loader)
    return time.perf_counter() - t0


def run_check(directory: Path, *extra: str, workers: str = "") -> tuple[float, float, dict[str, object]]:
    """One `streamwarden check` process: wall time, its peak RSS (MB), the JSON summary and (as
    ``cpu_s``) the CPU time it and its workers used, a figure a busy machine disturbs less."""
    code = (
        "import sys, json, runpy\n"
        "sys.argv = ['streamwarden', 'check', *sys.argv[3:], sys.argv[1],\n"
        "            '--format', 'json', '--output', sys.argv[2]]\n"
        "try:\n    runpy.run_module('streamwarden.cli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "jvm = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'pyarrow', 'pyiceberg'))\n"
        "print(json.dumps({'heavy_modules': jvm}))\n"
    )
    out = directory.parent / "findings.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "STREAMWARDEN_WORKERS": workers}
    # a fresh interpreter per measurement: ru_maxrss of children is the largest process seen so far
    # the wall time is the check process's, from its start to its exit, as the wrapper saw it
    # (the wrapper's own interpreter start is not the check's)
    wrapper = (
        "import resource, subprocess, sys, json, time\n"
        "t0 = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t0\n"
        "print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else json.dumps({'stderr': p.stderr}))\n"
        "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(wall, ru.ru_maxrss, ru.ru_utime + ru.ru_stime)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-c", code, str(directory), str(out), *extra],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=directory.parent,
    )
    lines = proc.stdout.strip().splitlines()
    wall_text, rss_text, cpu_text = lines[-1].split(" ") if lines else ("nan", "nan", "nan")
    wall = float(wall_text)
    rss_mb = float(rss_text) / 1024
    proc.stdout = "\n".join(lines[:-1])
    info = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {"stderr": proc.stderr}
    info["summary"] = json.loads(out.read_text())["summary"] if out.exists() else None
    info["cpu_s"] = float(cpu_text)  # user + system time of the check and of the workers it forked
    return wall, rss_mb, info


def compile_bytecode() -> None:
    """Compile the package's bytecode first, as installing a wheel does (pip compiles at install):
    with PYTHONDONTWRITEBYTECODE set, an editable install would compile every module on every run
    (~30 ms), a cost no installed copy pays. Stale bytecode is recompiled by Python, never used."""
    import compileall

    import streamwarden

    compileall.compile_dir(str(Path(streamwarden.__file__).parent), quiet=1)


def _fig(values: list[float], floor_s: float | None = None) -> str:
    med = statistics.median(values)
    text = f"median {med:6.3f} s  min-max {min(values):.3f}-{max(values):.3f} s"
    if floor_s:
        text += f"  = {med / floor_s:.2f}x floor"
    return text


def main() -> int:
    # tests/conftest.py turns the test suite's self-check mode on; a benchmark measures the product
    # (set here, not on import: a test that imports generate keeps self-check mode)
    os.environ["STREAMWARDEN_SELF_CHECK"] = "0"
    ap = argparse.ArgumentParser()
    ap.add_argument("--contracts", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-deployment", action="store_true", help="contracts that name no deployment file")
    ap.add_argument(
        "--expired-waivers", type=float, default=0, metavar="PERCENT", help="contracts with an expired waiver (%%)"
    )
    ap.add_argument("--one-table", action="store_true", help="every contract writes the same table (SW-TABLE-014)")
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--json", type=Path, help="also write the measurements to this file")
    args = ap.parse_args()
    compile_bytecode()
    base = Path(tempfile.mkdtemp(prefix="sw-bench-"))
    directory = base / "contracts"
    cache = base / "cache"
    try:
        generate(
            directory,
            args.contracts,
            deployment=not args.no_deployment,
            expired_percent=args.expired_waivers,
            one_table=args.one_table,
        )
        n_files = sum(1 for _ in directory.rglob("*.yaml"))
        floor(directory)  # warm the page cache
        run_check(directory, "--no-cache")  # and the interpreter's imports
        floors: list[float] = []
        cold: list[float] = []
        warm: list[float] = []
        single: list[float] = []
        cpu: dict[str, list[float]] = {"cold": [], "one process": [], "warm": []}
        rss: dict[str, float] = {}
        info: dict[str, object] = {}
        summaries = set()
        for i in range(args.runs):
            floors.append(floor(directory))
            shutil.rmtree(cache, ignore_errors=True)
            steps = [
                ("cold", cold, ("--no-cache",), ""),
                ("one process", single, ("--no-cache",), "1"),
            ]
            for label, bucket, extra, workers in steps if i % 2 == 0 else reversed(steps):
                wall, peak, info = run_check(directory, *extra, workers=workers)
                bucket.append(wall)
                cpu[label].append(float(info["cpu_s"]))  # type: ignore[arg-type]
                rss[label] = max(rss.get(label, 0.0), peak)
                summaries.add(json.dumps(info.get("summary"), sort_keys=True))
            run_check(directory, "--cache", str(cache))  # fills the cache
            wall, peak, info = run_check(directory, "--cache", str(cache))
            warm.append(wall)
            cpu["warm"].append(float(info["cpu_s"]))  # type: ignore[arg-type]
            rss["warm"] = max(rss.get("warm", 0.0), peak)
            summaries.add(json.dumps(info.get("summary"), sort_keys=True))
        floor_s = statistics.median(floors)
        n = args.contracts
        print(f"contracts:            {n} ({n_files} YAML files), {os.cpu_count()} cores, {args.runs} runs")
        if args.expired_waivers:
            print(f"expired waivers:      {args.expired_waivers:g}% of the contracts")
        print(f"load average:         {os.getloadavg()[0]:.1f} at the end (1 min)")
        print("timing:               the check process from start to exit; bytecode compiled (as installed)")
        print(f"floor (read+libyaml): {_fig(floors)}")
        print(f"check, cold:          {_fig(cold, floor_s)}   (--no-cache; process start included)")
        print(f"check, one process:   {_fig(single, floor_s)}   (STREAMWARDEN_WORKERS=1)")
        print(f"check, warm cache:    {_fig(warm, floor_s)}   (second run, nothing changed)")
        for label, values in cpu.items():
            print(f"CPU, {label + ':':16}{_fig(values)}   (user + system, the check and its workers)")
        print("peak RSS:             " + ", ".join(f"{k} {v:.0f} MB" for k, v in rss.items()))
        print(f"JVM/heavy modules:    {info.get('heavy_modules') or 'none imported'}")
        print(f"summary:              {info.get('summary')}")
        if len(summaries) != 1:
            print(f"RESULTS DIFFER between runs: {sorted(summaries)}")
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "contracts": n,
                        "expired_waivers_percent": args.expired_waivers,
                        "floor": floors,
                        "cold": cold,
                        "one_process": single,
                        "warm": warm,
                        "cpu_s": cpu,
                        "rss_mb": rss,
                        "heavy_modules": info.get("heavy_modules") or [],
                        "results_differ": len(summaries) != 1,
                    }
                ),
                encoding="utf-8",
            )
        ok_cold = statistics.median(cold) <= 2 * floor_s
        ok_warm = statistics.median(warm) <= 0.3 * floor_s
        ok_rss = max(rss.values()) <= 300 and not info.get("heavy_modules")
        print(
            f"goals: cold <= 2x floor {'met' if ok_cold else 'NOT met'}; warm <= 0.3x floor "
            f"{'met' if ok_warm else 'NOT met'}; <= 300 MB, no JVM {'met' if ok_rss else 'NOT met'}"
        )
        return 0
    finally:
        if args.keep:
            shutil.copytree(directory, args.keep, dirs_exist_ok=True)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
