"""What one run keeps, owned by one object: :class:`RunState`.

A run reads each file once and resolves each directory once; before this object those were
module globals (the read-ahead bytes, the path caches of contract loading, the deployment
gatherer shared per repository) reset by hand at the start or end of a run. Now a run opens one
with :func:`begin` and everything it kept is dropped when the ``with`` block ends, so a process
that runs several checks never answers from an earlier run's state. Forked workers inherit the
parent's state. Code outside any run (a test calling a gatherer directly) shares one default
state, as it shared the globals before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class RunState:
    # read-ahead: bytes of files this run has read already, by resolved path (``os.fspath``):
    # discovery's YAML files that are no contract (deployment files beside the contracts), and a
    # pull request's unchanged contracts, read by its base side to compare blob ids
    read: dict[str, bytes] = field(default_factory=dict)
    # path resolution (core/paths.py): directory -> resolved, file -> resolved, and the files whose
    # absolute path is their own resolution (the walk reached them without a symbolic link)
    dirs: dict[str, str] = field(default_factory=dict)
    resolved: dict[Path, Path] = field(default_factory=dict)
    real: set[str] = field(default_factory=set)
    # objects a source shares across the contracts of the run, by key (see :meth:`shared`)
    memo: dict[str, Any] = field(default_factory=dict)

    def keep(self, read: Mapping[str, bytes]) -> None:
        """The bytes of files read by this run, by resolved path (as ``os.fspath`` writes it)."""
        self.read.update(read)

    def get(self, path: str) -> bytes | None:
        """The bytes this run read from ``path`` (a resolved path), or None: read it."""
        return self.read.get(path)

    def take(self, path: str) -> bytes | None:
        """:meth:`get`, for the one reader of a file: its bytes are not kept after."""
        return self.read.pop(path, None)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """One object per key for the whole run (made on first use): e.g. the deployment
        source's parser of a repository, so a run parses each deployment file once."""
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = make()
        return found


_CURRENT = RunState()


def current() -> RunState:
    """The state of the run in progress (the default state outside any run)."""
    return _CURRENT


@contextmanager
def begin() -> Iterator[RunState]:
    """A new run: a fresh state for the ``with`` block, the previous one back after it."""
    global _CURRENT
    previous, _CURRENT = _CURRENT, RunState()
    try:
        yield _CURRENT
    finally:
        _CURRENT = previous
