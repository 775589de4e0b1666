"""Benchmark: live Flink facts for 50 pipelines against a local Flink 2.3.0 cluster, with
bounded concurrency vs one request at a time, printed side by side.

Each pipeline's facts are gathered in full (overview aside: job details, checkpoint config,
checkpoint statistics, exceptions, metrics, backpressure per vertex), as if every pipeline had
a job of its own; the pipelines take turns among the running jobs, since a 2-core test cluster
runs only a few. Target: concurrent at least 4x faster than sequential and under 2 s in total.

    python tests/benchmarks/bench_flink.py [--pipelines 50] [--concurrency 8] [--rest-url URL]

Without --rest-url it starts a cluster (tests/flink_cluster.py), submits two stateful SQL jobs,
and stops everything afterwards.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.flink_cluster import running_cluster  # noqa: E402

from streamwarden.facts.flink import gather_with  # noqa: E402
from streamwarden.flink.rest import FlinkRestClient, settings_from_env  # noqa: E402

JOBS = ("bench-agg-a", "bench-agg-b")


def measure(names: list[str], rest_url: str, concurrency: int, rounds: int) -> tuple[float, int]:
    """Median seconds over ``rounds`` runs, and the GETs one run sends."""
    times, requests = [], 0
    for _ in range(rounds):
        settings = settings_from_env({"rest_url": rest_url, "concurrency": concurrency}, Path("."), {})
        start = time.perf_counter()
        with FlinkRestClient(settings) as client:
            facts = gather_with(client, names)
        times.append(time.perf_counter() - start)
        requests = client.requests
        broken = [f for f in facts if not f.get("available") or not f.get("job_found")]
        if broken:
            raise SystemExit(f"facts unavailable: {broken[0].get('error') or broken[0]}")
    return statistics.median(times), requests


def run(rest_url: str, pipelines: int, concurrency: int, rounds: int) -> int:
    names = [JOBS[i % len(JOBS)] for i in range(pipelines)]
    measure(names[:4], rest_url, concurrency, 1)  # warm-up: JIT, Flink's caches, metric fetcher
    seq, requests = measure(names, rest_url, 1, rounds)
    con, _ = measure(names, rest_url, concurrency, rounds)
    speedup = seq / con
    print(f"Flink REST facts for {pipelines} pipelines ({requests} GETs per run, median of {rounds} runs)")
    print(f"{'':24}{'one at a time':>16}{f'concurrency {concurrency}':>18}")
    print(f"{'total':24}{seq:>15.3f}s{con:>17.3f}s")
    print(f"{'per pipeline':24}{1000 * seq / pipelines:>14.1f}ms{1000 * con / pipelines:>16.1f}ms")
    print(f"{'requests per second':24}{requests / seq:>16.0f}{requests / con:>18.0f}")
    print(f"speedup {speedup:.1f}x (target >= 4x); concurrent total {con:.3f}s (target < 2 s)")
    ok = speedup >= 4 and con < 2
    print("PASS" if ok else "MISSED TARGET")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipelines", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rest-url", help="use this cluster (it must run jobs named bench-agg-a and bench-agg-b)")
    args = parser.parse_args()
    if args.rest_url:
        return run(args.rest_url, args.pipelines, args.concurrency, args.rounds)
    with running_cluster() as cluster:
        jids = [
            cluster.submit("sql_groupby.py", "--name", name, dynamic={"execution.checkpointing.interval": "2s"})
            for name in JOBS
        ]
        for jid in jids:
            cluster.wait_running(jid, checkpoints=2, timeout_s=180)
        return run(cluster.rest_url, args.pipelines, args.concurrency, args.rounds)


if __name__ == "__main__":
    sys.exit(main())
