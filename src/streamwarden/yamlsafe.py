"""Safe YAML with limits and line marks, for every YAML file the tool reads.

Limits (README, "Security"): at most 5 MiB per file, nesting at most 64 deep, at most 100 alias
references per file, duplicate keys are errors. Each breach is an :class:`InputError` (exit 2),
never a hang, a RecursionError or an out-of-memory.

Every value's line is kept in ``YamlDocument.marks`` keyed by its field path
(``state.operators[1].ttl``; keys that are not plain identifiers are quoted:
``table.properties["write.upsert.enabled"]``).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any

import yaml

from streamwarden.dates import calendar_problem
from streamwarden.errors import InputError

MAX_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_NODES = 2_000_000

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_\-]+$")
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"

try:  # libyaml's composer is C and fast; the pure-Python one is the fallback
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = yaml.SafeLoader


class _DepthLimitedLoader(yaml.SafeLoader):
    """Pure-Python composer that refuses deep nesting before Python's recursion limit."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH + 1:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _TooDeep(mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


_SCALARS = yaml.SafeLoader("")  # a constructor instance for scalar tags


def join_key(parent: str, key: str) -> str:
    if _PLAIN_KEY.match(key):
        return f"{parent}.{key}" if parent else key
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{parent}["{escaped}"]'


def join_index(parent: str, index: int) -> str:
    return f"{parent}[{index}]"


def parent_paths(path: str) -> list[str]:
    """``a.b[1].c`` -> [``a.b[1].c``, ``a.b[1]``, ``a.b``, ``a``, ``""``]."""
    out = [path]
    p = path
    while p:
        cut = max(p.rfind("."), p.rfind("["))
        p = "" if cut <= 0 else p[:cut]
        out.append(p)
    return out


@dataclass
class YamlDocument:
    data: Any
    file: str
    marks: dict[str, int] = field(default_factory=dict)
    index: int = 0  # the document's position in a multi-document file
    start_line: int = 1

    def line_of(self, path: str) -> int:
        """The line of ``path``, or of its nearest parent that exists (a missing field)."""
        for p in parent_paths(path):
            if p in self.marks:
                return self.marks[p]
        return self.start_line


class _Builder:
    def __init__(self, file: str, keep_bad_dates: bool = False) -> None:
        self.file = file
        # an impossible date (2027-02-30) stays the text as written: a contract's JSON Schema
        # then names it among the file's other errors (format: date), instead of hiding them
        self.keep_bad_dates = keep_bad_dates
        self.marks: dict[str, int] = {}
        self.nodes = 0
        self.aliases = 0
        self.seen: set[int] = set()

    def build(self, node: yaml.Node, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise InputError(
                f"nesting deeper than {MAX_DEPTH} levels",
                file=self.file,
                line=node.start_mark.line + 1,
                hint="flatten the structure; no contract or Flink file needs this depth",
            )
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise InputError(
                f"the document expands to more than {MAX_NODES:,} values",
                file=self.file,
                line=node.start_mark.line + 1,
                hint="remove anchors/aliases that multiply content",
            )
        if id(node) in self.seen:  # a node reached twice is an alias reference
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise InputError(
                    f"more than {MAX_ALIASES} alias references (a YAML alias bomb?)",
                    file=self.file,
                    line=node.start_mark.line + 1,
                    hint="write the values out instead of repeating anchors",
                )
        self.seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if isinstance(node, yaml.SequenceNode):
            out_list = []
            for i, item in enumerate(node.value):
                p = join_index(path, i)
                self.marks.setdefault(p, item.start_mark.line + 1)
                out_list.append(self.build(item, p, depth + 1))
            return out_list
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        raise InputError(f"unsupported YAML node {node.tag}", file=self.file, line=node.start_mark.line + 1)

    def _scalar(self, node: yaml.ScalarNode, path: str = "") -> Any:
        tag = node.tag
        if tag == _STR_TAG:  # the common case, without the constructor's overhead
            return node.value
        if tag == _NULL_TAG:
            return None
        try:
            value = _SCALARS.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            day = calendar_problem(node.value) if tag == _TIMESTAMP_TAG else None
            if day and self.keep_bad_dates:
                return node.value
            raise InputError(
                f"{node.value!r} is not a real calendar date: {day}"
                if day
                else f"invalid value {node.value!r}: {problem}",
                file=self.file,
                line=node.start_mark.line + 1,
                path=path or None,
                hint="write a date that exists (YYYY-MM-DD)" if day else None,
            ) from None
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
                return value.replace(tzinfo=None).isoformat() + "Z"
            return value.isoformat()
        if isinstance(value, _dt.date):
            return value.isoformat()
        if isinstance(value, bytes):
            return value.decode("latin-1")
        if isinstance(value, float) and value != value:  # NaN is not JSON
            return str(node.value)
        return value

    def _mapping(self, node: yaml.MappingNode, path: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        key_lines: dict[str, int] = {}
        merged: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged.append(value_node)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(
                    "a mapping key must be a plain value, not a list or mapping",
                    file=self.file,
                    line=key_node.start_mark.line + 1,
                    path=path or None,
                )
            key_value = self._scalar(key_node)
            key = key_value if isinstance(key_value, str) else str(key_node.value)
            line = key_node.start_mark.line + 1
            child = join_key(path, key)
            if key in out:
                raise InputError(
                    f"duplicate key {key!r} (first at line {key_lines[key]})",
                    file=self.file,
                    line=line,
                    path=child,
                    hint="YAML would silently keep only the last one; keep one of them",
                )
            key_lines[key] = line
            self.marks[child] = line
            out[key] = self.build(value_node, child, depth + 1)
        for m in merged:  # `<<: *base` — explicit keys win, as in YAML 1.1
            sources = m.value if isinstance(m, yaml.SequenceNode) else [m]
            for src in sources:
                value = self.build(src, path, depth + 1)
                if not isinstance(value, dict):
                    raise InputError("a merge key (<<) needs a mapping", file=self.file, line=src.start_mark.line + 1)
                for k, v in value.items():
                    out.setdefault(k, v)
        return out


def read_text(path: str | os.PathLike[str], display: str | None = None) -> str:
    """Read a file as UTF-8 within the size limit; every failure is an InputError."""
    name = os.fspath(path)  # os-level calls: a run reads thousands of files, pathlib costs more than the read
    shown = display or name
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise InputError(
            "file does not exist",
            file=shown,
            hint="check the path (relative paths are resolved from the referring file's directory)",
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=shown) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("is a directory, not a file", file=shown)
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block the run, or never end
        raise InputError(
            "is not a regular file (a pipe, socket or device): it is not read",
            file=shown,
            hint="give the file itself",
        )
    if st.st_size > MAX_BYTES:
        raise InputError(
            f"file is {st.st_size / 1024 / 1024:.1f} MiB; the limit is {MAX_BYTES // 1024 // 1024} MiB",
            file=shown,
            hint="contracts and Flink files are small; is this the right file?",
        )
    try:
        with open(name, "rb") as fh:
            raw = read_bounded(fh, st.st_size, MAX_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=shown) from None
    if len(raw) > MAX_BYTES:
        raise InputError(f"file is larger than {MAX_BYTES // 1024 // 1024} MiB", file=shown)
    return decode_utf8(raw, shown)


def read_bounded(fh: Any, size: int, limit: int) -> bytes:
    """At most ``limit + 1`` bytes (one more than allowed tells that the file is too large),
    asking for the size ``stat`` gave and then for the rest only if the file grew: a read of
    ``limit + 1`` at once allocates that much for every small file."""
    raw: bytes = fh.read(min(size, limit) + 1)
    if len(raw) > size and len(raw) <= limit:
        raw += fh.read(limit + 1 - len(raw))
    return raw


def decode_utf8(raw: bytes, shown: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            file=shown,
            line=line,
            hint="save the file as UTF-8",
        ) from None
    return text.lstrip("\ufeff")


def parse_documents(text: str, file: str, *, keep_bad_dates: bool = False) -> list[YamlDocument]:
    """Parse every document of a YAML stream with the limits applied. An impossible calendar date
    is an error, or with ``keep_bad_dates`` the text as written (for a schema to judge)."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise InputError(f"text is larger than {MAX_BYTES // 1024 // 1024} MiB", file=file)
    docs: list[YamlDocument] = []
    try:
        nodes = _compose_all(text)
    except _TooDeep as exc:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", file=file, line=exc.line) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", file=file) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if "max depth" in problem or "nesting" in problem:
            raise InputError(
                f"nesting deeper than {MAX_DEPTH} levels", file=file, line=mark.line + 1 if mark else None
            ) from None
        tab = _tab_indent(text, mark.line, mark.column) if mark else None
        if tab is not None:
            raise InputError(
                f"not valid YAML: a tab in the indentation (column {tab + 1})",
                file=file,
                line=mark.line + 1 if mark else None,
                hint="YAML does not allow tabs for indentation; use spaces",
            ) from None
        raise InputError(
            f"not valid YAML: {problem}",
            file=file,
            line=(mark.line + 1) if mark else None,
            hint="check indentation and quoting around this line",
        ) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise InputError(
            f"not valid YAML: unacceptable character #x{exc.character:04x} ({exc.reason})"
            if isinstance(exc.character, int)
            else f"not valid YAML: {exc.reason}",
            file=file,
            line=line,
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {str(exc).splitlines()[0]}", file=file) from None
    builder = _Builder(file, keep_bad_dates)
    for i, node in enumerate(nodes):
        builder.marks = {}
        builder.seen = set()
        builder.aliases = 0
        data = builder.build(node, "", 0)
        start = node.start_mark.line + 1
        marks = builder.marks
        marks.setdefault("", start)
        docs.append(YamlDocument(data=data, file=file, marks=marks, index=i, start_line=start))
    return docs


def _tab_indent(text: str, line: int, column: int) -> int | None:
    """The column of a tab in the indentation of ``line`` (0-based), when the parser stopped
    there: PyYAML calls it "found character that cannot start any token" or similar."""
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return None
    row = lines[line]
    if 0 <= column < len(row) and row[column] == "\t":  # e.g. after a list's "-"
        return column
    indent = row[: len(row) - len(row.lstrip(" \t"))]
    tab = indent.find("\t")
    return tab if tab >= 0 and column <= len(indent) else None


def _compose_all(text: str) -> list[yaml.Node]:
    loader_cls = _BaseLoader if _BaseLoader is not yaml.SafeLoader else _DepthLimitedLoader
    loader = loader_cls(text)
    try:
        out = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                out.append(node)
        return out
    finally:
        loader.dispose()


def load_documents(
    path: str | os.PathLike[str], display: str | None = None, *, keep_bad_dates: bool = False
) -> list[YamlDocument]:
    shown = display or str(path)
    return parse_documents(read_text(path, shown), shown, keep_bad_dates=keep_bad_dates)


def load_single(
    path: str | os.PathLike[str], display: str | None = None, *, keep_bad_dates: bool = False
) -> YamlDocument:
    """Exactly one document; an empty file or several documents are errors."""
    shown = display or str(path)
    docs = load_documents(path, shown, keep_bad_dates=keep_bad_dates)
    docs = [d for d in docs if d.data is not None]
    if not docs:
        raise InputError("the file is empty (no YAML document)", file=shown, line=1)
    if len(docs) > 1:
        raise InputError(
            f"expected one YAML document, found {len(docs)}",
            file=shown,
            line=docs[1].start_line,
            hint="put each contract in its own file",
        )
    return docs[0]
