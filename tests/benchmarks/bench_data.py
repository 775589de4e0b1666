"""Benchmark: data facts on a generated 10-million-row Iceberg table, side by side in one run.

1. a full scan (streamwarden's Spark path: PyIceberg planning, Parquet by field id, all checks);
2. an incremental check after a 1% append (new keys): only new files plus the old files that
   column metrics cannot clear are read; target at least 10x cheaper than the full scan;
3. the same measurements as (1) with a single-process PyArrow scan (pyiceberg's ``to_arrow`` plus
   pyarrow.compute: count, nulls, min/max, rows before the cutoff, duplicate keys).

Every measurement runs ``--repeat`` times; the table prints each time and the best. The Spark
session is started once before the measurements (its start-up is reported on its own). The
table is append-only, so neither path applies delete files here (tests/facts/test_data_scan.py covers
deletes). Results depend on the machine's load: the load average is printed with them.

    SPARK_LOCAL_IP=127.0.0.1 python tests/benchmarks/bench_data.py [--rows 10000000] [--files 10]
        [--append-fraction 0.01] [--repeat 2] [--master local[*]] [--driver-memory 2g] [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE.parent.parent / "src"))
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType  # noqa: E402
from tests.data_tables import DataLake  # noqa: E402

from streamwarden.facts import spark_data  # noqa: E402

NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.timezone.utc)
NOW_MS = int(NOW.timestamp() * 1000)
MAX_AGE_MS = 400 * 86_400_000
CONTRACT = {
    "table": {
        "catalog": "lake",
        "identifier": "sales.orders",
        "schema": [{"name": "order_id", "required": True}, {"name": "event_time", "required": True}],
    },
    "quality": {
        "freshness": {"column": "event_time", "max_lag": 900_000},
        "unique": ["order_id"],
        "not_null": ["customer_id"],
    },
    "retention": {"data": {"column": "event_time", "max_age": MAX_AGE_MS}},
}


def schema() -> Schema:
    return Schema(
        NestedField(1, "order_id", LongType(), required=True),
        NestedField(2, "customer_id", LongType(), required=False),
        NestedField(3, "region", StringType(), required=False),
        NestedField(4, "event_time", TimestamptzType(), required=True),
    )


def _random_ints(n: int, high: int, seed: int) -> pa.Array:
    return pc.cast(pc.multiply(pc.random(n, initializer=seed), high), pa.int64(), safe=False)


def batch(table_schema: pa.Schema, first_id: int, n: int, seed: int) -> pa.Table:
    ids = pa.array(range(first_id, first_id + n), pa.int64())
    # event times spread over the last 300 days, newest rows last
    step_us = 300 * 86_400_000_000 // 12_000_000
    micros = pc.add(pc.multiply(ids, step_us), (NOW_MS - 300 * 86_400_000) * 1000)
    return pa.Table.from_arrays(
        [
            ids,
            pc.add(_random_ints(n, 1_000_000, seed), 1),
            pc.take(pa.array(["eu", "us", "apac"]), _random_ints(n, 3, seed + 1)),
            pc.cast(micros, pa.timestamp("us", tz="UTC")),
        ],
        schema=table_schema,
    )


def timed(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def pyarrow_scan(table: Any) -> dict[str, Any]:
    """The same facts, single process: pyiceberg reads (field ids, position deletes), pyarrow computes."""
    data = table.scan(selected_fields=("order_id", "customer_id", "event_time")).to_arrow()
    ts = pc.cast(data["event_time"], pa.int64())  # micros
    cutoff_us = (NOW_MS - MAX_AGE_MS) * 1000
    counts = data.group_by("order_id").aggregate([("order_id", "count")])
    dups = pc.filter(counts["order_id_count"], pc.greater(counts["order_id_count"], 1))
    return {
        "rows": data.num_rows,
        "nulls": data["customer_id"].null_count,
        "max_us": pc.max(ts).as_py(),
        "min_us": pc.min(ts).as_py(),
        "expired": pc.sum(pc.less(ts, cutoff_us)).as_py() or 0,
        "duplicate_keys": len(dups),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--append-fraction", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--keep", type=Path, help="build the table here and keep it")
    args = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    root = args.keep or Path(tempfile.mkdtemp(prefix="sw-bench-data-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        return run(args, root)
    finally:
        spark_data.stop_spark()
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


def run(args: argparse.Namespace, root: Path) -> int:
    report: dict[str, Any] = {
        "rows": args.rows,
        "files": args.files,
        "cpu_count": os.cpu_count(),
        "load_average_before": os.getloadavg(),
    }
    lake = DataLake(root)
    table = lake.create("sales.orders", schema())
    arrow_schema = table.schema().as_arrow()
    t0 = time.perf_counter()
    per_file = args.rows // args.files
    for i in range(args.files):
        table.append(batch(arrow_schema, i * per_file + 1, per_file, seed=i))
    report["generate_s"] = round(time.perf_counter() - t0, 1)
    base_snapshot = table.current_snapshot().snapshot_id  # type: ignore[union-attr]

    t0 = time.perf_counter()
    spark = spark_data.get_spark({"master": args.master, "conf": {"spark.driver.memory": args.driver_memory}})
    spark.range(1).count()
    report["spark_start_s"] = round(time.perf_counter() - t0, 1)
    report["spark_parallelism"] = spark.sparkContext.defaultParallelism

    def facts(**kw: Any) -> dict[str, Any]:
        out = spark_data.scan_table(
            table, CONTRACT, {"master": args.master}, NOW_MS, catalog="lake", identifier="sales.orders", **kw
        )
        return out

    full_t, full = timed(facts, args.repeat)
    arrow_t, arrow = timed(lambda: pyarrow_scan(table), args.repeat)
    assert arrow["rows"] == full["scan"]["rows_live"], (arrow, full["scan"])
    assert arrow["duplicate_keys"] == full["unique"]["duplicate_keys"]

    n_new = int(args.rows * args.append_fraction)
    table.append(batch(arrow_schema, args.rows + 1, n_new, seed=999))
    inc_t, inc = timed(lambda: facts(since_snapshot=base_snapshot), args.repeat)
    full2_t, full2 = timed(facts, 1)  # the full scan of the grown table, for the same-table ratio

    report["load_average_after"] = os.getloadavg()
    report["full_scan_s"] = [round(t, 2) for t in full_t]
    report["pyarrow_scan_s"] = [round(t, 2) for t in arrow_t]
    report["incremental_s"] = [round(t, 2) for t in inc_t]
    report["full_scan_after_append_s"] = [round(t, 2) for t in full2_t]
    report["full_scan"] = {k: full["scan"][k] for k in ("rows_read", "rows_live", "bytes_read", "data_files_scanned")}
    report["incremental"] = {
        k: inc["scan"][k]
        for k in (
            "rows_read",
            "rows_live",
            "bytes_read",
            "data_files_scanned",
            "data_files_pruned",
            "old_files_scanned_for",
        )
    }
    best = {k: min(v) for k, v in (("full", full2_t), ("inc", inc_t), ("spark", full_t), ("arrow", arrow_t))}
    report["incremental_vs_full_time"] = round(best["full"] / best["inc"], 1)
    report["incremental_vs_full_rows"] = round(full2["scan"]["rows_read"] / max(1, inc["scan"]["rows_read"]), 1)
    report["incremental_vs_full_bytes"] = round(full2["scan"]["bytes_read"] / max(1, inc["scan"]["bytes_read"]), 1)
    report["spark_vs_pyarrow_time"] = round(best["spark"] / best["arrow"], 2)
    print(json.dumps(report, indent=2))
    print(
        f"\n{args.rows:,} rows in {args.files} files, {os.cpu_count()} cores "
        f"(Spark {args.master}, parallelism {report['spark_parallelism']}), "
        f"load {report['load_average_before'][0]:.1f}\n"
        f"full scan (Spark)          best {best['spark']:.1f}s  {full_t}\n"
        f"full scan (PyArrow, 1 proc) best {best['arrow']:.1f}s  {arrow_t}\n"
        f"incremental after {args.append_fraction:.0%} append  best {best['inc']:.1f}s  "
        f"({report['incremental_vs_full_time']}x faster than the full scan of the same table, "
        f"{report['incremental_vs_full_rows']}x fewer rows read)\n"
        f"Spark / PyArrow time ratio: {report['spark_vs_pyarrow_time']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
