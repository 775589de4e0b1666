"""``streamwarden init``: write a contract derived from deployment files, the running job and the
live table (streamwarden.verbs.init).

Exit codes: 0 the contract was written (or printed with ``--dry-run``); 2 nothing to derive from,
a source that cannot be read, an unknown environment, or an existing file without ``--force``.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from streamwarden.cli.common import config_from, config_option, handle_errors, say
from streamwarden.core.errors import UsageError


@click.command("init")
@click.argument("more_files", nargs=-1, metavar="[FILE...]")
@click.option(
    "--from-deployment",
    "deployment",
    multiple=True,
    metavar="FILE",
    help="A Flink deployment file (FlinkDeployment/FlinkSessionJob CR, config.yaml, flink-conf.yaml, SQL); "
    "repeatable, and files after it count too.",
)
@click.option("--env", "environment", metavar="NAME", help="An environment of streamwarden.yaml for the live sources.")
@click.option("--job", "job", metavar="NAME", help="The Flink job name; with --env, read the running job.")
@click.option("--table", "table", metavar="CATALOG.NAMESPACE.TABLE", help="Read the live Iceberg table (needs --env).")
@click.option("--output", "-o", metavar="FILE", help="Where to write (default: contracts/<name>.yaml).")
@click.option("--dry-run", is_flag=True, help="Print the contract instead of writing it.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@config_option
@handle_errors
def init(
    more_files: tuple[str, ...],
    deployment: tuple[str, ...],
    environment: str | None,
    job: str | None,
    table: str | None,
    output: str | None,
    dry_run: bool,
    force: bool,
    config_path: str | None,
) -> None:
    """Write a contract derived from deployment files and, with --env, from the running job and the
    live table. What cannot be derived is a TODO(...) that validate and check refuse until filled."""
    from streamwarden.core.escape import terminal
    from streamwarden.verbs.init import InitRequest, derive

    if more_files and not deployment:
        raise UsageError(f"unexpected argument {more_files[0]!r}", hint="deployment files follow --from-deployment")
    config = config_from(config_path)
    files = [Path(f) for f in (*deployment, *more_files)]
    for f in files:
        if not f.is_file():
            raise UsageError("deployment file does not exist" if not f.exists() else "is not a file", file=str(f))
    request = InitRequest(
        root=config.root,
        deployment=[f.resolve() for f in files],
        job=job,
        environment=environment,
        env=config.environment(environment) if environment else None,
        table=table,
        output=Path(output).resolve() if output else None,
        now_ms=int(time.time() * 1000),
        dry_run=dry_run,
    )
    result = derive(request)
    shown = output or _shown(result.output)
    for warning in result.warnings:
        say(f"streamwarden: warning: {terminal(warning)}")
    for note in result.notes:
        say(f"streamwarden: note: {terminal(note)}")
    if dry_run:
        click.echo(result.text, nl=False)
    else:
        if result.output.exists() and not force:
            raise UsageError(
                "already exists; not overwritten", file=shown, hint="give --force to replace it, or -o FILE"
            )
        try:
            result.output.parent.mkdir(parents=True, exist_ok=True)
            result.output.write_text(result.text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write the contract: {exc.strerror}", file=shown) from None
        click.echo(f"wrote {terminal(shown)}", err=True)
    if result.todos:
        click.echo(f"{len(result.todos)} TODO(s) to fill before `streamwarden validate` accepts it:", err=True)
        where = f"{terminal(shown)}:" if output or result.named else "line "  # an unnamed dry run: the text above
        for path, line in result.todos:
            click.echo(f"  {where}{line}: {path}", err=True)


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
