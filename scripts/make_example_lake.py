#!/usr/bin/env python3
"""Build the example lake that ``streamwarden check --env local`` reads in contracts/examples.

Creates (drops and recreates) the three example tables in the ``local`` environment's Iceberg
catalog (a PyIceberg SQL catalog on SQLite, ``.lake/catalog.db``, warehouse ``.lake/warehouse``,
resolved against the directory of streamwarden.yaml exactly as the checker resolves them). Each
table gets its contract's schema (field ids, required-ness, types), partition spec, properties and
identifier fields, and a history committed the way the Iceberg Flink sink commits: one snapshot
per completed checkpoint of one job, stamped with ``flink.job-id``, ``flink.operator-id`` (the
OperatorID of the committing operator, derived from the sink's uid) and
``flink.max-committed-checkpoint-id`` (docs/facts-iceberg.md, docs/facts-savepoint.md). The history ends
LAST_COMMIT_AGO before ``--now``, so the pipelines' freshness promises hold at that time.

- orders-enrichment (clean): 20 checkpoints, unique orders, nothing stale or expired. No live rule
  fires on it.
- clickstream-sessions (broken): a session is emitted only after its 30-minute inactivity gap, so
  the newest session_end is always ~31 minutes old against quality.freshness.max_lag 10m
  (SW-DATA-001); and a Spark job appended recovered app sessions straight to main, without Flink
  lineage (SW-TABLE-007, SW-TABLE-012).
- payments-cdc (broken): the committer retried a commit whose outcome was unknown and committed
  one checkpoint twice with the same data files (SW-TABLE-008, SW-TABLE-011), so that
  checkpoint's payment_ids are live twice (SW-DATA-002).

The savepoints recorded from a real Flink job for orders-enrichment
(``orders-enrichment/savepoints/``, see its README and scripts/record_example_savepoints.py) are
tied in: its table history is committed by the recorded job (its job id), the savepoint of
``before-rename`` 3 checkpoints before the newest commit, and each recorded ``_metadata`` is
copied to ``.lake/savepoints/`` dated as of that commit (the gate reads a savepoint's age from
the file's modification time), so ``streamwarden gate`` restores from them as of now. The recovery
ledger the configuration names (``ledger:``) is dropped too: ``make demo``'s ``gate --record``
creates it afresh.

Usage: ``python scripts/make_example_lake.py [--root contracts/examples] [--env local] [--now RFC3339]``.
Needs ``streamwarden[iceberg]`` (pyiceberg with pyiceberg-core: the tables are partitioned by
transforms). Rows are few (about 500 to 800 a table) and the data is seeded: reruns give the same
rows and ids, with timestamps relative to ``--now``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

from streamwarden.contracts.config import load_config
from streamwarden.contracts.load import load_contract
from streamwarden.flink.uids import operator_id
from streamwarden.iceberg.catalog import catalog_properties
from streamwarden.iceberg.types import IcebergType, parse_type

SECOND_MS = 1_000
MINUTE_MS = 60 * SECOND_MS
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS
LAST_COMMIT_AGO_MS = 45 * SECOND_MS  # the newest Flink commit, before --now
CHECKPOINTS = 20  # checkpoints each job commits
REPLAYED = 3  # commits of orders-enrichment after the checkpoint of its recorded savepoint
RECORDED = Path("orders-enrichment") / "savepoints"  # under --root: origin.json and the _metadata files
RECORDED_ALLOW = "before-rename"  # the recording whose job commits the orders table
SAVEPOINTS_DIR = Path(".lake") / "savepoints"  # under --root: where the recordings are placed, dated
SEED = 20261125
HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = HERE.parent / "contracts" / "examples"


# ------------------------------------------------------------------------------ table definition


class _FieldIds:
    """Ids for nested fields (list elements, map keys and values): after the contract's own ids."""

    def __init__(self, start: int) -> None:
        self.next = start

    def take(self) -> int:
        self.next += 1
        return self.next - 1


def pyiceberg_type(t: IcebergType, ids: _FieldIds) -> Any:
    """The pyiceberg type for a parsed contract type."""
    from pyiceberg import types as it

    primitives: dict[str, Any] = {
        "boolean": it.BooleanType(),
        "int": it.IntegerType(),
        "long": it.LongType(),
        "float": it.FloatType(),
        "double": it.DoubleType(),
        "date": it.DateType(),
        "time": it.TimeType(),
        "timestamp": it.TimestampType(),
        "timestamptz": it.TimestamptzType(),
        "string": it.StringType(),
        "uuid": it.UUIDType(),
        "binary": it.BinaryType(),
    }
    if t.kind in primitives:
        return primitives[t.kind]
    if t.kind == "decimal":
        return it.DecimalType(t.params[0], t.params[1])
    if t.kind == "fixed":
        return it.FixedType(t.params[0])
    if t.kind == "list":
        return it.ListType(ids.take(), pyiceberg_type(t.children[0], ids), element_required=False)
    if t.kind == "map":
        key_id, value_id = ids.take(), ids.take()
        return it.MapType(
            key_id,
            pyiceberg_type(t.children[0], ids),
            value_id,
            pyiceberg_type(t.children[1], ids),
            value_required=False,
        )
    if t.kind == "struct":
        return it.StructType(
            *(
                it.NestedField(ids.take(), name, pyiceberg_type(child, ids), required=False)
                for name, child in zip(t.names, t.children, strict=True)
            )
        )
    raise ValueError(f"type {t.render()} is not supported by this script")


def table_schema(table: Mapping[str, Any]) -> Any:
    """The contract's table.schema (and identifier_fields) as a pyiceberg Schema."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import NestedField

    fields = table["schema"]
    ids = _FieldIds(max(int(f["id"]) for f in fields) + 1)
    nested = [
        NestedField(
            int(f["id"]),
            f["name"],
            pyiceberg_type(parse_type(f["type"]), ids),
            required=bool(f.get("required", False)),
            doc=f.get("doc"),
        )
        for f in fields
    ]
    by_name = {f["name"]: int(f["id"]) for f in fields}
    return Schema(*nested, identifier_field_ids=[by_name[n] for n in table.get("identifier_fields") or []])


def partition_spec(table: Mapping[str, Any], schema: Any) -> Any:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import parse_transform

    out = []
    for i, p in enumerate(table.get("partition_spec") or []):
        source = schema.find_field(p["source"])
        transform = parse_transform(p["transform"])
        suffix = p["transform"].split("[")[0]
        out.append(PartitionField(source.field_id, 1000 + i, transform, f"{p['source']}_{suffix}"))
    return PartitionSpec(*out)


# ------------------------------------------------------------------------------------ histories


@dataclass
class Commit:
    """One snapshot to write: rows appended at ``at_ms``, or (``recommit_of``) the data files an
    earlier commit added, added again."""

    at_ms: int
    properties: dict[str, str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    recommit_of: int | None = None  # index of an earlier Commit whose files are committed again
    note: str = ""


@dataclass
class Pipeline:
    """What the script builds for one example contract."""

    directory: str  # under --root
    committer_uid: str  # the uid of the operator that stamps flink.operator-id, from the sink's uid
    first_checkpoint: int
    history: Callable[[Pipeline, dict[str, Any], int, random.Random], list[Commit]]
    story: str
    job: str | None = None  # the job id of the commits (default: derived from the pipeline name)


def job_id(name: str) -> str:
    """A stable, realistic Flink JobID (32 hex) for a pipeline name."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"streamwarden-example/{name}").hex


def lineage(job: str, operator: str, checkpoint: int) -> dict[str, str]:
    return {"flink.job-id": job, "flink.operator-id": operator, "flink.max-committed-checkpoint-id": str(checkpoint)}


def checkpoint_times(contract: dict[str, Any], now_ms: int, rng: random.Random) -> list[int]:
    """When the job's CHECKPOINTS commits landed: every checkpoint.interval (plus the checkpoint's
    own few seconds), the newest LAST_COMMIT_AGO before now."""
    interval = int(contract["checkpoint"]["interval"])
    last = now_ms - LAST_COMMIT_AGO_MS
    return [
        last - (CHECKPOINTS - 1 - i) * interval + (rng.randint(-1500, 1500) if i < CHECKPOINTS - 1 else 0)
        for i in range(CHECKPOINTS)
    ]


def ts(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)


def cents(rng: random.Random, low: int, high: int) -> Decimal:
    return Decimal(rng.randint(low * 100, high * 100)) / 100


# orders-enrichment: new orders de-duplicated and enriched within seconds of their event time.
SEGMENTS = ("consumer", "smb", "enterprise", None)
COUNTRIES = ("DE", "FR", "NL", "ES", "IT", "PL", "SE")
PROMOS = ("WELCOME10", "BLACKFRIDAY", "FREESHIP", "LOYAL5")


def orders_history(p: Pipeline, contract: dict[str, Any], now_ms: int, rng: random.Random) -> list[Commit]:
    job = p.job or job_id(contract["metadata"]["name"])
    operator = operator_id(p.committer_uid)
    interval = int(contract["checkpoint"]["interval"])
    next_order = 90_412_000
    commits = []
    for i, at in enumerate(checkpoint_times(contract, now_ms, rng)):
        rows = []
        for _ in range(rng.randint(20, 35)):
            next_order += rng.randint(1, 3)
            order_ms = at - rng.randint(3 * SECOND_MS, interval + 20 * SECOND_MS)
            updated_ms = min(at - SECOND_MS, order_ms + rng.choice((0, 0, 0, rng.randint(1, 30) * SECOND_MS)))
            rows.append(
                {
                    "order_id": next_order,
                    "order_ts": ts(order_ms),
                    "customer_id": rng.randint(100_000, 999_999),
                    "status": "paid" if updated_ms > order_ms else "placed",
                    "amount": cents(rng, 5, 900),
                    "currency": rng.choice(("EUR", "EUR", "EUR", "GBP", "SEK", "PLN")),
                    "customer_segment": rng.choice(SEGMENTS),
                    "customer_country": rng.choice(COUNTRIES),
                    "promo_codes": rng.choice(([], [], None, [rng.choice(PROMOS)])),
                    "updated_at": ts(updated_ms),
                }
            )
        commits.append(Commit(at, lineage(job, operator, p.first_checkpoint + i), rows))
    return commits


# clickstream-sessions: sessions are emitted when 30 minutes of inactivity close them.
PAGES = ("/", "/pricing", "/blog/streaming-lakehouse", "/docs/getting-started", "/signup", "/product/tour")
REFERRERS = ("https://www.google.com/", "https://news.ycombinator.com/", "https://t.co/", None, None)
DEVICES = ("desktop", "mobile", "tablet", "app-ios", "app-android")
SESSION_GAP_MS = 30 * MINUTE_MS


def session_row(rng: random.Random, end_ms: int, device: str | None = None) -> dict[str, Any]:
    start_ms = end_ms - rng.randint(0, 40 * MINUTE_MS)
    views = rng.randint(1, 14)
    return {
        "session_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "anonymous_id": f"anon-{rng.getrandbits(48):012x}",
        "user_id": rng.choice((None, None, rng.randint(1, 5_000_000))),
        "session_start": ts(start_ms),
        "session_end": ts(end_ms),
        "page_views": views,
        "events": views + rng.randint(0, 3 * views),
        "landing_page": rng.choice(PAGES),
        "referrer": rng.choice(REFERRERS),
        "device_type": device or rng.choice(DEVICES),
        "country_code": rng.choice((*COUNTRIES, "US", "GB")),
        "is_bounce": views == 1,
    }


def clickstream_history(p: Pipeline, contract: dict[str, Any], now_ms: int, rng: random.Random) -> list[Commit]:
    job = job_id(contract["metadata"]["name"])
    operator = operator_id(p.committer_uid)
    interval = int(contract["checkpoint"]["interval"])
    commits = []
    times = checkpoint_times(contract, now_ms, rng)
    for i, at in enumerate(times):
        # a session closes SESSION_GAP after its last event: its session_end is at least that old
        rows = [session_row(rng, at - SESSION_GAP_MS - rng.randint(0, interval)) for _ in range(rng.randint(20, 35))]
        commits.append(Commit(at, lineage(job, operator, p.first_checkpoint + i), rows))
    # Out of band: a Spark job re-sessionized the app events of yesterday's Kafka outage and appended
    # them straight to main, between two of the job's commits, with no Flink lineage.
    spark_at = times[11] + 17 * SECOND_MS
    yesterday = now_ms - DAY_MS
    spark_rows = [session_row(rng, yesterday - rng.randint(0, 2 * HOUR_MS), rng.choice(DEVICES[3:])) for _ in range(60)]
    spark = {
        "engine-name": "spark",
        "engine-version": "3.5.6",
        "iceberg-version": "Apache Iceberg 1.9.2",
        "spark.app.id": "app-20261125093112-0042",
        "spark.app.name": "clickstream-outage-resessionize",
    }
    commits.insert(12, Commit(spark_at, spark, spark_rows, note="out-of-band Spark append, no Flink lineage"))
    return commits


# payments-cdc: payments created over the last weeks, changed (captured, refunded) just now.
STATUSES = ("authorized", "captured", "captured", "captured", "refunded", "failed")
METHODS = ("card", "card", "sepa_debit", "ideal", "paypal", None)
FX = {"EUR": Decimal("1"), "USD": Decimal("0.94213500"), "GBP": Decimal("1.18640000"), "CHF": Decimal("1.06925000")}


def payments_history(p: Pipeline, contract: dict[str, Any], now_ms: int, rng: random.Random) -> list[Commit]:
    job = job_id(contract["metadata"]["name"])
    operator = operator_id(p.committer_uid)
    interval = int(contract["checkpoint"]["interval"])
    commits = []
    for i, at in enumerate(checkpoint_times(contract, now_ms, rng)):
        rows = []
        for _ in range(rng.randint(20, 35)):
            currency = rng.choice(("EUR", "EUR", "EUR", "USD", "GBP", "CHF"))
            amount = cents(rng, 1, 2500)
            rate = FX[currency]
            status = rng.choice(STATUSES)
            rows.append(
                {
                    "payment_id": uuid.UUID(int=rng.getrandbits(128), version=4).bytes,
                    "merchant_id": rng.randint(10_000, 10_400),
                    "customer_id": rng.choice((None, rng.randint(100_000, 999_999))),
                    "amount": amount,
                    "currency": currency,
                    "fx_rate": rate,
                    "amount_eur": (amount * rate).quantize(Decimal("0.01")),
                    "status": status,
                    "method": rng.choice(METHODS),
                    "created_at": ts(at - rng.randint(2 * MINUTE_MS, 40 * DAY_MS)),
                    "updated_at": ts(at - rng.randint(SECOND_MS, interval)),
                    "metadata": {"psp": rng.choice(("adyen", "stripe")), "psp_reference": f"{rng.getrandbits(52):013d}"}
                    | ({"refund_reason": "customer_request"} if status == "refunded" else {}),
                }
            )
        commits.append(Commit(at, lineage(job, operator, p.first_checkpoint + i), rows))
    # The commit of the 14th checkpoint timed out (CommitStateUnknownException) but had landed; the
    # committer retried it with the same WriteResult: the same data files, committed a second time.
    again = 13
    commits.insert(
        again + 1,
        Commit(
            commits[again].at_ms + 9 * SECOND_MS,
            dict(commits[again].properties),
            recommit_of=again,
            note="checkpoint committed twice (same data files)",
        ),
    )
    return commits


PIPELINES = (
    Pipeline(
        "orders-enrichment",
        # Flink 2.1 IcebergSink with uidSuffix: its pre-commit aggregator stamps the snapshots
        "Sink pre-commit aggregator: orders-iceberg-sink",
        4318,
        orders_history,
        "clean: Flink commits every checkpoint, fresh, unique, complete",
    ),
    Pipeline(
        "clickstream-sessions",
        # Flink 1.18 FlinkSink with uidPrefix: its IcebergFilesCommitter stamps the snapshots
        "sessions-iceberg-sink-committer",
        91_207,
        clickstream_history,
        "sessions 31m old vs max_lag 10m; one out-of-band Spark append without Flink lineage",
    ),
    Pipeline(
        "payments-cdc",
        # Flink 1.20 FlinkSink with uidPrefix: its IcebergFilesCommitter stamps the snapshots
        "payments-iceberg-sink-committer",
        17_733,
        payments_history,
        "one checkpoint committed twice with the same data files: its payment_ids are live twice",
    ),
)


# ---------------------------------------------------------------------------------------- writing


@contextmanager
def snapshot_clock(at_ms: int) -> Iterator[None]:
    """pyiceberg stamps a new snapshot with ``time.time()`` (pyiceberg.table.snapshots): make that
    ``at_ms`` while one commit is written, so a history can span minutes without waiting."""
    from pyiceberg.table import snapshots as snapshots_mod

    with mock.patch.object(snapshots_mod, "time", SimpleNamespace(time=lambda: at_ms / 1000)):
        yield


def added_paths(table: Any, snapshot_id: int) -> list[str]:
    snap = table.snapshot_by_id(snapshot_id)
    paths: list[str] = []
    for m in snap.manifests(table.io):
        if m.added_snapshot_id == snapshot_id:
            paths += [e.data_file.file_path for e in m.fetch_manifest_entry(table.io)]
    return paths


def local_path(location: str) -> Path | None:
    """The local directory of a ``file:`` URI or a plain path (None for object stores)."""
    if location.startswith("file:"):
        location = location.removeprefix("file://").removeprefix("file:")
    return None if "://" in location else Path(location).resolve()


def drop_if_exists(catalog: Any, identifier: str, warehouse: Path | None) -> None:
    """Drop the table, and delete its files when they are in the (local) warehouse."""
    from pyiceberg.exceptions import NoSuchTableError

    try:
        table = catalog.load_table(identifier)
    except NoSuchTableError:
        return
    catalog.drop_table(identifier)
    location = local_path(table.location())
    if location is not None and warehouse is not None and location.is_relative_to(warehouse) and location.is_dir():
        shutil.rmtree(location)


def write_history(table: Any, commits: Sequence[Commit]) -> list[int]:
    """Commit ``commits`` in order; returns the snapshot ids."""
    import pyarrow as pa

    arrow_schema = table.schema().as_arrow()
    ids: list[int] = []
    for c in commits:
        with snapshot_clock(c.at_ms):
            if c.recommit_of is not None:
                paths = added_paths(table, ids[c.recommit_of])
                table.add_files(paths, snapshot_properties=c.properties, check_duplicate_files=False)
            else:
                table.append(pa.Table.from_pylist(c.rows, schema=arrow_schema), snapshot_properties=c.properties)
        ids.append(table.current_snapshot().snapshot_id)
    return ids


def check_created(table: Any, contract_table: Mapping[str, Any]) -> None:
    """pyiceberg assigns fresh field ids on create: make sure they are the contract's."""
    live = {f.name: f.field_id for f in table.schema().fields}
    wanted = {f["name"]: int(f["id"]) for f in contract_table["schema"]}
    if live != wanted:
        raise SystemExit(f"{contract_table['identifier']}: field ids {live} differ from the contract's {wanted}")


def recorded_savepoints(root: Path) -> dict[str, Any] | None:
    """``origin.json`` of the savepoints recorded for orders-enrichment, if they are there."""
    origin = root / RECORDED / "origin.json"
    if not origin.is_file():
        return None
    doc: dict[str, Any] = json.loads(origin.read_text(encoding="utf-8"))
    return doc


def with_recording(p: Pipeline, origin: Mapping[str, Any] | None) -> Pipeline:
    """orders-enrichment committed by the recorded job, its savepoint REPLAYED commits before the newest."""
    if origin is None or p.directory != "orders-enrichment":
        return p
    recorded = origin["savepoints"][RECORDED_ALLOW]
    first = int(recorded["checkpoint_id"]) - (CHECKPOINTS - 1 - REPLAYED)
    if first < 1:
        raise SystemExit(f"{RECORDED}/origin.json: checkpoint {recorded['checkpoint_id']} is too early, re-record it")
    return dataclasses.replace(p, job=str(recorded["job_id"]), first_checkpoint=first)


def place_savepoints(root: Path, origin: Mapping[str, Any], commits: Sequence[Commit]) -> list[str]:
    """Copy each recorded ``_metadata`` to ``.lake/savepoints/<directory>/``, dated as of the commit
    of the allow case's checkpoint (a restore's age is the file's modification time)."""
    checkpoint = str(origin["savepoints"][RECORDED_ALLOW]["checkpoint_id"])
    at = next(c.at_ms for c in commits if c.properties.get("flink.max-committed-checkpoint-id") == checkpoint)
    target = root / SAVEPOINTS_DIR
    shutil.rmtree(target, ignore_errors=True)
    lines = []
    for case, rec in origin["savepoints"].items():
        dest = target / rec["directory"]
        dest.mkdir(parents=True)
        shutil.copyfile(root / RECORDED / rec["directory"] / "_metadata", dest / "_metadata")
        os.utime(dest / "_metadata", (at / 1000, at / 1000))
        lines.append(
            f"    savepoint {SAVEPOINTS_DIR / rec['directory']} ({case}: job {rec['job_id']}, checkpoint "
            f"{rec['checkpoint_id']}), dated {ts(at).isoformat(timespec='seconds')}; gate: {rec['gate']}"
        )
    return lines


def build(root: Path, env_name: str, now_ms: int) -> list[str]:
    """Create the three example tables under ``root``; returns one summary line per table."""
    from pyiceberg.catalog import load_catalog

    config = load_config(str(root / "streamwarden.yaml"), root)
    catalogs = (config.environment(env_name).get("iceberg") or {}).get("catalogs") or {}
    lines: list[str] = []
    opened: dict[str, tuple[Any, Path | None]] = {}
    origin = recorded_savepoints(root)
    for p in (with_recording(p, origin) for p in PIPELINES):
        contract = load_contract(root / p.directory / "contract.yaml", root).data
        t = contract["table"]
        name = str(t["catalog"])
        if name not in opened:
            props = catalog_properties(name, catalogs, config.root)
            uri, warehouse = props.get("uri", ""), props.get("warehouse", "")
            if uri.startswith("sqlite:///"):
                Path(uri.removeprefix("sqlite:///").split("?")[0]).parent.mkdir(parents=True, exist_ok=True)
            local = local_path(warehouse) if warehouse else None
            if local is not None:
                local.mkdir(parents=True, exist_ok=True)
            opened[name] = (load_catalog(name, **props), local)
            lines.append(f"catalog {name}: {uri} (warehouse {warehouse})")
        catalog, local_warehouse = opened[name]
        identifier = str(t["identifier"])
        catalog.create_namespace_if_not_exists(identifier.rsplit(".", 1)[0])
        drop_if_exists(catalog, identifier, local_warehouse)
        schema = table_schema(t)
        table = catalog.create_table(
            identifier,
            schema=schema,
            partition_spec=partition_spec(t, schema),
            properties={**t.get("properties", {}), "format-version": str(t.get("format_version", 2))},
        )
        check_created(table, t)
        rng = random.Random(f"{SEED}/{p.directory}")
        commits = p.history(p, contract, now_ms, rng)
        ids = write_history(table, commits)
        rows = sum(len(c.rows) for c in commits)
        flink = [c for c in commits if "flink.job-id" in c.properties]
        head = table.current_snapshot()
        lines.append(
            f"{identifier} ({p.directory}): {len(ids)} snapshots, {rows} rows written; job "
            f"{flink[0].properties['flink.job-id']}, operator {operator_id(p.committer_uid)} "
            f"(uid {p.committer_uid!r}), checkpoints {flink[0].properties['flink.max-committed-checkpoint-id']}.."
            f"{flink[-1].properties['flink.max-committed-checkpoint-id']}, newest snapshot "
            f"{ts(head.timestamp_ms).isoformat(timespec='seconds')}"
        )
        lines.append(f"    {p.story}")
        lines += [f"    snapshot {ids[i]}: {c.note}" for i, c in enumerate(commits) if c.note]
        if origin is not None and p.job is not None:
            lines += place_savepoints(root, origin, commits)
    ledger = config.ledger_for(env_name)
    if ledger is not None and ledger.catalog in opened:  # the lake is fresh: so is its recovery ledger
        catalog, local_warehouse = opened[ledger.catalog]
        drop_if_exists(catalog, ledger.table, local_warehouse)
        lines.append(f"ledger {ledger.table}: emptied (the first `gate --record` creates it)")
    return lines


def parse_now(text: str | None) -> int:
    if not text:
        return int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise SystemExit("--now needs a time zone (e.g. 2026-11-25T12:00:00Z)")
    return int(when.timestamp() * 1000)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--root",
        type=Path,
        default=DEFAULT_ROOT,
        help="the directory of streamwarden.yaml and the example contracts (default: %(default)s)",
    )
    parser.add_argument("--env", default="local", help="the environment of streamwarden.yaml (default: local)")
    parser.add_argument(
        "--now",
        help="RFC 3339 time the history ends just before (default: now); pass the same "
        "time to `streamwarden check --now` to replay",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if not (root / "streamwarden.yaml").is_file():
        parser.error(f"{root} has no streamwarden.yaml")
    now_ms = parse_now(args.now)
    for line in build(root, args.env, now_ms):
        print(line)
    when = ts(now_ms).isoformat(timespec="seconds")
    print(f"built as of {when}: run `streamwarden check --env {args.env}` in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
