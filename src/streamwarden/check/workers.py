"""Checking contract files a chunk at a time (load, gather, evaluate; a cache hit skips all three),
in this process or, for a large set, in forked workers that inherit the run's context."""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Sequence
from pathlib import Path

from streamwarden.check.context import RunContext
from streamwarden.check.evaluation import base_named_deployment, evaluate_pipeline, gather_facts
from streamwarden.check.options import Checked, PipelineRef
from streamwarden.check.runcache import remember_result
from streamwarden.contracts import Contract, load_contract
from streamwarden.contracts.load import warm_contract_schema
from streamwarden.core import progress
from streamwarden.core.errors import ContractErrors, StreamwardenError
from streamwarden.core.paths import display_path, resolved
from streamwarden.evaluate import inputdoc, writers

PARALLEL_THRESHOLD = 200  # contracts; below it a second process costs more than it saves


STATIC_CHUNK = 64  # contracts loaded, evaluated and dropped together: memory stays flat


MIN_CHUNK = 8  # the smallest chunk a fork worker is handed


LIVE_CHUNK = 256  # with --env: live facts are gathered concurrently for a chunk at a time


def freeze_heap() -> None:
    """What the run built so far (modules, compiled schema and policies, the base snapshot) lives
    to the end: move it out of the collector's sight, and collect less often while contracts are
    checked (their documents are trees of small objects with no cycles worth chasing). The young
    generations are collected first (what they hold would otherwise be frozen); the oldest, the
    imports' objects, is frozen without a full collection (~10 ms, paid before the workers fork)."""
    gc.collect(1)
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


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


def worker_count(n_files: int) -> int:
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


# The run a fork worker serves, set by run_check just before the pool forks.
_FORKED: dict[str, RunContext] = {}


def _check_chunk(files: Sequence[Path]) -> tuple[list[Checked], list[StreamwardenError], int, tuple[int, int, int]]:
    ctx = _FORKED["ctx"]
    before = _cache_counts(ctx)
    out, errors = check_files(files, ctx)
    after = _cache_counts(ctx)
    return out, errors, len(files), (after[0] - before[0], after[1] - before[1], after[2] - before[2])


def _cache_counts(ctx: RunContext) -> tuple[int, int, int]:
    if ctx.cache is None:
        return (0, 0, 0)
    return (ctx.cache.stats.hits, ctx.cache.stats.misses, ctx.cache.stats.written)


def check_files(
    files: Sequence[Path], ctx: RunContext, report_progress: bool = False
) -> tuple[list[Checked], list[StreamwardenError]]:
    """Load, gather and evaluate ``files`` a chunk at a time (so a large run holds one chunk's
    contracts and documents, not every one); with a result cache, a hit skips all three."""
    out: list[Checked] = []
    errors: list[StreamwardenError] = []
    step = LIVE_CHUNK if ctx.env is not None else STATIC_CHUNK
    for start in range(0, len(files), step):
        _check_chunk_of(files[start : start + step], ctx, out, errors, report_progress)
    return out, errors


def _check_chunk_of(
    files: Sequence[Path],
    ctx: RunContext,
    out: list[Checked],
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

                key = file_key(cache.context, shown, resolved_path, text)  # (looked up: hits_first)
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
        facts = gather_facts(ctx, contract, extra)
        base_doc = ctx.base.document(contract.name, contract.path, contract.data) if ctx.base is not None else None
        base_named = base_named_deployment(ctx, contract) if ctx.base is not None else None
        remember = None
        if cache is not None and key is not None and deps is not None:
            remember = functools.partial(remember_result, cache, key, deps, contract, ctx=ctx)
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


def check_forked(ctx: RunContext, files: list[Path], workers: int) -> tuple[list[Checked], list[StreamwardenError]]:
    """``files`` checked by ``workers`` forked processes, a chunk at a time as each is free; the
    results in the order they came back (the run sorts them), the cache's counts added to its own."""
    chunks = _chunks(files, workers)
    import multiprocessing

    mp = multiprocessing.get_context("fork")
    parts = []
    # the workers inherit the context, the compiled policies and the compiled contract schema
    # through the fork: nothing is pickled per chunk but the file list
    warm_contract_schema()
    engine = ctx.engine(defer_full=True) if ctx.options.engine == "regorus" else None
    _FORKED["ctx"] = ctx
    freeze_heap()
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
    checked = [item for part in parts for item in part[0]]
    errors = [e for part in parts for e in part[1]]
    return checked, errors
