"""Benchmark: what hostile input and hostile servers cost a run (issue 16's "every cost bounded").

Each case runs the real CLI in a fresh process and prints its wall time, its peak RSS and its exit
code against the bounds stated in the README's security section (30 s and 300 MB per case). The
servers bind to 127.0.0.1 and stop by themselves after the case.

    python tests/benchmarks/bench_hostile.py
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.conftest import CLEAN_CONTRACT  # noqa: E402
from tests.savepoint_files import stateless_operator, write_savepoint  # noqa: E402

os.environ["STREAMWARDEN_SELF_CHECK"] = "0"  # a benchmark measures the product
WALL_BOUND_S = 30.0
RSS_BOUND_MB = 300.0

WRAPPER = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, stdin=subprocess.DEVNULL)\n"
    "print(p.returncode)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "err = p.stderr.decode('utf-8', 'replace')\n"
    "bad = 'Traceback' in err or 'internal error' in err\n"
    "out = p.stdout.decode('utf-8', 'replace')\n"
    "fact = [f['message'] for f in __import__('json').loads(out)['findings'] if f['rule'] == 'SW-FACT-001']"
    " if out.startswith('{') else []\n"
    "first = fact[0] if fact else (err.strip().splitlines()[0] if err.strip() else '')\n"
    "sys.stdout.write(('CRASH ' if bad else '') + first)\n"
)


def measure(cwd: Path, *args: str) -> tuple[float, float, int, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(cwd), sys.executable, "-m", "streamwarden.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    wall = time.perf_counter() - t0
    lines = proc.stdout.splitlines()
    return wall, int(lines[1]) / 1024, int(lines[0]), (lines[2] if len(lines) > 2 else "")[:90]


@contextmanager
def server(handler: Callable[[socket.socket], None]) -> Iterator[int]:
    """A one-thread TCP server on 127.0.0.1 that serves until the case ends."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        deadline = time.monotonic() + 120  # bounded: never outlives the benchmark
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            threading.Thread(target=handler, args=(conn,), daemon=True).start()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        t.join()
        sock.close()


def drip(conn: socket.socket) -> None:
    """Answers one byte a second, for at most 60 seconds."""
    try:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
        for _ in range(60):
            conn.sendall(b"[")
            time.sleep(1)
    except OSError:
        pass
    finally:
        conn.close()


def deep_json(conn: socket.socket) -> None:
    body = b"[" * 200_000
    try:
        conn.recv(65536)
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        conn.sendall(head.encode() + body)
    except OSError:
        pass
    finally:
        conn.close()


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-hostile-"))
    (tmp / "contracts").mkdir()
    (tmp / "contracts/orders.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    laughs = (
        "a: &a ["
        + ",".join(["x"] * 10)
        + "]\n"
        + "".join(
            f"{c}: &{c} [" + ",".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        )
    )
    (tmp / "laughs.yaml").write_text(laughs, encoding="utf-8")
    (tmp / "deep.yaml").write_text("[" * 10_000 + "]" * 10_000, encoding="utf-8")
    (tmp / "big.yaml").write_bytes(b"# padding\n" * 5_000_000)
    (tmp / "huge-number.yaml").write_text(CLEAN_CONTRACT.replace("interval: 60s", f"interval: {'9' * 5000}s"))
    (tmp / "baseline.json").write_text("[" * 200_000, encoding="utf-8")
    write_savepoint(tmp / "many-operators", [stateless_operator(f"op-{i}") for i in range(25_000)])
    os.mkfifo(tmp / "fifo.yaml")
    cases: list[tuple[str, tuple[str, ...]]] = [
        ("billion laughs contract", ("check", "laughs.yaml")),
        ("10,000-deep nesting", ("check", "deep.yaml")),
        ("50 MB contract", ("check", "big.yaml")),
        ("5,000-digit duration", ("check", "huge-number.yaml")),
        ("FIFO as a contract", ("check", "fifo.yaml")),
        ("200,000-deep --baseline", ("check", "--baseline", "baseline.json", "contracts")),
        ("/dev/zero as a savepoint", ("savepoint", "inspect", "/dev/zero")),
        ("25,000-operator _metadata", ("savepoint", "inspect", "many-operators")),
    ]
    rows = []
    for name, args in cases:
        rows.append((name, *measure(tmp, *args)))
    servers = (("Flink REST drips 1 byte/s (timeout 2s)", drip), ("Flink REST 200,000-deep JSON", deep_json))
    for name, handler in servers:
        with server(handler) as port:
            env = f"environments:\n  prod:\n    flink: {{rest_url: 'http://127.0.0.1:{port}', timeout: 2s}}\n"
            (tmp / "streamwarden.yaml").write_text(env, encoding="utf-8")
            rows.append((name, *measure(tmp, "check", "--env", "prod", "--format", "json", "contracts")))
        (tmp / "streamwarden.yaml").unlink()
    ok = True
    print(f"{'case':42} {'wall':>7} {'peak RSS':>9} {'exit':>4}  the message (SW-FACT-001, or stderr's first line)")
    for name, wall, rss, code, line in rows:
        within = wall <= WALL_BOUND_S and rss <= RSS_BOUND_MB and not line.startswith("CRASH")
        ok &= within
        print(f"{name:42} {wall:6.2f}s {rss:7.0f}MB {code:>4}  {line}{'' if within else '   <-- OUT OF BOUNDS'}")
    print(json.dumps({"bounds": {"wall_s": WALL_BOUND_S, "rss_mb": RSS_BOUND_MB}, "all_within": ok}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
