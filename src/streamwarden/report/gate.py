"""The gate's decision (``gate --format text|json|markdown``): the decision and its exit code, the
savepoint and the table as of its checkpoint, the checkpoint ↔ snapshot timeline (Markdown only,
report/timeline.py), the reasons, the warnings and which sources were read. Renders the
``GateResult`` that gate.py decided, never decides again.

Every value from a contract, a file or a server is escaped for its destination: ``escape.terminal``
in the text, ``escape.json_text`` over the JSON, ``escape.cell`` / ``escape.code`` in the Markdown,
``escape.log_text`` over the whole text and Markdown.
"""

from __future__ import annotations

import json
from typing import Any

from streamwarden.core.escape import cell, code, json_text, log_text
from streamwarden.core.escape import terminal as t
from streamwarden.report.timeline import recovery_timeline, replay_duplicates
from streamwarden.verbs.gate import GateResult, source_status


def _s(n: int) -> str:
    return "" if n == 1 else "s"


# --- JSON -----------------------------------------------------------------------------------------


def _restore_summary(savepoint: dict[str, Any], duplicates: bool) -> dict[str, Any] | None:
    if not savepoint.get("configured"):
        return None
    keys = ("source", "location", "available", "error", "kind", "version", "checkpoint_id", "completed_ms", "job_id")
    out = {k: savepoint.get(k) for k in keys if k in savepoint}
    table = savepoint.get("table")
    if isinstance(table, dict):
        summary: dict[str, Any] = {
            k: table.get(k)
            for k in (
                "status",
                "max_committed_checkpoint_id",
                "matching_snapshot",
                "rollback_target",
                "reason",
            )
            if k in table
        }
        if table.get("status") in ("behind", "current"):
            summary["duplicates"] = duplicates  # SW-REC-002's decision, as the reasons show it
        out["table"] = summary
    return out


def gate_to_dict(result: GateResult) -> dict[str, Any]:
    facts = result.input.get("facts") or {}
    return {
        "version": 1,
        "decision": result.decision,
        "pipeline": result.pipeline,
        "environment": result.environment,
        "now_ms": result.now_ms,
        "restore_from": _restore_summary(facts.get("savepoint") or {}, replay_duplicates(result.findings)),
        "sources": source_status(facts),
        "undecided": result.undecided,
        "reasons": [f.to_dict() for f in result.reasons],
        "warnings": [f.to_dict() for f in result.notes],
        "waived": [f.to_dict() for f in result.findings if f.waived],
    }


def render_json(result: GateResult) -> str:
    return json_text(json.dumps(gate_to_dict(result), indent=2, ensure_ascii=False)) + "\n"


# --- text -----------------------------------------------------------------------------------------


def render_text(result: GateResult) -> str:
    facts = result.input.get("facts") or {}
    sp = facts.get("savepoint") or {}
    lines = [f"gate: {result.decision.upper()} {t(result.pipeline)} in {t(result.environment)}"]
    if sp.get("available"):
        lines.append(
            f"  restore from {t(sp.get('location'))} ({t(sp.get('kind') or 'snapshot')} of checkpoint "
            f"{t(sp.get('checkpoint_id'))}, _metadata v{t(sp.get('version'))}, "
            f"{t(sp.get('stateful_operators'))} stateful operators)"
        )
        table = sp.get("table") or {}
        if table.get("status") in ("behind", "current"):
            match = table.get("matching_snapshot") or {}
            lines.append(
                f"  table: max committed checkpoint {t(table.get('max_committed_checkpoint_id'))}, snapshot of the "
                f"savepoint's checkpoint: {t(match.get('snapshot_id', 'none'))}, replay "
                f"{t((table.get('replay') or {}).get('snapshots', 0))} commits"
            )
    elif sp.get("configured"):
        lines.append(f"  restore from {t(sp.get('location') or '?')}: unreadable")
    else:
        lines.append("  no savepoint or retained checkpoint to restore from")
    if result.undecided:
        lines.append(f"  ✗ no decision: {t(result.undecided)}")
    lines += [f"  ✗ {t(f.rule)} {t(f.message)}" for f in result.reasons]
    lines += [f"  ! {t(f.rule)} ({t(f.severity)}) {t(f.message)}" for f in result.notes]
    waived = [f for f in result.findings if f.waived]
    if waived:
        lines.append(f"  {len(waived)} waived finding{_s(len(waived))}")
    if result.decision == "allow":
        lines.append("  allowed: every rule the gate evaluates passed")
    elif result.undecided:
        lines.append("  denied: the policies gave no decision (the gate fails closed)")
    else:
        lines.append(f"  denied: {len(result.reasons)} reason{_s(len(result.reasons))}")
    return log_text("\n".join(lines) + "\n")


# --- Markdown (a pull-request comment or a job summary) ------------------------------------------


def render_markdown(result: GateResult) -> str:
    facts = result.input.get("facts") or {}
    sp = facts.get("savepoint") or {}
    decision = result.decision.upper()
    out = [f"# Gate: {decision} {code(result.pipeline)} in {code(result.environment)}", ""]
    if result.decision == "allow":
        out.append(f"**Decision: {decision}** (exit 0): every rule the gate evaluates passed.")
    elif result.undecided:
        out.append(f"**Decision: {decision}** (exit 1): the policies gave no decision; the gate fails closed.")
    else:
        n = len(result.reasons)
        out.append(f"**Decision: {decision}** (exit 1): {n} reason{_s(n)}; the gate fails closed.")
    out += ["", "## Restore from", ""]
    if sp.get("available"):
        out += [
            f"- {code(sp.get('location'))} ({cell(sp.get('source'))})",
            f"- {cell(sp.get('kind') or 'snapshot')} of checkpoint **{cell(sp.get('checkpoint_id'))}**, "
            f"`_metadata` v{cell(sp.get('version'))}, {cell(sp.get('stateful_operators'))} stateful operators",
        ]
        plan = sp.get("table") or {}
        if plan.get("status") in ("behind", "current"):
            match = plan.get("matching_snapshot") or {}
            replay = plan.get("replay") or {}
            out.append(
                f"- table: max committed checkpoint {cell(plan.get('max_committed_checkpoint_id'))}, snapshot of "
                f"the savepoint's checkpoint: {cell(match.get('snapshot_id', 'none'))}, replay "
                f"{cell(replay.get('snapshots', 0))} commits"
                + (", **rows duplicated**" if replay_duplicates(result.findings) else "")
            )
        elif isinstance(plan, dict) and plan.get("reason"):
            out.append(f"- table: cannot match the savepoint: {cell(plan['reason'])}")
        rows = (result.input.get("ledger") or {}).get("rows") or []
        out += ["", *recovery_timeline(sp, duplicates=replay_duplicates(result.findings), ledger=rows)]
    elif sp.get("configured"):
        out.append(f"{code(sp.get('location') or '?')} could not be read: {cell(sp.get('error'))}")
    else:
        out.append("None given (`--restore-from`) and none named by Flink.")
    if result.reasons or result.undecided:
        out += ["", "## Reasons", ""]
        out += [f"- no decision: {cell(result.undecided)}"] if result.undecided else []
        out += [f"- {code(f.rule)} {cell(f.message)}" for f in result.reasons]
    if result.notes:
        out += ["", "## Warnings", ""]
        out += [f"- {code(f.rule)} ({cell(f.severity)}) {cell(f.message)}" for f in result.notes]
    waived = [f for f in result.findings if f.waived]
    if waived:
        out += ["", f"{len(waived)} waived finding{_s(len(waived))}."]
    out += ["", "## Sources", "", "| source | configured | read |", "|---|---|---|"]
    out += [_source_row(name, f) for name, f in source_status(facts).items()]
    return log_text("\n".join(out) + "\n")


def _source_row(name: str, status: dict[str, Any]) -> str:
    if not status["configured"]:
        read = "not configured"
    elif status["available"]:
        read = "yes"
    else:
        read = f"**no**: {cell(status.get('error') or 'unavailable')}"
    return f"| {cell(name)} | {'yes' if status['configured'] else 'no'} | {read} |"
