"""Recovery commands: ``savepoint inspect``, ``gate`` and ``evidence``.

Exit codes: ``savepoint inspect`` 0, or 2 when the savepoint cannot be read; ``gate`` 0 allow,
1 deny (missing facts, an existing savepoint that cannot be read included, deny: it fails closed),
2 unusable input (invalid contract, unknown pipeline or environment, bad flag, a --restore-from
where nothing exists); ``evidence`` 0 when the record was written (its verdict is the gate's
decision), 2 unusable input.
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
    write,
)
from streamwarden.lineage.emit import gate_finished, lineage_run


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
) -> None:
    from streamwarden.report.gate import render_json, render_markdown, render_text
    from streamwarden.verbs.gate import run_gate

    config = config_from(config_path)
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
) -> None:
    from streamwarden.report.evidence import render_json, render_markdown
    from streamwarden.verbs.evidence import build_evidence

    config = config_from(config_path)
    now_ms = now_or(now)
    record = build_evidence(
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
    gate_finished(record.gate, config, [Path(d) for d in policy_dirs])  # OpenLineage COMPLETE, when configured
    write(render_json(record) if fmt == "json" else render_markdown(record), output)
    sys.exit(record.exit_code)
