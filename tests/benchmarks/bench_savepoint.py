"""Benchmark: how long the savepoint reader takes to read a real ``_metadata`` and to refuse hostile
counts (a count the bytes left cannot hold is refused before anything is allocated; the test suite
checks that with a memory bound, tests/flink/test_savepoint_reader.py, and never times it).

Prints, per case, the median and the min-max of the parse time over ``--runs`` runs (each run parses
the case ``--repeat`` times), and what the reader said. Figures only: nothing here passes or fails.

    python tests/benchmarks/bench_savepoint.py [--runs 5] [--repeat 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
from tests.savepoint_files import MAGIC, i32, i64, metadata_bytes, orders_job  # noqa: E402

from streamwarden.flink.savepoint_metadata import MetadataError, parse_metadata  # noqa: E402

EXAMPLE = REPO / "contracts/examples/orders-enrichment/savepoints/before-rename/savepoint-7e820d-9b1ccc78c097/_metadata"


def hostile(count: int) -> bytes:
    """A _metadata header, no master state, then an operator count and nothing after it."""
    return i32(MAGIC) + i32(6) + i64(1) + i32(0) + i32(count)


CASES: list[tuple[str, Callable[[], bytes]]] = [
    ("the example savepoint (recorded from Flink 2.3.0)", lambda: EXAMPLE.read_bytes()),
    ("a synthetic savepoint, 4 operators", lambda: metadata_bytes(orders_job())),
    ("hostile count 2,000,000,000", lambda: hostile(2_000_000_000)),
    ("hostile count -5", lambda: hostile(-5)),
    ("hostile count 900,000 (above the operator limit)", lambda: hostile(900_000)),
    ("hostile count 19,000 with no bytes left", lambda: hostile(19_000)),
]


def parse_once(data: bytes) -> str:
    try:
        md = parse_metadata(data)
    except MetadataError as exc:
        return f"refused: {exc}"
    return f"read: checkpoint {md.checkpoint_id}, {len(md.operators)} operators"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"{'case':<52} {'median':>10} {'min-max':>21}  result")
    for name, make in CASES:
        data = make()
        said = parse_once(data)
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            for _ in range(args.repeat):
                parse_once(data)
            times.append((time.perf_counter() - t0) / args.repeat * 1e6)
        spread = f"{min(times):.1f}-{max(times):.1f} us"
        print(f"{name:<52} {statistics.median(times):>7.1f} us {spread:>21}  {said[:70]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
