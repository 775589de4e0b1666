"""Real Iceberg tables for tests: a PyIceberg SQL catalog on SQLite with a local warehouse, and
writers that commit the way the Iceberg Flink sink does.

The Flink sink commits once per completed checkpoint, stamping the snapshot summary with
``flink.job-id``, ``flink.operator-id`` and ``flink.max-committed-checkpoint-id``
(docs/facts-iceberg.md); here that is ``append(..., snapshot_properties={...})``. A
checkpoint committed twice re-adds the same data files (the committer replays the same
WriteResult), which ``FlinkSink.recommit`` reproduces with ``add_files``.

Snapshot timestamps come from a controllable clock (pyiceberg stamps ``time.time()`` in
``pyiceberg.table.snapshots``), so histories can span days without waiting.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import DayTransform
from pyiceberg.types import DecimalType, LongType, NestedField, TimestamptzType

MINUTE_MS = 60_000
DAY_MS = 86_400_000
START_MS = 1_764_000_000_000  # 2025-11-24T16:00:00Z: histories start here
JOB_A = "a" * 32
JOB_B = "b" * 32
JOB_FORK = "f0" * 16
JOB_BACKFILL = "bf" * 16
SINK_OP = "0123456789abcdef0123456789abcdef"  # the committer's OperatorID (hex), as the sink writes it
CATALOG = "lake"
IDENTIFIER = "sales.orders"


def orders_schema() -> Schema:
    return Schema(
        NestedField(1, "order_id", LongType(), required=True),
        NestedField(2, "amount", DecimalType(12, 2), required=False),
        NestedField(3, "event_time", TimestamptzType(), required=True),
        identifier_field_ids=[1],
    )


def orders_spec() -> PartitionSpec:
    return PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=DayTransform(), name="event_time_day"))


@dataclass
class Clock:
    """The time pyiceberg stamps on the next snapshot; ``tick`` moves it forward."""

    now_ms: int = START_MS

    def tick(self, ms: int = MINUTE_MS) -> int:
        self.now_ms += ms
        return self.now_ms


@dataclass
class Lake:
    """A SQL catalog on SQLite in ``root`` (the directory a streamwarden.yaml would live in)."""

    root: Path
    clock: Clock = field(default_factory=Clock)
    catalog: Catalog = field(init=False)
    _rows: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        (self.root / "lake" / "warehouse").mkdir(parents=True, exist_ok=True)
        self.catalog = load_catalog(CATALOG, **self.absolute_properties())
        self.catalog.create_namespace("sales")

    def absolute_properties(self) -> dict[str, str]:
        return {
            "type": "sql",
            "uri": f"sqlite:///{self.root / 'lake' / 'catalog.db'}",
            "warehouse": (self.root / "lake" / "warehouse").as_uri(),
        }

    def environment(self) -> dict[str, Any]:
        """The ``iceberg`` section of a streamwarden.yaml environment, with paths relative to root."""
        return {
            "catalogs": {CATALOG: {"type": "sql", "uri": "sqlite:///lake/catalog.db", "warehouse": "lake/warehouse"}}
        }

    def create_orders(self, properties: dict[str, str] | None = None, *, format_version: int = 2, **kw: Any) -> Table:
        props = {"write.upsert.enabled": "true", "format-version": str(format_version), **(properties or {})}
        return self.catalog.create_table(
            kw.pop("identifier", IDENTIFIER),
            schema=kw.pop("schema", orders_schema()),
            partition_spec=kw.pop("partition_spec", orders_spec()),
            properties=props,
        )

    def table(self, identifier: str = IDENTIFIER) -> Table:
        return self.catalog.load_table(identifier)

    @contextmanager
    def frozen_clock(self) -> Iterator[None]:
        fake = SimpleNamespace(time=lambda: self.clock.now_ms / 1000)
        with mock.patch("pyiceberg.table.snapshots.time", fake):
            yield

    def rows(self, table: Table, n: int = 2) -> pa.Table:
        when = dt.datetime.fromtimestamp(self.clock.now_ms / 1000, tz=dt.timezone.utc)
        data = [{"order_id": next(self._rows), "amount": None, "event_time": when} for _ in range(n)]
        return pa.Table.from_pylist(data, schema=table.schema().as_arrow())

    def append(self, table: Table, properties: dict[str, str] | None = None, *, step_ms: int = MINUTE_MS) -> int:
        """One append at the clock's next tick; returns the new snapshot id."""
        self.clock.tick(step_ms)
        with self.frozen_clock():
            table.append(self.rows(table), snapshot_properties=properties or {})
        snap = table.current_snapshot()
        assert snap is not None
        return snap.snapshot_id


def lineage_properties(job_id: str, checkpoint_id: int, operator_id: str | None = SINK_OP) -> dict[str, str]:
    props = {"flink.job-id": job_id, "flink.max-committed-checkpoint-id": str(checkpoint_id)}
    if operator_id is not None:
        props["flink.operator-id"] = operator_id
    return props


@dataclass
class FlinkSink:
    """Commits like the Iceberg Flink sink of one job: one snapshot per completed checkpoint."""

    lake: Lake
    table: Table
    job_id: str
    operator_id: str | None = SINK_OP
    committed: dict[int, int] = field(default_factory=dict)  # checkpoint id -> snapshot id

    def commit(self, checkpoint_id: int, *, step_ms: int = MINUTE_MS) -> int:
        sid = self.lake.append(
            self.table, lineage_properties(self.job_id, checkpoint_id, self.operator_id), step_ms=step_ms
        )
        self.committed[checkpoint_id] = sid
        return sid

    def commit_range(self, first: int, last: int, *, step_ms: int = MINUTE_MS) -> list[int]:
        return [self.commit(c, step_ms=step_ms) for c in range(first, last + 1)]

    def recommit(self, checkpoint_id: int, *, step_ms: int = MINUTE_MS) -> int:
        """Commit checkpoint ``checkpoint_id`` again with the SAME data files as its first commit
        (a committer that replays a WriteResult after a failed or unknown commit)."""
        paths = self.added_paths(self.committed[checkpoint_id])
        self.lake.clock.tick(step_ms)
        with self.lake.frozen_clock():
            self.table.add_files(
                paths,
                snapshot_properties=lineage_properties(self.job_id, checkpoint_id, self.operator_id),
                check_duplicate_files=False,
            )
        snap = self.table.current_snapshot()
        assert snap is not None
        return snap.snapshot_id

    def added_paths(self, snapshot_id: int) -> list[str]:
        snap = self.table.snapshot_by_id(snapshot_id)
        assert snap is not None
        paths: list[str] = []
        for m in snap.manifests(self.table.io):
            if m.added_snapshot_id == snapshot_id:
                paths += [e.data_file.file_path for e in m.fetch_manifest_entry(self.table.io)]
        return paths


def write_parquet(lake: Lake, table: Table, name: str) -> str:
    """A data file outside any snapshot (for add_files), in the table's data directory."""
    path = Path(table.location().removeprefix("file://")) / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(lake.rows(table), path)
    return path.as_uri()


def compact(lake: Lake, table: Table) -> int:
    """A compaction: one ``replace`` snapshot that rewrites every live data file into one, with no
    Flink lineage (maintenance). pyiceberg 0.12 has no rewrite API and refuses to summarize a
    replace, so this drives its snapshot producer directly and summarizes the replace as the
    overwrite it is file-wise, keeping the operation ``replace`` (what Spark/Flink rewrites write)."""
    from pyiceberg.io.pyarrow import _dataframe_to_data_files
    from pyiceberg.table import snapshots as snapshots_mod
    from pyiceberg.table.snapshots import Operation, Summary
    from pyiceberg.table.update import snapshot as producer_mod
    from pyiceberg.table.update.snapshot import _OverwriteFiles

    original = snapshots_mod.update_snapshot_summaries

    def summarize(summary: Summary, *args: Any, **kwargs: Any) -> Summary:
        if summary.operation != Operation.REPLACE:
            return original(summary, *args, **kwargs)
        out = original(Summary(Operation.OVERWRITE, **summary.additional_properties), *args, **kwargs)
        return Summary(Operation.REPLACE, **out.additional_properties)

    old = [task.file for task in table.scan().plan_files()]
    rows = table.scan().to_arrow()
    lake.clock.tick()
    with (
        lake.frozen_clock(),
        mock.patch.object(producer_mod, "update_snapshot_summaries", summarize),
        table.transaction() as tx,
    ):
        producer = _OverwriteFiles(operation=Operation.REPLACE, transaction=tx, io=table.io)
        for f in old:
            producer.delete_data_file(f)
        for f in _dataframe_to_data_files(table_metadata=tx.table_metadata, df=rows, io=table.io):
            producer.append_data_file(f)
        producer.commit()
    snap = table.current_snapshot()
    assert snap is not None
    return snap.snapshot_id


CLEAN_PROPERTIES = {
    "write.upsert.enabled": "true",
    "history.expire.max-snapshot-age-ms": str(7 * DAY_MS),
    "history.expire.min-snapshots-to-keep": "20",
    "write.metadata.delete-after-commit.enabled": "true",
}
