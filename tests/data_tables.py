"""Real Iceberg tables for the data-facts tests, with REAL merge-on-read delete files.

pyiceberg 0.12 writes data files (``append``) but cannot write delete files: its ``delete()``
rewrites data files (copy-on-write). Flink's upsert sink writes position and equality delete files,
so these helpers write them the way an Iceberg writer does and commit them in delete manifests:

- a position delete file is Parquet with ``file_path`` (field id 2147483546) and ``pos``
  (2147483545); an equality delete file holds the equality columns with their field ids;
- the files are described as ``DataFile`` entries (content POSITION_DELETES / EQUALITY_DELETES,
  ``equality_ids``) and written into a manifest whose content is DELETES (a ManifestWriterV2 whose
  ``content()`` says so: pyiceberg's public writers only write data manifests);
- the commit is pyiceberg's own snapshot producer (``_FastAppendFiles``, which keeps every existing
  manifest) with the delete manifest added: a row delta. Operation ``delete`` when only deletes are
  added, ``overwrite`` with data too (as Iceberg's BaseRowDelta names them). Sequence numbers are
  inherited from the manifest list as the spec says, so the data-sequence-number rules apply.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriterV2,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation, Summary
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record

POS_FILE_PATH_ID = 2147483546
POS_POS_ID = 2147483545
CATALOG = "lake"


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _RowDelta(_FastAppendFiles):
    """A fast append that also adds delete files, in a delete manifest."""

    def __init__(self, *args: Any, delete_files: Sequence[DataFile] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._delete_files = list(delete_files)

    def _manifests(self) -> list[ManifestFile]:
        manifests = super()._manifests()
        if not self._delete_files:
            return manifests
        md = self._transaction.table_metadata
        by_spec: dict[int, list[DataFile]] = {}
        for f in self._delete_files:
            by_spec.setdefault(f.spec_id, []).append(f)
        written = []
        for spec_id, files in by_spec.items():
            writer = _DeleteManifestWriter(
                md.specs()[spec_id], md.schema(), self.new_manifest_output(), self._snapshot_id, self._compression
            )
            with writer:
                for f in files:
                    writer.add(
                        ManifestEntry.from_args(
                            status=ManifestEntryStatus.ADDED,
                            snapshot_id=self._snapshot_id,
                            sequence_number=None,
                            file_sequence_number=None,
                            data_file=f,
                        )
                    )
            written.append(writer.to_manifest_file())
        return written + manifests

    def _summary(self, snapshot_properties: dict[str, str] | None = None) -> Summary:
        saved = self._added_data_files
        self._added_data_files = [*saved, *self._delete_files]
        try:
            return super()._summary(snapshot_properties or {})
        finally:
            self._added_data_files = saved


@dataclass
class DataLake:
    """A SQL catalog on SQLite under ``root`` (where a streamwarden.yaml would live)."""

    root: Path

    def __post_init__(self) -> None:
        (self.root / "lake" / "warehouse").mkdir(parents=True, exist_ok=True)
        self.catalog: Catalog = load_catalog(
            CATALOG,
            type="sql",
            uri=f"sqlite:///{self.root / 'lake' / 'catalog.db'}",
            warehouse=(self.root / "lake" / "warehouse").as_uri(),
        )
        self.catalog.create_namespace("sales")

    def environment(self, spark: dict[str, Any] | None = None, show_values: bool = True) -> dict[str, Any]:
        """An environment of streamwarden.yaml, catalog paths relative to ``root`` (showing row
        values in data findings unless ``show_values`` is false: these tests look at them)."""
        env: dict[str, Any] = {
            "iceberg": {
                "catalogs": {
                    CATALOG: {"type": "sql", "uri": "sqlite:///lake/catalog.db", "warehouse": "lake/warehouse"}
                },
                "data": {"show_values": show_values},
            }
        }
        env["spark"] = spark or {"master": "local[2]"}
        return env

    def create(
        self,
        identifier: str,
        schema: Schema,
        spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        properties: dict[str, str] | None = None,
    ) -> Table:
        return self.catalog.create_table(
            identifier, schema=schema, partition_spec=spec, properties={"format-version": "2", **(properties or {})}
        )


def append(table: Table, rows: list[dict[str, Any]], properties: dict[str, str] | None = None) -> int:
    """Append ``rows`` (one commit; pyiceberg writes one file per partition); returns the snapshot id."""
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()), snapshot_properties=properties or {})
    return current_id(table)


def current_id(table: Table) -> int:
    snap = table.current_snapshot()
    assert snap is not None
    return snap.snapshot_id


def live_files(table: Table) -> list[tuple[str, int, int]]:
    """(path, record_count, sequence number) of the live data files, oldest first."""
    snap = table.current_snapshot()
    assert snap is not None
    out = []
    for m in snap.manifests(table.io):
        if m.content == ManifestContent.DATA:
            for e in m.fetch_manifest_entry(table.io):
                out.append((e.data_file.file_path, e.data_file.record_count, e.sequence_number or 0))
    return sorted(out, key=lambda t: (t[2], t[0]))


def file_rows(path: str) -> pa.Table:
    return pq.read_table(path.removeprefix("file://"))


def _new_path(table: Table, prefix: str) -> str:
    return f"{table.location()}/data/{prefix}-{uuid.uuid4().hex}.parquet"


def _write(path: str, data: pa.Table) -> int:
    local = path.removeprefix("file://")
    Path(local).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, local)
    return Path(local).stat().st_size


def _field(name: str, typ: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, typ, nullable=False, metadata={b"PARQUET:field_id": str(fid).encode()})


def position_delete_file(
    table: Table, targets: list[tuple[str, int]], *, spec_id: int = 0, partition: Record | None = None
) -> DataFile:
    """A position delete file removing row ``pos`` of data file ``path`` for each (path, pos)."""
    targets = sorted(targets)
    schema = pa.schema([_field("file_path", pa.string(), POS_FILE_PATH_ID), _field("pos", pa.int64(), POS_POS_ID)])
    data = pa.Table.from_pylist([{"file_path": p, "pos": n} for p, n in targets], schema=schema)
    path = _new_path(table, "pos-deletes")
    size = _write(path, data)
    f = DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition or Record(),
        record_count=len(targets),
        file_size_in_bytes=size,
    )
    f.spec_id = spec_id
    return f


def equality_delete_file(
    table: Table, columns: list[str], rows: list[dict[str, Any]], *, spec_id: int = 0, partition: Record | None = None
) -> DataFile:
    """An equality delete file on ``columns`` (by name in the current schema), one row per delete."""
    schema = table.schema()
    sub = schema.select(*columns)
    data = pa.Table.from_pylist(rows, schema=sub.as_arrow())
    path = _new_path(table, "eq-deletes")
    size = _write(path, data)
    f = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition or Record(),
        record_count=len(rows),
        file_size_in_bytes=size,
        equality_ids=[schema.find_field(c).field_id for c in columns],
    )
    f.spec_id = spec_id
    return f


def data_file(
    table: Table,
    rows: list[dict[str, Any]],
    *,
    record_count: int | None = None,
    spec_id: int = 0,
    partition: Record | None = None,
) -> DataFile:
    """A data file written by hand (with field ids), for commits next to delete files; ``record_count``
    may lie, to make a manifest disagree with its file."""
    data = pa.Table.from_pylist(rows, schema=table.schema().as_arrow())
    path = _new_path(table, "data")
    size = _write(path, data)
    count = len(rows) if record_count is None else record_count
    f = DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition or Record(),
        record_count=count,
        file_size_in_bytes=size,
    )
    f.spec_id = spec_id
    return f


def row_delta(
    table: Table,
    *,
    data: Sequence[DataFile] = (),
    deletes: Sequence[DataFile] = (),
    properties: dict[str, str] | None = None,
) -> int:
    """Commit data files and delete files in one snapshot (like Iceberg's RowDelta); returns its id."""
    op = Operation.OVERWRITE if data and deletes else Operation.DELETE if deletes else Operation.APPEND
    with table.transaction() as tx:
        producer = _RowDelta(
            operation=op, transaction=tx, io=table.io, snapshot_properties=properties or {}, delete_files=deletes
        )
        for f in data:
            producer.append_data_file(f)
        producer.commit()
    return current_id(table)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one SparkSession of the test run (local[2], 1g driver, no UI, few shuffle partitions),
    created through the gatherer's factory so the gatherer reuses it."""
    from streamwarden.facts import spark_data

    session = spark_data.get_spark(
        {
            "master": "local[2]",
            "conf": {
                "spark.driver.memory": "1g",
                "spark.ui.enabled": "false",
                "spark.sql.shuffle.partitions": "4",
                "spark.default.parallelism": "2",
            },
        }
    )
    yield session
    spark_data.stop_spark()
