"""Every figure of issue 17's performance table from one run: each benchmark once, then one table
with the goal, the median and the min-max of each figure.

    python tests/benchmarks/run_all.py [--quick] [--runs 3] [--skip-flink] [--skip-data]

- static ``check`` of 1,000 contracts, cold, vs the floor (libyaml parse of the same files): <= 2x;
  the warm run (second run, nothing changed): <= 0.3x the floor, also with 5% of the contracts
  holding an expired waiver (bench_check.py);
- a pull request touching 1 of N contracts without the cache: <= 1.3x a plain check; with a warm
  cache (seeded by the base branch's run) at 5,000 contracts: <= 1 s (bench_pr.py);
- a wide schema's ``check --base``: <= 3x plain, linear in the number of fields (bench_wide_schema.py);
- peak RSS at 5,000 contracts, every mode (cold, one process, warm, ``--base``, the review): <= 300 MB;
- live Flink facts for 50 pipelines with 10-20 ms added per request, concurrency vs one at a time:
  >= 4x (bench_flink.py: starts a local Flink cluster; ``--skip-flink`` leaves it out);
- data facts: the incremental scan after a 1% append vs the full scan (bench_data.py: needs
  pyspark and Java; ``--skip-data`` leaves it out).

``--quick`` measures a smaller set (fewer contracts and runs, narrower schemas): a check that the
scripts work, not figures to compare with the goals. Timings depend on the machine's load: the
load average is printed before and after; read the ratios (measured within one run) first.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def bench(script: str, *args: str, timeout: float = 7200) -> tuple[int, str]:
    """Run one benchmark script; its output is shown as it comes (and returned)."""
    print(f"\n$ {script} {' '.join(args)}", flush=True)
    proc = subprocess.Popen(
        [sys.executable, str(HERE / script), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        print("  " + line, end="", flush=True)
        lines.append(line)
    code = proc.wait(timeout=timeout)
    return code, "".join(lines)


def spread(values: list[float], unit: str = "s") -> tuple[str, str]:
    if not values:
        return "-", "-"
    med = statistics.median(values)
    fmt = (lambda v: f"{v:.2f} {unit}") if unit == "s" else (lambda v: f"{v:.0f} {unit}")
    return fmt(med), f"{fmt(min(values))} - {fmt(max(values))}" if len(values) > 1 else "(1 run)"


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str]] = []

    def add(self, what: str, goal: str, median: str, minmax: str, met: bool | None) -> None:
        verdict = "-" if met is None else ("met" if met else "NOT met")
        self.rows.append((what, goal, median, minmax, verdict))

    def print(self) -> None:
        head = ("figure", "goal", "median", "min - max", "")
        widths = [max(len(r[i]) for r in [head, *self.rows]) for i in range(5)]
        for r in [head, tuple("-" * w for w in widths), *self.rows]:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smaller, faster run (the scripts work; not the figures)")
    ap.add_argument("--runs", type=int, help="runs per measurement (default 3, quick 1)")
    ap.add_argument("--skip-flink", action="store_true", help="no live Flink benchmark (it starts a Flink cluster)")
    ap.add_argument("--skip-data", action="store_true", help="no data-facts benchmark (it needs pyspark and Java)")
    args = ap.parse_args()
    runs = str(args.runs or (1 if args.quick else 3))
    small, large = ("200", "1000") if args.quick else ("1000", "5000")
    widths = ["250", "500"] if args.quick else ["1250", "2500", "5000"]
    out = Path(tempfile.mkdtemp(prefix="sw-bench-all-"))
    table = Table()
    load_before = os.getloadavg()
    started = time.monotonic()

    # static check: cold, warm and the floor (N contracts), then peak memory at 5,000
    code, _ = bench("bench_check.py", "--contracts", small, "--runs", runs, "--json", str(out / "check.json"))
    if code == 0:
        c = json.loads((out / "check.json").read_text())
        floor = statistics.median(c["floor"])
        table.add(f"floor: read + libyaml {small} contracts and their deployment files", "", *spread(c["floor"]), None)
        for key, what, goal in (("cold", "cold (--no-cache)", 2.0), ("warm", "warm (second run, unchanged)", 0.3)):
            med, minmax = spread(c[key])
            ratio = statistics.median(c[key]) / floor
            table.add(f"check {small}, {what}", f"<= {goal}x floor", f"{med} = {ratio:.2f}x", minmax, ratio <= goal)
        table.add(f"check {small}, one process", "", *spread(c["one_process"]), None)
        if c["heavy_modules"]:
            table.add("JVM modules imported by a static check", "none", ", ".join(c["heavy_modules"]), "", False)
    # the same with 5% of the contracts holding an expired waiver (its finding shows the time)
    args = ("--contracts", small, "--runs", runs, "--expired-waivers", "5", "--json", str(out / "check_expired.json"))
    code, _ = bench("bench_check.py", *args)
    if code == 0:
        c = json.loads((out / "check_expired.json").read_text())
        med, minmax = spread(c["warm"])
        ratio = statistics.median(c["warm"]) / statistics.median(c["floor"])
        what = f"check {small}, warm, 5% with an expired waiver"
        table.add(what, "<= 0.3x floor", f"{med} = {ratio:.2f}x", minmax, ratio <= 0.3)
    code, _ = bench("bench_check.py", "--contracts", large, "--runs", "1", "--json", str(out / "check_large.json"))
    rss: dict[str, float] = {}
    if code == 0:
        c = json.loads((out / "check_large.json").read_text())
        rss.update({f"check {k}": v for k, v in c["rss_mb"].items()})
        table.add(f"check {large}, cold / warm", "", f"{c['cold'][0]:.2f} s / {c['warm'][0]:.2f} s", "(1 run)", None)

    # pull requests: no cache vs plain; warm cache; the review's memory
    code, _ = bench("bench_pr.py", "--contracts", large, "--runs", runs, "--json", str(out / "pr.json"))
    if code == 0:
        p = json.loads((out / "pr.json").read_text())
        ratio = statistics.median(p["pr"]) / statistics.median(p["plain"])
        med, minmax = spread(p["pr"])
        table.add(
            f"check --base, PR touching 1 of {large}, no cache",
            "<= 1.3x plain",
            f"{med} = {ratio:.2f}x",
            minmax,
            ratio <= 1.3,
        )
        med, minmax = spread(p["warm"])
        goal_met = statistics.median(p["warm"]) <= 1.0 if large == "5000" else None
        table.add(f"the same, warm cache (seeded by the base's run), {large}", "<= 1 s at 5,000", med, minmax, goal_met)
        rss.update({f"pr {k}": v for k, v in p["rss_mb"].items()})

    # wide schema
    code, _ = bench("bench_wide_schema.py", "--widths", *widths, "--json", str(out / "wide.json"))
    if code == 0:
        rows = json.loads((out / "wide.json").read_text())
        worst = max(r["base"] / r["plain"] for r in rows)
        growth = [b["base"] / a["base"] for a, b in itertools.pairwise(rows)]
        table.add(
            f"wide schema check --base ({'/'.join(widths)} fields), vs plain",
            "<= 3x, linear",
            f"{worst:.2f}x at worst",
            "growth per doubling " + ", ".join(f"{g:.2f}x" for g in growth),
            worst <= 3 and all(g <= 2.6 for g in growth),
        )

    if rss:
        peak = max(rss.values())
        largest = max(rss, key=lambda k: rss[k])
        table.add(
            f"peak RSS at {large} contracts, every mode (listed below)",
            "<= 300 MB",
            f"{peak:.0f} MB",
            f"largest: {largest}",
            peak <= 300 if large == "5000" else None,
        )

    if not args.skip_flink:
        code, text = bench("bench_flink.py", "--rounds", runs)
        seq = re.search(r"one at a time:\s+median ([\d.]+) s\s+min-max ([\d.]+)-([\d.]+)", text)
        con = re.search(r"concurrency \d+\s+median ([\d.]+) s\s+min-max ([\d.]+)-([\d.]+)", text)
        if seq and con:
            speedup = float(seq.group(1)) / float(con.group(1))
            table.add(
                "live Flink facts, 50 pipelines, 10-20 ms per request: concurrent vs one at a time",
                ">= 4x",
                f"{con.group(1)} s vs {seq.group(1)} s = {speedup:.1f}x",
                f"{con.group(2)}-{con.group(3)} s vs {seq.group(2)}-{seq.group(3)} s",
                speedup >= 4,
            )
        else:
            table.add("live Flink facts (bench_flink.py)", ">= 4x", "not measured", f"exit {code}", None)
    if not args.skip_data:
        rows_arg = ["--rows", "1000000", "--repeat", "1"] if args.quick else []
        code, text = bench("bench_data.py", *rows_arg)
        report: dict[str, Any] = {}
        match = re.search(r"^\{.*?^\}", text, re.MULTILINE | re.DOTALL)
        if match:
            report = json.loads(match.group(0))
        if "incremental_vs_full_time" in report:
            table.add(
                "data facts: incremental after a 1% append vs full scan",
                ">= 10x",
                f"{report['incremental_vs_full_time']}x",
                f"full {report['full_scan_s']} s, incremental {report['incremental_s']} s",
                report["incremental_vs_full_time"] >= 10,
            )
        else:
            table.add("data facts (bench_data.py)", ">= 10x", "not measured", f"exit {code}", None)

    quick = "; QUICK run: smaller sets than the goals name" if args.quick else ""
    print(
        f"\n{os.cpu_count()} cores; load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after; "
        f"{time.monotonic() - started:.0f} s in all{quick}\n"
    )
    table.print()
    if rss:
        print("\npeak RSS (MB, the largest process of each run): " + "; ".join(f"{k} {v:.0f}" for k, v in rss.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
