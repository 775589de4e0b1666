"""What every source of ``input.facts`` takes and returns; the registry is facts/registry.py and
the one orchestrator facts/pipeline.py.

A source (:class:`Source`) is one object: its ``name`` (its section of ``input.facts``), the
``section`` of an environment in ``streamwarden.yaml`` it reads (``environments.<env>.<section>``,
or None), the ``extra`` it needs installed (``pip install 'streamwarden[<extra>]'``, whose
import name :meth:`Source.modules` gives), whether the recovery verbs read it (``recovery``),
:meth:`Source.needed` (does this contract need it in this environment?) and :meth:`Source.gather`
over the run's :class:`Subject` s, in order. Whether it is a repository source (every check) or a
live one (read only with an environment: ``check --env``, ``facts --env``, ``gate``, ``evidence``)
is its registry line's.

- ``env``: the environment of ``streamwarden.yaml`` the run reads, or ``{}`` without ``--env``;
  hosts and credentials come from here only, never from a contract;
- ``ctx``: a :class:`GatherContext`: the repository root, the run's clock, and each source's own
  settings object (``ctx.settings(IcebergSettings)``), defined in that source's module.

A section is always one of the shapes built here only: :func:`available`, :func:`not_configured`
(nothing to read: no rule treats it as missing), :func:`unavailable` (configured but not readable:
SW-FACT-001 reports the error) or :func:`refused` (the environment does not let this contract read
it: SW-FACT-002). A source never raises for its own service; an exit-2 problem of the command line
or the install (``SetupError``, ``SavepointNotFound``) still does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from streamwarden.iceberg import MAIN_BRANCH

if TYPE_CHECKING:
    from streamwarden.iceberg.access import Reader
    from streamwarden.iceberg.catalog import ContractTable

S = TypeVar("S")


@dataclass
class Subject:
    """One contract being gathered: what the sources read, and what an earlier source leaves for a
    later one (registry order): the sections gathered so far, the table the Iceberg source opened
    (one load per run), the branch ancestry walked from it (walked once, by whoever asks first)."""

    data: Mapping[str, Any]  # the normalized contract
    file: Path | None = None  # its file: job.deployment is relative to its directory
    reader: Reader | None = None  # who reads (the owner; in a pull request, the base version's), for access
    facts: dict[str, Any] = field(default_factory=dict)
    table: ContractTable | None = None
    ancestry: tuple[list[dict[str, Any]], bool] | None = None  # newest first; the walk reached the first


@dataclass(frozen=True)
class GatherContext:
    """What a gathering shares besides the subjects and the environment. ``root`` is the directory
    of streamwarden.yaml (relative paths of the environment resolve against it); ``sources`` holds
    each source's own settings object, by its type (one per source, defined in its module)."""

    root: Path
    now_ms: int = 0
    sources: Mapping[type, object] = field(default_factory=dict)

    @staticmethod
    def of(root: Path, now_ms: int = 0, settings: Iterable[object] = ()) -> GatherContext:
        return GatherContext(root, now_ms, {type(s): s for s in settings})

    def settings(self, kind: type[S]) -> S:
        """The settings of the source whose settings type is ``kind`` (its defaults when none)."""
        found = self.sources.get(kind)
        return found if isinstance(found, kind) else kind()


class Source(Protocol):
    name: str  # the section of input.facts
    section: str | None  # environments.<env>.<section> in streamwarden.yaml, None: the repository's
    extra: str | None  # the install extra its section needs ("iceberg": pip install 'streamwarden[iceberg]')
    phase: str  # what the progress line says while it gathers
    recovery: bool  # read by the recovery verbs (gate, evidence) too, not only by check and facts

    def needed(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> bool:
        """Whether this contract needs this source in ``env`` (decides the extras asked for, and
        whether the source runs at all; a source not needed is ``not_configured``)."""
        ...

    def modules(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> Sequence[tuple[str, str, str]]:
        """What this contract needs installed to gather this source in ``env``: (the environment
        section that asks for it, the extra that installs it, its import name), each."""
        ...

    def gather(self, subjects: Sequence[Subject], env: Mapping[str, Any], ctx: GatherContext) -> list[dict[str, Any]]:
        """This source's section for each subject, in order (``not_configured()`` where none)."""
        ...


def checked_branch(contract: Mapping[str, Any], env: Mapping[str, Any]) -> str:
    """The branch of the contract's table whose snapshots the facts read, retained checkpoints
    are matched along and a restore plans on: the one place that decides it. The branch the
    contract's job commits to: ``fork_of.branch`` for a fork or backfill confined to a branch of
    the owner's table, else the table's main branch (``MAIN_BRANCH``, the name Iceberg's spec gives
    the branch of the table's current snapshot). ``env`` names no branch today."""
    fork = contract.get("fork_of")
    branch = fork.get("branch") if isinstance(fork, Mapping) else None
    return branch if isinstance(branch, str) and branch else MAIN_BRANCH


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
