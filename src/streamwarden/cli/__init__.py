"""The command line: parse flags, call a verb, pick a reporter, exit with the decided code.

``main`` is the ``streamwarden`` group (the console script ``streamwarden.cli:main``); each
command lives in the module of its area and imports only verbs, reporters and the configuration:
``check`` (validate, check, diff, facts), ``recovery`` (savepoint inspect, gate, evidence),
``policy`` (policy test, policy doc), ``init``, ``schema``; ``common`` holds what they share. No
command module imports this one, so there is no import cycle.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 unusable input (bad
contract, bad flag, policy compile error, unknown pipeline). A traceback is never the message.
"""

from __future__ import annotations

import gc
from typing import Any

import click

from streamwarden import __version__
from streamwarden.cli import check as _check
from streamwarden.cli import init as _init
from streamwarden.cli import policy as _policy
from streamwarden.cli import recovery as _recovery
from streamwarden.cli import schema as _schema
from streamwarden.core.escape import terminal


class _Command(click.Group):
    """The ``streamwarden`` group, run as a program (the console script, ``python -m``)."""

    # click's own errors (an extra argument, an unknown command, a value not among the choices)
    # quote what was typed, sometimes as written: a CI step that passes a branch name or a file
    # name there must not print a workflow command or a terminal control. Every click error of
    # the group, its subgroups and their commands passes here before click shows it.
    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.ClickException as exc:
            raise _defused(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            raise _defused(exc) from None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        finally:
            # The process ends here. The interpreter's shutdown would run the cycle collector over
            # every object still alive (a warm check at 1,000 contracts: ~15 ms, a tenth of the
            # run); freezing them skips that pass, and reference counting still frees them. Nothing
            # waits on it: files are closed by their with-blocks, temporary directories and worker
            # pools by their finalizers and atexit. Only a program's exit comes here: tests invoke
            # the group's main(), which keeps the collector for the rest of their process.
            gc.freeze()


def _defused(exc: click.ClickException) -> click.ClickException:
    """``exc`` with its message on one line, control characters shown escaped and a workflow
    command broken (the message follows "Error: " on its line)."""
    exc.message = terminal(exc.message)  # type: ignore[misc]  # click declares it Final, and reads it late
    return exc


@click.group(cls=_Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="streamwarden")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Verbose output, as -v after the command gives it (check: progress and timings; policy test: every test).",
)
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Policy-as-code for Flink jobs that write Iceberg tables: state, checkpoint and table contracts."""
    if verbose:  # `streamwarden -v check` as `streamwarden check -v`: the default of every command's -v
        ctx.default_map = _verbose_defaults(ctx.command)


def _verbose_defaults(command: click.Command) -> dict[str, Any]:
    """``{command: {"verbose": True}}`` for each subcommand (nested in groups) that has ``--verbose``."""
    out: dict[str, Any] = {}
    for name, sub in getattr(command, "commands", {}).items():
        if isinstance(sub, click.Group):
            nested = _verbose_defaults(sub)
            if nested:
                out[name] = nested
        elif any(p.name == "verbose" for p in sub.params):
            out[name] = {"verbose": True}
    return out


for _command in (
    _check.validate,
    _check.check,
    _check.diff,
    _check.facts,
    _policy.policy,
    _recovery.savepoint,
    _recovery.gate,
    _recovery.evidence,
    _schema.schema,
    _init.init,
):
    main.add_command(_command)
