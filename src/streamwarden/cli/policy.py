"""``policy test`` (the Rego unit tests, with coverage) and ``policy doc`` (the rule catalog).

Exit codes: ``policy test`` 0 every test passed (and coverage is at or above --threshold), 1 a test
failed or coverage is below it, 2 no test found or a policy that does not compile.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from streamwarden.cli.common import config_from, handle_errors, say, write
from streamwarden.core import exitcodes
from streamwarden.core.errors import UsageError
from streamwarden.core.escape import terminal


@click.group()
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
    from streamwarden.verbs.policy import run_policy_tests

    limits = config_from(None).limits
    run = run_policy_tests(
        [Path(d) for d in dirs], engine, coverage, builtin=not no_builtin, limits=limits, root=Path.cwd()
    )
    # file names, errors, sources and coverage paths are the policies' (a pull request's): each
    # value on one line, the whole scrubbed and defused (cli.common.say)
    out: list[str] = []
    for r in run.results:
        if verbose or not r.passed:
            status = "PASS" if r.passed else "FAIL"
            out.append(f"{status} {terminal(r.file)}:{r.line} data.{terminal(r.package)}.{terminal(r.name)}")
        if not r.passed:
            if r.error:
                out.append(f"  error: {terminal(r.error)}")
            out.extend(f"  | {terminal(line)}" for line in r.source.splitlines())
    passed = sum(1 for r in run.results if r.passed)
    out.append(f"{passed} passed, {len(run.failed)} failed ({run.engine})")
    if coverage:
        for path in sorted(run.coverage):
            fc = run.coverage[path]
            out.append(
                f"  {fc.percent:5.1f}%  {terminal(path)}"
                + (f"  not covered: {_ranges(sorted(fc.not_covered))}" if fc.not_covered else "")
            )
        total = run.total_coverage()
        out.append(f"coverage: {total:.1f}%")
    say("\n".join(out), err=False)
    if coverage:
        total = run.total_coverage()
        if total < threshold:
            say(f"coverage {total:.1f}% is below the threshold {threshold:.1f}%")
            sys.exit(exitcodes.exit_code(failed=True))
    if not run.results:
        raise UsageError("no test_* rules found")
    sys.exit(exitcodes.exit_code(failed=bool(run.failed)))


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
@click.option("--table", is_flag=True, help="Only the rule table (id, severity, title) that heads docs/rules.md.")
@handle_errors
def policy_doc(output: str | None, policy_dirs: tuple[str, ...], table: bool) -> None:
    """The rule catalog as Markdown, from the policies' METADATA."""
    from streamwarden.report.catalog import render_catalog, rule_table
    from streamwarden.verbs.policy import policy_catalog

    ps = policy_catalog([Path(d) for d in policy_dirs], root=Path.cwd())
    write(rule_table(ps) if table else render_catalog(ps), output)
