"""Safe YAML with limits and line marks, for every YAML file the tool reads.

Limits (README, "Security"): at most 5 MiB per file, nesting at most 64 deep, at most 100 alias
references per file, duplicate keys are errors. Each breach is an :class:`InputError` (exit 2),
never a hang, a RecursionError or an out-of-memory.

Every value's line is kept in ``YamlDocument.marks`` keyed by its field path
(``state.operators[1].ttl``; keys that are not plain identifiers are quoted:
``table.properties["write.upsert.enabled"]``).

Reading (sizes, regular files, UTF-8) lives here, the limits and the document in
:mod:`streamwarden.yamlsafe.document`, the parse itself in :mod:`streamwarden.yamlsafe.parse`,
which imports PyYAML on the first parse of a run (a warm check answered from the cache parses
nothing).
"""

from __future__ import annotations

import os
import stat
from typing import Any

from streamwarden.core.errors import InputError
from streamwarden.yamlsafe.document import MAX_ALIASES as MAX_ALIASES
from streamwarden.yamlsafe.document import MAX_BYTES as MAX_BYTES
from streamwarden.yamlsafe.document import MAX_DEPTH as MAX_DEPTH
from streamwarden.yamlsafe.document import MAX_NODES as MAX_NODES
from streamwarden.yamlsafe.document import YamlDocument as YamlDocument
from streamwarden.yamlsafe.document import YamlSet as YamlSet
from streamwarden.yamlsafe.document import join_index as join_index
from streamwarden.yamlsafe.document import join_key as join_key
from streamwarden.yamlsafe.document import parent_paths as parent_paths


def read_text(path: str | os.PathLike[str], display: str | None = None) -> str:
    """Read a file as UTF-8 within the size limit; every failure is an InputError."""
    name = os.fspath(path)
    return decode_utf8(read_bytes(name, display), display or name)


# read-only, and a file swapped for a FIFO after a stat fails instead of waiting
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)


def read_to_end(fd: int, size: int) -> bytes:
    """Every byte of an open regular file, ``size`` as fstat gave it: one ``os.read`` of that size
    plus one byte, no file object around the descriptor. Exactly ``size`` bytes back is the whole
    file (a read of a regular file is short only at its end); a file that grew or shrank since is
    read on until a read returns nothing. (No read to confirm the end in the usual case: a second
    read of a 1 MiB buffer cost as much as the first, in every cache lookup's dependency.)"""
    chunk = os.read(fd, max(size, 0) + 1)
    if len(chunk) == size or not chunk:
        return chunk
    chunks = [chunk]
    while chunk:
        chunk = os.read(fd, _CHUNK)
        chunks.append(chunk)
    return b"".join(chunks)


_CHUNK = 64 * 1024  # below the allocator's mmap threshold: no map and unmap per read


def read_bytes(path: str | os.PathLike[str], display: str | None = None) -> bytes:
    """A file's bytes within the size limit (the checks of :func:`read_text`, without decoding)."""
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
        # one read of the size stat gave (a run reads every contract and every YAML file of the
        # tree); a file that changed size meanwhile is read again, bounded
        fd = os.open(name, READ_FLAGS)
        try:
            raw = os.read(fd, st.st_size + 1)
        finally:
            os.close(fd)
        if len(raw) != st.st_size:
            with open(name, "rb") as fh:
                raw = read_bounded(fh, st.st_size, MAX_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=shown) from None
    if len(raw) > MAX_BYTES:
        raise InputError(f"file is larger than {MAX_BYTES // 1024 // 1024} MiB", file=shown)
    return raw


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


def parse_documents(
    text: str, file: str, *, keep_bad_dates: bool = False, schema: str = "yaml-1.1"
) -> list[YamlDocument]:
    """Parse every document of a YAML stream with the limits applied. An impossible calendar date
    is an error, or with ``keep_bad_dates`` the text as written (for a schema to judge).
    ``schema``: ``yaml-1.1`` (PyYAML's, merge keys applied) or ``core`` (YAML 1.2's core schema as
    Flink 2.x's loader reads a config.yaml: see :mod:`streamwarden.yamlsafe.parse`)."""
    from streamwarden.yamlsafe.parse import parse_stream

    return parse_stream(text, file, keep_bad_dates=keep_bad_dates, schema=schema)


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
