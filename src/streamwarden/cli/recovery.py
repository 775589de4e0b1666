"""Recovery commands: ``savepoint inspect``, ``gate`` and ``evidence``.

Exit codes: ``savepoint inspect`` 0, or 2 when the savepoint cannot be read; ``gate`` 0 allow,
1 deny (missing facts, an existing savepoint that cannot be read included, deny: it fails closed),
2 unusable input (invalid contract, unknown pipeline or environment, bad flag, a --restore-from
where nothing exists); ``evidence`` 0 when the record was written (its verdict is the gate's
decision), 2 unusable input. With ``--record`` both also append the decision to the recovery
ledger (docs/ledger.md) after printing it: a ledger that cannot be written is exit 2 (nothing is
recorded), else the command's own code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from streamwarden.cli.common import (
    config_from,
    config_option,
    engine_option,
    engine_options,
    handle_errors,
    now_or,
    opa_url_option,
    parse_time,
    policy_option,
    say,
    write,
)
from streamwarden.core.errors import UsageError

_record_options = [
    click.option(
        "--record",
        is_flag=True,
        help="Also append this decision to the recovery ledger (streamwarden.yaml `ledger:`): one row per "
        "decision, none again on a retry. A ledger that cannot be written exits 2.",
    ),
    click.option("--note", metavar="TEXT", help="An operator's note kept in the ledger row (with --record)."),
]


def _with_record(fn: Any) -> Any:
    for deco in reversed(_record_options):
        fn = deco(fn)
    return fn


def _check_record_flags(record: bool, note: str | None, tag: bool = False) -> None:
    if note is not None and not record:
        raise UsageError("--note is kept in the ledger row: it needs --record")
    if tag and not record:
        raise UsageError("--tag marks the recorded decision's restore point: it needs --record")


def _record(config: Any, evidence_record: Any, verb: str, note: str | None, tag: bool = False) -> None:
    """Append the decision to the ledger and say what happened on stderr (never the note: it is
    the operator's text, kept as given, shown by whoever reads the ledger)."""
    from streamwarden.verbs.record import record

    done = record(config, evidence_record, verb, note=note, tag=tag)
    where = f"ledger {done.ledger}"
    if done.written:
        say(f"streamwarden: recorded decision {done.decision_id} in {where}")
    else:
        say(f"streamwarden: already recorded: decision {done.decision_id} is in {where} (no row written)")
    if done.tag_skipped:
        say(f"streamwarden: no tag {done.tag}: {done.tag_skipped}")
    elif done.tag and done.tag_created:
        say(f"streamwarden: tagged the restore point as {done.tag}")
    elif done.tag:
        say(f"streamwarden: tag {done.tag} is already at the restore point (unchanged)")


@click.group()
def savepoint() -> None:
    """Savepoints and retained checkpoints: what Flink wrote in their _metadata."""


@savepoint.command("inspect")
@click.argument("path")
@click.option("--contract", "contract_file", metavar="FILE", help="Match operator ids to this contract's uids.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--output", "-o", metavar="FILE", help="Write to FILE instead of stdout.")
@handle_errors
def inspect(path: str, contract_file: str | None, fmt: str, output: str | None) -> None:
    """Operators in a savepoint or retained checkpoint (PATH: its directory, its _metadata, or a URI)."""
    from streamwarden.report.savepoint import render_json, render_text
    from streamwarden.verbs.savepoint import inspect_savepoint

    facts = inspect_savepoint(path, contract_file)
    write(render_json(facts) if fmt == "json" else render_text(facts), output)


_common = [
    click.argument("pipeline"),
    click.option("--env", "env_name", required=True, metavar="NAME", help="Environment from streamwarden.yaml."),
    click.option(
        "--restore-from", metavar="PATH", help="Savepoint or retained checkpoint (directory, _metadata or URI)."
    ),
    click.option("--rollback-to", metavar="SNAPSHOT", help="Table rollback target the plan names: snapshot id or tag."),
    click.option("--contracts", "paths", multiple=True, metavar="PATH", help="Where to look for the contract."),
    config_option,
    click.option("--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."),
    policy_option,
    engine_option,
    opa_url_option,
    click.option("--now", "now", metavar="TIME", help="Decide as of this RFC 3339 time (replays a decision)."),
]


def _with_common(fn: Any) -> Any:
    for deco in reversed(_common):
        fn = deco(fn)
    return fn


ENVIRONMENT_HELP = (
    "The environment (environments.NAME in streamwarden.yaml) must configure iceberg: the catalog the "
    "contract's table.catalog names (the table's commits tell what a restore replays and where to roll "
    "back; without it the gate denies). flink (REST) is optional: it names the latest savepoint or "
    "retained checkpoint when --restore-from is not given. A source the environment does not configure "
    "and the gate does not need is not missing; one it configures that cannot be read is (deny)."
)


@click.command(
    help="Pre-deploy decision: may PIPELINE be restored (from --restore-from, else the savepoint or "
    "retained checkpoint Flink names) into the live table of --env?\n\n"
    "Exit codes: 0 allow; 1 deny (a rule failed, or a fact the gate needs could not be gathered: "
    "the gate fails closed, so an unreadable savepoint, table or Flink is a deny, never an allow); "
    "2 unusable input (invalid contract, unknown pipeline or environment, a --restore-from where "
    "nothing exists, a bad flag).\n\n" + ENVIRONMENT_HELP + "\n\n"
    "--format markdown adds the checkpoint-to-snapshot timeline as a Mermaid diagram (GitHub renders "
    "it in pull-request comments and job summaries)."
)
@_with_common
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@_with_record
@click.option(
    "--tag",
    is_flag=True,
    help="With --record, an allowed restore also tags the snapshot to trust as streamwarden-restore-<decision id>.",
)
@handle_errors
def gate(
    pipeline: str,
    env_name: str,
    restore_from: str | None,
    rollback_to: str | None,
    paths: tuple[str, ...],
    config_path: str | None,
    output: str | None,
    policy_dirs: tuple[str, ...],
    engine: str,
    opa_url: str | None,
    now: str | None,
    fmt: str,
    record: bool,
    note: str | None,
    tag: bool,
) -> None:
    from streamwarden.report.gate import render_json, render_markdown, render_text
    from streamwarden.verbs.gate import run_gate

    _check_record_flags(record, note, tag)
    config = config_from(config_path)
    if record:
        from streamwarden.verbs.record import require_ledger

        require_ledger(config, env_name)
    result = run_gate(
        config,
        pipeline,
        env_name,
        restore_from,
        now_or(now),
        rollback_to=rollback_to,
        paths=paths,
        policy_dirs=[Path(d) for d in policy_dirs],
        engine=engine,
        engine_options=engine_options(engine, opa_url),
    )
    render = {"json": render_json, "markdown": render_markdown}.get(fmt, render_text)
    write(render(result), output)
    if record:
        from streamwarden.verbs.evidence import evidence_of

        _record(config, evidence_of(result), "gate", note, tag)
    sys.exit(result.exit_code)


@click.command(
    help="The recovery evidence record of PIPELINE in --env, for an incident: the savepoint or "
    "checkpoint to restore, the table snapshot that matches it, what the restart replays and whether "
    "that duplicates rows, the rollback target with its commands, the consumers to tell, the code "
    "version; its verdict is the gate's own decision and reasons. Markdown (with the checkpoint-to-"
    "snapshot timeline as a Mermaid diagram) or JSON.\n\n"
    "Exit codes: 0 the record was written, whatever its verdict (a deny is in the record; it fails "
    "closed as the gate does: a fact that could not be gathered is a reason to deny); 2 unusable input "
    "(invalid contract, unknown pipeline or environment, a --restore-from where nothing exists, a bad "
    "flag). Use gate for a decision by exit code.\n\n" + ENVIRONMENT_HELP
)
@_with_common
@click.option("--since", "since", metavar="TIME", help="Incident start: RFC 3339 time or a duration ago (6h).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@_with_record
@handle_errors
def evidence(
    pipeline: str,
    env_name: str,
    restore_from: str | None,
    rollback_to: str | None,
    paths: tuple[str, ...],
    config_path: str | None,
    output: str | None,
    policy_dirs: tuple[str, ...],
    engine: str,
    opa_url: str | None,
    now: str | None,
    since: str | None,
    fmt: str,
    record: bool,
    note: str | None,
) -> None:
    from streamwarden.report.evidence import render_json, render_markdown
    from streamwarden.verbs.evidence import build_evidence

    _check_record_flags(record, note)
    config = config_from(config_path)
    if record:
        from streamwarden.verbs.record import require_ledger

        require_ledger(config, env_name)
    now_ms = now_or(now)
    built = build_evidence(
        config,
        pipeline,
        env_name,
        restore_from,
        now_ms,
        since_ms=parse_time(since, "--since", now_ms),
        rollback_to=rollback_to,
        paths=paths,
        policy_dirs=[Path(d) for d in policy_dirs],
        engine=engine,
        engine_options=engine_options(engine, opa_url),
    )
    write(render_json(built) if fmt == "json" else render_markdown(built), output)
    if record:
        _record(config, built, "evidence", note)
    sys.exit(built.exit_code)
