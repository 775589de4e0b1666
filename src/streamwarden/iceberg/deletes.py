"""Read an Iceberg table's live rows with Spark, as a reader of the planned snapshot sees them.

Imported only by the data gatherer, after a Spark session exists (it imports pyspark).

- Parquet is read with an explicit schema whose fields carry ``parquet.field.id`` and with
  ``spark.sql.parquet.fieldId.read.enabled``: columns are matched by Iceberg field id, so a
  renamed column reads right. Files without field ids (name-mapped) are read by their names.
  Output columns are named ``c<field id>``; ``_path`` is Spark's file path and ``_pos`` the row
  position in the file (``_metadata.row_index``).
- Position deletes: rows (file_path, pos) of the delete files, kept where the target file's data
  sequence number is <= the delete file's, removed from the data by (file, position).
- Equality deletes: grouped by equality field ids; a row is removed when its values equal a delete
  row's (null equals null), its file's data sequence number is < the delete file's, and the delete
  is global or in the same partition.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.iceberg.scan import (
    POSITION_FILE_PATH_ID,
    POSITION_POS_ID,
    DataFileInfo,
    DeleteFileInfo,
)

FIELD_ID_KEY = "parquet.field.id"
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_SIMPLE: dict[str, T.DataType] = {
    "boolean": T.BooleanType(),
    "int": T.IntegerType(),
    "long": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "date": T.DateType(),
    "timestamp": T.TimestampNTZType(),
    "timestamptz": T.TimestampType(),
    "string": T.StringType(),
    "binary": T.BinaryType(),
    "uuid": T.BinaryType(),  # Parquet FIXED_LEN_BYTE_ARRAY(16) with the UUID logical type
}


class ReadError(Exception):
    """The table cannot be read as planned (unsupported type, unmatched files)."""


def col_name(field_id: int) -> str:
    return f"c{field_id}"


def spark_type(iceberg_type: str) -> T.DataType:
    if iceberg_type in _SIMPLE:
        return _SIMPLE[iceberg_type]
    m = _DECIMAL.match(iceberg_type)
    if m:
        return T.DecimalType(int(m.group(1)), int(m.group(2)))
    if iceberg_type.startswith("fixed["):
        return T.BinaryType()
    raise ReadError(f"Iceberg type {iceberg_type} cannot be read by the data scan (top-level primitive types only)")


def _schema(ids: Iterable[int], types: dict[int, str], names: dict[int, str] | None) -> T.StructType:
    fields = []
    for fid in ids:
        if names is None:
            fields.append(T.StructField(col_name(fid), spark_type(types[fid]), True, {FIELD_ID_KEY: fid}))
        elif fid in names:
            fields.append(T.StructField(names[fid], spark_type(types[fid]), True))
    return T.StructType(fields)


def read_files(spark: SparkSession, files: list[DataFileInfo], ids: list[int], types: dict[int, str]) -> DataFrame:
    """Rows of ``files`` (no deletes applied): ``c<id>`` per id, ``_path``, ``_pos``."""
    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    groups: dict[tuple[tuple[int, str], ...] | None, list[str]] = {}
    for f in files:
        key = None if f.names is None else tuple(sorted(f.names.items()))
        if f.path not in groups.setdefault(key, []):  # Spark reads a path once; see live_rows for repeats
            groups[key].append(f.path)
    frames = []
    for key, paths in groups.items():
        names = None if key is None else dict(key)
        df = spark.read.schema(_schema(ids, types, names)).parquet(*paths)
        cols = []
        for fid in ids:
            if names is None:
                cols.append(F.col(col_name(fid)))
            elif fid in names:
                cols.append(F.col(f"`{names[fid]}`").alias(col_name(fid)))
            else:  # a name-mapped file without this column reads as null
                cols.append(F.lit(None).cast(spark_type(types[fid])).alias(col_name(fid)))
        frames.append(
            df.select(*cols, F.col("_metadata.file_path").alias("_path"), F.col("_metadata.row_index").alias("_pos"))
        )
    out = frames[0]
    for more in frames[1:]:
        out = out.unionByName(more)
    return out


def file_counts(spark: SparkSession, paths: list[str]) -> dict[str, int]:
    """Rows per Parquet file as Spark reports them, keyed by Spark's path (no column is decoded)."""
    if not paths:
        return {}
    df = spark.read.schema(T.StructType([])).parquet(*paths)
    rows = df.groupBy(F.col("_metadata.file_path").alias("p")).count().collect()
    return {r["p"]: int(r["count"]) for r in rows}


def normalize_path(path: str) -> str:
    """One spelling for a file path: ``file:///x``, ``file:/x`` and ``/x`` are the same local file."""
    p = unquote(path)
    if p.startswith("file:"):
        p = "/" + p[len("file:") :].lstrip("/")
    return p


def match_paths(planned: list[str], counted: dict[str, int]) -> dict[str, str]:
    """Map each planned (Iceberg) path to Spark's spelling of it. A planned file that Spark did not
    report (an empty file has no rows to report) maps to itself."""
    by_norm: dict[str, str] = {}
    for spark_path in counted:
        by_norm[normalize_path(spark_path)] = spark_path
    out = {}
    for p in planned:
        out[p] = by_norm.get(normalize_path(p), p)
    unknown = set(counted) - set(out.values())
    if unknown:
        raise ReadError(f"Spark read files the plan does not name: {sorted(unknown)[:3]}")
    return out


def live_rows(
    spark: SparkSession,
    files: list[DataFileInfo],
    ids: list[int],
    types: dict[int, str],
    deletes: list[DeleteFileInfo],
    spark_paths: dict[str, str],
) -> DataFrame:
    """Rows of ``files`` after the applicable ``deletes``; ``spark_paths`` maps every data and delete
    file path of the plan to Spark's spelling (from :func:`match_paths`)."""
    eq_ids = sorted({fid for d in deletes for fid in d.equality_ids})
    read_ids = list(dict.fromkeys([*ids, *eq_ids]))
    rows = read_files(spark, files, read_ids, types)
    repeated = len({f.path for f in files}) != len(files)
    if not deletes and not repeated:
        return rows.select(*[col_name(fid) for fid in ids])
    # joining each row to its file's entries also repeats the rows of a file that is live in two
    # manifest entries, as an Iceberg reader (one task per entry) would
    meta = spark.createDataFrame(
        [(spark_paths[f.path], f.index, f.data_seq, f.partition_key) for f in files],
        "_path string, _file int, _dseq long, _part string",
    )
    rows = rows.join(F.broadcast(meta), on="_path", how="inner")
    positional = [d for d in deletes if d.kind == "position"]
    if positional:
        removed = _position_deletes(spark, files, positional, spark_paths)
        rows = rows.join(removed, on=["_file", "_pos"], how="left_anti")
    groups: dict[tuple[int, ...], list[DeleteFileInfo]] = {}
    for d in deletes:
        if d.kind == "equality":
            groups.setdefault(tuple(sorted(d.equality_ids)), []).append(d)
    for eq, group in groups.items():
        rows = _apply_equality(spark, rows, eq, group, types, spark_paths)
    return rows.select(*[col_name(fid) for fid in ids])


def _delete_meta(spark: SparkSession, deletes: list[DeleteFileInfo], spark_paths: dict[str, str]) -> DataFrame:
    return spark.createDataFrame(
        [(spark_paths[d.path], d.seq, d.partition_key) for d in deletes], "_dpath string, _delseq long, _delpart string"
    )


def _position_deletes(
    spark: SparkSession, files: list[DataFileInfo], deletes: list[DeleteFileInfo], spark_paths: dict[str, str]
) -> DataFrame:
    schema = T.StructType(
        [
            T.StructField("file_path", T.StringType(), True, {FIELD_ID_KEY: POSITION_FILE_PATH_ID}),
            T.StructField("pos", T.LongType(), True, {FIELD_ID_KEY: POSITION_POS_ID}),
        ]
    )
    raw = (
        spark.read.schema(schema)
        .parquet(*[d.path for d in deletes])
        .select("file_path", "pos", F.col("_metadata.file_path").alias("_dpath"))
    )
    targets = spark.createDataFrame(
        [(f.path, f.index, f.data_seq) for f in files], "file_path string, _file int, _dseq long"
    )
    return (
        raw.join(F.broadcast(_delete_meta(spark, deletes, spark_paths)), on="_dpath")
        .join(F.broadcast(targets), on="file_path")
        .where(F.col("_dseq") <= F.col("_delseq"))
        .select(F.col("_file"), F.col("pos").alias("_pos"))
        .distinct()
    )


def _apply_equality(
    spark: SparkSession,
    rows: DataFrame,
    eq: tuple[int, ...],
    deletes: list[DeleteFileInfo],
    types: dict[int, str],
    spark_paths: dict[str, str],
) -> DataFrame:
    schema = _schema(eq, types, None)
    dels = (
        spark.read.schema(schema)
        .parquet(*[d.path for d in deletes])
        .select(*[F.col(col_name(fid)).alias(f"d{fid}") for fid in eq], F.col("_metadata.file_path").alias("_dpath"))
        .join(F.broadcast(_delete_meta(spark, deletes, spark_paths)), on="_dpath")
        .drop("_dpath")
    )
    # one delete row per (values, partition) with its newest sequence number is enough
    dels = dels.groupBy(*[f"d{fid}" for fid in eq], "_delpart").agg(F.max("_delseq").alias("_delseq"))
    cond = [rows[col_name(fid)].eqNullSafe(dels[f"d{fid}"]) for fid in eq]
    cond.append(rows["_dseq"] < dels["_delseq"])
    cond.append(dels["_delpart"].isNull() | (dels["_delpart"] == rows["_part"]))
    cond_all = cond[0]
    for c in cond[1:]:
        cond_all = cond_all & c
    return rows.join(dels, on=cond_all, how="left_anti")


def epoch_ms(column: Any, iceberg_type: str) -> Any:
    """A Spark expression: a time column as epoch milliseconds (long), UTC."""
    if iceberg_type == "timestamptz":
        return F.floor(F.unix_micros(column) / 1000).cast("long")
    if iceberg_type == "timestamp":  # no zone: wall time taken as UTC (the gatherer sets the session zone to UTC)
        return F.floor(F.unix_micros(column.cast("timestamp")) / 1000).cast("long")
    if iceberg_type == "date":
        return (F.unix_date(column).cast("long") * 86_400_000).cast("long")
    if iceberg_type in ("long", "int"):
        return column.cast("long")
    raise ReadError(f"a {iceberg_type} column cannot be a time column (use timestamptz, timestamp, date or a long)")
