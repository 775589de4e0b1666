"""``StatePrefetch``: the states of the newest pack's dependencies, hashed in a forked child while
the run does other work."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from pathlib import Path

from streamwarden.check.cache.key import _TOO_LARGE, file_state
from streamwarden.check.cache.store import _read_pack, newest_pack
from streamwarden.core.runstate import current
from streamwarden.yamlsafe.read import MAX_BYTES

PREFETCH_MIN = 200  # contracts: below it, a child process costs more than the hashing it takes over
PREFETCH_MIN_PACK = 64 * 1024  # bytes: a smaller pack holds fewer entries than that (about 350 B each)
MAX_PREFETCH = 50_000  # dependencies a child hashes at most (a pack holds at most MAX_PACK_BYTES)
PREFETCH_WAIT = 2.0  # seconds the run waits for the child's answer before hashing on its own
_STATE_TEXT = re.compile(r"[0-9a-f]{64}|missing|other")


class StatePrefetch:
    """The states of the newest pack's dependencies, hashed in a forked child while the run does
    other work (discovery, a pull request's merge base, loading the pack).

    A cache hit is checked against the state of every file its contract reads. A file discovery
    read (a deployment file beside the contracts, found by a directory walk) is hashed from those
    bytes; one it did not read (the configuration's globs name only the contracts, as in a pull
    request) was opened, read and hashed by each lookup, one after another: half the time of a warm
    pull request's lookups at 5,000 contracts, while the second core waited. The run starts the
    child before discovery (check/runcache.py, start_prefetch) and cancels it when discovery finds fewer than
    ``minimum`` contracts. The child hashes the files the newest pack's entries depend on as
    :func:`file_state` does, skipping the ones the run has read and any larger than a contract may
    be; the run takes its answer when it looks its files up (``ResultCache.use_prefetched``), and
    hashes on its own whatever the child did not answer: no answer within ``PREFETCH_WAIT``
    seconds, a child that failed, an answer that is not well formed.

    A state is the file's bytes at the moment it is hashed, in the child as in the run: the run
    reads a file it parses after its state was taken, so an edit in between is a miss next time,
    never a stale hit."""

    def __init__(self, pid: int, fd: int) -> None:
        self._pid: int | None = pid
        self._fd = fd
        self.minimum = PREFETCH_MIN  # contracts: a run that finds fewer cancels the child

    @classmethod
    def start(cls, directory: Path) -> StatePrefetch | None:
        """Fork the child (POSIX with two cores or more, and a pack of ``PREFETCH_MIN_PACK`` bytes
        or more to read); None otherwise."""
        if not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
            return None
        pack = newest_pack(directory)
        try:
            if pack is None or os.stat(pack).st_size < PREFETCH_MIN_PACK:
                return None
        except OSError:
            return None
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid == 0:  # the child: hash, answer, and leave without running the parent's exit code
            code = 1
            try:
                os.close(r)
                view = memoryview(json.dumps(_dependency_states(pack)).encode("utf-8"))
                while view:
                    view = view[os.write(w, view) :]
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        return cls(pid, r)

    def take(self, wait: float = PREFETCH_WAIT) -> dict[str, str]:
        """The child's states ({} when it has none to give); the child is gone afterwards."""
        if self._pid is None:
            return {}
        import select

        deadline = time.monotonic() + wait
        chunks: list[bytes] = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                    return {}
                chunk = os.read(self._fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            if self._reap() != 0:
                return {}
            states = json.loads(b"".join(chunks))
        except (OSError, ValueError, RecursionError):
            return {}
        finally:
            self.cancel()
        if not isinstance(states, dict) or not all(
            type(k) is str and type(v) is str and _STATE_TEXT.fullmatch(v) for k, v in states.items()
        ):
            return {}
        return states

    def cancel(self) -> None:
        """Stop the child if it still runs and release it (idempotent)."""
        pid, self._pid = self._pid, None
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)

    def _reap(self) -> int:
        pid, self._pid = self._pid, None
        if pid is None:
            return -1
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)


def _dependency_states(pack: Path) -> dict[str, str]:
    """In the child: ``file_state`` of each dependency the pack's entries name, but those the run
    has read (readahead) and those larger than a contract may be (the run hashes them itself)."""
    entries = _read_pack(pack) or {}
    paths: dict[str, None] = {}
    for entry in entries.values():
        deps = entry.get("deps") if isinstance(entry, dict) else None
        for pair in deps if isinstance(deps, list) else ():
            if type(pair) is list and len(pair) == 2 and type(pair[0]) is str:
                paths[pair[0]] = None
        if len(paths) >= MAX_PREFETCH:
            break
    out: dict[str, str] = {}
    for path in paths:
        if current().get(path) is None:
            state = file_state(path, MAX_BYTES)
            if state != _TOO_LARGE:
                out[path] = state
    return out
