"""The savepoint inspection (``savepoint inspect --format text|json``): the operators Flink wrote in
a savepoint's or retained checkpoint's ``_metadata``, matched to a contract's uids when one is given.
Renders ``facts.savepoint`` (facts/savepoint.py), never reads the file itself.

Operator uids and names, paths and formats come from the savepoint file, so every value is escaped
for its destination: ``escape.terminal`` in the text (one line, controls shown escaped, workflow
commands broken) and ``escape.log_text`` over it, ``escape.json_text`` over the JSON.
"""

from __future__ import annotations

import json
from typing import Any

from streamwarden.escape import json_text, log_text
from streamwarden.escape import terminal as t


def render_json(facts: dict[str, Any]) -> str:
    return json_text(json.dumps(facts, indent=2, ensure_ascii=False)) + "\n"


def render_text(f: dict[str, Any]) -> str:
    lines = [
        t(f["location"]),
        f"  {_what(f)}, _metadata v{t(f['version'])}"
        + (f", {t(f['format'])}" if f.get("format") else "")
        + f", {t(f['metadata_bytes'])} bytes",
        f"  {len(f['operators'])} operators, {t(f['stateful_operators'])} with state, "
        f"{t(f['state_size'])} bytes of state",
        "",
    ]
    header = ("operator id", "uid / name", "contract uid", "par", "max par", "state", "bytes", "handles")
    rows = [header, *(_row(f, op) for op in f["operators"])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    unmatched = f.get("unmatched_stateful") or []
    if f.get("matched") and unmatched:
        lines += [
            "",
            f"  {len(unmatched)} operator{'s' if len(unmatched) != 1 else ''} with state "
            f"match{'' if len(unmatched) != 1 else 'es'} no contract uid:",
        ]
        for op in f["operators"]:
            if op["operator_id"] in unmatched and op.get("closest"):
                lines.append(f"    {t(op['operator_id'])}: closest declared uid {t(repr(op['closest']['uid']))}")
    lines += _kafka_lines(f.get("kafka") or {})
    return log_text("\n".join(lines) + "\n")


def _kafka_lines(kafka: dict[str, Any]) -> list[str]:
    """Where a restore resumes each Kafka partition (the split state of each Kafka source)."""
    out: list[str] = []
    parts = kafka.get("partitions") or []
    for s in kafka.get("sources") or []:
        mine = [p for p in parts if p.get("operator_id") == s["operator_id"]]
        e = s.get("enumerator") or {}
        label = s.get("uid") or s.get("name") or s["operator_id"]
        out += [
            "",
            f"  Kafka source {t(label)}: {len(mine)} partitions to resume"
            + (f", enumerator state v{t(e['version'])} ({len(e.get('partitions') or [])} partitions)" if e else ""),
        ]
        if not s.get("complete"):
            out.append(f"    incomplete: {t(incomplete_reason(s))}")
        for p in mine:
            offset = f"offset {t(p['offset'])}" if isinstance(p.get("offset"), int) else t(p.get("position"))
            held = f"subtask {t(p['subtask'])}" if p.get("subtask") is not None else t(p.get("from"))
            stop = f", stops at {t(p['stopping_offset'])}" if p.get("stopping_offset") is not None else ""
            out.append(f"    {t(p['topic'])}[{t(p['partition'])}]  {offset}  ({held}{stop})")
    return out


def incomplete_reason(source: dict[str, Any]) -> str:
    """Why a Kafka source's partition list is incomplete (``complete`` false), for people."""
    files = source.get("subtasks_in_state_files") or 0
    if files:
        return f"the splits of {files} subtasks are in state files, which are not read"
    unreadable = source.get("subtasks_unreadable") or 0
    if unreadable:
        return f"the split state of {unreadable} subtasks is not laid out as Flink's SourceOperator writes it"
    return "the enumerator assigned partitions that no reader's split state holds"


def _row(f: dict[str, Any], op: dict[str, Any]) -> tuple[str, ...]:
    """One operator's table row, every cell escaped (its width is the escaped text's)."""
    matched = (op.get("matched") or {}).get("uid") if f.get("matched") else None
    contract_uid = matched or ("—" if not f.get("matched") else "(none)" if op["has_state"] else "")
    label = op["uid"] or (f"[{op['name']}]" if op["name"] else "")
    kinds = ",".join(f"{k}×{n}" if n > 1 else k for k, n in op["handle_kinds"].items())
    if op["coordinator_state_bytes"] is not None:
        kinds = ",".join(x for x in ("coordinator", kinds) if x)
    state = "finished" if op["fully_finished"] else "yes" if op["has_state"] else "no"
    cells = (
        op["operator_id"],
        label,
        contract_uid,
        op["parallelism"],
        op["max_parallelism"],
        state,
        op["state_size"],
        kinds,
    )
    return tuple(t(c) for c in cells)


def _what(f: dict[str, Any]) -> str:
    if f["kind"] == "checkpoint":
        return f"retained checkpoint {t(f['checkpoint_id'])}"
    if f["kind"] == "savepoint":
        return f"savepoint at checkpoint {t(f['checkpoint_id'])}"
    return f"checkpoint or savepoint at checkpoint {t(f['checkpoint_id'])}"
