"""Files a run has read already, by resolved path.

Discovery reads every YAML file it walks to decide which ones are contracts; the others (the
deployment files beside the contracts) are kept here for the rest of the run, so the deployment
gatherer parses them and the result cache hashes them without reading them again. A pull
request's base side reads each contract the work tree holds to compare its blob id with the merge
base's; an unchanged one's bytes are kept here for the check of the head. One read per file.
``run_check`` keeps them for one run and forgets them at its end, so a process that runs several
checks never answers from an earlier run's bytes. Forked workers inherit them.
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


def take(path: str) -> bytes | None:
    """:func:`get`, for the one reader of a file: its bytes are not kept after."""
    return _READ.pop(path, None)


def forget() -> None:
    _READ.clear()
