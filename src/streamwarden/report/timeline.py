"""The checkpoint ↔ snapshot timeline of a restore as a Mermaid flowchart, for the Markdown of
``gate`` and ``evidence`` (GitHub renders a ```mermaid block in pull-request comments and job
summaries): the savepoint's checkpoint, the table snapshot that committed it, the later commits of
the job that the restored job replays, snapshots of other writers a rollback discards, the
rollback target, and the recovery ledger's most recent rows about the table (``input.ledger``),
each pointing at the snapshot it restored to when that snapshot is drawn.

Read from ``facts.savepoint`` and its ``table`` part (facts/restore.py), never decided here. Node
ids are our own (``SP``, ``M``, ``R1``...); every label goes through
:func:`streamwarden.core.escape.mermaid_label` (job names, paths and snapshot data come from servers
and files).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from streamwarden.core.escape import mermaid_label as label
from streamwarden.verbs.notices import replay_duplicates as replay_duplicates  # read by gate and evidence too

LEDGER_SHOWN = 5  # the ledger's most recent rows drawn
REPLAY_SHOWN = 6  # replayed commits drawn one by one; more: the first 3, "… n more", the last

CLASSES = [
    "  classDef savepoint fill:#dbeafe,stroke:#1d4ed8,color:#0b1f44",
    "  classDef committed fill:#dcfce7,stroke:#15803d,color:#052e16",
    "  classDef replay fill:#fee2e2,stroke:#b91c1c,color:#450a0a",
    "  classDef harmless fill:#f3f4f6,stroke:#6b7280,color:#111827",
    "  classDef target fill:#fef9c3,stroke:#a16207,stroke-width:3px,color:#422006",
    "  classDef unknown fill:#f3f4f6,stroke:#6b7280,stroke-dasharray:4 3,color:#111827",
    "  classDef ledger fill:#ede9fe,stroke:#6d28d9,color:#2e1065",
]


def utc_time(ms: Any) -> str:
    """A time in epoch milliseconds from a file or a server, in UTC; "time unknown" for anything
    that is not one (the timeline's and the evidence record's one way to show a time)."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return "time unknown"
    try:
        return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "time unknown"


def _job(sp: Mapping[str, Any]) -> str:
    """The savepoint's job: Flink's or the path's id, else the one the table's lineage resolved."""
    plan = sp.get("table")
    job = sp.get("job_id") or (plan.get("job_id") if isinstance(plan, Mapping) else None)
    if isinstance(job, str) and job:
        return f"job {job}"
    prefix = sp.get("job_id_prefix")
    return f"job {prefix}…" if isinstance(prefix, str) and prefix else "job unknown"


def recovery_timeline(
    sp: Mapping[str, Any] | None, *, duplicates: bool, ledger: Iterable[Mapping[str, Any]] = ()
) -> list[str]:
    """The lines of a ```mermaid block (fences included) for ``facts.savepoint``; no lines when
    there is no readable savepoint to draw. ``duplicates``: :func:`replay_duplicates` of the
    decision's findings; ``ledger``: ``input.ledger.rows`` (the most recent first)."""
    if not isinstance(sp, Mapping) or not sp.get("available"):
        return []
    out = ["```mermaid", "flowchart LR"]
    kind = sp.get("kind") or "savepoint or checkpoint"
    out.append(
        "  SP(["
        + label(
            f"{kind} of checkpoint {sp.get('checkpoint_id')}", _job(sp), f"completed {utc_time(sp.get('completed_ms'))}"
        )
        + "])"
    )
    classes: dict[str, list[str]] = {"savepoint": ["SP"]}
    plan = sp.get("table")
    if not isinstance(plan, Mapping) or plan.get("status") not in ("behind", "current"):
        why = plan.get("reason") if isinstance(plan, Mapping) else "no table facts"
        out.append("  U[" + label("table: cannot match the savepoint", why or "unknown") + "]")
        out.append("  SP -.- U")
        classes["unknown"] = ["U"]
        out += _ledger_nodes(ledger, {}, classes)
        return [*out, *_class_lines(classes), "```"]
    replay_class = "replay" if duplicates else "harmless"
    match = plan.get("matching_snapshot")
    shown: dict[Any, str] = {}  # snapshot id -> node id
    if isinstance(match, Mapping):
        out.append(
            "  M["
            + label(
                f"snapshot {match.get('snapshot_id')}",
                f"committed checkpoint {match.get('checkpoint_id')}",
                utc_time(match.get("timestamp_ms")),
            )
            + "]"
        )
        out.append("  SP -. " + label("committed as") + " .-> M")
        shown[match.get("snapshot_id")] = "M"
        classes["committed"] = ["M"]
    else:
        out.append(
            "  M["
            + label(
                f"no snapshot of checkpoint {sp.get('checkpoint_id')}",
                str(plan.get("matching_missing") or "").replace("_", " "),
            )
            + "]"
        )
        out.append("  SP -.- M")
        classes["unknown"] = ["M"]
    last = "M"
    replay = plan.get("replay") or {}
    nodes = _replay_nodes(replay)
    for i, (snapshot_id, text) in enumerate(nodes, start=1):
        node = f"R{i}"
        lines = [text] if snapshot_id is None else [f"snapshot {snapshot_id}", text]
        note = "replayed: rows written twice" if duplicates else "replayed"
        out.append(f"  {node}[" + label(*lines, note) + "]")
        edge = label(f"{replay.get('snapshots')} later commits") if i == 1 else None
        out.append(f"  {last} -- {edge} --> {node}" if edge else f"  {last} --> {node}")
        classes.setdefault(replay_class, []).append(node)
        if snapshot_id is not None:
            shown[snapshot_id] = node
        last = node
    if not nodes:
        out.append(
            "  N["
            + label("nothing to replay", f"max committed checkpoint {plan.get('max_committed_checkpoint_id')}")
            + "]"
        )
        out.append(f"  {last} --- N")
        classes.setdefault("harmless", []).append("N")
    discarded = plan.get("discarded_by_rollback") or {}
    others = len(discarded.get("other_writers") or [])
    if others:
        out.append("  O[" + label(f"{others} snapshots of other writers", "discarded by a rollback") + "]")
        out.append(f"  {last} -.- O")
        classes.setdefault("unknown", []).append("O")
    target = _target(plan, match, duplicates)
    if target is not None:
        snapshot_id, lines = target
        out.append("  T{{" + label(*lines) + "}}")
        points_at = shown.get(snapshot_id)
        out.append(f"  T ==> {points_at}" if points_at else "  T ~~~ SP")
        classes["target"] = ["T"]
    out += _ledger_nodes(ledger, shown, classes)
    return [*out, *_class_lines(classes), "```"]


def _ledger_nodes(
    rows: Iterable[Mapping[str, Any]], shown: Mapping[Any, str], classes: dict[str, list[str]]
) -> list[str]:
    """The ledger's most recent rows (``LEDGER_SHOWN``): verb, decision, id and time; an arrow to
    the snapshot a row restored to (or rolled back to) when it is drawn, else beside the savepoint."""
    out: list[str] = []
    for i, row in enumerate(list(rows)[:LEDGER_SHOWN], start=1):
        node = f"L{i}"
        out.append(
            f"  {node}[/"
            + label(
                f"ledger: {row.get('verb')} {row.get('decision')}",
                f"decision {row.get('decision_id')}",
                f"recorded {utc_time(row.get('recorded_at_ms'))}",
            )
            + "/]"
        )
        points_at = shown.get(row.get("restore_snapshot_id")) or shown.get(row.get("rollback_target_snapshot_id"))
        out.append(f"  {node} -. " + label("restored to") + f" .-> {points_at}" if points_at else f"  {node} ~~~ SP")
        classes.setdefault("ledger", []).append(node)
    return out


def _replay_nodes(replay: Mapping[str, Any]) -> list[tuple[Any, str]]:
    """(snapshot id, text) per drawn replay node; a run in the middle as one (None, "… n more")."""
    total = replay.get("snapshots") or 0
    if not isinstance(total, int) or total <= 0:
        return []
    ids = list(replay.get("snapshot_ids") or [])
    checkpoints = list(replay.get("checkpoints") or [])
    pairs = [(ids[i], f"checkpoint {checkpoints[i]}") for i in range(min(len(ids), len(checkpoints)))]
    if total <= REPLAY_SHOWN and len(pairs) == total:
        return pairs
    head = pairs[:3]
    last = (replay.get("last_snapshot_id"), f"checkpoint {replay.get('last_checkpoint_id')}")
    return [*head, (None, f"… {total - len(head) - 1} more commits"), last]


def _target(plan: Mapping[str, Any], match: Any, duplicates: bool) -> tuple[Any, list[str]] | None:
    named = plan.get("rollback_target")
    if isinstance(named, Mapping):
        state = "valid" if named.get("valid") else f"not usable: {named.get('reason')}"
        return named.get("snapshot_id"), [
            f"rollback target --rollback-to {named.get('named')}",
            f"snapshot {named.get('snapshot_id')} ({named.get('via')})",
            state,
        ]
    if plan.get("behind") and isinstance(match, Mapping):
        why = "before restoring: the replay duplicates rows" if duplicates else "optional: the sink is idempotent"
        return match.get("snapshot_id"), [f"rollback target: snapshot {match.get('snapshot_id')}", why]
    return None


def _class_lines(classes: Mapping[str, list[str]]) -> list[str]:
    return [*CLASSES, *(f"  class {','.join(nodes)} {name}" for name, nodes in classes.items() if nodes)]
