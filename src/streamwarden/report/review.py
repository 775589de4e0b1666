"""The contract review (``diff --format markdown|json``): every change of a pull request's contracts,
classified breaking / coordinate / safe (diff.py classifies, never here), with the consumers it
affects.

Contract values (consumer names, waiver reasons, field values) come from the pull request, so every
one is escaped for its destination: ``escape.json_text`` over the JSON, ``escape.cell`` /
``escape.code`` in the Markdown (no HTML, links, @-mentions or workflow commands),
``escape.log_text`` over the whole Markdown.
"""

from __future__ import annotations

import json
from typing import Any

from streamwarden.diff import CLASS_ORDER
from streamwarden.escape import cell, code, json_text, log_text


def render_json(pipelines: list[dict[str, Any]]) -> str:
    return (
        json_text(json.dumps({"version": 1, "pipelines": pipelines}, indent=2, ensure_ascii=False, default=str)) + "\n"
    )


def _short(value: Any) -> str:
    if value is None:
        return "—"
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else value
    return code(text if len(text) <= 60 else f"{text[:57]}…")


def render_markdown(pipelines: list[dict[str, Any]], base_ref: str) -> str:
    icons = {"breaking": "🔴 breaking", "coordinate": "🟡 coordinate", "safe": "🟢 safe"}
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
        out += ["| class | field | change | before | after | why | consumers |", "|---|---|---|---|---|---|---|"]
        for c in sorted(p["changes"], key=lambda c: (CLASS_ORDER[c["class"]], c["path"])):
            why = (f"**{cell(c['rule'])}** " if c["rule"] else "") + cell(c["reason"])
            out.append(
                f"| {icons[c['class']]} | {code(c['path'])} | {cell(c['change'])} | {_short(c['before'])} "
                f"| {_short(c['after'])} | {why} | {cell(', '.join(c['consumers'])) or '—'} |"
            )
    return log_text("\n".join(out) + "\n")
