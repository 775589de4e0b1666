"""The cache directory's files: read without following a link or waiting on a FIFO, written to a
temporary file and renamed into place, directories that are not links, and eviction."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from streamwarden.yamlsafe.read import read_bounded

_EVICT_SLACK = 0.1  # evict down to 90% of MAX_ENTRIES, so eviction does not run on every write


def _read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes, read without following a symbolic
    link or waiting on a FIFO; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = read_bounded(fh, st.st_size, limit)
        return raw if len(raw) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def evict_packs(packs: Path, keep: int) -> None:
    """Keep the ``keep`` most recently used packs (a pack holds every entry of a run: a few MB at
    5,000 contracts); temporary files left by a killed run go too."""
    now = time.time()
    found: list[tuple[float, str]] = []
    try:
        for e in os.scandir(packs):
            mtime = e.stat(follow_symlinks=False).st_mtime
            if not e.name.startswith("."):
                found.append((mtime, e.path))
            elif now - mtime > 3600:
                _unlink(e.path)
    except OSError:
        return
    found.sort(reverse=True)
    for _, p in found[keep:]:
        _unlink(p)


def _real_dir(path: Path) -> None:
    """Create ``path`` as a directory; one that is a symbolic link (or not a directory) is refused."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(f"{path} is not a directory")


def _write_atomic(path: Path, text: str) -> None:
    import tempfile  # only a run that writes needs it

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def evict(entries: Path, limit: int) -> int:
    """Remove the oldest entries (by modification time, which a hit refreshes) until at most
    ``limit * (1 - slack)`` remain, when there are more than ``limit``; also stale temporary files."""
    found: list[tuple[float, str]] = []
    now = time.time()
    try:
        subdirs = list(os.scandir(entries))
    except OSError:
        return 0
    for sub in subdirs:
        if not sub.is_dir(follow_symlinks=False):
            continue
        try:
            for e in os.scandir(sub.path):
                if not e.is_file(follow_symlinks=False):
                    continue
                mtime = e.stat(follow_symlinks=False).st_mtime
                if e.name.startswith(".tmp-"):
                    if now - mtime > 3600:  # left by a killed run
                        _unlink(e.path)
                    continue
                found.append((mtime, e.path))
        except OSError:
            continue
    if len(found) <= limit:
        return 0
    found.sort()
    excess = len(found) - int(limit * (1 - _EVICT_SLACK))
    for _, p in found[:excess]:
        _unlink(p)
    return excess


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
