"""The byte level of a Flink ``_metadata`` file, shared by its two readers: the bounds, the error,
the bounded big-endian :class:`Reader` (``DataInputStream``: a ``UTF`` is a u16 length and modified
UTF-8) and the per-operator result :class:`OperatorInfo`.

``savepoint_metadata.py`` reads the file's frame (magic, version, checkpoint id, master states,
checkpoint properties) and calls ``savepoint_handles.py`` for each operator's state handles. The
imports run one way: savepoint_metadata -> savepoint_handles -> savepoint_bytes.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAX_METADATA_BYTES = 256 * 1024 * 1024
MAX_PARALLELISM = 32768  # KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM
# Memory is bounded by counts of bounded objects: an operator keeps aggregates (sizes, handle kinds,
# at most KEY_GROUP_RANGES ranges), never its subtasks; a job graph has hundreds of operators, a
# very large one a few thousand.
MAX_OPERATORS = 20_000
KEY_GROUP_RANGES = 64
MAX_DEPTH = 8  # nested handles (key groups -> stream, changelog -> keyed)
# Operator list states whose elements are kept (their bytes, when Flink stored them inline in the
# _metadata): a source operator's splits (``SourceOperator``'s "SourceReaderState", what
# flink/source_splits.py decodes). At most SPLIT_ELEMENTS elements per operator are kept.
CAPTURED_LIST_STATES = frozenset({"SourceReaderState"})
SPLIT_ELEMENTS = 100_000


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
    # the coordinator's state as Flink wrote it (inline bytes; not part of to_dict)
    coordinator_state: bytes | None = field(default=None, repr=False)
    # CAPTURED_LIST_STATES read from inline handles: name -> [(subtask, element bytes)] (not in to_dict)
    list_states: dict[str, list[tuple[int, bytes]]] = field(default_factory=dict, repr=False)
    # CAPTURED_LIST_STATES whose bytes live in state files (not opened): name -> subtasks
    list_states_in_files: Counter[str] = field(default_factory=Counter, repr=False)
    list_states_cut: bool = False  # more than SPLIT_ELEMENTS elements: the rest were not kept
    # CAPTURED_LIST_STATES whose inline bytes are not byte-array elements at their offsets (another
    # layout than SourceOperator's): name -> subtasks, their elements not kept
    list_states_unreadable: Counter[str] = field(default_factory=Counter, repr=False)

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
