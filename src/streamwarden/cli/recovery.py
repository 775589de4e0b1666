"""Recovery commands: ``savepoint inspect``, ``gate`` and ``evidence``.

Exit codes: ``savepoint inspect`` 0, or 2 when the savepoint cannot be read; ``gate`` 0 allow,
1 deny (missing facts, an existing savepoint that cannot be read included, deny: it fails closed),
2 unusable input (invalid contract, unknown pipeline or environment, bad flag, a --restore-from
where nothing exists); ``evidence`` 0 when the record was written (its verdict is the gate's
decision), 1 when it was but a notice ``--notify`` posted was not delivered, 2 unusable input
(``--notify`` without ``notify:`` targets, a target's token variable not set: nothing is posted).
With ``--record`` both also append the decision to the recovery ledger (docs/ledger.md) after
printing it (and after ``--notify``, so the row says who was told): a ledger that cannot be
written is exit 2 (nothing is recorded), else the command's own code.
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
    fail,
    handle_errors,
    now_or,
    opa_url_option,
    parse_time,
    policy_option,
    say,
    write,
)
from streamwarden.core.errors import UsageError
from streamwarden.core.escape import terminal
from streamwarden.lineage.emit import gate_finished, lineage_run

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
@lineage_run("gate", fail)  # OpenLineage START/FAIL, when configured
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
    gate_finished(result, config, [Path(d) for d in policy_dirs])  # OpenLineage COMPLETE, when configured
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
    "flag, --notify without notify: targets or with a target's token variable unset). With --notify: 1 "
    "when a notice could not be delivered (the record is written all the same, the failures are on "
    "stderr and in the record). Use gate for a decision by exit code.\n\n" + ENVIRONMENT_HELP
)
@_with_common
@click.option("--since", "since", metavar="TIME", help="Incident start: RFC 3339 time or a duration ago (6h).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json", "notices", "notices-json"]),
    default="markdown",
    show_default=True,
    help="The record (markdown, json), or only the consumers' notices (notices: Markdown; notices-json: JSON).",
)
@click.option(
    "--notify",
    is_flag=True,
    help="Post each consumer's notice (JSON) to the webhook targets of `notify:` in streamwarden.yaml that "
    "serve its contact; exit 1 if a post was not delivered (the record is written all the same).",
)
@_with_record
@handle_errors
@lineage_run("evidence", fail)  # OpenLineage START/FAIL, when configured
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
    notify: bool,
    record: bool,
    note: str | None,
) -> None:
    from streamwarden.report import evidence as record_formats
    from streamwarden.report import notices as notice_formats
    from streamwarden.verbs.evidence import build_evidence

    _check_record_flags(record, note)
    config = config_from(config_path)
    if notify and not config.notify:
        raise UsageError(
            "--notify needs webhook targets: streamwarden.yaml has no `notify:`",
            file=config.file,
            hint="add `notify:` targets (name, url, contacts, token_env) to streamwarden.yaml; see docs/notices.md",
        )
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
    if notify:
        from streamwarden.verbs.notify import deliver

        built.notified(deliver(config.notify, built.data["notices"]))
    render = {
        "json": record_formats.render_json,
        "notices": notice_formats.render_markdown,
        "notices-json": notice_formats.render_json,
    }.get(fmt, record_formats.render_markdown)
    gate_finished(built.gate, config, [Path(d) for d in policy_dirs])  # OpenLineage COMPLETE, when configured
    write(render(built), output)
    if notify:
        _say_delivery(built.data["notify"], len(built.data["notices"]))
    if record:
        _record(config, built, "evidence", note)
    sys.exit(built.exit_code)


def _say_delivery(outcome: dict[str, Any], consumers: int) -> None:
    """On stderr: each post that was not delivered, each consumer no target serves, and a count."""
    for d in outcome["deliveries"]:
        if not d["delivered"]:
            fail(f"the notice to consumer {terminal(d['consumer'])} was not delivered: {terminal(d['error'])}")
    for n in outcome["not_told"]:
        contact = terminal(n["contact"]) if n.get("contact") else "no contact"
        fail(f"consumer {terminal(n['name'])} ({contact}) was not told: {n['reason']}")
    say(f"streamwarden: {len(outcome['notified'])} of {consumers} consumers told")
