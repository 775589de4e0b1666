"""The table side of a restore (``facts.savepoint.table``): which snapshot matches the savepoint's
checkpoint, whether the savepoint is behind the job's max committed checkpoint, what the restored
job will replay, the sink's idempotence, and whether a named rollback target holds the table as
of the checkpoint. Facts only: whether the replay duplicates rows is decided once, by SW-REC-002
(policies/streamwarden/recovery/sw_rec_002.rego), from these facts. Pure: no I/O, no pyiceberg;
it reads snapshot items as ``streamwarden.iceberg.snapshots.snapshot_item`` makes them, along one
branch's ancestry.

The Iceberg sink finds "its" commits the way ``SinkUtil.getMaxCommittedCheckpointId`` does: walk
the parent ancestry from the branch head; the first snapshot whose ``flink.job-id`` is the job and
whose ``flink.operator-id`` is null or the committer's gives the max committed checkpoint id. The
job is the savepoint's (from Flink REST, the checkpoint directory, or the savepoint directory's
6-hex prefix); the committer is an operator of the savepoint (or a declared sink uid) that the
table's lineage names.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streamwarden.iceberg import MAIN_BRANCH
from streamwarden.iceberg.lineage import END_INPUT_CHECKPOINT_ID

REPLAY_LIST_CAP = 200


def _int(summary: Mapping[str, Any], key: str) -> int:
    try:
        return int(str(summary.get(key) or 0))
    except ValueError:
        return 0


def sink_is_idempotent(iceberg: Mapping[str, Any] | None, contract: Mapping[str, Any]) -> dict[str, Any]:
    """Upsert with identifier fields: replayed rows replace themselves. The live table decides when
    Iceberg facts are available; else the contract's declared properties and identifier fields."""
    if iceberg and iceberg.get("available"):
        props = iceberg.get("properties") or {}
        fields = list((iceberg.get("schema") or {}).get("identifier_fields") or [])
        source = "table"
    else:
        table = contract.get("table") or {}
        props = table.get("properties") or {}
        fields = list(table.get("identifier_fields") or [])
        source = "contract"
    upsert = str(props.get("write.upsert.enabled", "false")).lower() == "true"
    return {"idempotent": upsert and bool(fields), "upsert": upsert, "identifier_fields": fields, "source": source}


def _job_candidates(savepoint: Mapping[str, Any], jobs: Iterable[str]) -> tuple[str | None, str | None]:
    job = savepoint.get("job_id")
    if isinstance(job, str) and job:
        return job, savepoint.get("job_id_source") or "path"
    prefix = savepoint.get("job_id_prefix")
    seen = list(dict.fromkeys(jobs))
    if isinstance(prefix, str) and prefix:
        hits = [j for j in seen if j.lower().startswith(prefix.lower())]
        if hits:
            return hits[-1], "table (savepoint directory prefix)"
        return None, None
    if len(seen) == 1:
        return seen[0], "table (only job of the committer)"
    return None, None


def restore_plan(
    savepoint: Mapping[str, Any],
    ancestry: Sequence[Mapping[str, Any]],
    *,
    complete: bool,
    sink_operator_ids: Iterable[str] = (),
    refs: Mapping[str, Mapping[str, Any]] | None = None,
    rollback_to: str | None = None,
    idempotence: Mapping[str, Any] | None = None,
    branch: str = MAIN_BRANCH,
) -> dict[str, Any]:
    """``ancestry``: snapshot items of the branch, **newest first**; ``complete``: the walk reached
    the table's first snapshot (False when a parent was expired or the walk was capped)."""
    n = savepoint.get("checkpoint_id")
    operator_ids = {o["operator_id"] for o in savepoint.get("operators") or []} | set(sink_operator_ids)
    lineage_ops = {s.get("operator_id") for s in ancestry if s.get("job_id")}
    committers = sorted(o for o in operator_ids if o in lineage_ops)
    ours = [
        s for s in ancestry if s.get("job_id") and (s.get("operator_id") is None or s.get("operator_id") in committers)
    ]
    job, job_source = _job_candidates(savepoint, [s["job_id"] for s in reversed(ours)])
    plan: dict[str, Any] = {
        "branch": branch,
        "committer_operator_ids": committers,
        "job_id": job,
        "job_id_source": job_source,
        "checkpoint_id": n,
        "ancestry_complete": complete,
        "snapshots_read": len(ancestry),
        "idempotence": dict(idempotence or {}),
    }
    if not isinstance(n, int) or job is None or not committers:
        if not isinstance(n, int):
            code, why = "no_checkpoint_id", "the savepoint has no checkpoint id"
        elif not committers:
            code, why = "no_committer", "no operator of the savepoint has committed to this branch (new table?)"
        else:
            code, why = (
                "ambiguous_job",
                (
                    "the table holds commits of several jobs by the savepoint's committer and "
                    "nothing tells which job took the savepoint"
                ),
            )
        plan.update(status="unknown", reason_code=code, reason=why, behind=None, max_committed_checkpoint_id=None)
        return plan
    job_snaps = [s for s in ours if s["job_id"] == job]
    real = [
        s
        for s in job_snaps
        if isinstance(s.get("checkpoint_id"), int) and s["checkpoint_id"] != END_INPUT_CHECKPOINT_ID
    ]
    max_committed = real[0]["checkpoint_id"] if real else None  # the first from the head, as SinkUtil reads it
    positions = {s["snapshot_id"]: i for i, s in enumerate(ancestry)}
    match = next((s for s in real if s["checkpoint_id"] <= n), None)
    plan["max_committed_checkpoint_id"] = max_committed
    plan["max_committed_snapshot_id"] = real[0]["snapshot_id"] if real else None
    plan["behind"] = max_committed is not None and n < max_committed
    plan["matching_snapshot"] = _brief(match) if match else None
    if match is None:
        expired = bool(real) and not complete
        plan["matching_missing"] = "expired" if expired else ("never_committed" if real else "no_commits")
        older = [s for s in ancestry if real and positions[s["snapshot_id"]] > positions[real[-1]["snapshot_id"]]]
        plan["state_before_job"] = _brief(older[0]) if older and not expired else None
    cut = positions[match["snapshot_id"]] if match else len(ancestry)
    after = ancestry[:cut][::-1]  # oldest first, newer than the matching snapshot
    real_ids = {s["snapshot_id"] for s in real}
    job_ids = {s["snapshot_id"] for s in job_snaps}
    replayed = [s for s in after if s["snapshot_id"] in real_ids and s["checkpoint_id"] > n]
    others = [s for s in after if s["snapshot_id"] not in job_ids]
    plan["replay"] = _replay(replayed)
    plan["discarded_by_rollback"] = {
        "snapshots": len(after),
        "other_writers": [_brief(s) for s in others[:REPLAY_LIST_CAP]],
    }
    plan["rollback_target"] = _rollback(rollback_to, refs or {}, ancestry, positions, match, replayed)
    plan["status"] = "behind" if plan["behind"] else "current"
    return plan


def _brief(s: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "snapshot_id": s.get("snapshot_id"),
        "timestamp_ms": s.get("timestamp_ms"),
        "operation": s.get("operation"),
        "job_id": s.get("job_id"),
        "operator_id": s.get("operator_id"),
        "checkpoint_id": s.get("checkpoint_id"),
    }


def _replay(replayed: list[Mapping[str, Any]]) -> dict[str, Any]:
    summaries = [s.get("summary") or {} for s in replayed]
    checkpoints = [s["checkpoint_id"] for s in replayed]
    return {
        "snapshots": len(replayed),
        "checkpoints": checkpoints[:REPLAY_LIST_CAP],
        "first_checkpoint_id": checkpoints[0] if checkpoints else None,
        "last_checkpoint_id": checkpoints[-1] if checkpoints else None,
        "first_snapshot_id": replayed[0]["snapshot_id"] if replayed else None,
        "last_snapshot_id": replayed[-1]["snapshot_id"] if replayed else None,
        "added_records": sum(_int(x, "added-records") for x in summaries),
        "deleted_records": sum(_int(x, "deleted-records") for x in summaries),
        "added_data_files": sum(_int(x, "added-data-files") for x in summaries),
        "added_delete_files": sum(_int(x, "added-delete-files") for x in summaries),
        "added_files_size": sum(_int(x, "added-files-size") for x in summaries),
        "snapshot_ids": [s["snapshot_id"] for s in replayed][:REPLAY_LIST_CAP],
    }


def _rollback(
    named: str | None,
    refs: Mapping[str, Mapping[str, Any]],
    ancestry: Sequence[Mapping[str, Any]],
    positions: Mapping[Any, int],
    match: Mapping[str, Any] | None,
    replayed: list[Mapping[str, Any]],
) -> dict[str, Any] | None:
    """A named target is valid when it holds the table as of the savepoint's checkpoint: the
    matching snapshot, or a later ancestor older than the first replayed commit."""
    if not named:
        return None
    text = named.strip()
    snapshot_id: int | None = None
    via = "snapshot id"
    if text in refs:
        snapshot_id, via = refs[text].get("snapshot_id"), f"{refs[text].get('type', 'ref')} {text}"
    elif text.lstrip("-").isdigit():
        snapshot_id = int(text)
    out: dict[str, Any] = {"named": text, "via": via, "snapshot_id": snapshot_id, "valid": False, "reason": None}
    if snapshot_id is None or snapshot_id not in positions:
        out["reason"] = f"{text!r} is not a snapshot id or ref on the branch's ancestry"
        return out
    if match is None:
        out["reason"] = "the table has no snapshot matching the savepoint's checkpoint to roll back to"
        return out
    pos = positions[snapshot_id]
    newest_ok = positions[replayed[0]["snapshot_id"]] + 1 if replayed else 0
    if pos > positions[match["snapshot_id"]]:
        out["reason"] = (
            f"snapshot {snapshot_id} is older than snapshot {match['snapshot_id']} of checkpoint "
            f"{match['checkpoint_id']}: rolling back to it loses the rows committed in between"
        )
    elif pos < newest_ok:
        out["reason"] = f"snapshot {snapshot_id} already holds replayed checkpoints: rows would still be duplicated"
    else:
        out["valid"] = True
    return out


def rollback_commands(
    catalog: str,
    identifier: str,
    snapshot_id: int,
    branch: str = MAIN_BRANCH,
    properties: Mapping[str, str] | None = None,
    withheld: Sequence[str] = (),
) -> dict[str, str]:
    """The exact commands that put ``identifier`` back to ``snapshot_id``, safe to paste: every
    contract value is quoted for where it goes (a Spark SQL identifier or string literal, a Python
    literal, one shell word). The pyiceberg line carries the catalog's ``properties`` (those of
    streamwarden.yaml that are not secrets); the ``withheld`` ones are named in a comment, to be
    given as PYICEBERG_CATALOG__<CATALOG>__<KEY> variables, which PyIceberg merges in."""
    table = ".".join(_sql_name(part) for part in [catalog, *identifier.split(".")])
    if branch != MAIN_BRANCH:
        return {"spark_sql": f"ALTER TABLE {table} REPLACE BRANCH {_sql_name(branch)} AS OF VERSION {snapshot_id}"}
    code = (
        "from pyiceberg.catalog import load_catalog; "
        f"load_catalog({catalog!r}, **{dict(properties or {})!r}).load_table({identifier!r})"
        f".manage_snapshots().rollback_to_snapshot({int(snapshot_id)}).commit()"
    )
    if withheld:
        env = ", ".join(_env_name(catalog, key) for key in withheld)
        code += f"  # secrets from the environment: {env}"
    return {
        "spark_sql": f"CALL {_sql_name(catalog)}.system.rollback_to_snapshot({_sql_string(identifier)}, {snapshot_id})",
        "pyiceberg": f"python -c {shlex.quote(code)}",
    }


def _sql_name(name: str) -> str:
    """A Spark SQL identifier: as is when plain, else in backticks (a backtick doubled)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    """A Spark SQL string literal: single quotes, a quote or backslash escaped."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _env_name(catalog: str, key: str) -> str:
    """PyIceberg's environment variable for a catalog property: ``.`` is ``__``, ``-`` is ``_``."""
    return f"PYICEBERG_CATALOG__{catalog.replace('-', '_').upper()}__{key.replace('.', '__').replace('-', '_').upper()}"


def flink_entries(flink: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Retained checkpoints and savepoints Flink reports: completed entries with an external path."""
    checkpoints = flink.get("checkpoints") or {}
    latest = checkpoints.get("latest") or {}
    entries = [latest.get("savepoint"), latest.get("completed"), *(checkpoints.get("history") or [])]
    return [
        e
        for e in entries
        if isinstance(e, dict) and e.get("status") in ("completed", None) and isinstance(e.get("external_path"), str)
    ]


def retained_checkpoints(
    flink: Mapping[str, Any] | None, ancestry: Sequence[Mapping[str, Any]], complete: bool
) -> list[dict[str, Any]]:
    """``facts.savepoint.retained``: the retained checkpoints and savepoints Flink reports for the
    pipeline's job, each matched to the table snapshot of its checkpoint (SW-RET-007), along the
    branch ``ancestry`` (newest first; ``complete``: the walk reached the first snapshot)."""
    if flink is None or not names_job(flink):
        return []
    return retained_matches(flink_entries(flink), ancestry, str(flink["job_id"]), complete=complete)


def names_job(flink: Mapping[str, Any]) -> bool:
    """Flink's facts are readable and name the pipeline's job (retained checkpoints can be matched)."""
    return bool(flink.get("available") and flink.get("job_id"))


def retained_matches(
    entries: Iterable[Mapping[str, Any]], ancestry: Sequence[Mapping[str, Any]], job_id: str | None, *, complete: bool
) -> list[dict[str, Any]]:
    """For each retained checkpoint or savepoint of ``job_id`` (Flink REST entries with an external
    path, not discarded): is it at or below the job's max committed checkpoint id on this branch, and
    is the snapshot holding the table as of that checkpoint still there (not expired)?"""
    if not job_id:
        return []
    real = [
        s
        for s in ancestry
        if s.get("job_id") == job_id
        and isinstance(s.get("checkpoint_id"), int)
        and s["checkpoint_id"] != END_INPUT_CHECKPOINT_ID
    ]
    max_committed = real[0]["checkpoint_id"] if real else None
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for e in entries:
        cid = e.get("id")
        if not isinstance(cid, int) or cid in seen or e.get("discarded") or not e.get("external_path"):
            continue
        seen.add(cid)
        match = next((s for s in real if s["checkpoint_id"] <= cid), None)
        missing = (
            None if match else ("expired" if real and not complete else "never_committed" if real else "no_commits")
        )
        out.append(
            {
                "checkpoint_id": cid,
                "is_savepoint": bool(e.get("is_savepoint")),
                "external_path": e.get("external_path"),
                "at_or_below_committed": max_committed is not None and cid <= max_committed,
                "max_committed_checkpoint_id": max_committed,
                "matching_snapshot_id": match["snapshot_id"] if match else None,
                "matching_missing": missing,
            }
        )
    return sorted(out, key=lambda r: r["checkpoint_id"])
