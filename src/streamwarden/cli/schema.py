"""``streamwarden schema``: the shipped JSON Schemas, for editors and policy authors.

The schemas are package data (``streamwarden/_schema`` in the wheel, ``contracts/schema/`` in a
checkout); ``--path`` prints where this installation keeps one, so an editor's YAML language
server can be pointed at it. ``findings`` is the schema of ``check --format json``'s document.
"""

from __future__ import annotations

import click

from streamwarden.core.resources import CONFIG_SCHEMA, CONTRACT_SCHEMA, schema_dir

SCHEMAS = {
    "contract": CONTRACT_SCHEMA,
    "config": CONFIG_SCHEMA,
    "input": "streamwarden-input.v1.schema.json",
    "findings": "streamwarden-findings.v1.schema.json",
    "openlineage": "streamwarden-openlineage-run-facet.v1.schema.json",
}


@click.command("schema")
@click.argument("which", type=click.Choice(list(SCHEMAS)), default="contract", required=False)
@click.option("--path", "show_path", is_flag=True, help="Print the installed file path instead of the schema.")
def schema(which: str, show_path: bool) -> None:
    """Print a JSON Schema: contract (default), config (streamwarden.yaml), input (the policy input),
    findings (what check --format json writes) or openlineage (the `streamwarden` run facet)."""
    path = schema_dir() / SCHEMAS[which]
    if show_path:
        click.echo(str(path))
        return
    text = path.read_text(encoding="utf-8")
    click.echo(text, nl=not text.endswith("\n"))
