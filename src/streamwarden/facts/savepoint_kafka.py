"""``facts.savepoint.kafka``: where a restore from the savepoint starts reading each Kafka
partition, from the split state flink/kafka_splits.py reads, matched to the contract's sources.

Facts only: whether an offset is still kept is decided by a rule (SW-REC-006 compares the
savepoint's age with the source's declared retention; with a broker's earliest offsets it is one
more comparison per entry of ``partitions``). Documented in docs/facts-savepoint.md and
docs/facts-kafka.md.
"""

from __future__ import annotations

from typing import Any

from streamwarden.flink.kafka_splits import KafkaSourceState, KafkaSplit, kafka_source_state
from streamwarden.flink.savepoint_bytes import OperatorInfo

_SOURCE_UID = "job.sources["


def kafka_facts(
    operators: list[OperatorInfo], shown: list[dict[str, Any]], contract: dict[str, Any] | None
) -> dict[str, Any]:
    """``{"sources": [...], "partitions": [...]}`` for the operators whose state is a Kafka
    source's; ``shown`` are the same operators as facts (their ``matched`` uid, with a contract)."""
    by_id = {op["operator_id"]: op for op in shown}
    sources: list[dict[str, Any]] = []
    partitions: list[dict[str, Any]] = []
    for op in operators:
        state = kafka_source_state(op)
        if state is None:
            continue
        name, path, uid = _contract_source(by_id.get(op.operator_id) or {}, contract)
        label = {"source": name, "operator_id": op.operator_id}
        held = [_position(label, s, "reader") for s in sorted(state.splits, key=_order)]
        held_keys = {(p["topic"], p["partition"]) for p in held}
        waiting = _unassigned(label, state, held_keys)
        partitions += held + waiting
        sources.append(
            {
                "operator_id": op.operator_id,
                "uid": op.uid or uid,
                "name": op.name,
                "source": name,
                "source_path": path,
                "splits": len(state.splits),
                "subtasks_in_state_files": state.subtasks_in_state_files,
                "subtasks_unreadable": state.subtasks_unreadable,
                "complete": _complete(state, held_keys),
                "enumerator": _enumerator(state),
            }
        )
    return {"sources": sources, "partitions": partitions}


def _order(s: KafkaSplit) -> tuple[str, int]:
    return (s.topic, s.partition)


def _contract_source(op: dict[str, Any], contract: dict[str, Any] | None) -> tuple[Any, str | None, str | None]:
    """The job.sources[] entry whose uid hashes to the operator: (its name, its path, its uid)."""
    matched = op.get("matched") or {}
    path = matched.get("path")
    if not isinstance(path, str) or not path.startswith(_SOURCE_UID) or contract is None:
        return None, None, matched.get("uid")
    index = int(path[len(_SOURCE_UID) :].split("]", 1)[0])
    sources = (contract.get("job") or {}).get("sources") or []
    entry = sources[index] if 0 <= index < len(sources) and isinstance(sources[index], dict) else {}
    return entry.get("name"), f"job.sources[{index}]", matched.get("uid")


def _position(label: dict[str, Any], s: KafkaSplit, held_by: str) -> dict[str, Any]:
    return {
        **label,
        "topic": s.topic,
        "partition": s.partition,
        "offset": s.starting_offset if s.starting_offset >= 0 else None,
        "position": s.position,
        "stopping_offset": s.stopping_offset,
        "subtask": s.subtask,
        "from": held_by,
    }


def _unassigned(label: dict[str, Any], state: KafkaSourceState, held: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """Partitions the enumerator found but had not handed to a reader (enumerator version 3 keeps
    where each starts): a restore assigns them from there."""
    e = state.enumerator
    if e is None:
        return []
    out = []
    for p in sorted(e.partitions, key=lambda p: (p["topic"], p["partition"])):
        if p["assigned"] is False and (p["topic"], p["partition"]) not in held and p["starting_offset"] is not None:
            split = KafkaSplit(p["topic"], p["partition"], p["starting_offset"], None)
            out.append(_position(label, split, "enumerator"))
    return out


def _complete(state: KafkaSourceState, held: set[tuple[str, int]]) -> bool:
    """Every split's state was read: none in a state file or unreadable, none cut, and every
    partition the enumerator assigned is held by a reader."""
    if state.subtasks_in_state_files or state.subtasks_unreadable or state.cut:
        return False
    e = state.enumerator
    return e is None or all((p["topic"], p["partition"]) in held for p in e.partitions if p["assigned"] is True)


def _enumerator(state: KafkaSourceState) -> dict[str, Any] | None:
    e = state.enumerator
    if e is None:
        return None
    parts = sorted(e.partitions, key=lambda p: (p["topic"], p["partition"]))
    return {
        "version": e.version,
        "initial_discovery_finished": e.initial_discovery_finished,
        "partitions": [
            {
                "topic": p["topic"],
                "partition": p["partition"],
                "assigned": p["assigned"],
                "starting_offset": p["starting_offset"],
            }
            for p in parts
        ],
    }
