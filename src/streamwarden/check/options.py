"""What a check run is asked (``RunOptions``) and what it answers (``RunResult``), and the shape of one
checked contract (``Checked``). The engines a run can use are ``ENGINES``, the engine package's list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.engine import ENGINES as ENGINES

if TYPE_CHECKING:
    from streamwarden.check.cache import Stats
    from streamwarden.core.errors import StreamwardenError
    from streamwarden.engine import PolicySet
    from streamwarden.evaluate import writers
    from streamwarden.evaluate.findings import Finding
    from streamwarden.repo.pullrequest import BaseSnapshot


@dataclass
class RunOptions:
    paths: Sequence[str] = ()
    policy_dirs: Sequence[Path] = ()
    engine: str = "regorus"
    now_ms: int | None = None
    environment: str | None = None
    mode: str = "check"
    base_ref: str | None = None
    trusted_ref: str | None = None
    keep_inputs: bool = False  # keep every input document (diff, facts); large runs drop them
    engine_options: dict[str, Any] = field(default_factory=dict)  # e.g. {"url": ...} for the opa engine
    since_snapshot: int | None = None  # data facts: scan only rows added after this snapshot
    state_file: Path | None = None  # data facts: remember the last checked snapshot per table
    cache_dir: Path | None = None  # check --cache: the result cache (static results only)
    review_inputs: bool = False  # kept inputs hold only contract and base (the contract review's needs)
    whole_inputs: bool = False  # kept inputs are whole all the same (check --env's OpenLineage events read facts)


@dataclass(frozen=True)
class PipelineRef:
    name: str
    file: str


@dataclass
class RunResult:
    pipelines: list[PipelineRef]
    findings: list[Finding]
    errors: list[StreamwardenError]
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    policy_set: PolicySet | None = None
    fail_on: str | None = None  # from the trusted ref's streamwarden.yaml, with --base
    base: BaseSnapshot | None = None
    cache_stats: Stats | None = None  # with a result cache: hits and misses
    cache_off: str | None = None  # why the result cache asked for could not be used
    # the pipelines the result cache answered (no input document is kept for them; in a pull
    # request each is a file the pull request leaves as it is: diff.review lists no change for it)
    cached: frozenset[str] = frozenset()

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.pipelines]


# a checked contract: its file, name, findings, input document (when kept), the line of its name, and
# the tables it writes (writers.py)
Checked = tuple[Path, PipelineRef, "list[Finding]", "dict[str, Any] | None", int, "writers.Writer | None"]
