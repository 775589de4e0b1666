"""Crafted ``_metadata`` files for tests: a small writer of Flink's checkpoint metadata layout
(versions 3 to 7), so corrupt, truncated and unknown-version cases are generated, not committed.

The layout mirrors ``MetadataV2V3SerializerBase`` / ``MetadataV3..V7Serializer`` (big-endian
``DataOutputStream``). Real files from a Flink cluster are read in test_savepoint_flink.py.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from streamwarden.flink.uids import operator_id

MAGIC = 0x4960672D
# The head of a Java-serialized CheckpointProperties with a SavepointType (CANONICAL): enough for
# the reader's bounded scan; real files carry ~600 bytes.
SAVEPOINT_PROPERTIES = (
    b"\xac\xed\x00\x05sr\x00/org.apache.flink.runtime.checkpoint.CheckpointProperties"
    b"\x00\x01sr\x00,org.apache.flink.runtime.checkpoint.SavepointType\x00\x09Savepoint"
    b"~r\x00;org.apache.flink.core.execution.SavepointFormatType\x00\x09CANONICAL"
)
CHECKPOINT_PROPERTIES = (
    b"\xac\xed\x00\x05sr\x00/org.apache.flink.runtime.checkpoint.CheckpointProperties"
    b"\x00\x01sr\x00-org.apache.flink.runtime.checkpoint.CheckpointType"
)


def utf(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack(">H", len(raw)) + raw


def i32(n: int) -> bytes:
    return struct.pack(">i", n)


def i64(n: int) -> bytes:
    return struct.pack(">q", n)


def byte_stream(data: bytes, name: str = "inline") -> bytes:
    return b"\x01" + utf(name) + i32(len(data)) + data


def relative_file(path: str, size: int) -> bytes:
    return b"\x06" + utf(path) + i64(size)


def file_handle(path: str, size: int) -> bytes:
    return b"\x02" + i64(size) + utf(path)


def savepoint_key_groups(first: int, last: int, size: int = 100) -> bytes:
    n = last - first + 1
    return b"\x07" + i32(first) + i32(n) + b"".join(i64(i * 8) for i in range(n)) + relative_file("state-1", size)


def key_groups_v2(first: int, last: int, size: int = 100) -> bytes:
    n = last - first + 1
    return b"\x0c" + i32(first) + i32(n) + b"".join(i64(0) for _ in range(n)) + byte_stream(b"k" * size) + utf("id-1")


def incremental_v2(first: int, last: int, files: int = 2, size: int = 1000) -> bytes:
    lst = i32(files) + b"".join(utf(f"{i:06d}.sst") + file_handle(f"file:/ckpt/shared/{i}", size) for i in range(files))
    return (
        b"\x0b"
        + i64(7)
        + utf("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
        + i32(first)
        + i32(last - first + 1)
        + i64(size)
        + byte_stream(b"meta")
        + lst
        + i32(0)
        + utf("handle-1")
    )


def operator_stream(states: dict[str, int], size: int = 64) -> bytes:
    body = i32(len(states))
    for name, n in states.items():
        body += utf(name) + b"\x00" + i32(n) + b"".join(i64(i) for i in range(n))
    return b"\x04" + body + byte_stream(b"o" * size)


@dataclass
class Subtask:
    index: int = 0
    managed_operator: bytes | None = None
    raw_operator: bytes | None = None
    managed_keyed: bytes = b"\x00"
    raw_keyed: bytes = b"\x00"
    finished: bool = False

    def encode(self, version: int) -> bytes:
        if self.finished:
            return i32(-self.index - 1)
        out = i32(self.index)
        for handle in (self.managed_operator, self.raw_operator):
            out += i32(0) if handle is None else i32(1) + handle
        out += self.managed_keyed + self.raw_keyed + i32(0) + i32(0)  # no channel state
        if version >= 7:
            out += b"\x00"
        return out


@dataclass
class Operator:
    uid: str | None = None
    name: str | None = None
    parallelism: int = 1
    max_parallelism: int = 128
    coordinator: bytes | None = None
    subtasks: list[Subtask] = field(default_factory=list)
    fully_finished: bool = False
    record_uid: bool = True  # v5+: write the uid into the metadata
    hex_id: str | None = None

    @property
    def operator_id(self) -> str:
        return self.hex_id or operator_id(self.uid or self.name or "anonymous")

    def encode(self, version: int) -> bytes:
        out = b""
        if version >= 5:
            out += utf(self.name or "") + utf((self.uid if self.record_uid else None) or "")
        out += bytes.fromhex(self.operator_id) + i32(self.parallelism) + i32(self.max_parallelism)
        out += b"\x00" if self.coordinator is None else byte_stream(self.coordinator, "coordinator")
        if self.fully_finished:
            return out + i32(-1)
        return out + i32(len(self.subtasks)) + b"".join(s.encode(version) for s in self.subtasks)


def keyed_operator(uid: str, max_parallelism: int = 128, parallelism: int = 1, size: int = 100) -> Operator:
    per = max_parallelism // parallelism
    subtasks = [
        Subtask(i, managed_keyed=savepoint_key_groups(i * per, (i + 1) * per - 1, size)) for i in range(parallelism)
    ]
    return Operator(uid=uid, name=uid, parallelism=parallelism, max_parallelism=max_parallelism, subtasks=subtasks)


def source_operator(uid: str, max_parallelism: int = 128) -> Operator:
    return Operator(
        uid=uid,
        name=f"Source: {uid}",
        max_parallelism=max_parallelism,
        coordinator=b"\x00" * 16,
        subtasks=[Subtask(0, managed_operator=operator_stream({"SourceReaderState": 1}))],
    )


def stateless_operator(uid: str | None, name: str = "Map", max_parallelism: int = 128) -> Operator:
    return Operator(uid=uid, name=name, max_parallelism=max_parallelism, subtasks=[Subtask(0)])


def committer_operator(uid: str) -> Operator:
    """The Iceberg FlinkSink committer: parallelism 1, max parallelism pinned to 1, operator state."""
    return Operator(
        uid=uid,
        name="IcebergFilesCommitter",
        parallelism=1,
        max_parallelism=1,
        subtasks=[
            Subtask(
                0, managed_operator=operator_stream({"iceberg-flink-job-id": 1, "iceberg-files-committer-state": 1})
            )
        ],
    )


def metadata_bytes(
    operators: list[Operator], checkpoint_id: int = 12, version: int = 6, savepoint: bool = True, masters: int = 0
) -> bytes:
    out = i32(MAGIC) + i32(version) + i64(checkpoint_id) + i32(masters)
    for m in range(masters):
        body = i32(1) + utf(f"master-{m}") + i32(3) + b"abc"
        out += i32(0xC96B1696 - 2**32) + i32(len(body)) + body
    out += i32(len(operators)) + b"".join(op.encode(version) for op in operators)
    if version >= 4:
        out += SAVEPOINT_PROPERTIES if savepoint else CHECKPOINT_PROPERTIES
    return out


def write_savepoint(directory: Path, operators: list[Operator], **kw: object) -> Path:
    """A savepoint directory holding ``_metadata`` (and nothing else: state files are never read)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "_metadata").write_bytes(metadata_bytes(operators, **kw))  # type: ignore[arg-type]
    return directory


def orders_job(
    dedup_uid: str = "orders-dedup", max_parallelism: int = 128, sink_uid: str = "orders-iceberg-sink"
) -> list[Operator]:
    """The example pipeline's operators: source, keyed dedup, a stateless map, the Iceberg committer."""
    return [
        source_operator("orders-source", max_parallelism),
        stateless_operator(None, "Map", max_parallelism),
        keyed_operator(dedup_uid, max_parallelism),
        committer_operator(sink_uid),
    ]
