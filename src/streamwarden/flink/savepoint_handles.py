"""The state handles of a ``_metadata`` operator state: one method per handle family, each
checking every length and count before it reads (see savepoint_metadata.py for the layout's sources).

Tags (``MetadataV2V3SerializerBase``, javap of flink-dist 2.3.0): stream handles 0 null,
1 byte stream, 2 file, 3 key groups, 6 relative file, 15 segment file, 16 empty segment file;
keyed handles 3/12 key groups (v2 adds an id), 7 savepoint key groups, 5/11 incremental (v2 adds
the checkpointed size and an id), 8/14 changelog, 9 in-memory changelog, 10/13 changelog files;
operator handles 4 operator stream, 17 file-merging operator stream; channel handles: V1 layout
before v6, a type byte (1 input, 2 output, 3/4 merged) from v6.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field

from streamwarden.flink.savepoint_bytes import (
    CAPTURED_LIST_STATES,
    KEY_GROUP_RANGES,
    MAX_DEPTH,
    MAX_PARALLELISM,
    SPLIT_ELEMENTS,
    MetadataError,
    OperatorInfo,
    Reader,
)

_STREAM_KINDS = {
    0: "null",
    1: "byte_stream",
    2: "file",
    3: "key_groups",
    6: "relative_file",
    15: "segment_file",
    16: "empty_segment_file",
}
_KEYED_KINDS = {
    0: "null",
    3: "key_groups",
    5: "incremental",
    7: "savepoint_key_groups",
    8: "changelog",
    9: "changelog_bytes",
    10: "changelog_file",
    11: "incremental_v2",
    12: "key_groups_v2",
    13: "changelog_file_v2",
    14: "changelog_v2",
}
_OPERATOR_KINDS = {0: "null", 4: "operator_stream", 17: "file_merging_operator_stream"}


class OperatorParser:
    def __init__(self, r: Reader, version: int) -> None:
        self.r = r
        self.version = version
        self.op: OperatorInfo | None = None  # the operator being read, and its subtask's index
        self.subtask_index = 0

    def operator(self) -> OperatorInfo:
        r = self.r
        name = uid = None
        if self.version >= 5:
            name = r.utf("an operator name") or None
            uid = r.utf("an operator uid") or None
        r.need(16, "an operator id")
        oid = r.data[r.pos : r.pos + 16].hex()
        r.pos += 16
        at = r.pos
        parallelism = r.i32("parallelism")
        max_parallelism = r.i32("max parallelism")
        if not (0 < max_parallelism <= MAX_PARALLELISM) or not (0 < parallelism <= MAX_PARALLELISM):
            raise MetadataError(
                f"operator {oid}: parallelism {parallelism} / max parallelism {max_parallelism} "
                f"out of range 1..{MAX_PARALLELISM}",
                at,
            )
        op = OperatorInfo(oid, name, uid, parallelism, max_parallelism)
        self.op = op
        stats = Stats()
        kind = self.stream_handle(stats, 0)
        if kind not in ("null", "byte_stream"):
            raise MetadataError(f"operator {oid}: coordinator state is a {kind} handle, expected inline bytes", at + 8)
        if kind == "byte_stream":
            start, end = stats.last_inline or (0, 0)
            op.coordinator_state = bytes(r.data[start:end])
            op.coordinator_state_bytes = stats.size
            op.state_size += stats.size
            op.inline_bytes += stats.inline
        n = r.i32("the number of subtask states")
        if n < 0:  # FullyFinishedOperatorState
            if kind != "null":
                raise MetadataError(f"operator {oid}: a fully finished operator with coordinator state", at + 8)
            op.fully_finished = True
            return op
        if n > MAX_PARALLELISM or n * 4 > r.left:
            raise MetadataError(f"operator {oid}: {n} subtask states is impossible here", r.pos - 4)
        for _ in range(n):
            self.subtask(op)
        return op

    def subtask(self, op: OperatorInfo) -> None:
        r = self.r
        at = r.pos
        index = r.i32("a subtask index")
        if index < 0:
            index = -index - 1
            if index >= MAX_PARALLELISM:
                raise MetadataError(f"operator {op.operator_id}: finished subtask index {index}", at)
            op.subtasks += 1
            op.finished_subtasks += 1
            return
        if index >= MAX_PARALLELISM:
            raise MetadataError(f"operator {op.operator_id}: subtask index {index}", at)
        self.subtask_index = index
        stats = Stats()
        for which in ("managed", "raw"):
            if r.i32(f"the {which} operator state flag") != 0:
                stats.add(self.operator_handle(stats))
        managed = self.keyed_handle(stats, 0)
        if stats.last_range is not None and managed != "null" and len(op.key_group_ranges) < KEY_GROUP_RANGES:
            op.key_group_ranges.append(list(stats.last_range))  # the first ones: enough to show, bounded
        stats.add(managed)
        stats.add(self.keyed_handle(stats, 0))
        for direction in ("input", "output"):
            for _ in range(r.count(f"{direction} channel state handles", 1, 1_000_000)):
                stats.add(self.channel_handle(stats, direction))
        if self.version >= 7 and r.u8("the reference checkpoint marker") == 1:
            r.i64("the reference checkpoint id")
        op.subtasks += 1
        op.state_size += stats.size
        op.inline_bytes += stats.inline
        op.file_handles += stats.files
        op.handle_kinds.update(stats.kinds)
        if stats.kinds:
            op.subtasks_with_state += 1

    def _tag(self, family: str, kinds: dict[int, str]) -> tuple[int, int, str]:
        """A handle's tag byte: (its offset, the tag, its kind name); an unknown tag raises."""
        at = self.r.pos
        tag = self.r.u8(f"{'an' if family[0] in 'aeiou' else 'a'} {family} state handle tag")
        kind = kinds.get(tag)
        if kind is None:
            raise MetadataError(f"unknown {family} state handle tag {tag}", at)
        return at, tag, kind

    # -- handles: each returns its kind name ("null" for none) and adds its size to ``stats`` --------
    def stream_handle(self, stats: Stats, depth: int) -> str:
        r = self.r
        _, tag, kind = self._tag("stream", _STREAM_KINDS)
        if tag == 1:
            r.utf("a byte stream handle name")
            n = r.i32("a byte stream handle length")
            start = r.pos
            r.skip(n, "a byte stream handle's bytes")
            stats.last_inline = (start, start + n)
            stats.size += n
            stats.inline += n
        elif tag == 2:
            size = r.i64("a file handle size")
            r.utf("a file handle path")
            stats.file(size)
        elif tag == 6:
            r.utf("a relative file handle path")
            stats.file(r.i64("a relative file handle size"))
        elif tag == 3:
            self.key_groups(stats, depth)
        elif tag == 15:
            r.i64("a segment file start")
            size = r.i64("a segment file size")
            scope = r.i32("a segment file scope")
            if scope not in (0, 1):
                raise MetadataError(f"segment file scope {scope}", r.pos - 4)
            r.utf("a segment file path")
            r.utf("a segment file logical id")
            stats.file(size)
        return kind

    def key_groups(self, stats: Stats, depth: int) -> None:
        self.range(stats, offsets=True)
        self.nested_stream(stats, depth)

    def nested_stream(self, stats: Stats, depth: int) -> str:
        if depth >= MAX_DEPTH:
            raise MetadataError(f"state handles nested deeper than {MAX_DEPTH}", self.r.pos)
        return self.stream_handle(stats, depth + 1)

    def keyed_handle(self, stats: Stats, depth: int) -> str:
        r = self.r
        at, tag, kind = self._tag("keyed", _KEYED_KINDS)
        if depth > MAX_DEPTH:
            raise MetadataError(f"state handles nested deeper than {MAX_DEPTH}", at)
        if tag in (3, 7, 12):
            self.key_groups(stats, depth)
            if tag == 12:
                r.utf("a state handle id")
        elif tag in (5, 11):
            r.i64("a checkpoint id")
            r.utf("a backend id")
            self.range(stats)
            if tag == 11:
                r.i64("a checkpointed size")
            self.nested_stream(stats, depth)
            for which in ("shared", "private"):
                for _ in range(r.count(f"{which} state files", 3, 10_000_000)):
                    r.utf("a local path")
                    self.nested_stream(stats, depth)
            if tag == 11:
                r.utf("a state handle id")
        elif tag in (8, 14):
            self.range(stats)
            r.i64("a checkpointed size")
            for which in ("materialized", "non-materialized"):
                for _ in range(r.count(f"{which} changelog handles", 1, 1_000_000)):
                    self.keyed_handle(stats, depth + 1)
            r.i64("a materialization id")
            if tag == 14:
                r.i64("a checkpoint id")
            r.utf("a state handle id")
        elif tag == 9:
            self.range(stats)
            r.i64("a sequence number")
            r.i64("a sequence number")
            for _ in range(r.count("changelog changes", 8, 100_000_000)):
                r.i32("a key group")
                n = r.i32("a change length")
                r.skip(n, "a change")
                stats.size += n
                stats.inline += n
            r.utf("a state handle id")
        elif tag in (10, 13):
            self.range(stats)
            for _ in range(r.count("changelog files", 9, 10_000_000)):
                r.i64("an offset")
                self.nested_stream(stats, depth)
            r.i64("a state size")
            r.i64("a checkpointed size")
            r.utf("a state handle id")
            if tag == 13:
                r.utf("a storage identifier")
        return kind

    def range(self, stats: Stats, offsets: bool = False) -> None:
        """A key group range; with ``offsets``, followed by one u64 offset per key group."""
        at = self.r.pos
        start = self.r.i32("a key group start")
        num = self.r.i32("a key group count")
        if start < 0 or num < 0 or start + num > MAX_PARALLELISM or (offsets and num * 8 > self.r.left):
            raise MetadataError(f"key group range start {start} count {num} is impossible", at)
        if offsets:
            self.r.skip(num * 8, "key group offsets")
        stats.last_range = (start, start + num - 1)

    def operator_handle(self, stats: Stats) -> str:
        r = self.r
        _, tag, kind = self._tag("operator", _OPERATOR_KINDS)
        if tag == 0:
            return kind
        captured: list[tuple[str, tuple[int, ...]]] = []
        for _ in range(r.count("operator state entries", 7, 1_000_000)):
            name = r.utf("a state name")
            mode = r.u8("a distribution mode")
            if mode > 2:
                raise MetadataError(f"unknown operator state distribution mode {mode}", r.pos - 1)
            n = r.count("partition offsets", 8, 100_000_000)
            if name in CAPTURED_LIST_STATES and n:
                captured.append((name, struct.unpack_from(f">{n}q", r.data, r.pos)))
            r.skip(n * 8, "partition offsets")
        if tag == 17:
            r.utf("a task-owned directory")
            r.utf("a shared directory")
            r.u8("an empty flag")
        stats.last_inline = None
        stream = self.nested_stream(stats, 0)
        if captured:
            self._capture(captured, stream, stats.last_inline)
        return kind

    def _capture(
        self, captured: list[tuple[str, tuple[int, ...]]], stream: str, inline: tuple[int, int] | None
    ) -> None:
        """Keep the elements of the CAPTURED_LIST_STATES of one subtask: each element is written at
        its offset as a byte array (``BytePrimitiveArraySerializer``: an int length, the bytes). State
        in a file is only counted, and so is a subtask whose elements do not fit its stream."""
        op = self.op
        assert op is not None
        if stream != "byte_stream" or inline is None:
            for name, _ in captured:
                op.list_states_in_files[name] += 1
            return
        start, end = inline
        total = sum(len(v) for v in op.list_states.values())
        for name, offsets in captured:
            elements = _elements(self.r.data, start, end, offsets)
            if elements is None:  # not SourceOperator's layout: nothing is kept, the file still reads
                op.list_states_unreadable[name] += 1
                continue
            if total + len(elements) > SPLIT_ELEMENTS:
                op.list_states_cut = True
                elements = elements[: max(0, SPLIT_ELEMENTS - total)]
            total += len(elements)
            op.list_states.setdefault(name, []).extend((self.subtask_index, e) for e in elements)

    def channel_handle(self, stats: Stats, direction: str) -> str:
        r = self.r
        if self.version >= 6:
            at = r.pos
            tag = r.u8("a channel state handle type")
            expected = (1, 3) if direction == "input" else (2, 4)
            if tag not in expected:
                raise MetadataError(f"unknown {direction} channel state handle type {tag}", at)
            if tag in (3, 4):
                r.i32("a subtask index")
                r.i64("a channel state size")
                self.nested_stream(stats, 0)
                r.skip(r.i32("channel infos length"), "channel infos")
                return f"merged_{direction}_channel"
        r.i32("a subtask index")
        r.i32("a gate or partition index")
        r.i32("a channel or subpartition index")
        r.skip(r.count("channel offsets", 8, 100_000_000) * 8, "channel offsets")
        r.i64("a channel state size")
        self.nested_stream(stats, 0)
        return f"{direction}_channel"


def _elements(data: bytes, start: int, end: int, offsets: tuple[int, ...]) -> list[bytes] | None:
    """The byte arrays at ``offsets`` of the inline stream ``data[start:end]`` (each an int length
    and its bytes, as ``BytePrimitiveArraySerializer`` writes them), or None when one does not fit."""
    out = []
    for offset in offsets:
        at = start + offset
        if offset < 0 or at + 4 > end:
            return None
        size = int.from_bytes(data[at : at + 4], "big", signed=True)
        if size < 0 or at + 4 + size > end:
            return None
        out.append(bytes(data[at + 4 : at + 4 + size]))
    return out


@dataclass
class Stats:
    size: int = 0
    inline: int = 0
    files: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    last_range: tuple[int, int] | None = None
    last_inline: tuple[int, int] | None = None  # (start, end) in the file of the last inline byte stream

    def file(self, size: int) -> None:
        if size < 0:
            raise MetadataError(f"state handle size {size}")
        self.size += size
        self.files += 1

    def add(self, kind: str) -> None:
        if kind != "null":
            self.kinds[kind] += 1
