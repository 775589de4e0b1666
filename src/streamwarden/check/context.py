"""``RunContext``: what one run shares between its steps (options, configuration, the policy set and
the engine, the result cache, a pull request's base side, the live environment)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.check.options import RunOptions
from streamwarden.contracts import Contract
from streamwarden.contracts.config import Config
from streamwarden.core import runstate
from streamwarden.engine import Engine, PolicySet, load_policy_set, make_engine
from streamwarden.yamlsafe.read import decode_utf8, read_text

if TYPE_CHECKING:
    from streamwarden.check.cache import ResultCache, StatePrefetch
    from streamwarden.engine.limits import Limits
    from streamwarden.engine.policyset import PolicyFile
    from streamwarden.facts.data_run import DataRun
    from streamwarden.repo.pullrequest import BaseSnapshot


@dataclass
class RunContext:
    config: Config
    options: RunOptions
    now: int
    base: BaseSnapshot | None = None
    policy_files: list[PolicyFile] | None = None

    _policy_set: PolicySet | None = None
    _engine: Engine | None = None
    _engine_pid: int = 0
    env: dict[str, Any] | None = None  # the --env environment, ${VAR}s expanded
    skip_unchanged: bool = False  # PR mode, policies unchanged: no diff rules for unchanged contracts
    trusted_config: Config | None = None  # PR mode: the trusted ref's streamwarden.yaml
    texts: dict[Path, str] = field(default_factory=dict)  # contract texts discovery read, for the loader
    keep_inputs: bool = False  # keep every input document (set from the run's size and options)
    cache: ResultCache | None = None
    prefetch: StatePrefetch | None = None  # the cache's dependency states, hashed by a child (run_check)
    cache_off: str | None = None  # why the result cache's directory could not be used (open_cache)
    run_keys: list[str] | None = None  # the cache keys of the files it may answer (for the run's pack)
    data_run: DataRun | None = None  # --env: the data facts' state file and scan budget, for the whole run
    cached: set[str] = field(default_factory=set)  # the pipelines the cache answered (RunResult.cached)

    @property
    def review(self) -> bool:
        """The run keeps what the contract review reads (check --base --format markdown|github)."""
        return self.base is not None and self.options.keep_inputs and self.options.review_inputs

    @property
    def limits(self) -> Limits:
        """Policy evaluation limits: the trusted configuration's in a pull request (the policies
        are the trusted ref's; so are the bounds they run under)."""
        return (self.trusted_config or self.config).limits

    @property
    def known_keys(self) -> tuple[str, ...]:
        """``flink.known_keys`` (keys SW-DEPLOY-001 accepts): the trusted configuration's in a pull
        request, like every setting that decides a finding."""
        return (self.trusted_config or self.config).flink_known_keys

    @property
    def waiver_horizon_ms(self) -> int:
        """``waivers.max_horizon``: the trusted configuration's in a pull request."""
        return (self.trusted_config or self.config).waiver_max_horizon_ms

    @property
    def policy_settings(self) -> dict[str, Any]:
        """``input.config`` (``waivers.max_horizon``): the trusted configuration's in a pull request."""
        return (self.trusted_config or self.config).policy_settings()

    def live_facts(self, contracts: list[Contract]) -> list[dict[str, Any]]:
        if self.env is None:
            return [{} for _ in contracts]
        from streamwarden.facts import pipeline
        from streamwarden.facts.data_run import DataRun
        from streamwarden.facts.source import GatherContext, Subject
        from streamwarden.facts.spark_data import DataSettings
        from streamwarden.iceberg.access import access_of

        if self.data_run is None:  # one per run: the state file, the scan budget and what it spent
            # a pull request's contracts read the trusted state file but never move it
            self.data_run = DataRun(
                self.options.state_file,
                read_only=self.base is not None,
                budget=access_of(self.env.get("iceberg")).budget,
            )
        subjects = [Subject(c.data, c.path) for c in contracts]
        if self.base is not None:  # who reads in a pull request: the owner and table of the base version
            for s, c in zip(subjects, contracts, strict=True):
                s.reader = self.base.reader(c.name, c.path, c.data)
        data = DataSettings(self.data_run, self.options.since_snapshot, self.options.state_file)
        pipeline.gather(subjects, self.env, GatherContext.of(self.config.root, self.now, [data]), pipeline.LIVE)
        return [s.facts for s in subjects]

    def engine(self, defer_full: bool = False) -> Engine:
        """One engine per process. The embedded engine is made once, before workers fork, and
        inherited; an OPA client is made in each process (HTTP connections must not be shared).
        ``defer_full`` (made for workers): the check that the policy set compiles comes later (check_compiles)."""
        pid = os.getpid()
        if self._engine is None or (self.options.engine != "regorus" and self._engine_pid != pid):
            extra: dict[str, Any] = {"defer_full": True} if defer_full and self.options.engine == "regorus" else {}
            self._engine = make_engine(
                self.options.engine, self.policy_set(), limits=self.limits, **self.options.engine_options, **extra
            )
            self._engine_pid = pid
        return self._engine

    def text_of(self, f: Path, resolved_path: Path, shown: str, keep: bool = False) -> str:
        """A contract's text, read once in the run: the text discovery read to tell it is a
        contract, else the bytes a pull request's base side read to compare blob ids
        (readahead), else the file. ``keep``: it stays in ``texts`` for a later reader."""
        text = self.texts.get(f) if keep else self.texts.pop(f, None)
        if text is not None:
            return text
        raw = runstate.current().take(os.fspath(resolved_path))
        return decode_utf8(raw, shown) if raw is not None else read_text(f, shown)

    def policy_set(self) -> PolicySet:
        """Loaded once per run (before workers fork, so they inherit it)."""
        if self._policy_set is None:
            if self.policy_files is not None:
                self._policy_set = load_policy_set(files=self.policy_files)
            else:
                self._policy_set = load_policy_set(
                    [*self.config.policies, *self.options.policy_dirs], root=self.config.root, builtin_tests=False
                )
        return self._policy_set
