"""Benchmark: live Flink facts for 50 pipelines against a local Flink 2.3.0 cluster, with
bounded concurrency vs one request at a time, printed side by side.

Each pipeline's facts are gathered in full (overview aside: job details, checkpoint config,
checkpoint statistics, exceptions, metrics, backpressure per vertex), as if every pipeline had
a job of its own; the pipelines take turns among the running jobs, since a 2-core test cluster
runs only a few. Every request goes through a loopback proxy that delays each answer by 10-20 ms
(``--latency-ms``), as a REST endpoint across a network would: on loopback alone the cluster's own
CPU is the bottleneck and concurrency measures nothing. A warm-up run first, then the two modes
alternate their order each round. Target: concurrent at least 4x faster than sequential.

    python tests/benchmarks/bench_flink.py [--pipelines 50] [--concurrency 8] [--latency-ms 10-20] [--rest-url URL]

Without --rest-url it starts a cluster (tests/flink_cluster.py), submits two stateful SQL jobs,
and stops everything afterwards.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.flink_cluster import running_cluster  # noqa: E402

from streamwarden.facts.flink import gather_with  # noqa: E402
from streamwarden.flink.rest import FlinkRestClient, settings_from_env  # noqa: E402

JOBS = ("bench-agg-a", "bench-agg-b")


@contextmanager
def delaying_proxy(upstream: str, low_ms: float, high_ms: float) -> Iterator[str]:
    """A loopback HTTP proxy in front of ``upstream`` that holds each answer 10-20 ms."""
    rng = random.Random(7)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with lock:
                delay = rng.uniform(low_ms, high_ms) / 1000
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(upstream + self.path, timeout=30) as resp:
                    status, body, ctype = resp.status, resp.read(), resp.headers.get("Content-Type", "")
            except urllib.error.HTTPError as exc:
                status, body, ctype = exc.code, exc.read(), exc.headers.get("Content-Type", "")
            time.sleep(max(0.0, delay - (time.perf_counter() - start)))
            self.send_response(status)
            self.send_header("Content-Type", ctype or "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def measure_once(names: list[str], rest_url: str, concurrency: int) -> tuple[float, int]:
    settings = settings_from_env({"rest_url": rest_url, "concurrency": concurrency}, Path("."), {})
    start = time.perf_counter()
    with FlinkRestClient(settings) as client:
        facts = gather_with(client, names)
    elapsed = time.perf_counter() - start
    broken = [f for f in facts if not f.get("available") or not f.get("job_found")]
    if broken:
        raise SystemExit(f"facts unavailable: {broken[0].get('error') or broken[0]}")
    return elapsed, client.requests


def run(rest_url: str, pipelines: int, concurrency: int, rounds: int, latency: tuple[float, float]) -> int:
    names = [JOBS[i % len(JOBS)] for i in range(pipelines)]
    with delaying_proxy(rest_url, *latency) as proxy:
        measure_once(names[:4], proxy, concurrency)  # warm-up: JIT, Flink's caches, metric fetcher
        measure_once(names[:4], proxy, 1)
        seq: list[float] = []
        con: list[float] = []
        requests = 0
        for i in range(rounds):  # alternate the order, so neither mode always runs on a warmer cluster
            order = [(seq, 1), (con, concurrency)]
            for bucket, c in order if i % 2 == 0 else reversed(order):
                elapsed, requests = measure_once(names, proxy, c)
                bucket.append(elapsed)
    ms, mc = statistics.median(seq), statistics.median(con)
    speedup = ms / mc
    print(
        f"Flink REST facts for {pipelines} pipelines ({requests} GETs per run, {latency[0]:.0f}-{latency[1]:.0f} ms "
        f"added per request, {rounds} runs)"
    )
    print(f"one at a time:      median {ms:.3f} s  min-max {min(seq):.3f}-{max(seq):.3f} s")
    print(f"concurrency {concurrency:<6} median {mc:.3f} s  min-max {min(con):.3f}-{max(con):.3f} s")
    print(f"speedup {speedup:.1f}x (medians; target >= 4x)")
    print("PASS" if speedup >= 4 else "MISSED TARGET")
    return 0 if speedup >= 4 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipelines", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", default="10-20", help="added per request, LOW-HIGH milliseconds")
    parser.add_argument("--rest-url", help="use this cluster (it must run jobs named bench-agg-a and bench-agg-b)")
    args = parser.parse_args()
    low, _, high = args.latency_ms.partition("-")
    latency = (float(low), float(high or low))
    if args.rest_url:
        return run(args.rest_url, args.pipelines, args.concurrency, args.rounds, latency)
    with running_cluster() as cluster:
        jids = [
            cluster.submit("sql_groupby.py", "--name", name, dynamic={"execution.checkpointing.interval": "2s"})
            for name in JOBS
        ]
        for jid in jids:
            cluster.wait_running(jid, checkpoints=2, timeout_s=180)
        return run(cluster.rest_url, args.pipelines, args.concurrency, args.rounds, latency)


if __name__ == "__main__":
    sys.exit(main())
