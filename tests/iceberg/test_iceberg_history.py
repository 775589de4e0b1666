"""The history knowledge (iceberg/history.py) on its own: which moves of a branch's head are
rollbacks or resets, what left the history, and how a previous metadata file is read (gzip, the
size cap, v1 metadata without refs). The CLI cases are in tests/test_history_traces.py."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from streamwarden.iceberg.history import Known, MetadataReadError, head_of, read_metadata_json, ref_moves


def _known(*chain: tuple[int, int | None]) -> Known:
    k = Known()
    for sid, parent in chain:
        k.add(sid, parent, sid * 1000, {"flink.job-id": "job-a"} if sid < 200 else {})
    return k


# 101 <- 102 <- 103 (job-a); 201 <- 202 another lineage from 101
KNOWN = _known((101, None), (102, 101), (103, 102), (201, 101), (202, 201))


def test_forward_moves_are_no_change() -> None:
    heads = [(1, 101, "m1"), (2, 102, "m2"), (3, 103, "m3"), (4, 103, "current")]
    assert ref_moves(heads, KNOWN, "audit") == []


def test_a_move_back_is_a_rollback_naming_what_left() -> None:
    [move] = ref_moves([(1, 103, "m3"), (2, 101, "m4")], KNOWN, "audit")
    assert move["kind"] == "rollback"
    assert move["branch"] == "audit"
    assert (move["from_snapshot_id"], move["snapshot_id"]) == (103, 101)
    assert move["removed_snapshot_ids"] == [103, 102]
    assert move["flink_job_ids"] == ["job-a"]
    assert move["metadata_file"] == "m4"


def test_a_move_onto_another_lineage_is_a_reset() -> None:
    [move] = ref_moves([(1, 103, "m3"), (2, 202, "m4")], KNOWN, "main")
    assert move["kind"] == "reset"
    assert move["removed_snapshot_ids"] == [103, 102]  # down to 101, which both lineages share


def test_a_removed_and_recreated_branch_is_no_rollback() -> None:
    assert ref_moves([(1, 103, "m3"), (2, None, "m4"), (3, 101, "m5")], KNOWN, "audit") == []


def test_head_of_reads_the_branch_ref_or_mains_current_snapshot() -> None:
    doc = {"refs": {"audit": {"snapshot-id": 7, "type": "branch"}}, "current-snapshot-id": 9}
    assert head_of(doc, "audit") == 7
    assert head_of(doc, "other") is None
    assert head_of({"current-snapshot-id": 9}, "main") == 9  # format v1: no refs
    assert head_of({"current-snapshot-id": -1}, "main") is None


def _io() -> object:
    """PyIceberg's own FileIO, as a table's ``io`` is."""
    pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")
    from pyiceberg.io.pyarrow import PyArrowFileIO

    return PyArrowFileIO()


def test_metadata_files_are_read_gzipped_and_capped(tmp_path: Path) -> None:
    doc = {"format-version": 2, "refs": {"main": {"snapshot-id": 5}}}
    plain, packed = tmp_path / "a.metadata.json", tmp_path / "b.gz.metadata.json"
    plain.write_text(json.dumps(doc), encoding="utf-8")
    packed.write_bytes(gzip.compress(json.dumps(doc).encode()))
    assert read_metadata_json(_io(), plain.as_uri()) == doc
    assert read_metadata_json(_io(), packed.as_uri()) == doc
    with pytest.raises(MetadataReadError, match="larger than 10 bytes"):
        read_metadata_json(_io(), plain.as_uri(), cap=10)
    with pytest.raises(MetadataReadError, match="FileNotFoundError"):
        read_metadata_json(_io(), (tmp_path / "gone.metadata.json").as_uri())
    (tmp_path / "bad.metadata.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(MetadataReadError, match="not a JSON object"):
        read_metadata_json(_io(), (tmp_path / "bad.metadata.json").as_uri())


def test_a_gzip_bomb_is_refused_at_the_cap_not_inflated_whole(tmp_path: Path) -> None:
    """A 0.2 MiB file that inflates to 256 MiB, read with a 1 MiB cap: refused once the cap is
    passed. The reader inflated it whole first (256 MiB in memory), then compared the size."""
    import tracemalloc

    bomb = tmp_path / "00009-bomb.gz.metadata.json"
    bomb.write_bytes(gzip.compress(b" " * (256 * 1024 * 1024), compresslevel=9))
    tracemalloc.start()
    try:
        with pytest.raises(MetadataReadError, match="once decompressed"):
            read_metadata_json(_io(), bomb.as_uri(), cap=1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB while refusing the bomb"
