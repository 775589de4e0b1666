"""``gate --format markdown``: the gate's decision for a pull-request comment or a job summary —
the decision and its exit code, the savepoint and the table as of its checkpoint, the
checkpoint ↔ snapshot timeline (Mermaid, streamwarden.timeline), the reasons, the warnings and
which sources were read. Renders ``GateResult`` as ``render_text`` and ``render_json`` do
(gate.py); every value from a contract, a file or a server is escaped (escape.cell / escape.code).
"""

from __future__ import annotations

from typing import Any

from streamwarden.escape import cell, code
from streamwarden.gate import GateResult, source_status
from streamwarden.timeline import recovery_timeline


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def render_markdown(result: GateResult) -> str:
    facts = result.input.get("facts") or {}
    sp = facts.get("savepoint") or {}
    decision = result.decision.upper()
    out = [f"# Gate: {decision} {code(result.pipeline)} in {code(result.environment)}", ""]
    if result.decision == "allow":
        out.append(f"**Decision: {decision}** (exit 0): every rule the gate evaluates passed.")
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
                + (", **rows duplicated**" if plan.get("duplicates") else "")
            )
        elif isinstance(plan, dict) and plan.get("reason"):
            out.append(f"- table: cannot match the savepoint: {cell(plan['reason'])}")
        out += ["", *recovery_timeline(sp)]
    elif sp.get("configured"):
        out.append(f"{code(sp.get('location') or '?')} could not be read: {cell(sp.get('error'))}")
    else:
        out.append("None given (`--restore-from`) and none named by Flink.")
    if result.reasons:
        out += ["", "## Reasons", ""]
        out += [f"- {code(f.rule)} {cell(f.message)}" for f in result.reasons]
    if result.notes:
        out += ["", "## Warnings", ""]
        out += [f"- {code(f.rule)} ({cell(f.severity)}) {cell(f.message)}" for f in result.notes]
    waived = [f for f in result.findings if f.waived]
    if waived:
        out += ["", f"{len(waived)} waived finding{_s(len(waived))}."]
    out += ["", "## Sources", "", "| source | configured | read |", "|---|---|---|"]
    out += [_source_row(name, f) for name, f in source_status(facts).items()]
    return "\n".join(out) + "\n"


def _source_row(name: str, status: dict[str, Any]) -> str:
    if not status["configured"]:
        read = "not configured"
    elif status["available"]:
        read = "yes"
    else:
        read = f"**no**: {cell(status.get('error') or 'unavailable')}"
    return f"| {name} | {'yes' if status['configured'] else 'no'} | {read} |"
