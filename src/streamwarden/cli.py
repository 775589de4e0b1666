"""The command line: parse flags, call a verb, pick a reporter, exit with the decided code.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 unusable input (bad
contract, bad flag, policy compile error, unknown pipeline). A traceback is never the message.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from streamwarden import __version__
from streamwarden.config import FAIL_ON, Config, load_config
from streamwarden.errors import StreamwardenError, UsageError
from streamwarden.escape import json_text, log_text, terminal

if TYPE_CHECKING:
    from streamwarden.report import Report
    from streamwarden.run import RunOptions, RunResult

# kept in step with streamwarden.report.FORMATS and streamwarden.engine.ENGINES (cheap to import here)
REPORT_FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")
ENGINE_NAMES = ("regorus", "opa")
COLOR_CHOICES = ("auto", "always", "never")

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> None:
    """A message on stderr: secrets scrubbed, control characters and workflow commands defused
    (escape.log_text; a file name or a server string may be part of it)."""
    from streamwarden.secrets import scrub

    click.echo(log_text(f"streamwarden: {scrub(message)}"), err=True)


def handle_errors(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StreamwardenError as exc:
            _fail(exc.render())
            sys.exit(2)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug: say so plainly, never a traceback
            _fail(
                f"internal error: {type(exc).__name__}: {exc} "
                "(please report this; set STREAMWARDEN_DEBUG=1 for details)"
            )
            import os

            if os.environ.get("STREAMWARDEN_DEBUG"):
                raise
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def parse_now(value: str | None) -> int | None:
    if not value:
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--now {value!r} is not an RFC 3339 time", hint="e.g. --now 2026-11-25T12:00:00Z") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return int(when.timestamp() * 1000)


def _config(config_path: str | None) -> Config:
    return load_config(config_path, Path.cwd())


def _write(text: str, output: str | None, color: bool = False) -> None:
    from streamwarden.secrets import scrub

    text = scrub(text, shapes=False)  # a last net: no configured secret value is ever written
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write output: {exc.strerror}", file=output) from None
    else:
        click.echo(text, nl=False, color=color or None)  # --color always keeps colour in a pipe


config_option = click.option(
    "--config", "config_path", metavar="FILE", help="streamwarden.yaml (default: ./streamwarden.yaml)."
)
color_option = click.option(
    "--color",
    "color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour in the text report: auto (on a terminal, unless NO_COLOR is set), always (even with NO_COLOR), never.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="streamwarden")
def main() -> None:
    """Policy-as-code for Flink jobs that write Iceberg tables: state, checkpoint and table contracts."""


@main.command()
@click.argument("paths", nargs=-1)
@config_option
@handle_errors
def validate(paths: tuple[str, ...], config_path: str | None) -> None:
    """Validate contracts against the JSON Schema (file:line and field path for every error)."""
    from streamwarden.run import load_for_run

    config = _config(config_path)
    contracts, errors = load_for_run(config, paths)
    for c in contracts:
        click.echo(f"ok: {terminal(c.file)} ({terminal(c.name)})")
    for e in errors:
        click.echo(e.render(), err=True)
    if not contracts and not errors:
        raise UsageError(
            "no contracts found", hint="give contract files or directories, or set `contracts:` in streamwarden.yaml"
        )
    if errors:
        click.echo(f"{len(errors)} error{'s' if len(errors) != 1 else ''}", err=True)
        sys.exit(2)


@main.command()
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
@click.option("--policy", "policy_dirs", multiple=True, metavar="DIR", help="Add custom Rego policies (repeatable).")
@click.option("--engine", type=click.Choice(ENGINE_NAMES), default="regorus", show_default=True, help="Rego engine.")
@click.option(
    "--opa-url",
    metavar="URL",
    envvar="STREAMWARDEN_OPA_URL",
    help="With --engine opa: the OPA server, e.g. http://localhost:8181 (or STREAMWARDEN_OPA_URL).",
)
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
    help="With --env: remember the last checked snapshot per table in FILE, and scan only what is new next time.",
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
    from streamwarden.baseline import use_baseline
    from streamwarden.findings import exit_code
    from streamwarden.run import RunOptions

    _check_refs(base_ref, trusted_ref)
    if trusted_ref and not base_ref:
        raise UsageError("--trusted-ref needs --base")
    targets = report_targets(fmt, output, reports)
    if opa_url and engine != "opa" and not _from_env("opa_url"):
        raise UsageError("--opa-url is only used with --engine opa")
    config = _config(config_path)
    options = RunOptions(
        paths=paths,
        policy_dirs=[Path(d) for d in policy_dirs],
        engine=engine,
        now_ms=parse_now(now),
        base_ref=base_ref,
        trusted_ref=trusted_ref,
        # the contract review in the markdown report needs every input document
        keep_inputs=bool(base_ref) and any(t.fmt in ("markdown", "github") for t in targets),
        review_inputs=True,
        environment=environment,
        since_snapshot=since_snapshot,
        state_file=Path(state_file) if state_file else None,
        cache_dir=_cache_dir(cache_dir, no_cache, config),
    )
    if (since_snapshot is not None or state_file) and not environment:
        raise UsageError("--since-snapshot and --state-file need --env (they are about live data facts)")
    result = _run_check(config, options, opa_url=opa_url, verbose=verbose)
    removed = result.base is not None and bool(result.base.removed(set()))
    if not result.pipelines and not result.errors and not removed:
        raise UsageError(
            "no contracts found", hint="give contract files or directories, or set `contracts:` in streamwarden.yaml"
        )
    threshold = fail_on or result.fail_on or config.fail_on
    used = use_baseline(result.findings, baseline_file, write_baseline_file, config.root, trusted_ref or base_ref)
    for note in used.notes:
        _fail(note)
    baseline = used.file
    report = _make_report(result, config, threshold, baseline, targets)
    _emit(report, targets, color)
    for e in result.errors:  # unusable input goes to stderr, whatever the report's format
        _fail(e.render())
    sys.exit(exit_code(result.findings, threshold, len(result.errors)))


def _cache_dir(cache_dir: str | None, no_cache: bool, config: Config) -> Path | None:
    """--cache DIR, else .streamwarden-cache in the repository root; --no-cache (or an empty
    --cache / STREAMWARDEN_CACHE) turns it off."""
    from streamwarden.cache import DEFAULT_DIR

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
    from streamwarden import progress
    from streamwarden.run import run_check

    bar = progress.Progress("checking contracts", progress.choose_mode(verbose), verbose=verbose).start()
    summary = None
    try:
        if options.engine == "opa" and opa_url:
            options.engine_options["url"] = opa_url
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
    from streamwarden.gitbase import repo_prefix
    from streamwarden.report import Report

    formats = {t.fmt for t in targets}
    # the rule catalog the run evaluated (the trusted ref's with --base), for SARIF rule descriptors
    rules = dict(result.policy_set.rules) if result.policy_set is not None and "sarif" in formats else {}
    diff = None
    if result.base is not None and formats & {"markdown", "github"}:
        from streamwarden.diff import review

        diff = review(result)
    return Report(
        findings=result.findings,
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
    from streamwarden.report.text import use_color

    for t in targets:
        color = t.file is None and t.fmt == "text" and use_color(color_choice, sys.stdout)
        _write(get_reporter(t.fmt).render(report, color=color), t.file, color)
    if any(t.fmt == "github" for t in targets):
        from streamwarden.report.github import write_step_summary

        try:
            write_step_summary(report)
        except OSError as exc:
            _fail(f"cannot write the job summary to $GITHUB_STEP_SUMMARY: {exc.strerror or exc}")
    if any(t.fmt == "sarif" for t in targets):
        from streamwarden.report.sarif import MAX_RESULTS

        if len(report.findings) > MAX_RESULTS:
            _fail(
                f"SARIF holds the {MAX_RESULTS:,} most severe of {len(report.findings):,} findings "
                "(GitHub code scanning's limit per run); --format json has them all"
            )


@main.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--base", "base_ref", metavar="REF", required=True, help="The git ref to compare with (its merge base with HEAD)."
)
@click.option("--trusted-ref", metavar="REF", help="Read policies from REF (default: the --base ref).")
@config_option
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option("--output", "-o", metavar="FILE", help="Write the review to FILE instead of stdout.")
@click.option("--policy", "policy_dirs", multiple=True, metavar="DIR", help="Add custom Rego policies (repeatable).")
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
    from streamwarden.diff import exit_code, review
    from streamwarden.report.review import render_json, render_markdown
    from streamwarden.run import RunOptions, run_check

    config = _config(config_path)
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
    _write(render_json(pipelines) if fmt == "json" else render_markdown(pipelines, base_ref), output)
    for e in result.errors:
        _fail(e.render())
    sys.exit(exit_code(result, pipelines))


@main.command()
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
    from streamwarden.run import find_pipeline, now_ms, pipeline_document

    config = _config(config_path)
    contract = find_pipeline(config, pipeline, paths)
    doc = pipeline_document(config, contract, now_ms=parse_now(now) or now_ms(), environment=environment)
    click.echo(json_text(json.dumps(doc, indent=2, ensure_ascii=False)))


@main.group()
def policy() -> None:
    """Policy tooling: unit tests with coverage, the rule catalog."""


@policy.command("test")
@click.argument("dirs", nargs=-1)
@click.option("--coverage", is_flag=True, help="Report line coverage per policy file.")
@click.option(
    "--threshold", type=float, default=0.0, help="With --coverage: fail when total coverage is below this percentage."
)
@click.option("--engine", type=click.Choice(["regorus", "opa-embedded"]), default="regorus", show_default=True)
@click.option("--no-builtin", is_flag=True, help="Test only the given DIRs, not the built-in policies.")
@click.option("--verbose", "-v", is_flag=True, help="List every test.")
@handle_errors
def policy_test(
    dirs: tuple[str, ...], coverage: bool, threshold: float, engine: str, no_builtin: bool, verbose: bool
) -> None:
    """Run the Rego unit tests (test_* rules) of the built-in policies and of DIRs."""
    from streamwarden.engine import load_policy_set
    from streamwarden.engine.testing import run_tests

    ps = load_policy_set([Path(d) for d in dirs], builtin=not no_builtin, root=Path.cwd())
    run = run_tests(ps, engine, coverage, limits=_config(None).limits)
    for r in run.results:
        if verbose or not r.passed:
            status = "PASS" if r.passed else "FAIL"
            click.echo(f"{status} {r.file}:{r.line} data.{r.package}.{r.name}")
        if not r.passed:
            if r.error:
                click.echo(f"  error: {r.error}")
            for line in r.source.splitlines():
                click.echo(f"  | {line}")
    passed = sum(1 for r in run.results if r.passed)
    click.echo(f"{passed} passed, {len(run.failed)} failed ({run.engine})")
    if coverage:
        for path in sorted(run.coverage):
            fc = run.coverage[path]
            click.echo(
                f"  {fc.percent:5.1f}%  {path}"
                + (f"  not covered: {_ranges(sorted(fc.not_covered))}" if fc.not_covered else "")
            )
        total = run.total_coverage()
        click.echo(f"coverage: {total:.1f}%")
        if total < threshold:
            click.echo(f"coverage {total:.1f}% is below the threshold {threshold:.1f}%", err=True)
            sys.exit(1)
    if not run.results:
        raise UsageError("no test_* rules found")
    sys.exit(1 if run.failed else 0)


def _ranges(rows: list[int]) -> str:
    out: list[str] = []
    for r in rows:
        if (out and out[-1].endswith(f"-{r - 1}")) or (out and out[-1] == str(r - 1)):
            start = out[-1].split("-")[0]
            out[-1] = f"{start}-{r}"
        else:
            out.append(str(r))
    return ",".join(out)


@policy.command("doc")
@click.option("--output", "-o", metavar="FILE")
@click.option("--policy", "policy_dirs", multiple=True, metavar="DIR", help="Include custom policies.")
@click.option("--table", is_flag=True, help="Only the rule table (id, severity, title), as in the README.")
@handle_errors
def policy_doc(output: str | None, policy_dirs: tuple[str, ...], table: bool) -> None:
    """The rule catalog as Markdown, from the policies' METADATA."""
    from streamwarden.engine import load_policy_set
    from streamwarden.report.catalog import render_catalog, rule_table

    ps = load_policy_set([Path(d) for d in policy_dirs], root=Path.cwd())
    _write(rule_table(ps) if table else render_catalog(ps), output)


def _register_recovery_commands() -> None:
    from streamwarden.cli_recovery import evidence, gate, savepoint

    main.add_command(savepoint)
    main.add_command(gate)
    main.add_command(evidence)


_register_recovery_commands()


def _register_schema_command() -> None:
    from streamwarden.cli_schema import schema

    main.add_command(schema)


_register_schema_command()


def _register_init_command() -> None:
    from streamwarden.cli_init import init

    main.add_command(init)


_register_init_command()

if __name__ == "__main__":  # pragma: no cover
    main()
