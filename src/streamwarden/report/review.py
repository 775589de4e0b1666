"""The contract review (``diff --format markdown|json``): every change of a pull request's contracts,
classified breaking / coordinate / safe (diff.py classifies, never here), with the consumers it
affects. Its change table (``change_rows``, values by ``value_cell``) is also the "Contract changes"
section of ``check --base --format markdown`` (report/markdown.py): the same change reads the same
in both.

Contract values (consumer names, waiver reasons, field values) come from the pull request, so every
one is escaped for its destination: ``escape.json_text`` over the JSON, ``escape.cell`` /
``escape.code`` in the Markdown (no HTML, links, @-mentions or workflow commands),
``escape.log_text`` over the whole Markdown.
"""

from __future__ import annotations

import json
from typing import Any

from streamwarden.core.escape import cell, code, json_text, log_text
from streamwarden.evaluate.review import CLASS_ORDER


def render_json(pipelines: list[dict[str, Any]]) -> str:
    return (
        json_text(json.dumps({"version": 1, "pipelines": pipelines}, indent=2, ensure_ascii=False, default=str)) + "\n"
    )


VALUE_CHARS = 80  # a before/after value longer than this is cut, with "…"
CHANGE_HEADING = ["| class | field | change | before | after | why | consumers |", "|---|---|---|---|---|---|---|"]
_CLASS_CELL = {"breaking": "🔴 breaking", "coordinate": "🟡 coordinate", "safe": "🟢 safe"}


def value_cell(value: Any) -> str:
    """A contract value in a code span: ``—`` for none, a string as written (``long``) unless it
    would read as another value or hide its spaces (``"3"``, ``"true"``, ``""``: then quoted), any
    other value as JSON with sorted keys; cut to :data:`VALUE_CHARS` with ``…``."""
    if value is None:
        return "—"
    if isinstance(value, str) and _bare(value):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return code(text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…")


def _bare(text: str) -> bool:
    """``text`` can be shown without quotes: printable, spaced as shown, and not a JSON value."""
    if not text or text != " ".join(text.split()) or not text.isprintable():
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def change_rows(changes: list[dict[str, Any]]) -> list[str]:
    """The rows (under :data:`CHANGE_HEADING`) of one pipeline's contract changes, breaking first,
    then by field: the one table of the review (``diff --format markdown``) and of the "Contract
    changes" section of ``check --base --format markdown``."""
    rows = []
    for c in sorted(
        changes, key=lambda c: (CLASS_ORDER.get(str(c.get("class")), len(CLASS_ORDER)), str(c.get("path")))
    ):
        why = str(c.get("reason") or "")
        if c.get("rule"):
            why = f"{c['rule']}: {why}" if why else str(c["rule"])
        kind = str(c.get("class") or "?")
        consumers = ", ".join(str(x) for x in c.get("consumers") or [])
        rows.append(
            f"| {_CLASS_CELL.get(kind) or cell(kind)} | {code(c.get('path') or '')} | {cell(c.get('change') or '')} "
            f"| {value_cell(c.get('before'))} | {value_cell(c.get('after'))} | {cell(why) or '—'} "
            f"| {cell(consumers) or '—'} |"
        )
    return rows


def render_markdown(pipelines: list[dict[str, Any]], base_ref: str) -> str:
    out = [f"## streamwarden contract review against {code(base_ref)}", ""]
    if not pipelines:
        out.append("No contract changes.")
    total = {k: 0 for k in CLASS_ORDER}
    for p in pipelines:
        for c in p["changes"]:
            total[c["class"]] += 1
    if pipelines:
        out.append(
            f"{len(pipelines)} pipeline(s) changed: **{total['breaking']} breaking**, "
            f"{total['coordinate']} need coordination, {total['safe']} safe."
        )
    for p in pipelines:
        out += ["", f"### {code(p['pipeline'])} ({cell(p['status'])})", ""]
        if p.get("note"):
            out += [cell(p["note"]), ""]
        if not p["changes"]:
            if not p.get("note"):
                out.append("No field changes.")
            continue
        out += [*CHANGE_HEADING, *change_rows(p["changes"])]
    return log_text("\n".join(out) + "\n")
