"""What a delete or overwrite removed, and whether a clean-up of duplicates removed every copy of a
row (data loss). Facts only; SW-REC-007 decides.

Cost, bounded: the clean-up snapshot's own manifests (those it wrote, for the entries it marked
deleted), the key columns of at most ``MAX_FILES`` removed data files (at most ``MAX_KEYS``
distinct keys), and two scans filtered to those keys (``In`` on one key column): at the clean-up's
parent and at the branch's head. No full scan. pyiceberg and pyarrow are imported inside.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

MAX_FILES = 20  # removed data files whose keys are read, per clean-up
MAX_KEYS = 10_000  # distinct keys compared, per clean-up
MAX_LOST = 20  # lost keys named, per clean-up
FILTERABLE = ("int", "long", "string")  # key column types an In filter is built on


def removed_entries(table: Any, snapshot_id: int) -> dict[str, Any]:
    """The data files snapshot ``snapshot_id`` removed (its manifests' DELETED entries), each with
    the snapshot that had added it (by data sequence number, format v2; None when unknown), and
    the delete files it added."""
    from pyiceberg.manifest import ManifestContent, ManifestEntryStatus

    io = table.io
    snap = table.snapshot_by_id(snapshot_id)
    by_seq = {s.sequence_number: s.snapshot_id for s in table.metadata.snapshots if s.sequence_number}
    files: list[dict[str, Any]] = []
    delete_files = 0
    for m in snap.manifests(io):
        if m.added_snapshot_id != snapshot_id:
            continue
        for e in m.fetch_manifest_entry(io, discard_deleted=False):
            if m.content == ManifestContent.DELETES:
                delete_files += e.status == ManifestEntryStatus.ADDED
            elif e.status == ManifestEntryStatus.DELETED:
                seq = e.sequence_number
                files.append(
                    {
                        "path": e.data_file.file_path,
                        "records": e.data_file.record_count,
                        "added_snapshot_id": by_seq.get(seq) if seq else None,
                    }
                )
    return {"files": files, "delete_files_added": delete_files}


def key_columns(schema: Any, contract: Mapping[str, Any]) -> list[str]:
    """A row's identity: the table's identifier fields, else the contract's ``quality.unique``,
    else every top-level primitive column."""
    names = {f.field_id: f.name for f in schema.fields}
    ids = [names[i] for i in schema.identifier_field_ids or [] if i in names]
    if ids:
        return ids
    unique = (contract.get("quality") or {}).get("unique") if isinstance(contract.get("quality"), Mapping) else None
    top = {f.name for f in schema.fields}
    if isinstance(unique, list) and unique and all(isinstance(u, str) and u in top for u in unique):
        return list(unique)
    return [f.name for f in schema.fields if f.field_type.is_primitive]


def _filter_column(schema: Any, keys: Sequence[str]) -> str | None:
    for k in keys:
        if str(schema.find_field(k).field_type) in FILTERABLE:
            return k
    return None


def _key_rows(arrow: Any, keys: Sequence[str]) -> list[tuple[Any, ...]]:
    cols = [arrow.column(k).to_pylist() for k in keys]
    return list(zip(*cols, strict=True))


def data_loss(table: Any, cleanup: Mapping[str, Any], head_id: int, contract: Mapping[str, Any]) -> dict[str, Any]:
    """Keys of the rows clean-up snapshot ``cleanup`` removed that had two copies or more before
    it (its parent) and have none at the branch's head: every copy of a duplicated row is gone."""
    import pyarrow.parquet as pq
    from pyiceberg import expressions

    schema = table.schema()
    keys = key_columns(schema, contract)
    column = _filter_column(schema, keys)
    removed = removed_entries(table, cleanup["snapshot_id"])
    paths = list(dict.fromkeys(f["path"] for f in removed["files"]))
    out: dict[str, Any] = {
        "snapshot_id": cleanup["snapshot_id"],
        "parent_id": cleanup.get("parent_id"),
        "after_snapshot_id": head_id,
        "timestamp_ms": cleanup.get("timestamp_ms"),
        "operation": cleanup.get("operation"),
        "key_columns": keys,
        "removed_files": len(paths),
        "files_read": 0,
        "keys_checked": 0,
        "duplicated_keys": 0,
        "lost_keys": 0,
        "lost": [],
        "truncated": len(paths) > MAX_FILES,
        "checked": False,
        "reason": None,
    }
    if cleanup.get("parent_id") is None:
        return {**out, "reason": "the clean-up has no parent snapshot to compare with"}
    if column is None:
        return {**out, "reason": "no key column of type int, long or string to filter on"}
    if not paths:
        return {**out, "checked": True, "reason": "no data file was removed (delete files only)"}
    candidates: set[tuple[Any, ...]] = set()
    for path in paths[:MAX_FILES]:
        with table.io.new_input(path).open() as stream:
            candidates.update(_key_rows(pq.read_table(stream, columns=keys), keys))
        out["files_read"] += 1
        if len(candidates) >= MAX_KEYS:
            out["truncated"] = True
            break
    chosen = sorted(candidates, key=repr)[:MAX_KEYS]
    idx = keys.index(column)
    values = sorted({k[idx] for k in chosen if k[idx] is not None}, key=repr)

    def copies(snapshot_id: int) -> Counter[tuple[Any, ...]]:
        scan = table.scan(
            row_filter=_in(expressions, column, values), selected_fields=tuple(keys), snapshot_id=snapshot_id
        )
        return Counter(_key_rows(scan.to_arrow(), keys))

    before = copies(cleanup["parent_id"])
    after = copies(head_id)
    wanted = set(chosen)
    duplicated = [k for k, n in before.items() if n >= 2 and k in wanted]
    lost = sorted((k for k in duplicated if after.get(k, 0) == 0), key=repr)
    out.update(
        checked=True,
        keys_checked=len(chosen),
        duplicated_keys=len(duplicated),
        lost_keys=len(lost),
        lost=[
            {"key": {c: _json(v) for c, v in zip(keys, k, strict=True)}, "copies_before": before[k]}
            for k in lost[:MAX_LOST]
        ],
    )
    return out


def _in(expressions: Any, column: str, values: list[Any]) -> Any:
    """``column IN values`` (pyiceberg's ``In``, whose pydantic signature the type checker misreads)."""
    return expressions.In(column, values)


def _json(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
