"""Files a run has read already, by resolved path.

Discovery reads every YAML file it walks to decide which ones are contracts; the others (the
deployment files beside the contracts) are kept here for the rest of the run, so the deployment
gatherer parses them and the result cache hashes them without reading them again: one read per
file. ``run_check`` keeps them for one run and forgets them at its end, so a process that runs
several checks never answers from an earlier run's bytes. Forked workers inherit them.
"""

from __future__ import annotations

from collections.abc import Mapping

_READ: dict[str, bytes] = {}


def keep(read: Mapping[str, bytes]) -> None:
    """The bytes of files read by this run, by resolved path (as ``os.fspath`` writes it)."""
    _READ.update(read)


def get(path: str) -> bytes | None:
    """The bytes this run read from ``path`` (a resolved path), or None: read it."""
    return _READ.get(path)


def forget() -> None:
    _READ.clear()
