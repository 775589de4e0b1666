"""A bounded, defensive reader for Flink's checkpoint/savepoint ``_metadata`` (versions 3 to 7).

It reads what the metadata says about each operator (id, name and uid where recorded, parallelism,
max parallelism, which state handles it holds and their sizes) without opening a state file. The
layout follows ``Checkpoints``, ``MetadataV2V3SerializerBase`` and ``MetadataV3..V7Serializer``
(reference/flink-iceberg.md §3; tags 15-17, file merging, checked with javap against flink-dist
2.3.0, which registers V1-V6 and writes V6; V7 follows the newest source). Everything is big-endian
``DataOutputStream``; a ``UTF`` is a u16 length and modified UTF-8.

The handles are read by savepoint_handles.py. Every count and length is checked against the bytes
that remain and against a sane cap before anything is read or allocated, nesting is bounded, and
any inconsistency raises ``MetadataError`` with the offset: a corrupt or hostile file gives a
clear message, never a huge allocation.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAGIC = 0x4960672D
MASTER_STATE_MAGIC = 0xC96B1696
SUPPORTED_VERSIONS = (3, 4, 5, 6, 7)
MAX_METADATA_BYTES = 256 * 1024 * 1024
MAX_PARALLELISM = 32768  # KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM
# Memory is bounded by counts of bounded objects: an operator keeps aggregates (sizes, handle kinds,
# at most KEY_GROUP_RANGES ranges), never its subtasks; a job graph has hundreds of operators, a
# very large one a few thousand.
MAX_OPERATORS = 20_000
KEY_GROUP_RANGES = 64
MAX_DEPTH = 8  # nested handles (key groups -> stream, changelog -> keyed)
JAVA_SERIALIZATION_MAGIC = b"\xac\xed\x00\x05"
_TRAILER_SCAN = 64 * 1024


class MetadataError(Exception):
    """The bytes are not a ``_metadata`` this reader understands; ``offset`` is where it gave up."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message if offset is None else f"{message} (at byte {offset})")
        self.offset = offset


@dataclass
class OperatorInfo:
    operator_id: str
    name: str | None
    uid: str | None
    parallelism: int
    max_parallelism: int
    fully_finished: bool = False
    coordinator_state_bytes: int | None = None
    subtasks: int = 0  # subtask states recorded
    finished_subtasks: int = 0
    subtasks_with_state: int = 0
    state_size: int = 0  # bytes, coordinator state included, as Flink's OperatorState.getStateSize adds them up
    inline_bytes: int = 0  # bytes stored inside _metadata itself
    file_handles: int = 0
    handle_kinds: Counter[str] = field(default_factory=Counter)
    key_group_ranges: list[list[int]] = field(default_factory=list)  # managed keyed state, [first, last]

    @property
    def has_state(self) -> bool:
        """As Flink decides on restore: coordinator state, or any subtask with a non-null handle."""
        return self.coordinator_state_bytes is not None or self.subtasks_with_state > 0

    @property
    def keyed(self) -> bool:
        return bool(self.key_group_ranges)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator_id": self.operator_id,
            "name": self.name,
            "uid": self.uid,
            "parallelism": self.parallelism,
            "max_parallelism": self.max_parallelism,
            "has_state": self.has_state,
            "keyed": self.keyed,
            "fully_finished": self.fully_finished,
            "coordinator_state_bytes": self.coordinator_state_bytes,
            "subtasks": self.subtasks,
            "subtasks_with_state": self.subtasks_with_state,
            "finished_subtasks": self.finished_subtasks,
            "state_size": self.state_size,
            "inline_bytes": self.inline_bytes,
            "file_handles": self.file_handles,
            "handle_kinds": dict(sorted(self.handle_kinds.items())),
            "key_group_ranges": self.key_group_ranges[:64],
        }


@dataclass
class CheckpointMetadata:
    version: int
    checkpoint_id: int
    size: int
    master_states: list[dict[str, Any]]
    operators: list[OperatorInfo]
    properties: dict[str, Any]
    trailing_bytes: int


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    @property
    def left(self) -> int:
        return len(self.data) - self.pos

    def need(self, n: int, what: str) -> None:
        if n > self.left:
            raise MetadataError(f"truncated: {what} needs {n} bytes, {self.left} left", self.pos)

    def _unpack(self, fmt: str, n: int, what: str) -> Any:
        self.need(n, what)
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += n
        return value

    def u8(self, what: str) -> int:
        return int(self._unpack(">B", 1, what))

    def i32(self, what: str) -> int:
        return int(self._unpack(">i", 4, what))

    def i64(self, what: str) -> int:
        return int(self._unpack(">q", 8, what))

    def skip(self, n: int, what: str) -> None:
        if n < 0:
            raise MetadataError(f"{what}: negative length {n}", self.pos)
        self.need(n, what)
        self.pos += n

    def utf(self, what: str) -> str:
        n = int(self._unpack(">H", 2, what))
        self.need(n, what)
        raw = self.data[self.pos : self.pos + n]
        self.pos += n
        return decode_modified_utf8(raw)

    def count(self, what: str, min_each: int, cap: int) -> int:
        at = self.pos
        n = self.i32(what)
        if n < 0 or n > cap:
            raise MetadataError(f"corrupt: {what}: count {n} is impossible (0..{cap})", at)
        if n * min_each > self.left:
            raise MetadataError(
                f"truncated or corrupt: {n} {what} need at least {n * min_each} bytes, {self.left} left", at
            )
        return n


def decode_modified_utf8(raw: bytes) -> str:
    """Java's modified UTF-8: NUL as C0 80, supplementary characters as surrogate pairs."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeError:
        return raw.decode("utf-8", "replace")


def parse_metadata(data: bytes) -> CheckpointMetadata:
    """Parse a whole ``_metadata`` file. Raises MetadataError for anything it cannot read."""
    if len(data) > MAX_METADATA_BYTES:
        raise MetadataError(f"{len(data)} bytes is more than the {MAX_METADATA_BYTES // 2**20} MiB a _metadata may be")
    r = Reader(data)
    magic = r.i32("the magic number") & 0xFFFFFFFF
    if magic != MAGIC:
        raise MetadataError(f"not a Flink _metadata file: magic number {magic:#010x}, expected {MAGIC:#010x}", 0)
    version = r.i32("the format version")
    if version not in SUPPORTED_VERSIONS:
        known = ", ".join(map(str, SUPPORTED_VERSIONS))
        raise MetadataError(f"unsupported _metadata format version {version} (this reader knows {known})", 4)
    checkpoint_id = r.i64("the checkpoint id")
    if checkpoint_id < 0:
        raise MetadataError(f"invalid checkpoint id {checkpoint_id}", 8)
    masters = [_master_state(r) for _ in range(r.count("master states", 8, 10_000))]
    from streamwarden.flink.savepoint_handles import OperatorParser

    parser = OperatorParser(r, version)
    operators = [parser.operator() for _ in range(r.count("operator states", 29, MAX_OPERATORS))]
    seen: set[str] = set()
    for op in operators:
        if op.operator_id in seen:
            raise MetadataError(f"operator {op.operator_id} appears twice")
        seen.add(op.operator_id)
    properties: dict[str, Any] = {}
    trailing = r.left
    if version >= 4:
        properties = checkpoint_properties(data[r.pos :])
        trailing = 0
    return CheckpointMetadata(version, checkpoint_id, len(data), masters, operators, properties, trailing)


def _master_state(r: Reader) -> dict[str, Any]:
    at = r.pos
    magic = r.i32("a master state") & 0xFFFFFFFF
    if magic != MASTER_STATE_MAGIC:
        raise MetadataError(f"master state has magic number {magic:#010x}, expected {MASTER_STATE_MAGIC:#010x}", at)
    n = r.i32("a master state's length")
    if n <= 0:
        raise MetadataError(f"master state length {n}", at + 4)
    r.need(n, "a master state")
    end = r.pos + n
    version = r.i32("a master state's version")
    name = r.utf("a master state's name")
    payload = r.i32("a master state's payload length")
    if payload < 0 or r.pos + payload != end:
        raise MetadataError(f"master state {name!r}: payload length {payload} does not fill its {n} bytes", at)
    r.pos = end
    return {"name": name, "version": version, "bytes": payload}


def checkpoint_properties(trailer: bytes) -> dict[str, Any]:
    """What the Java-serialized CheckpointProperties (v4+) say, by a bounded scan for class and enum
    names (no Java deserialization): savepoint or checkpoint, and the savepoint format."""
    head = trailer[:_TRAILER_SCAN]
    out: dict[str, Any] = {"bytes": len(trailer), "java_serialized": head.startswith(JAVA_SERIALIZATION_MAGIC)}
    if b"SavepointType" in head:
        out["type"] = "savepoint"
    elif b"CheckpointType" in head:
        out["type"] = "checkpoint"
    else:
        out["type"] = None
    out["format"] = "canonical" if b"CANONICAL" in head else "native" if b"NATIVE" in head else None
    if out["type"] == "savepoint":
        for marker, name in ((b"Terminate Savepoint", "terminate"), (b"Suspend Savepoint", "suspend")):
            if marker in head:
                out["savepoint_kind"] = name
                break
        else:
            out["savepoint_kind"] = "savepoint"
    return out
