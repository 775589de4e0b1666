#!/usr/bin/env python3
"""Re-record the savepoints shipped with the examples (contracts/examples/orders-enrichment/savepoints).

Starts the real Flink test cluster (tests/flink_cluster.py: apache-flink from PyPI in a venv of
its own, needs Java 11, 17 or 21), runs tests/flink_jobs/orders_enrichment.py twice, takes a
canonical savepoint of each with ``POST /jobs/:id/savepoints`` and copies its ``_metadata`` (the only
file streamwarden reads; the state files stay behind) into the examples, under the directory name
Flink gave it (``savepoint-<job id prefix>-<12 hex>``, which tells the gate the job):

- ``before-rename/``: the running version of orders-enrichment, from before the join's uid was
  renamed (``--join-uid orders-join``), after at least CHECKPOINTS checkpoints. The contract
  declares every operator with state (the join through ``restores_from: orders-join``): the gate
  allows restoring the new version from it.
- ``dedup-typo/``: a build whose dedup operator shipped with the uid ``orders-dedupe``. Its state
  is claimed by no uid of the contract, and Flink would refuse the restore: the gate denies it
  (SW-STATE-009).

Writes ``origin.json`` (what scripts/make_example_lake.py reads: the job id the lake's history is
committed by, the checkpoint ids) and ``README.md`` (the origin, for people) beside them. The old
recordings are replaced. Usage: ``python scripts/record_example_savepoints.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.flink_cluster import FLINK_VERSION, running_cluster  # noqa: E402

from streamwarden.flink.savepoint_metadata import parse_metadata  # noqa: E402

DEST = REPO / "contracts" / "examples" / "orders-enrichment" / "savepoints"
DRIVER = "orders_enrichment.py"
CHECKPOINTS = 20  # completed checkpoints before the allow case's savepoint
SETTINGS = {
    "execution.checkpointing.interval": "1s",
    "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
    # the Python operators are the bottleneck: aligned barriers would wait behind full buffers
    "execution.checkpointing.unaligned.enabled": "true",
}
CASES: dict[str, dict[str, Any]] = {
    "before-rename": {
        "args": ["--join-uid", "orders-join"],
        "checkpoints": CHECKPOINTS,
        "story": "the running version, before the join's uid was renamed to orders-enrich-join",
        "gate": "allow",
    },
    "dedup-typo": {
        "args": ["--join-uid", "orders-join", "--dedup-uid", "orders-dedupe"],
        "checkpoints": 2,
        "story": "a build whose dedup operator shipped with the uid orders-dedupe",
        "gate": "deny (SW-STATE-009)",
    },
}


def _post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def take_savepoint(cluster: Any, jid: str, target: Path) -> str:
    """POST /jobs/:id/savepoints (canonical, job keeps running), polled until it completes."""
    body = {"target-directory": target.as_uri(), "cancel-job": False, "formatType": "CANONICAL"}
    trigger = _post(f"{cluster.rest_url}/jobs/{jid}/savepoints", body)["request-id"]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        status = cluster.get(f"/jobs/{jid}/savepoints/{trigger}")
        if status["status"]["id"] == "COMPLETED":
            operation = status.get("operation") or {}
            if "location" not in operation:
                raise RuntimeError(f"savepoint of {jid} failed: {operation.get('failure-cause')}")
            return str(operation["location"])
        time.sleep(0.5)
    raise RuntimeError(f"savepoint of {jid} did not complete")


def local(location: str) -> Path:
    return Path(location.removeprefix("file://").removeprefix("file:"))


def record(parallelism: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    target = Path(tempfile.mkdtemp(prefix="sw-example-savepoints-"))
    try:
        with running_cluster(slots=8) as cluster:  # stopped on exit, also on Ctrl-C
            for case, spec in CASES.items():
                args = ["--name", "orders-enrichment", "--parallelism", str(parallelism), *spec["args"]]
                jid = cluster.submit(DRIVER, *args, dynamic=SETTINGS)
                cluster.wait_running(jid, checkpoints=spec["checkpoints"])
                location = take_savepoint(cluster, jid, target)
                cluster.cancel(jid)
                src = local(location)
                dest = DEST / case / src.name
                dest.mkdir(parents=True)
                shutil.copyfile(src / "_metadata", dest / "_metadata")
                md = parse_metadata((dest / "_metadata").read_bytes())
                out[case] = {
                    "directory": f"{case}/{src.name}",
                    "job_id": jid,
                    "job_name": "orders-enrichment",
                    "checkpoint_id": md.checkpoint_id,
                    "metadata_version": md.version,
                    "driver_args": args,
                    "story": spec["story"],
                    "gate": spec["gate"],
                }
                print(f"{case}: job {jid}, savepoint at checkpoint {md.checkpoint_id} -> {dest}")
    finally:
        shutil.rmtree(target, ignore_errors=True)
    return out


README = """\
# Savepoints of orders-enrichment, recorded from a real Flink {flink} job

`make demo` restores the example pipeline from these with `streamwarden gate` (and shows them with
`streamwarden savepoint inspect`) without a Flink cluster. Each directory holds only the `_metadata`
file of a canonical savepoint (the one file streamwarden reads), under the name Flink gave the
savepoint directory: `savepoint-<first 6 hex of the job id>-<12 hex>`. The state files were not kept:
the handles inside `_metadata` name paths on the recording machine that do not exist here.

- Flink: {flink} (`apache-flink=={flink}` from PyPI, a standalone cluster started by
  `tests/flink_cluster.py`), RocksDB state backend, `_metadata` version {version}
- Job: `tests/flink_jobs/orders_enrichment.py`, a PyFlink DataStream job with the operator uids the
  contract declares (two sequence sources standing in for the Kafka topics, `orders-dedup` keyed
  by order id, the customer join, a discarding sink with the Iceberg sink's uid), parallelism 2,
  max parallelism 128 (as the contract), a checkpoint every second (unaligned)
- Command: `python scripts/record_example_savepoints.py` (submits the job with
  `bin/flink run -d -py`, takes each savepoint with `POST /jobs/:id/savepoints` and
  `formatType: CANONICAL`, cancels the job)
- Recorded: {date}

| directory | job id | checkpoint | what it is | gate |
|---|---|---|---|---|
{rows}

`origin.json` says the same for scripts: `scripts/make_example_lake.py` commits the example
table's history as the job of `before-rename` (its job id, its checkpoint 3 commits before the
newest), and copies both savepoints into `.lake/savepoints/`, dated as of that checkpoint's
commit (a restore's age is read from the `_metadata` file's modification time, and git does not
keep it). Re-record with the command above; the names and ids change, nothing else needs to.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--parallelism", type=int, default=2, help="the job's parallelism (default: 2)")
    args = parser.parse_args(argv)
    for case in CASES:
        shutil.rmtree(DEST / case, ignore_errors=True)
    recorded = record(args.parallelism)
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    origin = {
        "flink_version": FLINK_VERSION,
        "recorded": date,
        "command": "python scripts/record_example_savepoints.py",
        "driver": f"tests/flink_jobs/{DRIVER}",
        "settings": SETTINGS,
        "savepoints": recorded,
    }
    (DEST / "origin.json").write_text(json.dumps(origin, indent=2) + "\n", encoding="utf-8")
    rows = "\n".join(
        f"| `{r['directory']}` | `{r['job_id']}` | {r['checkpoint_id']} | {r['story']} | {r['gate']} |"
        for r in recorded.values()
    )
    versions = sorted({str(r["metadata_version"]) for r in recorded.values()})
    (DEST / "README.md").write_text(
        README.format(flink=FLINK_VERSION, version=", ".join(versions), date=date, rows=rows), encoding="utf-8"
    )
    print(f"wrote {DEST / 'origin.json'} and {DEST / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
