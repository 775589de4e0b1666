"""The consumer notices of an evidence record: one per consumer the contract declares, saying what
happened (the restore point, the checkpoints the restart replays, the snapshots that duplicate rows
and when they were committed, the rollback), the table state to trust (snapshot id and time), the
freshness lost against the consumer's promise, and what the consumer should do.

Built from the record's own data (verbs/evidence.py), never deciding again: whether the replay
duplicates rows is the gate's finding (:func:`replay_duplicates`), the snapshots and checkpoints
are the restore plan's (facts/restore.py). ``evidence --format notices`` renders them
(report/notices.py); ``evidence --notify`` posts each (verbs/notify.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streamwarden.core.units import format_duration
from streamwarden.evaluate.findings import Finding

NOTICE_VERSION = 1


def replay_duplicates(findings: Iterable[Finding]) -> bool:
    """Whether the gate decided that the restore's replay writes rows twice: SW-REC-002 fired on
    the replay window (recovery/sw_rec_002.rego; waived or not, the rows are the same). Read from the
    rule's finding, never decided again from the facts."""
    return any(f.rule == "SW-REC-002" and "replay" in f.evidence for f in findings)


def build_notices(
    data: Mapping[str, Any], ancestry: Sequence[Mapping[str, Any]], duplicates: bool
) -> list[dict[str, Any]]:
    """One notice per consumer of ``data["consumers"]`` (the record built so far); ``ancestry``:
    the branch's snapshots (for the times of the replayed ones)."""
    times = {s.get("snapshot_id"): s.get("timestamp_ms") for s in ancestry}
    table = data.get("table") or {}
    plan = table.get("plan") if table.get("available") else None
    plan = plan if isinstance(plan, dict) else {}
    happened = _happened(data, table, plan, times, duplicates)
    trust = _trust(table, plan)
    key = list((plan.get("idempotence") or {}).get("identifier_fields") or [])
    out = []
    for consumer in data.get("consumers") or []:
        freshness = _freshness(consumer.get("freshness_ms"), trust, table, data["generated_ms"])
        notice: dict[str, Any] = {
            "version": NOTICE_VERSION,
            "pipeline": data["pipeline"],
            "environment": data["environment"],
            "generated_ms": data["generated_ms"],
            "decision": data["verdict"]["decision"],
            "consumer": dict(consumer),
            "table": (
                {"catalog": table.get("catalog"), "identifier": table.get("identifier"), "branch": table.get("branch")}
                if table.get("available")
                else None
            ),
            "happened": happened,
            "trust": trust,
            "freshness": freshness,
            "action": _action(happened, trust, freshness, plan, key),
        }
        notice = {"id": _notice_id(notice), **notice}
        out.append(notice)
    return out


def _happened(
    data: Mapping[str, Any],
    table: Mapping[str, Any],
    plan: Mapping[str, Any],
    times: Mapping[Any, Any],
    duplicates: bool,
) -> dict[str, Any]:
    cand = data.get("candidate") or {}
    restore = (
        {k: cand.get(k) for k in ("location", "kind", "checkpoint_id", "completed_ms", "job_id")}
        if cand.get("available")
        else None
    )
    rep = plan.get("replay") or {}
    ids = list(rep.get("snapshot_ids") or [])
    replay = {
        "checkpoints": list(rep.get("checkpoints") or []),
        "snapshots": rep.get("snapshots", 0),
        "snapshot_ids": ids,
        "first_snapshot_id": rep.get("first_snapshot_id"),
        "first_ms": times.get(rep.get("first_snapshot_id")),
        "last_snapshot_id": rep.get("last_snapshot_id"),
        "last_ms": times.get(rep.get("last_snapshot_id")),
        "added_records": rep.get("added_records"),
    }
    rb = table.get("rollback")
    return {
        "restore": restore,
        "replay": replay,
        "duplicates": bool(duplicates and ids),
        "duplicate_window": (
            {k: replay[k] for k in ("snapshot_ids", "first_snapshot_id", "first_ms", "last_snapshot_id", "last_ms")}
            if duplicates and ids
            else None
        ),
        "rollback": (
            {k: rb.get(k) for k in ("snapshot_id", "timestamp_ms", "checkpoint_id", "needed", "discards")}
            if isinstance(rb, dict)
            else None
        ),
    }


def _trust(table: Mapping[str, Any], plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """The snapshot whose rows a consumer can rely on: the one that holds the table as of the
    restored checkpoint when the table is ahead of it (the rollback target), else the branch head.
    None when the table could not be matched to the restore point."""
    status = plan.get("status")
    match = plan.get("matching_snapshot")
    if status == "behind" and isinstance(match, dict):
        snap, why = match, "the snapshot of the restored checkpoint: newer snapshots are replayed"
    elif status == "current" and isinstance(table.get("head"), dict):
        snap, why = table["head"], "the branch head: the restore replays nothing already committed"
    else:
        return None
    return {
        "snapshot_id": snap.get("snapshot_id"),
        "timestamp_ms": snap.get("timestamp_ms"),
        "checkpoint_id": snap.get("checkpoint_id"),
        "why": why,
    }


def _freshness(promised: Any, trust: Mapping[str, Any] | None, table: Mapping[str, Any], now_ms: int) -> dict[str, Any]:
    """``lost_ms``: how much newer the branch head is than the state to trust (what a rollback takes
    away until the restored job commits again); ``lag_ms``: the state to trust's age at the
    record's time; ``over_promise_ms``: how far that age is beyond the promised freshness (0 within
    it; None without a promise or a state to trust)."""
    as_of = trust.get("timestamp_ms") if trust else None
    head = table.get("head")
    head_ms = head.get("timestamp_ms") if isinstance(head, dict) else None
    lag = now_ms - as_of if isinstance(as_of, int) else None
    promise = promised if isinstance(promised, int) else None
    return {
        "promised_ms": promise,
        "as_of_ms": as_of,
        "lag_ms": lag,
        "lost_ms": max(0, head_ms - as_of) if isinstance(head_ms, int) and isinstance(as_of, int) else None,
        "over_promise_ms": max(0, lag - promise) if lag is not None and promise is not None else None,
    }


def _action(
    happened: Mapping[str, Any],
    trust: Mapping[str, Any] | None,
    freshness: Mapping[str, Any],
    plan: Mapping[str, Any],
    key: list[str],
) -> dict[str, Any]:
    """What the consumer should do: ``kind`` is reread, dedupe, none or wait; ``text`` says it."""
    replay = happened["replay"]
    ids = replay["snapshot_ids"]
    span = f"snapshots {ids[0]}..{ids[-1]}" if len(ids) > 1 else (f"snapshot {ids[0]}" if ids else "")
    checkpoints = replay["checkpoints"]
    cps = (
        f"checkpoints {checkpoints[0]}..{checkpoints[-1]}"
        if len(checkpoints) > 1
        else (f"checkpoint {checkpoints[0]}" if checkpoints else "")
    )
    late = freshness.get("over_promise_ms") or 0
    if trust is None:
        reason = plan.get("reason") or "the table or the savepoint could not be read"
        return {
            "kind": "wait",
            "snapshot_ids": [],
            "key": [],
            "text": (
                f"The table's state could not be matched to the restore point ({reason}). Do not rely on data "
                "newer than your last verified read until the pipeline's owner confirms the state to trust."
            ),
        }
    at = f"snapshot {trust['snapshot_id']}"
    if happened["duplicates"]:
        text = (
            f"The restart replays {cps}: rows of {span} are written again. Discard what you read from {span} "
            f"and re-read from {at} on (the state to trust) once the table is rolled back and the job has caught up."
        )
        kind = "reread"
    elif ids and key:
        text = (
            f"The restart writes {cps} again as upserts on key {', '.join(key)}: the table's rows stay unique, "
            f"but an incremental read sees the changes of {span} twice: dedupe on key {', '.join(key)}."
        )
        kind = "dedupe"
    elif ids:
        text = f"The restart writes {cps} again ({span}); the gate found no duplicate rows. No action needed."
        kind = "none"
    else:
        text = f"Nothing already committed is replayed: {at} is the state to trust. No action needed."
        kind = "none"
    if late:
        text += f" The data is {format_duration(late)} older than the freshness promised until the job catches up."
    return {
        "kind": kind,
        "snapshot_ids": ids if kind in ("reread", "dedupe") else [],
        "key": key if kind == "dedupe" else [],
        "text": text,
    }


def _notice_id(notice: Mapping[str, Any]) -> str:
    """A stable id of the notice (the same record gives the same id): a receiver can drop a repeat."""
    body = json.dumps(notice, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    return hashlib.sha256(body).hexdigest()[:32]
