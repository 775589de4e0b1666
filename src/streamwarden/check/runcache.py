"""The run's use of the result cache (check/cache/): where it is and whether it may be used, the
prefetch child, answering hits before anything is loaded, storing a fresh result, the run's pack,
and in self-check mode every hit evaluated again and compared."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.check import evaluation
from streamwarden.check.context import RunContext
from streamwarden.check.evaluation import base_named_deployment, evaluate_pipeline, gather_facts
from streamwarden.check.options import Checked, PipelineRef, RunOptions
from streamwarden.contracts import Contract, load_contract
from streamwarden.contracts.config import Config
from streamwarden.core import progress, selfcheck
from streamwarden.core.errors import StreamwardenError
from streamwarden.core.escape import shown_name
from streamwarden.core.paths import display_path, resolved
from streamwarden.engine import PolicySet
from streamwarden.evaluate import inputdoc, writers
from streamwarden.evaluate.findings import Finding
from streamwarden.evaluate.waivers import apply_waivers

# imported where used: a run without --cache never imports the cache
if TYPE_CHECKING:
    from streamwarden.check.cache import Entry, ResultCache, StatePrefetch


def start_prefetch(options: RunOptions, configs: Sequence[Config]) -> StatePrefetch | None:
    """When the configurations' globs name only contracts, discovery reads no deployment file and
    the cache's lookups would hash each one in turn: a child hashes them while this process
    discovers the contracts and finishes the base (cache.StatePrefetch)."""
    cache_dir = cache_dir_of(options)
    if cache_dir is None or options.paths or not all(c.contracts_set for c in configs):
        return None
    from streamwarden.check.cache import StatePrefetch

    return StatePrefetch.start(cache_dir)


def cache_dir_of(options: RunOptions) -> Path | None:
    """The result cache's directory, when the run may answer from it. Never with live facts
    (``--env``). A run that keeps its inputs is not cached, but the contract review (check --base
    --format markdown|github): it keeps each input's contract and base, and a contract the cache
    may answer in a pull request is one the pull request leaves as it is, whose review entry is
    empty with or without its input (diff.review)."""
    review = options.review_inputs and options.base_ref is not None
    if options.environment or (options.keep_inputs and not review):
        return None
    return options.cache_dir


def hits_first(files: list[Path], ctx: RunContext, out: list[Checked], errors: list[StreamwardenError]) -> list[Path]:
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


def _reviewable(ctx: RunContext) -> Callable[[Entry], bool]:
    """In a run with the contract review: an entry the review can do without its input document.
    A hit is a file the pull request leaves as it is, with nothing to list, unless a rule that
    compares with the base (``custom.kind: diff``) found something without one (a custom rule
    can): the review then lists that finding with the contract's consumers, which only the
    contract says, so such an entry is a miss."""
    policy_set = ctx.policy_set()
    return lambda entry: not any(policy_set.is_diff_rule(f.rule) for f in entry.findings)


def verify_hits(ctx: RunContext, hits: list[Checked]) -> None:
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
            gather_facts(ctx, contract, {}),
            base_doc,
            compare_base=not (ctx.skip_unchanged and ctx.base is not None and ctx.base.unchanged(contract.path)),
            base_named=base_named_deployment(ctx, contract) if ctx.base is not None else None,
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


def finish_cache(cache: ResultCache, keys: list[str] | None) -> None:
    """After the files are checked: the run's entries in one pack (the next run reads one file
    for them), old entries evicted."""
    if keys:
        cache.store_pack(keys)
    cache.finish()


def open_cache(ctx: RunContext, directory: Path) -> ResultCache | None:
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


def remember_result(
    cache: ResultCache,
    key: str,
    deps: list[tuple[str, str]],
    contract: Contract,
    evaluated: dict[str, Any],
    found: list[Finding],
    reads: frozenset[str],
    ctx: RunContext,
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
        evaluate_at=lambda t, packages: evaluation.evaluate_subject(
            engine, policy_set, contract, {**evaluated, "now_ms": t}, packages
        ),
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


def _from_entry(f: Path, entry: Entry, ctx: RunContext) -> Checked:
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
