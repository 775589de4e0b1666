"""The gatherer protocol: what every source of ``input.facts`` takes and returns.

A gatherer is ``gather(contract, env, ctx) -> dict``:

- ``contract``: the normalized contract document (``Contract.data``);
- ``env``: the environment of ``streamwarden.yaml`` the run reads (``environments.<name>``, with
  its ``flink``, ``iceberg`` and ``spark`` sections), or ``{}`` for a run without ``--env``; hosts
  and credentials come from here only, never from a contract;
- ``ctx``: a :class:`GatherContext` (the repository root, the run's clock, per-source knobs).

It returns its section of ``input.facts``, always one of three shapes, built here only:
:func:`available` (``{"available": true, "configured": true, ...}``), :func:`not_configured`
(nothing to read: no rule treats it as missing) or :func:`unavailable` (configured but not
readable: SW-FACT-001 reports the error). A gatherer never raises for its source; an exit-2
problem of the command line or the install (``SetupError``, ``SavepointNotFound``) still does.

The sources (:data:`SOURCES`): ``deployment`` (facts/deployment.py), ``flink`` (facts/flink.py),
``iceberg`` (facts/iceberg.py), ``data`` (facts/spark_data.py) and ``savepoint``
(facts/savepoint.py). facts/static.py and facts/live.py call them for ``check``; facts/recovery.py
calls the same functions for ``gate`` and ``evidence``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from streamwarden.facts.data_run import DataRun
    from streamwarden.iceberg.access import Reader
    from streamwarden.iceberg.catalog import ContractTable
    from streamwarden.iceberg.snapshots import WindowLimits

SOURCES = ("deployment", "flink", "iceberg", "data", "savepoint")


@dataclass(frozen=True)
class GatherContext:
    """What a gatherer needs besides the contract and the environment. ``root`` is the directory
    of streamwarden.yaml (relative paths of the environment resolve against it); the other fields
    are knobs of one source, left at their defaults by the others."""

    root: Path
    now_ms: int = 0
    contract_file: Path | None = None  # deployment: job.deployment is relative to its directory
    known_keys: tuple[str, ...] = ()  # deployment: extra Flink keys streamwarden.yaml declares
    environ: Mapping[str, str] | None = None  # flink: ${VAR} and secrets (None: the process's)
    branch: str = "main"  # iceberg: the branch whose snapshots are read
    iceberg_limits: WindowLimits | None = None  # iceberg: how many snapshots and files are read
    read_files: bool = True  # iceberg: read the manifests of the window's snapshots (SW-TABLE-011)
    table: ContractTable | None = None  # data: the contract's table, when the iceberg gatherer opened it
    reader: Reader | None = None  # iceberg, data: who reads (owner, pull request), for the access rules
    command_line: bool = False  # iceberg: the table was named on the command line (init), not by a contract
    data_run: DataRun | None = None  # data: the run's state file, scan budget and what it spent
    since_snapshot: int | None = None  # data: incremental scan from this snapshot
    state_file: Path | None = None  # data: the incremental scan's state
    data_window: int | None = None  # data: snapshots compared with their summaries (None: the default)
    restore_from: str | None = None  # savepoint: the location to read (else Flink's candidate)
    restore_source: str = "restore_from"  # savepoint: where that location came from
    flink: Mapping[str, Any] | None = None  # savepoint: the Flink section already gathered


class Gatherer(Protocol):
    def __call__(self, contract: Mapping[str, Any], env: Mapping[str, Any], ctx: GatherContext) -> dict[str, Any]: ...


def available(**fields: Any) -> dict[str, Any]:
    """A section read from its source."""
    return {"available": True, "configured": True, **fields}


def not_configured() -> dict[str, Any]:
    """A source this run does not read (the environment or the contract does not ask for it)."""
    return {"available": False, "configured": False}


def unavailable(error: str, **fields: Any) -> dict[str, Any]:
    """A source the run should read but cannot: ``error`` says why (SW-FACT-001). ``fields`` add
    what is still known (a savepoint's location, a deployment's missing files); None is left out."""
    known = {k: v for k, v in fields.items() if v is not None}
    return {"available": False, "configured": True, "error": error, **known}


def refused(error: str) -> dict[str, Any]:
    """A source the environment does not let this contract read (its table is not granted to it:
    ``input.facts.access``, SW-FACT-002): nothing was read, and SW-FACT-001 stays quiet."""
    return {"available": False, "configured": True, "refused": True, "error": error}


def failed(what: str, exc: BaseException) -> dict[str, Any]:
    """An unexpected exception of a gatherer: a gap in the facts, never a traceback."""
    return unavailable(f"{what} could not be gathered: {type(exc).__name__}: {exc}")
