"""The recovery evidence record (``evidence --format markdown|json``): Markdown for people, JSON for
tooling. Renders the ``EvidenceRecord`` that evidence.py built (its verdict is the gate's own
decision), never decides again.

Every value from a contract, a file or a server is escaped for its destination: ``escape.json_text``
over the JSON, ``escape.cell`` / ``escape.code`` in the Markdown (a command in a fenced block whose
fence no line can close), ``escape.log_text`` over the whole Markdown.
"""

from __future__ import annotations

import json
from typing import Any

from streamwarden.core.escape import cell, code_block, json_text, log_text
from streamwarden.core.escape import code as md_code
from streamwarden.core.units import format_duration
from streamwarden.report.savepoint import incomplete_reason
from streamwarden.report.timeline import recovery_timeline, replay_duplicates, utc_time
from streamwarden.verbs.evidence import EvidenceRecord


def render_json(record: EvidenceRecord) -> str:
    return json_text(json.dumps(record.data, indent=2, ensure_ascii=False, default=str)) + "\n"


def _dur(ms: Any) -> str:
    return format_duration(ms) if isinstance(ms, int) else "none promised"


def render_markdown(record: EvidenceRecord) -> str:
    d = record.data
    out = [
        f"# Recovery evidence: {cell(d['pipeline'])} in {cell(d['environment'])}",
        "",
        f"Generated {utc_time(d['generated_ms'])}"
        + (f", incident since {utc_time(d['since_ms'])}" if d["since_ms"] else "")
        + ".",
        "",
        f"**Verdict: {cell(d['verdict']['decision'].upper())}**",
        "",
    ]
    if d["verdict"].get("undecided"):
        out.append(f"- no decision: {cell(d['verdict']['undecided'])}")
    out += [f"- {md_code(r['rule'])} {cell(r['message'])}" for r in d["verdict"]["reasons"]]
    out += [f"- {md_code(r['rule'])} ({cell(r['severity'])}) {cell(r['message'])}" for r in d["verdict"]["warnings"]]
    cand = d["candidate"]
    duplicates = replay_duplicates(record.findings)
    if cand and cand.get("available"):
        plan = (d["table"] or {}).get("plan")
        rows = ((record.gate.input.get("ledger") or {}).get("rows") or []) if record.gate else []
        out += ["", "## Timeline", "", *recovery_timeline({**cand, "table": plan}, duplicates=duplicates, ledger=rows)]
    out += ["", "## Savepoint or checkpoint to restore", ""]
    if cand is None:
        out.append("None given (`--restore-from`) and none found in Flink's checkpoint history.")
    elif not cand["available"]:
        out.append(f"{md_code(cand.get('location'))} could not be read: {cell(cand.get('error'))}")
    else:
        out += [
            f"- location: {md_code(cand['location'])} ({cell(cand['source'])})",
            f"- {cell(cand['kind'] or 'snapshot')} of checkpoint **{cell(cand['checkpoint_id'])}**, "
            f"_metadata v{cell(cand['version'])}{', ' + cell(cand['format']) if cand.get('format') else ''}",
            f"- completed {utc_time(cand['completed_ms'])} (from {cell(cand['completed_ms_source'])})",
            f"- job {md_code(cand['job_id'] or (cand.get('job_id_prefix') or '?') + '…')}; "
            f"{cell(cand['stateful_operators'])} stateful operators, {cell(cand['state_size'])} bytes of state",
            "",
            "| operator id | uid | contract uid | max parallelism | state bytes |",
            "|---|---|---|---|---|",
        ]
        for op in cand["operators"]:
            if op["has_state"]:
                m = op.get("matched") or {}
                out.append(
                    f"| {md_code(op['operator_id'])} | {cell(op['uid'] or op['name'] or '')} | "
                    f"{cell(m['uid']) if m.get('uid') else '**none**'} | "
                    f"{cell(op['max_parallelism'])} | {cell(op['state_size'])} |"
                )
        out += _kafka_md(cand.get("kafka") or {})
    out += _table_md(d["table"], duplicates)
    out += _history_md(d.get("history"))
    if d["since"] is not None:
        s = d["since"]
        out += [
            "",
            "## Since the incident started",
            "",
            f"{cell(s['snapshots'])} snapshots committed since then; "
            f"{len(s['checkpoints'])} checkpoints in Flink's recent history.",
        ]
    out += ["", "## Consumers to notify", ""]
    out += [
        f"- {cell(c['name'])}: {cell(c['contact']) if c['contact'] else '**no contact**'} "
        f"(freshness {_dur(c['freshness_ms'])})"
        for c in d["consumers"]
    ] or ["None declared."]
    version = d["code"]
    out += [
        "",
        "## Code version being restored",
        "",
        f"- contract {md_code(version['contract'])} at commit "
        f"{md_code(version['git_commit'] or 'unknown')}"
        + (" (uncommitted changes)" if version.get("git_dirty") else ""),
    ]
    if version.get("flink"):
        f = version["flink"]
        out.append(
            f"- Flink job {md_code(f['job_name'])} {md_code(f['job_id'])} "
            f"({cell(f['state'])}, Flink {cell(f['flink_version'])})"
        )
    return log_text("\n".join(out) + "\n")


KAFKA_ROWS = 200  # partitions listed in the Markdown (the JSON lists them all)


def _or_dash(value: Any) -> Any:
    return "-" if value is None else value


def _kafka_md(kafka: dict[str, Any]) -> list[str]:
    """Where the restored job resumes each Kafka partition (the savepoint's split state)."""
    parts = kafka.get("partitions") or []
    sources = kafka.get("sources") or []
    if not sources:
        return []
    out = [
        "",
        "### Kafka restore offsets",
        "",
        "Where the restored job resumes each partition (the savepoint's splits).",
    ]
    for s in sources:
        if not s.get("complete"):
            name = s.get("source") or s.get("uid") or s["operator_id"]
            out.append(f"- {md_code(name)}: incomplete, {cell(incomplete_reason(s))}")
    broker = any(p.get("broker_earliest") is not None for p in parts)  # an environment's kafka section was read
    header = "| source | topic | partition | restore offset | held by |"
    out += ["", header + (" broker earliest | broker latest |" if broker else ""), "|---|---|---|---|---|"]
    out[-1] += "---|---|" if broker else ""
    for p in parts[:KAFKA_ROWS]:
        offset = cell(p["offset"]) if isinstance(p.get("offset"), int) else f"({cell(p.get('position'))})"
        held = f"subtask {cell(p['subtask'])}" if p.get("subtask") is not None else cell(p.get("from"))
        name = p.get("source") or p.get("operator_id")
        row = f"| {cell(name)} | {md_code(p['topic'])} | {cell(p['partition'])} | {offset} | {held} |"
        if broker:
            row += f" {cell(_or_dash(p.get('broker_earliest')))} | {cell(_or_dash(p.get('broker_latest')))} |"
        out.append(row)
    if len(parts) > KAFKA_ROWS:
        out.append(f"\n{len(parts) - KAFKA_ROWS} more partitions in the JSON record (`--format json`).")
    return out


def _table_md(table: dict[str, Any] | None, duplicates: bool) -> list[str]:
    out = ["", "## The table", ""]
    if table is None:
        return [*out, "No table declared."]
    if not table["available"]:
        return [*out, f"Unavailable: {cell(table['error'])}"]
    plan = table.get("plan") or {}
    out.append(f"{md_code(str(table['catalog']) + '.' + str(table['identifier']))} branch {md_code(table['branch'])}.")
    if plan.get("status") not in ("behind", "current"):
        out += ["", f"Cannot match the savepoint to the table: {cell(plan.get('reason') or 'no savepoint')}."]
        named = (table.get("rollback") or {}).get("named") or {}
        if named:  # --rollback-to with nothing to judge it against: what the operator named, as resolved
            where = (
                f"snapshot **{cell(named['snapshot_id'])}** ({cell(named['via'])})"
                if named.get("snapshot_id")
                else None
            )
            out += [
                "",
                f"Rollback target named: {md_code(named['named'])}: {where or 'not found'}; {cell(named['reason'])}.",
            ]
        return out
    match = plan.get("matching_snapshot")
    rep = plan["replay"]
    idem = plan.get("idempotence") or {}
    out += [
        "",
        f"- max committed checkpoint of job {md_code(plan['job_id'])}: **{cell(plan['max_committed_checkpoint_id'])}**",
        f"- snapshot of checkpoint {cell(plan['checkpoint_id'])}: "
        + (
            f"**{cell(match['snapshot_id'])}** (checkpoint {cell(match['checkpoint_id'])}, "
            f"{utc_time(match['timestamp_ms'])})"
            if match
            else f"none ({cell(plan.get('matching_missing'))})"
        ),
        f"- replay window: {cell(rep['snapshots'])} commits, checkpoints "
        f"{cell(rep['first_checkpoint_id'])}..{cell(rep['last_checkpoint_id'])}, {cell(rep['added_records'])} records, "
        f"{cell(rep['added_data_files'])} data files, {cell(rep['added_delete_files'])} delete files",
        f"- sink idempotent (upsert with identifier fields): {'yes' if idem.get('idempotent') else 'no'}"
        f" ({cell(idem.get('source'))})",
        f"- replay duplicates rows: **{'yes' if duplicates else 'no'}**",
    ]
    if plan.get("behind"):
        out.append(
            f"- a restored job that keeps job id {md_code(plan['job_id'])} (fixed job ids) finds checkpoints up to "
            f"{cell(plan['max_committed_checkpoint_id'])} already committed and skips them instead: rows are lost, "
            "not duplicated (apache/iceberg#10892); roll back first either way"
        )
    rb = table.get("rollback")
    if rb:
        out += [
            "",
            "### Rollback target",
            "",
            f"Snapshot **{cell(rb['snapshot_id'])}** (checkpoint {cell(rb['checkpoint_id'])}, "
            f"{utc_time(rb['timestamp_ms'])}); rolling back discards {cell(rb['discards'])} newer snapshots"
            + ("" if rb["needed"] else " (not needed: nothing is replayed)")
            + ".",
            "",
        ]
        for name, cmd in rb["commands"].items():
            out += [f"{cell(name)}:", "", code_block(cmd), ""]
    return out


_CHANGE_TEXT = {
    "rollback": "rolled back",
    "reset": "moved off its lineage",
    "cherry_pick": "cherry-pick",
    "delete": "rows deleted",
}


def _ids(ids: Any, total: Any = None) -> str:
    shown = ", ".join(cell(i) for i in ids or [])
    more = total - len(ids or []) if isinstance(total, int) else 0
    return (shown or "-") + (f" and {more} more" if more > 0 else "")


def _history_md(history: dict[str, Any] | None) -> list[str]:
    """The rollback history: each time the branch moved back or off its lineage, each cherry-pick
    and delete, and the rows a clean-up after a duplicate removed every copy of."""
    if history is None:
        return []
    out = ["", "## Rollback history", ""]
    if not history["available"]:
        out += [f"Could not be read completely: {cell(history['error'])}", ""]
    files = history.get("metadata_files") or {}
    changes = history["changes"]
    if not changes:
        out.append(
            f"No rollback, cherry-pick or delete in the history read ({cell(files.get('read'))} metadata files)."
        )
    else:
        out += ["| when | change | branch | snapshot | from | snapshots left / data removed from | Flink jobs |"]
        out += ["|---|---|---|---|---|---|---|"]
        for c in changes:
            left = (
                c.get("removed_snapshot_ids")
                if c["kind"] in ("rollback", "reset")
                else c.get("removed_from_snapshot_ids")
            )
            source = c.get("from_snapshot_id") if c["kind"] != "cherry_pick" else c.get("source_snapshot_id")
            out.append(
                f"| {utc_time(c.get('timestamp_ms'))} | {cell(_CHANGE_TEXT.get(c['kind'], c['kind']))} | "
                f"{md_code(c.get('branch'))} | {cell(c.get('snapshot_id'))} | {cell(_or_dash(source))} | "
                f"{_ids(left, c.get('removed_count'))} | {_ids(c.get('flink_job_ids'))} |"
            )
        if history.get("changes_truncated"):
            out.append(f"\n{cell(history['changes_truncated'])} older changes in the JSON record (`--format json`).")
    for c in history.get("cleanups") or []:
        if not c.get("lost_keys"):
            continue
        keys = "; ".join(
            ", ".join(f"{cell(k)}={md_code(v)}" for k, v in (lost.get("key") or {}).items())
            for lost in c.get("lost") or []
        )
        out += [
            "",
            f"- clean-up {cell(c.get('operation'))} snapshot {cell(c.get('snapshot_id'))} removed every copy of "
            f"**{cell(c['lost_keys'])}** duplicated row(s); still gone at snapshot {cell(c.get('after_snapshot_id'))}; "
            f"restore them from snapshot {cell(c.get('parent_id'))}: {keys}",
        ]
    return out
