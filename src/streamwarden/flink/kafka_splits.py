"""A Kafka source's state in a ``_metadata``: where a restore starts reading each partition.

Flink's ``SourceOperator`` keeps each subtask's splits in its operator list state
"SourceReaderState": each element a byte array that ``SimpleVersionedSerialization`` wrote (an int
serializer version, an int length, the split). Its ``SourceCoordinator`` keeps the split
enumerator's checkpoint as the operator's coordinator state: an int coordinator serde version (0
or 1; 0 is followed by the split assignment tracker's bytes), an int enumerator serializer
version, an int length, the enumerator's state.

flink-connector-kafka writes a split with ``KafkaPartitionSplitSerializer`` (version 0): a UTF
topic, an int partition, a long starting offset (the next record to read; -2 earliest, -1 latest,
-3 the group's committed offset, before the reader resolved it) and a long stopping offset
(``Long.MIN_VALUE`` for an unbounded split). ``KafkaSourceEnumStateSerializer`` writes the
enumerator's partitions: version 0 the splits assigned to each subtask (``SerdeUtils``), version 1
topic and partition, version 2 adds each one's assignment status (0 assigned, 1 unassigned) and
whether the initial discovery finished, version 3 a whole split per partition (its starting
offset) with its status. Checked on the savepoints of the connector's own migration tests
(enumerator versions 1, 2 and 3) and on savepoints recorded from a real Flink 2.3.0 job reading a
Kafka-compatible broker (tests/fixtures/kafka-savepoints).

An operator is a Kafka source when its split elements, or its enumerator state, read exactly as
those formats (every byte consumed, topic names Kafka accepts); anything else is not claimed.
Bytes are read through the bounded reader of savepoint_bytes.py: a malformed state is "not Kafka",
never an exception or a huge allocation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from streamwarden.flink.savepoint_bytes import MetadataError, OperatorInfo, Reader

READER_STATE = "SourceReaderState"
SPLIT_VERSION = 0
NO_STOPPING_OFFSET = -(2**63)  # Long.MIN_VALUE
POSITIONS = {-1: "latest", -2: "earliest", -3: "committed"}  # KafkaPartitionSplit's sentinels
ASSIGNMENT = {0: True, 1: False}  # AssignmentStatus: ASSIGNED, UNASSIGNED
_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")  # what a Kafka broker accepts as a topic name
_MAX_PARTITIONS = 100_000  # partitions of one source in an enumerator state (as SPLIT_ELEMENTS)


@dataclass(frozen=True)
class KafkaSplit:
    topic: str
    partition: int
    starting_offset: int
    stopping_offset: int | None  # None: unbounded
    subtask: int | None = None  # the reader subtask that held it (None: from the enumerator)

    @property
    def position(self) -> str:
        """``offset`` for a real offset, else the sentinel's name (``unknown`` for other negatives)."""
        if self.starting_offset >= 0:
            return "offset"
        return POSITIONS.get(self.starting_offset, "unknown")


@dataclass
class KafkaEnumerator:
    version: int
    partitions: list[dict[str, Any]]  # {"topic", "partition", "assigned": bool|None, "starting_offset": int|None}
    initial_discovery_finished: bool | None


@dataclass
class KafkaSourceState:
    splits: list[KafkaSplit] = field(default_factory=list)  # the readers' splits, in subtask order
    enumerator: KafkaEnumerator | None = None
    subtasks_in_state_files: int = 0  # subtasks whose splits live in a state file (not opened)
    subtasks_unreadable: int = 0  # subtasks whose split state is not laid out as SourceOperator writes it
    cut: bool = False  # more split elements than the reader keeps


def kafka_source_state(op: OperatorInfo) -> KafkaSourceState | None:
    """The Kafka source state of ``op``, or None when its state is not a Kafka source's."""
    elements = op.list_states.get(READER_STATE, [])
    splits: list[KafkaSplit] = []
    for subtask, raw in elements:
        split = _versioned_split(raw, subtask)
        if split is None:
            return None  # another source's splits (files, another connector)
        splits.append(split)
    enumerator = _enumerator(op.coordinator_state) if op.coordinator_state is not None else None
    if op.coordinator_state is not None and enumerator is None and not splits:
        return None
    if not splits and enumerator is None:
        return None
    return KafkaSourceState(
        splits=splits,
        enumerator=enumerator,
        subtasks_in_state_files=op.list_states_in_files.get(READER_STATE, 0),
        subtasks_unreadable=op.list_states_unreadable.get(READER_STATE, 0),
        cut=op.list_states_cut,
    )


def _versioned_split(raw: bytes, subtask: int | None) -> KafkaSplit | None:
    """One SimpleVersionedSerialization element: version 0, its length, a Kafka split."""
    try:
        r = Reader(raw)
        version = r.i32("a split version")
        size = r.i32("a split length")
        if version != SPLIT_VERSION or size != r.left:
            return None
        return _split(raw[r.pos :], subtask)
    except MetadataError:
        return None


def _split(raw: bytes, subtask: int | None) -> KafkaSplit | None:
    """KafkaPartitionSplitSerializer version 0, every byte consumed."""
    try:
        r = Reader(raw)
        topic = r.utf("a topic")
        partition = r.i32("a partition")
        starting = r.i64("a starting offset")
        stopping = r.i64("a stopping offset")
    except MetadataError:
        return None
    if r.left or not _TOPIC.match(topic) or partition < 0:
        return None
    return KafkaSplit(topic, partition, starting, None if stopping == NO_STOPPING_OFFSET else stopping, subtask)


def _enumerator(raw: bytes) -> KafkaEnumerator | None:
    """The SourceCoordinator's checkpoint, then KafkaSourceEnumStateSerializer versions 0 to 3."""
    try:
        r = Reader(raw)
        serde = r.i32("the coordinator serde version")
        version = r.i32("the enumerator serializer version")
        size = r.i32("the enumerator state length")
        if serde not in (0, 1) or size < 0 or size > r.left or (serde == 1 and size != r.left):
            return None
        payload = raw[r.pos : r.pos + size]
        reader = _ENUM_READERS.get(version)
        return reader(Reader(payload), version) if reader is not None else None
    except MetadataError:
        return None


def _partition(r: Reader) -> tuple[str, int] | None:
    topic = r.utf("a topic")
    partition = r.i32("a partition")
    if not _TOPIC.match(topic) or partition < 0:
        return None
    return topic, partition


def _enum_v0(r: Reader, version: int) -> KafkaEnumerator | None:
    """SerdeUtils.serializeSplitAssignments: subtasks, the split serializer's version, then per
    subtask its id and its splits (each an int length and a split)."""
    subtasks = r.count("subtasks", 8, _MAX_PARTITIONS)
    if r.i32("the split version") != SPLIT_VERSION:
        return None
    parts: list[dict[str, Any]] = []
    for _ in range(subtasks):
        subtask = r.i32("a subtask id")
        for _ in range(r.count("splits", 4, _MAX_PARTITIONS)):
            split = _sized_split(r, subtask)
            if split is None:
                return None
            parts.append(_entry(split.topic, split.partition, True, split.starting_offset))
    return _done(r, KafkaEnumerator(version, parts, None))


def _sized_split(r: Reader, subtask: int | None) -> KafkaSplit | None:
    """An int length, then that many bytes of a split."""
    size = r.i32("a split length")
    if size < 0:
        return None
    r.need(size, "a split")
    split = _split(r.data[r.pos : r.pos + size], subtask)
    r.pos += size
    return split


def _enum_v1(r: Reader, version: int) -> KafkaEnumerator | None:
    parts: list[dict[str, Any]] = []
    for _ in range(r.count("partitions", 6, _MAX_PARTITIONS)):
        tp = _partition(r)
        if tp is None:
            return None
        parts.append(_entry(tp[0], tp[1], True, None))
    return _done(r, KafkaEnumerator(version, parts, None))


def _enum_v2(r: Reader, version: int) -> KafkaEnumerator | None:
    parts: list[dict[str, Any]] = []
    for _ in range(r.count("partitions", 10, _MAX_PARTITIONS)):
        tp = _partition(r)
        status = r.i32("an assignment status")
        if tp is None or status not in ASSIGNMENT:
            return None
        parts.append(_entry(tp[0], tp[1], ASSIGNMENT[status], None))
    finished = r.u8("the initial discovery flag")
    return _done(r, KafkaEnumerator(version, parts, finished != 0))


def _enum_v3(r: Reader, version: int) -> KafkaEnumerator | None:
    n = r.count("splits", 8, _MAX_PARTITIONS)
    if r.i32("the split version") != SPLIT_VERSION:
        return None
    parts: list[dict[str, Any]] = []
    for _ in range(n):
        split = _sized_split(r, None)
        status = r.i32("an assignment status")
        if split is None or status not in ASSIGNMENT:
            return None
        parts.append(_entry(split.topic, split.partition, ASSIGNMENT[status], split.starting_offset))
    finished = r.u8("the initial discovery flag")
    return _done(r, KafkaEnumerator(version, parts, finished != 0))


def _entry(topic: str, partition: int, assigned: bool | None, offset: int | None) -> dict[str, Any]:
    return {"topic": topic, "partition": partition, "assigned": assigned, "starting_offset": offset}


def _done(r: Reader, e: KafkaEnumerator) -> KafkaEnumerator | None:
    """A state that leaves bytes unread is not this format."""
    return e if r.left == 0 else None


_ENUM_READERS = {1: _enum_v1, 2: _enum_v2, 3: _enum_v3, 0: _enum_v0}
