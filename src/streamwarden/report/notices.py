"""The consumer notices of an evidence record (``evidence --format notices|notices-json``):
Markdown to paste into a channel or a ticket, JSON for tooling (each notice as ``--notify`` posts
it). Renders what verbs/notices.py built and verbs/notify.py did, never deciding again.

Every value from a contract, a file or a server is escaped for its destination: ``escape.cell`` /
``escape.code`` in the Markdown and ``escape.log_text`` over all of it (a consumer named
``::error::x`` or holding ANSI sequences stays inert in a CI log), ``escape.json_text`` over the
JSON; the CLI's last net scrubs the configured secrets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from streamwarden.core.escape import cell, json_text, log_text
from streamwarden.core.escape import code as md_code
from streamwarden.core.units import format_duration
from streamwarden.report.timeline import utc_time
from streamwarden.verbs.evidence import EvidenceRecord


def render_json(record: EvidenceRecord) -> str:
    d = record.data
    doc = {
        "version": 1,
        "pipeline": d["pipeline"],
        "environment": d["environment"],
        "generated_ms": d["generated_ms"],
        "notices": d["notices"],
        "notify": d.get("notify"),
        "notified": d.get("notified", []),
    }
    return json_text(json.dumps(doc, indent=2, ensure_ascii=False, default=str)) + "\n"


def _dur(ms: Any) -> str:
    return format_duration(ms) if isinstance(ms, int) else "unknown"


def _snap(snapshot_id: Any, ms: Any) -> str:
    return f"{md_code(snapshot_id)} ({utc_time(ms)})" if ms is not None else md_code(snapshot_id)


def render_markdown(record: EvidenceRecord) -> str:
    d = record.data
    out = [
        f"# Notices: {cell(d['pipeline'])} in {cell(d['environment'])}",
        "",
        f"Generated {utc_time(d['generated_ms'])}; the gate's decision: **{cell(d['verdict']['decision'])}**.",
    ]
    if not d["notices"]:
        out += ["", "The contract declares no consumers: nobody to tell."]
    for n in d["notices"]:
        out += ["", *_notice_md(n)]
    if d.get("notify") is not None:
        out += ["", *_delivery_md(d["notify"])]
    return log_text("\n".join(out) + "\n")


def _notice_md(n: Mapping[str, Any]) -> list[str]:
    c = n["consumer"]
    contact = cell(c["contact"]) if c.get("contact") else "**no contact**"
    out = [f"## {cell(c['name'])}: {contact}", ""]
    table = n.get("table")
    if table:
        name = md_code(str(table["catalog"]) + "." + str(table["identifier"]))
        out.append(f"Table {name} branch {md_code(table['branch'])}.")
        out.append("")
    h = n["happened"]
    restore = h.get("restore")
    out.append(
        f"- **What happened:** the job is restored from the {cell(restore['kind'] or 'snapshot')} of checkpoint "
        f"{cell(restore['checkpoint_id'])} ({utc_time(restore['completed_ms'])})"
        if restore
        else "- **What happened:** the job is restored; the savepoint or checkpoint could not be read"
    )
    rep = h["replay"]
    if rep["checkpoints"]:
        cps = rep["checkpoints"]
        out.append(
            f"- replayed checkpoints: {cell(cps[0])}..{cell(cps[-1])} ({cell(rep['snapshots'])} commits, "
            f"{cell(rep['added_records'])} records)"
        )
    else:
        out.append("- replayed checkpoints: none already committed")
    window = h.get("duplicate_window")
    if window:
        out.append(
            f"- duplicate window: snapshots {_snap(window['first_snapshot_id'], window['first_ms'])} .. "
            f"{_snap(window['last_snapshot_id'], window['last_ms'])} "
            f"({len(window['snapshot_ids'])} snapshots: {', '.join(md_code(s) for s in window['snapshot_ids'])})"
        )
    else:
        out.append("- duplicate window: none (the replay writes no row twice)")
    rb = h.get("rollback")
    if rb:
        out.append(
            f"- rollback: to snapshot {_snap(rb['snapshot_id'], rb['timestamp_ms'])}, discarding "
            f"{cell(rb['discards'])} newer snapshots" + ("" if rb["needed"] else " (not needed)")
        )
    trust = n.get("trust")
    out.append(
        f"- **State to trust:** snapshot {_snap(trust['snapshot_id'], trust['timestamp_ms'])}, {cell(trust['why'])}"
        if trust
        else "- **State to trust:** unknown (the table could not be matched to the restore point)"
    )
    f = n["freshness"]
    promise = _dur(f["promised_ms"]) if f["promised_ms"] is not None else "none promised"
    lost = f"; the rollback takes away {_dur(f['lost_ms'])} of data until the job catches up" if f["lost_ms"] else ""
    over = (
        f", **{_dur(f['over_promise_ms'])} beyond the promise**"
        if f.get("over_promise_ms")
        else (", within the promise" if f.get("over_promise_ms") == 0 else "")
    )
    out.append(
        f"- **Freshness:** promised {promise}; data as of the state to trust is {_dur(f['lag_ms'])} old{over}{lost}"
    )
    out.append(f"- **What to do ({cell(n['action']['kind'])}):** {cell(n['action']['text'])}")
    return out


def _delivery_md(notify: Mapping[str, Any]) -> list[str]:
    out = ["## Delivery (`--notify`)", ""]
    for d in notify["deliveries"]:
        if d["delivered"]:
            out.append(f"- {cell(d['consumer'])} → {cell(d['target'])}: delivered (HTTP {cell(d['status'])})")
        else:
            out.append(f"- {cell(d['consumer'])} → {cell(d['target'])}: **not delivered**: {cell(d['error'])}")
    for n in notify["not_told"]:
        contact = cell(n["contact"]) if n.get("contact") else "no contact"
        out.append(f"- {cell(n['name'])} ({contact}): **not told**, {cell(n['reason'])}")
    return out
