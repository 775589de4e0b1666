"""The command line: parse flags, call a verb, pick a reporter, exit with the decided code.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 unusable input (bad
contract, bad flag, policy compile error, unknown pipeline). A traceback is never the message.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from streamwarden import __version__
from streamwarden.config import FAIL_ON, Config, load_config
from streamwarden.errors import ContractErrors, StreamwardenError, UsageError

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> None:
    click.echo(f"streamwarden: {message}", err=True)


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
            _fail(f"internal error: {type(exc).__name__}: {exc} (please report this; set STREAMWARDEN_DEBUG=1 for details)")
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


def _write(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write output: {exc.strerror}", file=output) from None
    else:
        click.echo(text, nl=False)


config_option = click.option("--config", "config_path", metavar="FILE", help="streamwarden.yaml (default: ./streamwarden.yaml).")


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
        click.echo(f"ok: {c.file} ({c.name})")
    for e in errors:
        click.echo(e.render(), err=True)
    if not contracts and not errors:
        raise UsageError("no contracts found", hint="give contract files or directories, or set `contracts:` in streamwarden.yaml")
    if errors:
        click.echo(f"{len(errors)} error{'s' if len(errors) != 1 else ''}", err=True)
        sys.exit(2)


@main.command()
@click.argument("paths", nargs=-1)
@config_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--output", "-o", metavar="FILE", help="Write the report to FILE instead of stdout.")
@click.option("--fail-on", type=click.Choice(FAIL_ON), help="Lowest severity that fails the run (default: error, or fail_on from streamwarden.yaml).")
@click.option("--policy", "policy_dirs", multiple=True, metavar="DIR", help="Add custom Rego policies (repeatable).")
@click.option("--engine", type=click.Choice(["regorus"]), default="regorus", show_default=True, help="Rego engine.")
@click.option("--now", "now", metavar="TIME", help="Evaluate as of this RFC 3339 time (replays a decision).")
@click.option("--base", "base_ref", metavar="REF", help="Compare with the contracts at the merge base of REF and HEAD.")
@click.option("--trusted-ref", metavar="REF", help="Read policies, waivers and fail_on from REF (default: the --base ref).")
@handle_errors
def check(
    paths: tuple[str, ...],
    config_path: str | None,
    fmt: str,
    output: str | None,
    fail_on: str | None,
    policy_dirs: tuple[str, ...],
    engine: str,
    now: str | None,
    base_ref: str | None,
    trusted_ref: str | None,
) -> None:
    """Check contracts (and the repository files they name) against the policies."""
    from streamwarden.findings import exit_code
    from streamwarden.report import Report, get_reporter
    from streamwarden.run import RunOptions, run_check

    if trusted_ref and not base_ref:
        raise UsageError("--trusted-ref needs --base")
    config = _config(config_path)
    options = RunOptions(
        paths=paths,
        policy_dirs=[Path(d) for d in policy_dirs],
        engine=engine,
        now_ms=parse_now(now),
        base_ref=base_ref,
        trusted_ref=trusted_ref,
    )
    result = run_check(config, options)
    if not result.pipelines and not result.errors:
        raise UsageError("no contracts found", hint="give contract files or directories, or set `contracts:` in streamwarden.yaml")
    threshold = fail_on or result.fail_on or config.fail_on
    report = Report(
        findings=result.findings,
        pipelines=result.names,
        pipeline_files={p.name: p.file for p in result.pipelines},
        errors=result.errors,
        fail_on=threshold,
    )
    color = output is None and sys.stdout.isatty()
    _write(get_reporter(fmt).render(report, color=color), output)
    if result.errors and (fmt != "text" or output):
        for e in result.errors:
            _fail(e.render())
    sys.exit(exit_code(result.findings, threshold, len(result.errors)))


@main.command()
@click.argument("paths", nargs=-1)
@click.option("--base", "base_ref", metavar="REF", required=True, help="The git ref to compare with (its merge base with HEAD).")
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
    from streamwarden.diff import has_breaking, render_json, render_markdown, review
    from streamwarden.run import RunOptions, run_check

    config = _config(config_path)
    options = RunOptions(
        paths=paths,
        policy_dirs=[Path(d) for d in policy_dirs],
        now_ms=parse_now(now),
        base_ref=base_ref,
        trusted_ref=trusted_ref,
        keep_inputs=True,
    )
    result = run_check(config, options)
    pipelines = review(result)
    _write(render_json(pipelines) if fmt == "json" else render_markdown(pipelines, base_ref), output)
    for e in result.errors:
        _fail(e.render())
    sys.exit(2 if result.errors else 1 if has_breaking(pipelines) else 0)


@main.command()
@click.argument("pipeline")
@click.option("--contracts", "paths", multiple=True, metavar="PATH", help="Where to look for the contract (default: config globs).")
@config_option
@click.option("--now", "now", metavar="TIME", help="now_ms as of this RFC 3339 time.")
@handle_errors
def facts(pipeline: str, paths: tuple[str, ...], config_path: str | None, now: str | None) -> None:
    """Print the policy input document of one pipeline as JSON (for debugging and `opa eval`)."""
    from streamwarden.facts.static import gather_static_facts
    from streamwarden.run import build_input, load_for_run, now_ms

    config = _config(config_path)
    contracts, errors = load_for_run(config, paths)
    match = [c for c in contracts if c.name == pipeline]
    if not match:
        known = ", ".join(sorted(c.name for c in contracts)) or "none found"
        if errors:
            raise ContractErrors(errors)
        raise UsageError(f"unknown pipeline '{pipeline}' (known: {known})")
    c = match[0]
    doc = build_input(c, gather_static_facts(c, config.root), parse_now(now) or now_ms(), None, "facts")
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))


@main.group()
def policy() -> None:
    """Policy tooling: unit tests with coverage, the rule catalog."""


@policy.command("test")
@click.argument("dirs", nargs=-1)
@click.option("--coverage", is_flag=True, help="Report line coverage per policy file.")
@click.option("--threshold", type=float, default=0.0, help="With --coverage: fail when total coverage is below this percentage.")
@click.option("--engine", type=click.Choice(["regorus", "opa-embedded"]), default="regorus", show_default=True)
@click.option("--no-builtin", is_flag=True, help="Test only the given DIRs, not the built-in policies.")
@click.option("--verbose", "-v", is_flag=True, help="List every test.")
@handle_errors
def policy_test(dirs: tuple[str, ...], coverage: bool, threshold: float, engine: str, no_builtin: bool, verbose: bool) -> None:
    """Run the Rego unit tests (test_* rules) of the built-in policies and of DIRs."""
    from streamwarden.engine import load_policy_set
    from streamwarden.engine.testing import run_tests

    ps = load_policy_set([Path(d) for d in dirs], builtin=not no_builtin, root=Path.cwd())
    run = run_tests(ps, engine, coverage)
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
            click.echo(f"  {fc.percent:5.1f}%  {path}" + (f"  not covered: {_ranges(sorted(fc.not_covered))}" if fc.not_covered else ""))
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
        if out and out[-1].endswith(f"-{r - 1}") or (out and out[-1] == str(r - 1)):
            start = out[-1].split("-")[0]
            out[-1] = f"{start}-{r}"
        else:
            out.append(str(r))
    return ",".join(out)


@policy.command("doc")
@click.option("--output", "-o", metavar="FILE")
@click.option("--policy", "policy_dirs", multiple=True, metavar="DIR", help="Include custom policies.")
@handle_errors
def policy_doc(output: str | None, policy_dirs: tuple[str, ...]) -> None:
    """The rule catalog as Markdown, from the policies' METADATA."""
    from streamwarden.engine import load_policy_set
    from streamwarden.policydoc import render_catalog

    ps = load_policy_set([Path(d) for d in policy_dirs], root=Path.cwd())
    _write(render_catalog(ps), output)


if __name__ == "__main__":  # pragma: no cover
    main()
