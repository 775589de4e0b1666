"""The _metadata reader: every layout version 3-7, the handle kinds, what "holds state" means, and
that corrupt, truncated, hostile or unknown-version bytes give a MetadataError, never anything else."""

from __future__ import annotations

import contextlib
import random
import tracemalloc

import pytest
from tests.savepoint_files import (
    Operator,
    Subtask,
    byte_stream,
    committer_operator,
    file_handle,
    i32,
    i64,
    incremental_v2,
    key_groups_v2,
    keyed_operator,
    metadata_bytes,
    operator_stream,
    orders_job,
    relative_file,
    source_operator,
    stateless_operator,
    utf,
)

from streamwarden.flink.savepoint_metadata import MAGIC, MetadataError, decode_modified_utf8, parse_metadata
from streamwarden.flink.uids import operator_id


@pytest.mark.parametrize("version", [3, 4, 5, 6, 7])
def test_every_supported_version_reads_ids_parallelism_and_state(version: int) -> None:
    md = parse_metadata(metadata_bytes(orders_job(), checkpoint_id=12, version=version, masters=2))
    assert md.version == version
    assert md.checkpoint_id == 12
    assert [m["name"] for m in md.master_states] == ["master-0", "master-1"]
    ops = {op.operator_id: op for op in md.operators}
    dedup = ops[operator_id("orders-dedup")]
    assert (dedup.parallelism, dedup.max_parallelism, dedup.has_state, dedup.keyed) == (1, 128, True, True)
    assert dedup.key_group_ranges == [[0, 127]]
    assert dedup.handle_kinds == {"savepoint_key_groups": 1}
    assert dedup.state_size == 100
    committer = ops[operator_id("orders-iceberg-sink")]
    assert (committer.max_parallelism, committer.keyed, committer.handle_kinds) == (1, False, {"operator_stream": 1})
    # uid and name are recorded from v5 on
    assert dedup.uid == ("orders-dedup" if version >= 5 else None)
    assert md.properties.get("type") == ("savepoint" if version >= 4 else None)


def test_checkpoint_properties_tell_a_retained_checkpoint_from_a_savepoint() -> None:
    md = parse_metadata(metadata_bytes(orders_job(), savepoint=False))
    assert md.properties["type"] == "checkpoint"
    assert md.properties["format"] is None
    sp = parse_metadata(metadata_bytes(orders_job()))
    assert (sp.properties["type"], sp.properties["format"]) == ("savepoint", "canonical")


def test_holds_state_as_flink_defines_it() -> None:
    ops = [
        Operator(uid="coordinator-only", coordinator=b"x" * 16, subtasks=[Subtask(0)]),
        Operator(uid="empty-subtasks", subtasks=[Subtask(0), Subtask(1)]),
        Operator(uid="finished-subtask", subtasks=[Subtask(0, finished=True)]),
        Operator(uid="fully-finished", fully_finished=True),
        Operator(uid="null-operator-handle", subtasks=[Subtask(0, managed_operator=b"\x00")]),
        Operator(uid="raw-keyed", subtasks=[Subtask(0, raw_keyed=key_groups_v2(0, 127, 10))]),
    ]
    got = {op.uid: op.has_state for op in parse_metadata(metadata_bytes(ops)).operators}
    assert got == {
        "coordinator-only": True,
        "empty-subtasks": False,
        "finished-subtask": False,
        "fully-finished": False,
        "null-operator-handle": False,
        "raw-keyed": True,
    }


def test_handle_kinds_and_sizes_add_up_without_reading_state_files() -> None:
    op = Operator(
        uid="mixed",
        parallelism=2,
        subtasks=[
            Subtask(
                0,
                managed_keyed=incremental_v2(0, 63, files=3, size=1000),
                managed_operator=operator_stream({"s": 2}, 64),
            ),
            Subtask(1, managed_keyed=key_groups_v2(64, 127, 50), raw_operator=b"\x04" + i32(0) + relative_file("f", 7)),
        ],
    )
    info = parse_metadata(metadata_bytes([op])).operators[0]
    assert info.handle_kinds == {"incremental_v2": 1, "key_groups_v2": 1, "operator_stream": 2}
    assert info.state_size == (4 + 3 * 1000) + 64 + 50 + 7  # meta + shared files, inline bytes, relative file
    assert info.file_handles == 4
    assert info.key_group_ranges == [[0, 63], [64, 127]]
    assert info.subtasks_with_state == 2


def test_changelog_and_file_merging_handles() -> None:
    changelog = (
        b"\x0e"
        + i32(0)
        + i32(128)
        + i64(10)
        + i32(1)
        + key_groups_v2(0, 127, 5)
        + i32(1)
        + b"\x0d"
        + i32(0)
        + i32(128)
        + i32(1)
        + i64(0)
        + file_handle("s3://c/1", 30)
        + i64(30)
        + i64(30)
        + utf("cid")
        + utf("filesystem")
        + i64(3)
        + i64(9)
        + utf("chid")
    )
    in_memory = b"\x09" + i32(0) + i32(128) + i64(0) + i64(1) + i32(1) + i32(3) + i32(4) + b"abcd" + utf("mid")
    segment = b"\x0f" + i64(0) + i64(40) + i32(1) + utf("s3://m/seg") + utf("lf-1")
    merged_operator = b"\x11" + i32(0) + utf("/own") + utf("/shared") + b"\x00" + segment
    empty_segment = b"\x04" + i32(0) + b"\x10"
    ops = [
        Operator(uid="changelog", subtasks=[Subtask(0, managed_keyed=changelog, raw_keyed=in_memory)]),
        Operator(uid="merging", subtasks=[Subtask(0, managed_operator=merged_operator, raw_operator=empty_segment)]),
    ]
    md = parse_metadata(metadata_bytes(ops))
    assert md.operators[0].handle_kinds == {"changelog_v2": 1, "changelog_bytes": 1}
    assert md.operators[0].state_size == 5 + 30 + 4
    assert md.operators[1].handle_kinds == {"file_merging_operator_stream": 1, "operator_stream": 1}
    assert md.operators[1].state_size == 40


def _with_channels(version: int) -> bytes:
    """One subtask with an input channel handle and, from v6, a merged output channel handle."""
    plain = i32(0) + i32(0) + i32(1) + i32(2) + i64(0) + i64(0) + i64(12) + byte_stream(b"c" * 12)
    inputs = i32(1) + (b"\x01" + plain if version >= 6 else plain)
    outputs = (
        i32(1) + b"\x04" + i32(0) + i64(8) + byte_stream(b"o" * 8) + i32(2) + b"\x00\x01" if version >= 6 else i32(0)
    )
    sub = i32(0) + i32(0) + i32(0) + b"\x00" + b"\x00" + inputs + outputs
    head = utf("unaligned") + utf("unaligned") if version >= 5 else b""
    op = head + bytes.fromhex(operator_id("unaligned")) + i32(1) + i32(128) + b"\x00" + i32(1) + sub
    return i32(MAGIC) + i32(version) + i64(3) + i32(0) + i32(1) + op + (b"\xac\xed\x00\x05" if version >= 4 else b"")


@pytest.mark.parametrize("version", [3, 5, 6])
def test_unaligned_channel_state_counts_as_state(version: int) -> None:
    info = parse_metadata(_with_channels(version)).operators[0]
    assert info.has_state
    expected = {"input_channel": 1, "merged_output_channel": 1} if version >= 6 else {"input_channel": 1}
    assert info.handle_kinds == expected


def test_modified_utf8_names_and_uids() -> None:
    assert decode_modified_utf8(b"a\xc0\x80b") == "a\x00b"
    assert decode_modified_utf8("🚀".encode("utf-16-be").decode("utf-16-be").encode("utf-8")) == "🚀"
    cesu = "🚀".encode("utf-16", "surrogatepass")[2:].decode("utf-16-le").encode("utf-8", "surrogatepass")
    assert decode_modified_utf8(cesu) == "🚀"
    op = Operator(uid="dédup-🚀", subtasks=[Subtask(0, managed_keyed=key_groups_v2(0, 127))])
    assert parse_metadata(metadata_bytes([op])).operators[0].uid == "dédup-🚀"


# -- bad input: every problem is a MetadataError with a message, never another exception ----------


def test_wrong_magic_is_not_a_metadata_file() -> None:
    with pytest.raises(MetadataError, match="not a Flink _metadata file: magic number 0x504b0304"):
        parse_metadata(b"PK\x03\x04" + b"\x00" * 40)


@pytest.mark.parametrize("version", [0, 1, 2, 8, -1, 0x7FFFFFFF])
def test_unknown_version_names_the_versions_it_knows(version: int) -> None:
    data = i32(MAGIC) + i32(version) + i64(1) + i32(0) + i32(0)
    with pytest.raises(
        MetadataError, match=rf"unsupported _metadata format version {version} \(this reader knows 3, 4, 5, 6, 7\)"
    ):
        parse_metadata(data)


def test_every_truncation_is_a_clear_error() -> None:
    full = metadata_bytes(orders_job(), version=6, masters=1)
    trailer = full.index(b"\xac\xed\x00\x05")
    for cut in range(trailer):
        with pytest.raises(MetadataError):
            parse_metadata(full[:cut])


def test_v3_file_with_trailing_bytes_is_read_and_reports_them() -> None:
    md = parse_metadata(metadata_bytes(orders_job(), version=3) + b"junk")
    assert md.trailing_bytes == 4


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (i32(2_000_000_000), "corrupt: operator states: count 2000000000 is impossible"),
        (i32(-5), "corrupt: operator states: count -5 is impossible"),
        (i32(900_000), r"corrupt: operator states: count 900000 is impossible \(0..20000\)"),  # MAX_OPERATORS
        (i32(19_000), "truncated or corrupt: 19000 operator states need at least 551000 bytes, 0 left"),
    ],
)
def test_huge_or_negative_counts_fail_without_allocating(body: bytes, message: str) -> None:
    # memory, not time: a count is checked against the bytes left before anything is allocated
    # (how long it takes is measured by tests/benchmarks/bench_savepoint.py, never asserted)
    data = i32(MAGIC) + i32(6) + i64(1) + i32(0) + body
    tracemalloc.start()
    try:
        with pytest.raises(MetadataError, match=message):
            parse_metadata(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024, peak  # a list of 2,000,000,000 entries would take 16 GB


def test_hostile_lengths_inside_handles_are_bounded() -> None:
    huge_inline = b"\x01" + utf("x") + i32(2**31 - 1)
    op = Operator(uid="x", subtasks=[Subtask(0, managed_operator=b"\x04" + i32(0) + huge_inline)])
    with pytest.raises(MetadataError, match="truncated: a byte stream handle's bytes needs 2147483647 bytes"):
        parse_metadata(metadata_bytes([op]))
    many_key_groups = b"\x07" + i32(0) + i32(30000)
    op = Operator(uid="x", subtasks=[Subtask(0, managed_keyed=many_key_groups)])
    with pytest.raises(MetadataError, match="key group range start 0 count 30000 is impossible"):
        parse_metadata(metadata_bytes([op]))


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (Operator(uid="x", subtasks=[Subtask(0, managed_keyed=b"\x63")]), "unknown keyed state handle tag 99"),
        (Operator(uid="x", subtasks=[Subtask(0, managed_operator=b"\x05")]), "unknown operator state handle tag 5"),
        (
            Operator(uid="x", coordinator=None, subtasks=[Subtask(0, managed_operator=b"\x04" + i32(0) + b"\x2a")]),
            "unknown stream state handle tag 42",
        ),
        (Operator(uid="x", max_parallelism=0), "out of range 1..32768"),
        (Operator(uid="x", parallelism=40000, max_parallelism=40000), "out of range 1..32768"),
    ],
)
def test_impossible_values_are_named(op: Operator, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        parse_metadata(metadata_bytes([op]))


def test_coordinator_state_must_be_inline() -> None:
    op = Operator(uid="x", subtasks=[])
    data = bytearray(metadata_bytes([op]))
    at = data.index(bytes.fromhex(op.operator_id)) + 16 + 8
    data[at : at + 1] = relative_file("coordinator", 5)
    with pytest.raises(MetadataError, match="coordinator state is a relative_file handle, expected inline bytes"):
        parse_metadata(bytes(data))


def test_nesting_is_bounded() -> None:
    nested = b"\x00"
    for _ in range(20):
        nested = b"\x03" + i32(0) + i32(1) + i64(0) + nested
    op = Operator(uid="x", subtasks=[Subtask(0, managed_keyed=b"\x07" + i32(0) + i32(1) + i64(0) + nested)])
    with pytest.raises(MetadataError, match="nested deeper than 8"):
        parse_metadata(metadata_bytes([op]))


def test_duplicate_operator_ids_are_corrupt() -> None:
    with pytest.raises(MetadataError, match="appears twice"):
        parse_metadata(metadata_bytes([stateless_operator("a"), stateless_operator("a")]))


def test_master_state_with_a_wrong_magic_number() -> None:
    data = i32(MAGIC) + i32(6) + i64(1) + i32(1) + i32(0x1234) + i32(4) + b"abcd" + i32(0)
    with pytest.raises(MetadataError, match="master state has magic number 0x00001234"):
        parse_metadata(data)


def test_negative_checkpoint_id() -> None:
    with pytest.raises(MetadataError, match="invalid checkpoint id -3"):
        parse_metadata(i32(MAGIC) + i32(6) + i64(-3) + i32(0) + i32(0))


def test_random_corruption_never_escapes_as_another_exception() -> None:
    rng = random.Random(20261125)
    base = metadata_bytes(
        [source_operator("s"), keyed_operator("k", parallelism=4), committer_operator("c")], version=6
    )
    for _ in range(3000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        with contextlib.suppress(MetadataError):
            parse_metadata(bytes(data))
