"""``validate``, ``check``, ``diff`` and ``facts``: the contract commands.

Exit codes: 0 nothing at or above --fail-on (``diff``: no breaking change); 1 findings at or above
it (``diff``: a breaking change); 2 unusable input (bad contract, bad flag, policy compile error,
unknown pipeline).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from streamwarden.cli.common import (
    color_option,
    config_from,
    config_option,
    engine_option,
    engine_options,
    fail,
    handle_errors,
    opa_url_option,
    parse_now,
    policy_option,
    say,
    write,
)
from streamwarden.contracts.config import FAIL_ON, Config
from streamwarden.core import exitcodes
from streamwarden.core.errors import UsageError
from streamwarden.core.escape import json_text, terminal
from streamwarden.lineage.emit import check_finished, maybe_configured
from streamwarden.report import FORMATS as REPORT_FORMATS

if TYPE_CHECKING:
    from streamwarden.check.options import RunOptions, RunResult
    from streamwarden.report import Report


@click.command()
@click.argument("paths", nargs=-1)
@config_option
@handle_errors
def validate(paths: tuple[str, ...], config_path: str | None) -> None:
    """Validate contracts against the JSON Schema (file:line and field path for every error)."""
    from streamwarden.check.run import load_for_run

    config = config_from(config_path)
    contracts, errors = load_for_run(config, paths)
    for c in contracts:
        click.echo(f"ok: {terminal(c.file)} ({terminal(c.name)})")
    for e in errors:
        say(e.render())
    if not contracts and not errors:
        raise UsageError(
            "no contracts found", hint="give contract files or directories, or set `contracts:` in streamwarden.yaml"
        )
    if errors:
        click.echo(f"{len(errors)} error{'s' if len(errors) != 1 else ''}", err=True)
        sys.exit(exitcodes.exit_code(unusable=True))


@click.command()
@click.argument("paths", nargs=-1)
@config_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(REPORT_FORMATS),
    default="text",
    show_default=True,
    help="Report format on stdout (or in --output).",
)
@click.option("--output", "-o", metavar="FILE", help="Write the --format report to FILE instead of stdout.")
@click.option(
    "--report",
    "reports",
    multiple=True,
    metavar="FORMAT=FILE",
    help="Also write a FORMAT report to FILE (repeatable: several formats in one run, each to its own file).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Lowest severity that fails the run (default: error, or fail_on from streamwarden.yaml).",
)
@click.option(
    "--baseline",
    "baseline_file",
    metavar="FILE",
    help="Findings recorded in FILE (by fingerprint; with --base, FILE as on the trusted ref) are reported as "
    "baselined and do not fail the run.",
)
@click.option(
    "--write-baseline",
    "write_baseline_file",
    metavar="FILE",
    help="Record the current findings in FILE (to adopt streamwarden in an existing repository); this run passes.",
)
@policy_option
@engine_option
@opa_url_option
@click.option("--now", "now", metavar="TIME", help="Evaluate as of this RFC 3339 time (replays a decision).")
@click.option("--base", "base_ref", metavar="REF", help="Compare with the contracts at the merge base of REF and HEAD.")
@click.option(
    "--trusted-ref", metavar="REF", help="Read policies, waivers and fail_on from REF (default: the --base ref)."
)
@click.option("--env", "environment", metavar="NAME", help="Add live facts from this environment of streamwarden.yaml.")
@click.option(
    "--since-snapshot", type=int, metavar="ID", help="With --env: data rules scan only rows added after this snapshot."
)
@click.option(
    "--state-file",
    metavar="FILE",
    help=(
        "With --env: remember the last snapshot each contract checked clean on its table in FILE, and scan only "
        "what is new next time (with --base: read only, never written)."
    ),
)
@click.option(
    "--cache",
    "cache_dir",
    metavar="DIR",
    envvar="STREAMWARDEN_CACHE",
    help="Reuse a contract's findings while nothing they depend on changed (default: .streamwarden-cache in "
    "the repository root, or STREAMWARDEN_CACHE; live facts are never cached).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--verbose", "-v", is_flag=True, help="Progress and timings on stderr, in CI too.")
@color_option
@handle_errors
def check(
    paths: tuple[str, ...],
    config_path: str | None,
    fmt: str,
    output: str | None,
    reports: tuple[str, ...],
    fail_on: str | None,
    baseline_file: str | None,
    write_baseline_file: str | None,
    policy_dirs: tuple[str, ...],
    engine: str,
    opa_url: str | None,
    now: str | None,
    base_ref: str | None,
    trusted_ref: str | None,
    environment: str | None,
    since_snapshot: int | None,
    state_file: str | None,
    cache_dir: str | None,
    no_cache: bool,
    verbose: bool,
    color: str,
) -> None:
    """Check contracts (and the repository files they name) against the policies."""
    from streamwarden.check.options import RunOptions
    from streamwarden.evaluate.baseline import use_baseline
    from streamwarden.evaluate.findings import exit_code

    _check_refs(base_ref, trusted_ref)
    if trusted_ref and not base_ref:
        raise UsageError("--trusted-ref needs --base")
    targets = report_targets(fmt, output, reports)
    if opa_url and engine != "opa" and not _from_env("opa_url"):
        raise UsageError("--opa-url is only used with --engine opa")
    config = config_from(config_path)
    lineage = bool(environment) and maybe_configured()  # OpenLineage events read each pipeline's whole document
    review = bool(base_ref) and any(t.fmt in ("markdown", "github") for t in targets)
    options = RunOptions(
        paths=paths,
        policy_dirs=[Path(d) for d in policy_dirs],
        engine=engine,
        now_ms=parse_now(now),
        base_ref=base_ref,
        trusted_ref=trusted_ref,
        # the contract review in the markdown report needs every input document
        keep_inputs=lineage or review,
        review_inputs=review,
        whole_inputs=lineage,
        environment=environment,
        since_snapshot=since_snapshot,
        state_file=Path(state_file) if state_file else None,
        cache_dir=_cache_dir(cache_dir, no_cache, config),
    )
    if (since_snapshot is not None or state_file) and not environment:
        raise UsageError("--since-snapshot and --state-file need --env (they are about live data facts)")
    started = time.time()
    result = _run_check(config, options, opa_url=opa_url, verbose=verbose)
    if result.cache_off and (cache_dir or verbose):  # a cache asked for (--cache, STREAMWARDEN_CACHE) that is off
        fail(f"note: {result.cache_off}; the check ran without it")
    removed = result.base is not None and bool(result.base.removed(set()))
    if not result.pipelines and not result.errors and not removed:
        raise UsageError(
            "no contracts found", hint="give contract files or directories, or set `contracts:` in streamwarden.yaml"
        )
    threshold = fail_on or result.fail_on or config.fail_on
    used = use_baseline(result.findings, baseline_file, write_baseline_file, config.root, trusted_ref or base_ref)
    for note in used.notes:
        fail(note)
    if lineage and environment:  # OpenLineage START and COMPLETE per pipeline, when configured
        check_finished(result, environment, threshold, fail, started)
    baseline = used.file
    report = _make_report(result, config, threshold, baseline, targets)
    _emit(report, targets, color)
    for e in result.errors:  # unusable input goes to stderr, whatever the report's format
        fail(e.render())
    sys.exit(exit_code(result.findings, threshold, len(result.errors)))


def _cache_dir(cache_dir: str | None, no_cache: bool, config: Config) -> Path | None:
    """--cache DIR, else .streamwarden-cache in the repository root; --no-cache (or an empty
    --cache / STREAMWARDEN_CACHE) turns it off."""
    from streamwarden.check.cache import DEFAULT_DIR

    if no_cache or (cache_dir is not None and not cache_dir.strip()):
        return None
    if cache_dir is None and os.environ.get("STREAMWARDEN_CACHE") == "":  # click ignores an empty variable
        return None
    return Path(cache_dir) if cache_dir else config.root / DEFAULT_DIR


def _check_refs(base_ref: str | None, trusted_ref: str | None) -> None:
    """An empty ref (``--base "$BASE"`` with BASE unset in CI) must not silently turn the pull-request
    check into a plain one: that would drop the trusted policies and waivers."""
    for flag, ref in (("--base", base_ref), ("--trusted-ref", trusted_ref)):
        if ref is not None and not ref.strip():
            raise UsageError(
                f"{flag} is empty",
                hint="give a git ref (e.g. --base origin/main); in a workflow, check that the variable is set",
            )


@dataclass(frozen=True)
class ReportTarget:
    fmt: str
    file: str | None  # None: stdout


def report_targets(fmt: str, output: str | None, reports: tuple[str, ...]) -> list[ReportTarget]:
    """--format/--output (the first target) plus every --report FORMAT=FILE, each to its own file."""
    targets = [ReportTarget(fmt, output)]
    for spec in reports:
        name, sep, file = spec.partition("=")
        name = name.strip().lower()
        if not sep or not file.strip():
            raise UsageError(f"--report {spec!r} is not FORMAT=FILE", hint="e.g. --report sarif=streamwarden.sarif")
        if name not in REPORT_FORMATS:
            raise UsageError(
                f"--report {spec!r}: unknown format '{name}'", hint="use one of: " + ", ".join(REPORT_FORMATS)
            )
        if file.strip() == "-":
            raise UsageError(f"--report {spec!r}: a report needs a file", hint="use --format for the report on stdout")
        targets.append(ReportTarget(name, file))
    seen: dict[Path, str] = {}
    for t in targets:
        if t.file is None:
            continue
        key = Path(t.file).resolve()
        if key in seen:
            raise UsageError(
                f"two reports would write {t.file} ({seen[key]} and {t.fmt})", hint="give each report its own file"
            )
        seen[key] = t.fmt
    return targets


def _from_env(param: str) -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.get_parameter_source(param) == click.core.ParameterSource.ENVIRONMENT)


def _run_check(config: Config, options: RunOptions, *, opa_url: str | None, verbose: bool) -> RunResult:
    from streamwarden.check.run import run_check
    from streamwarden.core import progress

    bar = progress.Progress("checking contracts", progress.choose_mode(verbose), verbose=verbose).start()
    summary = None
    try:
        options.engine_options.update(engine_options(options.engine, opa_url))
        result = run_check(config, options)
        elapsed = time.monotonic() - bar.started
        n = len(result.pipelines)
        cached = f", {result.cache_stats}" if result.cache_stats is not None else ""
        summary = f"checked {n} pipeline{'s' if n != 1 else ''} in {elapsed:.1f}s{cached} (engine {options.engine})"
    finally:
        bar.finish(summary)
    return result


def _make_report(
    result: RunResult, config: Config, threshold: str, baseline: str | None, targets: list[ReportTarget]
) -> Report:
    from streamwarden.core.paths import repo_prefix
    from streamwarden.evaluate.findings import cap
    from streamwarden.report import Report

    formats = {t.fmt for t in targets}
    # the rule catalog the run evaluated (the trusted ref's with --base), for SARIF rule descriptors
    rules = dict(result.policy_set.rules) if result.policy_set is not None and "sarif" in formats else {}
    diff = None
    if result.base is not None and formats & {"markdown", "github"}:
        from streamwarden.evaluate.review import review

        diff = review(result)
    return Report(
        # at most findings.MAX_PER_RULE_FILE of one rule in one file, then one finding counting the
        # rest (after the baseline: each finding keeps its own fingerprint); the exit code is the same
        findings=cap(result.findings),
        pipelines=result.names,
        pipeline_files={p.name: p.file for p in result.pipelines},
        errors=result.errors,
        fail_on=threshold,
        rules=rules,
        diff=diff,
        baseline=baseline,
        repo_prefix=repo_prefix(config.root),
    )


def _emit(report: Report, targets: list[ReportTarget], color_choice: str = "auto") -> None:
    from streamwarden.report import get_reporter

    for t in targets:
        color = t.file is None and t.fmt == "text" and _use_color(color_choice)
        write(get_reporter(t.fmt).render(report, color=color), t.file, color)
    if any(t.fmt == "github" for t in targets):
        from streamwarden.report.github import write_step_summary

        try:
            write_step_summary(report)
        except OSError as exc:
            fail(f"cannot write the job summary to $GITHUB_STEP_SUMMARY: {exc.strerror or exc}")
    if any(t.fmt == "sarif" for t in targets):
        from streamwarden.report.sarif import MAX_RESULTS

        if len(report.findings) > MAX_RESULTS:
            fail(
                f"SARIF holds the {MAX_RESULTS:,} most severe of {len(report.findings):,} findings "
                "(GitHub code scanning's limit per run); --format json has them all"
            )


def _use_color(color_choice: str) -> bool:
    from streamwarden.report.text import use_color  # the text report's module: imported for it only

    return use_color(color_choice, sys.stdout)


@click.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--base", "base_ref", metavar="REF", required=True, help="The git ref to compare with (its merge base with HEAD)."
)
@click.option("--trusted-ref", metavar="REF", help="Read policies from REF (default: the --base ref).")
@config_option
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option("--output", "-o", metavar="FILE", help="Write the review to FILE instead of stdout.")
@policy_option
@click.option("--now", "now", metavar="TIME", help="Evaluate as of this RFC 3339 time.")
@handle_errors
def diff(
    paths: tuple[str, ...],
    base_ref: str,
    trusted_ref: str | None,
    config_path: str | None,
    fmt: str,
    output: str | None,
    policy_dirs: tuple[str, ...],
    now: str | None,
) -> None:
    """Contract review: every change classified breaking / coordinate / safe, with the consumers affected."""
    _check_refs(base_ref, trusted_ref)
    from streamwarden.check.options import RunOptions
    from streamwarden.check.run import run_check
    from streamwarden.evaluate.review import exit_code, review
    from streamwarden.report.review import render_json, render_markdown

    config = config_from(config_path)
    options = RunOptions(
        paths=paths,
        policy_dirs=[Path(d) for d in policy_dirs],
        now_ms=parse_now(now),
        base_ref=base_ref,
        trusted_ref=trusted_ref,
        keep_inputs=True,
        review_inputs=True,  # the review reads each input's contract and base, not its facts
    )
    result = run_check(config, options)
    pipelines = review(result)
    write(render_json(pipelines) if fmt == "json" else render_markdown(pipelines, base_ref), output)
    for e in result.errors:
        fail(e.render())
    sys.exit(exit_code(result, pipelines))


@click.command()
@click.argument("pipeline")
@click.option(
    "--contracts",
    "paths",
    multiple=True,
    metavar="PATH",
    help="Where to look for the contract (default: config globs).",
)
@config_option
@click.option("--now", "now", metavar="TIME", help="now_ms as of this RFC 3339 time.")
@click.option("--env", "environment", metavar="NAME", help="Add live facts from this environment of streamwarden.yaml.")
@handle_errors
def facts(
    pipeline: str, paths: tuple[str, ...], config_path: str | None, now: str | None, environment: str | None
) -> None:
    """Print the policy input document of one pipeline as JSON (for debugging and `opa eval`)."""
    from streamwarden.check.evaluation import pipeline_document
    from streamwarden.check.run import find_pipeline, now_ms

    config = config_from(config_path)
    contract = find_pipeline(config, pipeline, paths)
    from streamwarden.core.secrets import scrub_tree

    doc = pipeline_document(config, contract, now_ms=parse_now(now) or now_ms(), environment=environment)
    # printed to be read and pasted: a credential in a contract value (a checkpoint URL's
    # user:password@) is masked as in every report; the live facts are scrubbed already
    click.echo(json_text(json.dumps(scrub_tree(doc), indent=2, ensure_ascii=False)))
