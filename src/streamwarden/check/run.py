"""One run: load contracts -> gather facts -> build the input document -> evaluate -> waive.

Why one module of this size: the steps of a run share one ``_RunContext`` (options, configuration,
engine, cache, the pull request's base side, the workers) and run in the order written here; split,
each step would take that context as a parameter and the order would be read across files. Its parts
in order: options and result, the run (discovery to waivers), workers, gathering, evaluation, the
one-pipeline entry points of gate, evidence and facts.
"""

from __future__ import annotations

import functools
import gc
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.contracts import Contract, discover_contracts, load_contract, load_contracts
from streamwarden.contracts.config import Config
from streamwarden.contracts.load import warm_contract_schema
from streamwarden.core import progress, runstate, selfcheck
from streamwarden.core.errors import ContractErrors, InputError, StreamwardenError, UsageError
from streamwarden.core.escape import shown_name
from streamwarden.core.paths import display_path, resolved
from streamwarden.engine import Engine, PolicySet, RawResults, load_policy_set, make_engine
from streamwarden.evaluate import inputdoc, writers
from streamwarden.evaluate.findings import Finding, to_finding
from streamwarden.evaluate.waivers import apply_waivers
from streamwarden.yamlsafe.read import decode_utf8, read_text

# imported where used: a run whose contracts are all cache hits forks no worker, reads no git
# ref and gathers no fact (multiprocessing, git, pullrequest, the gathering pipeline)
if TYPE_CHECKING:
    from streamwarden.check.cache import Entry, ResultCache, StatePrefetch, Stats
    from streamwarden.engine.limits import Limits
    from streamwarden.engine.policyset import PolicyFile
    from streamwarden.facts.data_run import DataRun
    from streamwarden.repo.pullrequest import BaseSnapshot, PendingBase, TrustedPolicies


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


def now_ms() -> int:
    return int(time.time() * 1000)


def load_for_run(config: Config, paths: Sequence[str]) -> tuple[list[Contract], list[StreamwardenError]]:
    files, errors = discover_for_configs(paths, [config])
    contracts, load_errors = load_contracts(files, config.root)
    return contracts, errors + load_errors


def discover_for_configs(
    paths: Sequence[str],
    configs: Sequence[Config],
    texts: dict[Path, str] | None = None,
    others: dict[str, bytes] | None = None,
) -> tuple[list[Path], list[StreamwardenError]]:
    """The contract files of a run: PATH arguments as given, else every configuration's globs (a
    glob written in a ``streamwarden.yaml`` makes each file it matches a contract). ``texts``
    receives the text of the files discovery had to read, for the loader; ``others`` the bytes of
    the files it read that are no contract (see discover_contracts)."""
    if paths:
        return discover_contracts(paths, configs[0].root, (), texts=texts, others=others)
    files: list[Path] = []
    errors: list[StreamwardenError] = []
    seen: set[Path] = set()
    searched: set[tuple[Path, tuple[str, ...], bool]] = set()
    for cfg in configs:
        search = (cfg.root, tuple(cfg.contracts), cfg.contracts_set)
        if search in searched:  # a pull request that leaves the configuration's globs as they are
            continue
        searched.add(search)
        found, errs = discover_contracts(
            (), cfg.root, cfg.contracts, every_match=cfg.contracts_set, texts=texts, others=others
        )
        errors.extend(errs)
        for f in found:
            key = resolved(f)
            if key not in seen:
                seen.add(key)
                files.append(f)
    return files, errors


def _union_globs(configs: Sequence[Config]) -> list[str]:
    return list(dict.fromkeys(g for cfg in configs for g in cfg.contracts))


def find_pipeline(config: Config, name: str, paths: Sequence[str] = ()) -> Contract:
    """The contract whose ``metadata.name`` is ``name``: the one lookup of ``facts``, ``gate`` and
    ``evidence``. Unknown (the names known listed), or possibly a contract that does not load:
    a StreamwardenError (exit 2)."""
    contracts, errors = load_for_run(config, paths)
    match = [c for c in contracts if c.name == name]
    if match:
        return match[0]
    if errors:  # the pipeline may be the contract that does not load
        raise ContractErrors(errors)
    known = ", ".join(sorted(c.name for c in contracts)) or "none found"
    raise UsageError(f"unknown pipeline '{name}' (known: {known})")


PARALLEL_THRESHOLD = 200  # contracts; below it a second process costs more than it saves
STATIC_CHUNK = 64  # contracts loaded, evaluated and dropped together: memory stays flat
MIN_CHUNK = 8  # the smallest chunk a fork worker is handed
LIVE_CHUNK = 256  # with --env: live facts are gathered concurrently for a chunk at a time


def run_check(config: Config, options: RunOptions) -> RunResult:
    """Check every contract. Large sets are split across the machine's cores (fork), each worker
    loading, gathering and evaluating its share; results are merged in file order.

    With ``base_ref`` the base contracts come from the merge base, and policies, waivers and
    fail_on from the trusted ref (default: the base ref), so a pull request cannot weaken its check.
    """
    now = options.now_ms if options.now_ms is not None else now_ms()
    with runstate.begin():  # what the run keeps (files read, paths resolved) ends with it
        ctx = _RunContext(config=config, options=options, now=now)
        trusted: TrustedPolicies | None = None
        # which files are contracts: the work tree's configuration and, in a pull request, the trusted
        # one too (a pull request cannot narrow the set; a contract leaves it only by being deleted)
        selecting = [config]
        pending_base: PendingBase | None = None
        if options.base_ref:
            from streamwarden.repo.git import GitRepo
            from streamwarden.repo.pullrequest import begin_base, load_trusted

            repo = GitRepo.discover(config.root)
            trusted = load_trusted(repo, options.trusted_ref or options.base_ref, config, list(options.policy_dirs))
            ctx.policy_files = trusted.files
            selecting.append(trusted.config)  # (the defaults when the trusted ref has no streamwarden.yaml)
            ctx.trusted_config = trusted.config
            # under unchanged policies, a contract the pull request leaves as it is has nothing new to
            # say against its base and history: it is not parsed on the base side, and the rules that
            # compare it are not evaluated (they were when it last changed)
            same_ref = options.trusted_ref is None or repo.resolve(options.trusted_ref) == repo.resolve(
                options.base_ref
            )
            ctx.skip_unchanged = same_ref and not trusted.changes
            # the base's git listings run in the background while this process discovers the head's
            # contracts (two cores: git's grep over the merge base and the discovery overlap)
            pending_base = begin_base(
                repo,
                options.base_ref,
                config,
                list(options.paths),
                _union_globs(selecting),
                reuse_unchanged=ctx.skip_unchanged,
            )
        # the files discovery reads that are no contract (deployment files beside the contracts) are
        # kept for the run (readahead): the deployment gatherer and the result cache read each once
        others: dict[str, bytes] = {}
        try:
            ctx.prefetch = _start_prefetch(options, selecting)
            try:
                files, errors = discover_for_configs(options.paths, selecting, ctx.texts, others)
                if ctx.prefetch is not None and (others or len(files) < ctx.prefetch.minimum):
                    ctx.prefetch.cancel()  # few contracts, or their deployment files read already
                    ctx.prefetch = None
                if pending_base is not None:
                    ctx.base = pending_base.finish()  # (keeps the unchanged contracts' bytes it read)
                    if trusted is not None:
                        ctx.base.read_trusted_waivers(trusted.commit, pending_base.pathspecs)
            finally:
                if pending_base is not None:
                    pending_base.close()
            runstate.current().keep(others)
            del others
            return _run_discovered(ctx, options, files, errors, trusted)
        finally:
            if ctx.prefetch is not None:
                ctx.prefetch.cancel()


def _run_discovered(
    ctx: _RunContext,
    options: RunOptions,
    files: list[Path],
    errors: list[StreamwardenError],
    trusted: TrustedPolicies | None,
) -> RunResult:
    """run_check once the contracts are found: cache hits, the workers or this process, the merge."""
    ctx.keep_inputs = options.keep_inputs or len(files) < PARALLEL_THRESHOLD
    if options.environment:
        # connection details come from the trusted configuration when there is one: a pull request
        # cannot point the check (and its credentials) at a host of its choosing
        ctx.env = (ctx.trusted_config or ctx.config).environment(options.environment)
    ctx.policy_set()
    cache_dir = _cache_dir(options)
    if cache_dir is not None:
        ctx.cache = _open_cache(ctx, cache_dir)
    if ctx.cache is None and ctx.prefetch is not None:
        ctx.prefetch.cancel()  # a directory the cache may not use (tracked by git): nothing to answer
    progress.set_total(len(files))
    order = {p: i for i, p in enumerate(files)}
    merged: list[_Checked] = []
    if ctx.cache is not None:
        # hits first, in this process: only the misses are loaded, evaluated, or worth a fork (in
        # self-check mode each hit is evaluated again and compared with what the cache answered)
        files = _hits_first(files, ctx, merged, errors)
        if selfcheck.enabled():
            _verify_hits(ctx, list(merged))
    # live facts run in this process (a Spark session and REST clients do not survive a fork)
    workers = 1 if ctx.env is not None else _worker_count(len(files))
    if workers > 1:
        chunks = _chunks(files, workers)
        import multiprocessing

        mp = multiprocessing.get_context("fork")
        parts = []
        # the workers inherit the context, the compiled policies and the compiled contract schema
        # through the fork: nothing is pickled per chunk but the file list
        warm_contract_schema()
        engine = ctx.engine(defer_full=True) if ctx.options.engine == "regorus" else None
        _FORKED["ctx"] = ctx
        _freeze_heap()
        try:
            with mp.Pool(workers) as pool:
                results = pool.imap_unordered(_check_chunk, chunks)
                # while the workers run (each compiles the subsets its documents select), this
                # process checks that the set compiles (RegorusEngine.check_compiles)
                check_compiles = getattr(engine, "check_compiles", None)
                if check_compiles is not None:
                    check_compiles()
                for part in results:
                    parts.append(part)
                    progress.advance(part[2])
                    if ctx.cache is not None:
                        ctx.cache.stats.hits += part[3][0]
                        ctx.cache.stats.misses += part[3][1]
                        ctx.cache.stats.written += part[3][2]
        finally:
            _FORKED.clear()
        merged.extend(item for part in parts for item in part[0])
        for part in parts:
            errors.extend(part[1])
    else:
        if len(files) >= STATIC_CHUNK:  # a full collection (10-30 ms) pays off over many contracts only
            _freeze_heap()
        checked, own_errors = _check_files(files, ctx, report_progress=True)
        merged.extend(checked)
        errors = errors + own_errors
    merged.sort(key=lambda item: order.get(item[0], 0))
    if ctx.cache is not None:
        _finish_cache(ctx.cache, ctx.run_keys)
    pipelines: list[PipelineRef] = []
    findings: list[Finding] = []
    inputs: dict[str, dict[str, Any]] = {}
    seen: dict[str, PipelineRef] = {}
    written: list[writers.Writer] = []
    for _, ref, found, doc, name_line, writer in merged:
        if ref.name in seen:
            errors.append(_duplicate_name(ref, seen[ref.name], name_line))
            continue
        seen[ref.name] = ref
        pipelines.append(ref)
        findings.extend(found)
        if doc is not None:
            inputs[ref.name] = doc
        if writer is not None:
            written.append(writer)
    policy_set = ctx.policy_set()
    if ctx.base is not None and trusted is not None:
        findings.extend(_repository_findings(ctx, policy_set, set(seen), trusted))
    findings.extend(_writer_findings(ctx, policy_set, written))
    findings.sort(key=Finding.sort_key)
    return RunResult(
        pipelines=pipelines,
        findings=findings,
        errors=errors,
        inputs=inputs,
        policy_set=policy_set,
        fail_on=trusted.config.fail_on if trusted else None,
        base=ctx.base,
        cache_stats=ctx.cache.stats if ctx.cache is not None else None,
        cache_off=ctx.cache_off,
        cached=frozenset(ctx.cached),
    )


def _start_prefetch(options: RunOptions, configs: Sequence[Config]) -> StatePrefetch | None:
    """When the configurations' globs name only contracts, discovery reads no deployment file and
    the cache's lookups would hash each one in turn: a child hashes them while this process
    discovers the contracts and finishes the base (cache.StatePrefetch)."""
    cache_dir = _cache_dir(options)
    if cache_dir is None or options.paths or not all(c.contracts_set for c in configs):
        return None
    from streamwarden.check.cache import StatePrefetch

    return StatePrefetch.start(cache_dir)


def _cache_dir(options: RunOptions) -> Path | None:
    """The result cache's directory, when the run may answer from it. Never with live facts
    (``--env``). A run that keeps its inputs is not cached, but the contract review (check --base
    --format markdown|github): it keeps each input's contract and base, and a contract the cache
    may answer in a pull request is one the pull request leaves as it is, whose review entry is
    empty with or without its input (diff.review)."""
    review = options.review_inputs and options.base_ref is not None
    if options.environment or (options.keep_inputs and not review):
        return None
    return options.cache_dir


def _hits_first(
    files: list[Path], ctx: _RunContext, out: list[_Checked], errors: list[StreamwardenError]
) -> list[Path]:
    """Answer every file the cache holds (from its pack: one read for the run); returns the
    others (their text kept for the loader; in self-check mode the hits' too, to check them)."""
    from streamwarden.check.cache import file_key

    assert ctx.cache is not None
    ctx.cache.load_pack()
    if ctx.prefetch is not None:
        ctx.cache.use_prefetched(ctx.prefetch.take())
    accept = _reviewable(ctx) if ctx.review else None
    keep_text = selfcheck.enabled()
    keys: list[str] = []
    misses: list[Path] = []
    for f in files:
        try:
            resolved_path = resolved(f)
            shown = display_path(f, ctx.config.root, resolved_path)
            text = ctx.texts[f] = ctx.text_of(f, resolved_path, shown, keep=True)
        except StreamwardenError as exc:
            errors.append(exc)
            progress.advance()
            continue
        if ctx.base is None or (ctx.skip_unchanged and ctx.base.unchanged(resolved_path)):
            key = file_key(ctx.cache.context, shown, resolved_path, text)
            keys.append(key)
            entry = ctx.cache.lookup(key, ctx.now, accept)
            if entry is not None:
                if not keep_text:
                    del ctx.texts[f]
                out.append(_from_entry(f, entry, ctx))
                progress.advance()
                continue
        misses.append(f)
    ctx.run_keys = keys
    return misses


def _reviewable(ctx: _RunContext) -> Callable[[Entry], bool]:
    """In a run with the contract review: an entry the review can do without its input document.
    A hit is a file the pull request leaves as it is, with nothing to list, unless a rule that
    compares with the base (``custom.kind: diff``) found something without one (a custom rule
    can): the review then lists that finding with the contract's consumers, which only the
    contract says, so such an entry is a miss."""
    policy_set = ctx.policy_set()
    return lambda entry: not any(policy_set.is_diff_rule(f.rule) for f in entry.findings)


def _verify_hits(ctx: _RunContext, hits: list[_Checked]) -> None:
    """Self-check mode: each file the cache answered is loaded and evaluated as if it had missed;
    what the run reports for it must be what the cache answered (its findings with the waivers
    in force, the time they show, its name and lines, the tables it writes), and in a run with the contract review the
    review must list no change for it (as it does for a hit: RunResult.cached)."""
    from streamwarden.check.cache import finding_to_json

    for f, ref, found, _, name_line, writer in hits:
        resolved_path = resolved(f)
        shown = display_path(f, ctx.config.root, resolved_path)
        contract = load_contract(f, ctx.config.root, text=ctx.text_of(f, resolved_path, shown))
        base_doc = ctx.base.document(contract.name, contract.path, contract.data) if ctx.base is not None else None
        fresh, doc = evaluate_pipeline(
            ctx,
            contract,
            _gather_facts(ctx, contract, {}),
            base_doc,
            compare_base=not (ctx.skip_unchanged and ctx.base is not None and ctx.base.unchanged(contract.path)),
            base_named=_base_named_deployment(ctx, contract) if ctx.base is not None else None,
        )
        fresh_writer = writers.writer_of(contract)
        answered = (
            ref,
            name_line,
            [finding_to_json(x) for x in sorted(found, key=Finding.sort_key)],
            writer.cached() if writer is not None else None,
        )
        computed = (
            PipelineRef(contract.name, contract.file),
            contract.line_of("metadata.name"),
            [finding_to_json(x) for x in fresh],
            fresh_writer.cached() if fresh_writer is not None else None,
        )
        if answered != computed:
            raise selfcheck.SelfCheckError(
                f"the result cache returned a stale result for {contract.file}: "
                f"cached {answered!r}, computed {computed!r}"
            )
        if ctx.review:
            from streamwarden.evaluate.review import review_changes

            listed = review_changes(inputdoc.review_part(doc), fresh, ctx.policy_set().diff_rule_ids())
            if listed:
                raise selfcheck.SelfCheckError(
                    f"the result cache answered {contract.file}, whose review lists changes: {listed!r}"
                )


def _finish_cache(cache: ResultCache, keys: list[str] | None) -> None:
    """After the files are checked: the run's entries in one pack (the next run reads one file
    for them), old entries evicted."""
    if keys:
        cache.store_pack(keys)
    cache.finish()


def _freeze_heap() -> None:
    """What the run built so far (modules, compiled schema and policies, the base snapshot) lives
    to the end: move it out of the collector's sight, and collect less often while contracts are
    checked (their documents are trees of small objects with no cycles worth chasing). The young
    generations are collected first (what they hold would otherwise be frozen); the oldest, the
    imports' objects, is frozen without a full collection (~10 ms, paid before the workers fork)."""
    gc.collect(1)
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def _open_cache(ctx: _RunContext, directory: Path) -> ResultCache | None:
    from streamwarden.check.cache import ResultCache, make_context

    why = ResultCache.unusable(directory, ctx.config.root)
    if why is not None:
        try:  # the default, in the repository root, as the user knows it
            where = directory.relative_to(ctx.config.root).as_posix()
        except ValueError:
            where = os.fspath(directory)
        ctx.cache_off = f"the result cache {shown_name(where)} is not used: {why}"
        return None
    context = make_context(
        policy_files=ctx.policy_set().files,
        engine=ctx.options.engine,
        engine_options=ctx.options.engine_options,
        root=ctx.config.root,
        known_keys=ctx.known_keys,
        mode=ctx.options.mode,
        waiver_horizon_ms=ctx.waiver_horizon_ms,
    )
    return ResultCache(directory, context, _rule_text(ctx.policy_set()))


def _rule_text(policy_set: PolicySet) -> Callable[[str], tuple[str, str]]:
    """A rule's title and remediation as to_finding gives them (the rule id and nothing for a rule
    without METADATA), for the cache to restore findings stored without them."""
    rules = policy_set.rules

    def rule_text(rule: str) -> tuple[str, str]:
        desc = rules.get(rule)
        return (desc.title, desc.remediation) if desc is not None else (rule, "")

    return rule_text


@dataclass
class _RunContext:
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
    cache_off: str | None = None  # why the result cache's directory could not be used (_open_cache)
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


@dataclass
class _Subject:
    """What a finding is located against when there is no head contract (a removed pipeline)."""

    name: str
    file: str
    data: dict[str, Any]

    def line_of(self, path: str) -> int:
        return 1


REMOVAL_PACKAGE = "streamwarden.removal"
REPOSITORY_PACKAGE = "streamwarden.policy"
REPOSITORY = "(repository)"


def _repository_findings(
    ctx: _RunContext, policy_set: PolicySet, head_names: set[str], trusted: TrustedPolicies
) -> list[Finding]:
    """Pipelines the pull request removes, and changes to policies or configuration."""
    assert ctx.base is not None
    engine = ctx.engine()
    out: list[Finding] = []
    for removed in ctx.base.removed(head_names):
        base_doc = inputdoc.base_section(
            ref=ctx.base.ref, commit=ctx.base.commit, file=removed.file, status="removed", contract=removed.contract
        )
        doc = inputdoc.removed_pipeline(
            base_doc, ctx.now, ctx.options.environment, ctx.options.mode, config=ctx.policy_settings
        )
        subject = _Subject(removed.name or removed.file, removed.file, removed.contract or {})
        out.extend(_evaluate(engine, policy_set, subject, doc, [REMOVAL_PACKAGE]))
    doc = inputdoc.repository(trusted.ref, trusted.commit, trusted.changes, ctx.now)
    out.extend(_evaluate(engine, policy_set, _Subject(REPOSITORY, "", {}), doc, [REPOSITORY_PACKAGE]))
    return out


def _writer_findings(ctx: _RunContext, policy_set: PolicySet, written: list[writers.Writer]) -> list[Finding]:
    """SW-TABLE-014 and the other rules of package streamwarden.writers, once per run, on the tables
    more than one contract writes (none: nothing is evaluated). Each finding belongs to the writer
    the rule names (``pipeline``), is located in its file, and is waived by its waivers in force."""
    shared = writers.shared_tables(written)
    if not shared:
        return []
    doc = inputdoc.writers(shared, ctx.now, ctx.base.ref if ctx.base is not None else None)
    by_name = {w.pipeline: w for w in written}
    if selfcheck.enabled():
        selfcheck.check_input(doc)
    out: list[Finding] = []
    for (package, rule_set), elements in ctx.engine().evaluate(doc, [writers.PACKAGE]).items():
        for element in elements:
            name = element.get("pipeline") if isinstance(element, dict) else None
            writer = by_name.get(name) if isinstance(name, str) else None
            subject = _Subject(writer.pipeline, writer.file, {}) if writer else _Subject(REPOSITORY, "", {})
            f = to_finding(policy_set, package, rule_set, element, subject)
            if writer is not None:
                own = {"waivers": writer.waivers}
                if writer.trusted_waivers is None:
                    apply_waivers([f], own)
                else:
                    apply_waivers([f], own, trusted=writer.trusted_waivers, now_ms=ctx.now)
            out.append(f)
    return out


def _chunks(files: list[Path], workers: int) -> list[list[Path]]:
    """The files in chunks for ``workers`` processes, each chunk a share of what is left, so the
    chunks shrink towards the end (guided scheduling): the workers finish within a few contracts
    of each other, where equal chunks left one worker alone for up to a chunk's time at the end.
    No chunk has fewer than ``MIN_CHUNK`` files (a chunk costs a round trip and a pickled result),
    and none more than ``STATIC_CHUNK`` times 2, so progress advances as results come back."""
    out: list[list[Path]] = []
    start = 0
    while start < len(files):
        size = min(2 * STATIC_CHUNK, max(MIN_CHUNK, (len(files) - start) // (workers * 4)))
        out.append(files[start : start + size])
        start += size
    return out


def _worker_count(n_files: int) -> int:
    forced = os.environ.get("STREAMWARDEN_WORKERS", "")
    if forced.isdigit() and int(forced) > 0:
        return min(int(forced), max(1, n_files))
    cpus = os.cpu_count() or 1
    if n_files < PARALLEL_THRESHOLD or cpus < 2:
        return 1
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(cpus, 4, n_files // (PARALLEL_THRESHOLD // 2)))


# a checked contract: its file, name, findings, input document (when kept), the line of its name, and
# the tables it writes (writers.py)
_Checked = tuple[Path, PipelineRef, list[Finding], "dict[str, Any] | None", int, "writers.Writer | None"]


# The run a fork worker serves, set by run_check just before the pool forks.
_FORKED: dict[str, _RunContext] = {}


def _check_chunk(files: Sequence[Path]) -> tuple[list[_Checked], list[StreamwardenError], int, tuple[int, int, int]]:
    ctx = _FORKED["ctx"]
    before = _cache_counts(ctx)
    out, errors = _check_files(files, ctx)
    after = _cache_counts(ctx)
    return out, errors, len(files), (after[0] - before[0], after[1] - before[1], after[2] - before[2])


def _cache_counts(ctx: _RunContext) -> tuple[int, int, int]:
    if ctx.cache is None:
        return (0, 0, 0)
    return (ctx.cache.stats.hits, ctx.cache.stats.misses, ctx.cache.stats.written)


def _check_files(
    files: Sequence[Path], ctx: _RunContext, report_progress: bool = False
) -> tuple[list[_Checked], list[StreamwardenError]]:
    """Load, gather and evaluate ``files`` a chunk at a time (so a large run holds one chunk's
    contracts and documents, not every one); with a result cache, a hit skips all three."""
    out: list[_Checked] = []
    errors: list[StreamwardenError] = []
    step = LIVE_CHUNK if ctx.env is not None else STATIC_CHUNK
    for start in range(0, len(files), step):
        _check_chunk_of(files[start : start + step], ctx, out, errors, report_progress)
    return out, errors


def _check_chunk_of(
    files: Sequence[Path],
    ctx: _RunContext,
    out: list[_Checked],
    errors: list[StreamwardenError],
    report_progress: bool,
) -> None:
    ctx.engine()  # made first: an engine that cannot be made fails the chunk before any contract is read
    cache = ctx.cache
    contracts: list[tuple[Path, Contract, str | None]] = []
    for f in files:
        if report_progress:
            progress.advance()
        try:
            resolved_path = resolved(f)
            shown = display_path(f, ctx.config.root, resolved_path)
            text = ctx.text_of(f, resolved_path, shown)
            key: str | None = None
            if cache is not None and (
                ctx.base is None or (ctx.skip_unchanged and ctx.base.unchanged(resolved_path))
            ):  # a contract the pull request changes is evaluated with its base: not cached
                from streamwarden.check.cache import file_key

                key = file_key(cache.context, shown, resolved_path, text)  # (looked up: _hits_first)
            contracts.append((f, load_contract(f, ctx.config.root, text=text), key))
        except ContractErrors as exc:
            errors.extend(exc.errors)
        except StreamwardenError as exc:
            errors.append(exc)
    live = ctx.live_facts([c for _, c, _ in contracts])
    for (f, contract, key), extra in zip(contracts, live, strict=True):
        deps = None
        if cache is not None and key is not None:  # hashed before they are read: a later edit is a miss
            from streamwarden.check.cache import deployment_paths

            deps = cache.deps_of(deployment_paths(contract.data, contract.path))
        facts = _gather_facts(ctx, contract, extra)
        base_doc = ctx.base.document(contract.name, contract.path, contract.data) if ctx.base is not None else None
        base_named = _base_named_deployment(ctx, contract) if ctx.base is not None else None
        remember = None
        if cache is not None and key is not None and deps is not None:
            remember = functools.partial(_remember, cache, key, deps, contract, ctx=ctx)
        found, doc = evaluate_pipeline(
            ctx,
            contract,
            facts,
            base_doc,
            compare_base=not (ctx.skip_unchanged and ctx.base is not None and ctx.base.unchanged(contract.path)),
            before_waivers=remember,
            base_named=base_named,
        )
        ref = PipelineRef(contract.name, contract.file)
        kept = None
        if ctx.keep_inputs:
            kept = inputdoc.review_part(doc) if ctx.options.review_inputs and not ctx.options.whole_inputs else doc
        writer = writers.writer_of(contract)
        if writer is not None and base_doc is not None and ctx.base is not None:
            writer.base = writers.base_part(base_doc)
            base_waivers = (base_doc.get("contract") or {}).get("waivers") or []
            writer.trusted_waivers = ctx.base.waivers_in_force(contract.name, base_waivers)
        out.append((f, ref, found, kept, contract.line_of("metadata.name"), writer))


def _base_named_deployment(ctx: _RunContext, contract: Contract) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """In a pull request whose contract no longer names a file its base's ``job.deployment`` names,
    the base's files (``BaseSnapshot.named_deployment``): the contract's data naming them instead,
    and their ``facts.deployment``. None otherwise (the usual case)."""
    assert ctx.base is not None
    entries = ctx.base.named_deployment(contract.name, contract.path, contract.data)
    if not entries:
        return None
    from streamwarden.facts.deployment import gather_named_deployment

    job = contract.data.get("job")
    data = {**contract.data, "job": {**(job if isinstance(job, dict) else {}), "deployment": entries}}
    top = ctx.base.repo.top_resolved()
    return data, gather_named_deployment(data, top, ctx.config.root, ctx.known_keys)


@dataclass
class _NamedDeployment:
    """A contract judged on the files its base names (:func:`_base_named_deployment`): its
    ``job.deployment`` entries are the base's, located at the head's ``job.deployment``."""

    contract: Contract
    data: dict[str, Any]

    @property
    def name(self) -> str:
        return self.contract.name

    @property
    def file(self) -> str:
        return self.contract.file

    def line_of(self, path: str) -> int:
        return self.contract.line_of("job.deployment" if path.startswith("job.deployment") else path)


def _base_named_findings(
    ctx: _RunContext,
    contract: Contract,
    doc: dict[str, Any],
    base_named: tuple[dict[str, Any], dict[str, Any]],
    found: list[Finding],
) -> list[Finding]:
    """Every policy over the files a pull request's base contract names, judged against the head
    contract: repointing or dropping ``job.deployment`` never hides what those files say. A finding
    the pipeline's own evaluation has (the same rule, fingerprint and place: the contract's own
    findings, and those of a file both name) is not repeated."""
    data, deployment = base_named
    named = inputdoc.with_deployment(doc, data, deployment)
    seen = {(f.rule, f.fingerprint, f.file, f.line) for f in found}
    out: list[Finding] = []
    for f in _evaluate(ctx.engine(), ctx.policy_set(), _NamedDeployment(contract, data), named, None):
        key = (f.rule, f.fingerprint, f.file, f.line)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _remember(
    cache: ResultCache,
    key: str,
    deps: list[tuple[str, str]],
    contract: Contract,
    evaluated: dict[str, Any],
    found: list[Finding],
    reads: frozenset[str],
    ctx: _RunContext,
) -> None:
    """Store a contract's findings (before waivers are applied), valid for as long as what the
    evaluation read of the time allows (``reads``: cache.timing_for)."""
    from streamwarden.check.cache import Entry, timing_for

    engine, policy_set = ctx.engine(), ctx.policy_set()
    timing = timing_for(
        reads=reads,
        files=policy_set.files_for(evaluated),
        document=evaluated,
        now=ctx.now,
        found=found,
        evaluate_at=lambda t, packages: _evaluate(engine, policy_set, contract, {**evaluated, "now_ms": t}, packages),
    )
    writer = writers.writer_of(contract)
    entry = Entry(
        name=contract.name,
        file=contract.file,
        name_line=contract.line_of("metadata.name"),
        waivers=list(contract.data.get("waivers") or []),
        findings=found,
        deps=deps,
        timing=timing,
        writes=writer.cached() if writer is not None else None,
    )
    cache.store(key, entry)


def _from_entry(f: Path, entry: Entry, ctx: _RunContext) -> _Checked:
    """A cache hit: the stored findings, with the waivers in force applied as for a fresh result."""
    found = entry.findings
    ctx.cached.add(entry.name)
    waivers = {"waivers": entry.waivers}
    writer = writers.from_cache(entry.name, entry.file, entry.waivers, entry.writes)
    if ctx.base is None:
        apply_waivers(found, waivers)
    else:  # an unchanged contract: its base version is itself, so are its waivers (unless the
        # trusted ref changed them since the merge base)
        in_force = ctx.base.waivers_in_force(entry.name, entry.waivers)
        apply_waivers(found, waivers, trusted=in_force, now_ms=ctx.now, horizon_ms=ctx.waiver_horizon_ms)
        if writer is not None:
            writer.base = writers.unchanged_base(writer)
            writer.trusted_waivers = in_force
    return (f, PipelineRef(entry.name, entry.file), found, None, entry.name_line, writer)


def _duplicate_name(ref: PipelineRef, first: PipelineRef, line: int) -> InputError:
    return InputError(
        f"pipeline name '{ref.name}' is already used by {first.file}",
        file=ref.file,
        line=line,
        path="metadata.name",
        hint="metadata.name must be unique: it pairs contracts across branches",
    )


def evaluate_pipeline(
    ctx: _RunContext,
    contract: Contract,
    facts: dict[str, Any],
    base: dict[str, Any] | None = None,
    *,
    compare_base: bool = True,
    before_waivers: Callable[[dict[str, Any], list[Finding], frozenset[str]], None] | None = None,
    base_named: tuple[dict[str, Any], dict[str, Any]] | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """Evaluate one pipeline; every verb that evaluates (check, gate, evidence) goes through here.

    The input document (inputdoc.pipeline: the run's mode, time and environment), every policy of
    the run, then the waivers in force: the contract's own, or in a pull request (``base``) the
    base's. ``compare_base`` false: the base is left out of the evaluated document (an unchanged
    contract under unchanged policies) but kept in the returned one (the contract review reads it).
    ``before_waivers`` sees the evaluated document, the findings before waivers and the policy
    files that may have read the time in the evaluation (the result cache stores the findings for
    as long as those reads allow; never those of a contract judged on its base's files too).
    ``base_named``: in a pull request whose contract no longer names a file its base names, the
    base's files, also judged (:func:`_base_named_deployment`). Returns the findings in report
    order and the document."""
    doc = inputdoc.pipeline(
        contract, facts, ctx.now, ctx.options.environment, ctx.options.mode, base, config=ctx.policy_settings
    )
    evaluated = doc if base is None or compare_base else inputdoc.without_base(doc)
    remember = before_waivers if base_named is None else None
    if remember is None:
        found = evaluate_contract(ctx.engine(), ctx.policy_set(), contract, evaluated)
    else:
        found, reads = evaluate_reading(ctx.engine(), ctx.policy_set(), contract, evaluated)
        remember(evaluated, found, reads)
    if base_named is not None:
        found += _base_named_findings(ctx, contract, doc, base_named, found)
    if base is None:
        apply_waivers(found, contract.data)
    else:  # the trusted ref's waivers are the ones in force in a pull request (the merge base's,
        # unless the trusted ref changed the contract since)
        base_waivers = (base.get("contract") or {}).get("waivers") or []
        if ctx.base is not None:
            base_waivers = ctx.base.waivers_in_force(contract.name, base_waivers)
        apply_waivers(found, contract.data, trusted=base_waivers, now_ms=ctx.now, horizon_ms=ctx.waiver_horizon_ms)
    found.sort(key=Finding.sort_key)
    return found, doc


def _one_pipeline(
    config: Config,
    mode: str,
    now: int,
    environment: str | None,
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> _RunContext:
    options = RunOptions(
        policy_dirs=policy_dirs,
        engine=engine,
        now_ms=now,
        environment=environment,
        mode=mode,
        engine_options=dict(engine_options or {}),
    )
    return _RunContext(config=config, options=options, now=now)


def evaluate_one(
    config: Config,
    contract: Contract,
    facts: dict[str, Any],
    *,
    mode: str,
    now_ms: int,
    environment: str | None,
    policy_dirs: Sequence[Path] = (),
    engine: str = "regorus",
    engine_options: dict[str, Any] | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """One pipeline on facts gathered elsewhere (gate, evidence): the configuration's policies
    plus ``policy_dirs``, under its limits, through :func:`evaluate_pipeline`."""
    ctx = _one_pipeline(config, mode, now_ms, environment, policy_dirs, engine, engine_options)
    return evaluate_pipeline(ctx, contract, facts)


def pipeline_document(config: Config, contract: Contract, *, now_ms: int, environment: str | None) -> dict[str, Any]:
    """The ``facts`` command's document: the facts check gathers for ``contract`` (the repository's,
    and with ``environment`` the live sources'), in the shape check evaluates, mode ``facts``."""
    ctx = _one_pipeline(config, "facts", now_ms, environment)
    if environment:
        ctx.env = config.environment(environment)
    facts = _gather_facts(ctx, contract, ctx.live_facts([contract])[0])
    return inputdoc.pipeline(contract, facts, now_ms, environment, "facts", config=ctx.policy_settings)


def _gather_facts(ctx: _RunContext, contract: Contract, live: dict[str, Any]) -> dict[str, Any]:
    """A pipeline's facts: the repository's (static), then the live sections gathered for it."""
    from streamwarden.facts import pipeline
    from streamwarden.facts.deployment_source import DeploymentSettings
    from streamwarden.facts.source import GatherContext, Subject

    subject = Subject(contract.data, contract.path)
    gathering = GatherContext.of(ctx.config.root, ctx.now, [DeploymentSettings(ctx.known_keys)])
    pipeline.gather([subject], None, gathering, pipeline.STATIC)
    subject.facts.update(live)
    return subject.facts


def evaluate_contract(engine: Engine, policy_set: PolicySet, contract: Contract, doc: dict[str, Any]) -> list[Finding]:
    """Every policy over ``doc``, as findings (no waivers): see :func:`evaluate_pipeline`."""
    return _evaluate(engine, policy_set, contract, doc, None)


def evaluate_reading(
    engine: Engine, policy_set: PolicySet, contract: Contract, doc: dict[str, Any]
) -> tuple[list[Finding], frozenset[str]]:
    """:func:`evaluate_contract`, and the policy files that may have read ``input.now_ms`` in
    the evaluation: the ones whose read sites the engine ran, or where it cannot tell, every
    selected file that has one (engine/timeread.py)."""
    if selfcheck.enabled():
        selfcheck.check_input(doc)
    raw, ran = engine.evaluate_reading(doc, None)
    if ran is None:
        ran = frozenset(f.display for f in policy_set.files_for(doc) if f.now_reads)
    return _findings(policy_set, contract, raw), ran


def _evaluate(
    engine: Engine, policy_set: PolicySet, subject: Any, doc: dict[str, Any], packages: list[str] | None
) -> list[Finding]:
    if selfcheck.enabled():
        selfcheck.check_input(doc)
    return _findings(policy_set, subject, engine.evaluate(doc, packages))


def _findings(policy_set: PolicySet, subject: Any, raw: RawResults) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[Any, ...]] = set()
    for (package, rule_set), elements in raw.items():
        for element in elements:
            f = to_finding(policy_set, package, rule_set, element, subject)
            key = (f.rule, f.path, f.message, f.file, f.line)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out
