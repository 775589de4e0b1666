"""One run: load contracts -> gather facts -> build the input document -> evaluate -> waive.

``run_check`` in order: a pull request's trusted side and base (repo/pullrequest.py), discovery,
the result cache's hits (runcache.py), the misses in this process or in workers (workers.py), each
evaluated by evaluation.py, the run-wide findings, the merge. The steps share one ``RunContext``
(context.py); what a run is asked and answers is in options.py."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.check.context import RunContext
from streamwarden.check.evaluation import repository_findings, writer_findings
from streamwarden.check.options import Checked, PipelineRef, RunOptions, RunResult
from streamwarden.check.runcache import cache_dir_of, finish_cache, hits_first, open_cache, start_prefetch, verify_hits
from streamwarden.check.workers import (
    PARALLEL_THRESHOLD,
    STATIC_CHUNK,
    check_files,
    check_forked,
    freeze_heap,
    worker_count,
)
from streamwarden.contracts import Contract, discover_contracts, load_contracts
from streamwarden.contracts.config import Config
from streamwarden.core import progress, runstate, selfcheck
from streamwarden.core.errors import ContractErrors, InputError, StreamwardenError, UsageError
from streamwarden.core.paths import resolved
from streamwarden.evaluate import writers
from streamwarden.evaluate.findings import Finding

# imported where used: a run whose contracts are all cache hits forks no worker, reads no git
# ref and gathers no fact (multiprocessing, git, pullrequest, the gathering pipeline)
if TYPE_CHECKING:
    from streamwarden.repo.pullrequest import PendingBase, TrustedPolicies


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


def run_check(config: Config, options: RunOptions) -> RunResult:
    """Check every contract. Large sets are split across the machine's cores (fork), each worker
    loading, gathering and evaluating its share; results are merged in file order.

    With ``base_ref`` the base contracts come from the merge base, and policies, waivers and
    fail_on from the trusted ref (default: the base ref), so a pull request cannot weaken its check.
    """
    now = options.now_ms if options.now_ms is not None else now_ms()
    with runstate.begin():  # what the run keeps (files read, paths resolved) ends with it
        ctx = RunContext(config=config, options=options, now=now)
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
            ctx.prefetch = start_prefetch(options, selecting)
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
    ctx: RunContext,
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
    cache_dir = cache_dir_of(options)
    if cache_dir is not None:
        ctx.cache = open_cache(ctx, cache_dir)
    if ctx.cache is None and ctx.prefetch is not None:
        ctx.prefetch.cancel()  # a directory the cache may not use (tracked by git): nothing to answer
    progress.set_total(len(files))
    order = {p: i for i, p in enumerate(files)}
    merged: list[Checked] = []
    if ctx.cache is not None:
        # hits first, in this process: only the misses are loaded, evaluated, or worth a fork (in
        # self-check mode each hit is evaluated again and compared with what the cache answered)
        files = hits_first(files, ctx, merged, errors)
        if selfcheck.enabled():
            verify_hits(ctx, list(merged))
    # live facts run in this process (a Spark session and REST clients do not survive a fork)
    workers = 1 if ctx.env is not None else worker_count(len(files))
    if workers > 1:
        checked, own_errors = check_forked(ctx, files, workers)
        merged.extend(checked)
        errors.extend(own_errors)
    else:
        if len(files) >= STATIC_CHUNK:  # a full collection (10-30 ms) pays off over many contracts only
            freeze_heap()
        checked, own_errors = check_files(files, ctx, report_progress=True)
        merged.extend(checked)
        errors = errors + own_errors
    merged.sort(key=lambda item: order.get(item[0], 0))
    if ctx.cache is not None:
        finish_cache(ctx.cache, ctx.run_keys)
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
        findings.extend(repository_findings(ctx, policy_set, set(seen), trusted))
    findings.extend(writer_findings(ctx, policy_set, written))
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


def _duplicate_name(ref: PipelineRef, first: PipelineRef, line: int) -> InputError:
    return InputError(
        f"pipeline name '{ref.name}' is already used by {first.file}",
        file=ref.file,
        line=line,
        path="metadata.name",
        hint="metadata.name must be unique: it pairs contracts across branches",
    )
