"""uid -> OperatorID, exactly as Flink derives it (``StreamGraphHasherV2``, marked "DO NOT MODIFY").

An operator's id is Guava's ``Hashing.murmur3_128(0)`` over ``putString(uid, UTF-8)``, then
``asBytes()``: MurmurHash3 x64 128-bit with seed 0, h1 then h2, each little-endian. Flink prints an
OperatorID (REST vertex ids, logs, ``flink.operator-id`` in Iceberg snapshots) as those 16 bytes in
lower-case hex, and ``_metadata`` stores the same 16 bytes in the same order
(docs/facts-savepoint.md). A JobVertexID is the OperatorID of the chain head.

Connectors derive further uids from the one the user gives; ``derived_uids`` lists those that
carry state for the sinks a contract declares (the Iceberg sink's committer among them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MASK = 0xFFFFFFFFFFFFFFFF
_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F
_HEX_ID = re.compile(r"^[0-9a-fA-F]{32}$")


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _fmix(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _MASK
    k ^= k >> 33
    return k


def murmur3_x64_128(data: bytes, seed: int = 0) -> bytes:
    """MurmurHash3_x64_128 of ``data``: 16 bytes, h1 then h2, each little-endian (Guava's asBytes)."""
    h1 = h2 = seed & _MASK
    n = len(data)
    full = n - n % 16
    for i in range(0, full, 16):
        k1 = int.from_bytes(data[i : i + 8], "little")
        k2 = int.from_bytes(data[i + 8 : i + 16], "little")
        k1 = (_rotl((k1 * _C1) & _MASK, 31) * _C2) & _MASK
        h1 ^= k1
        h1 = (_rotl(h1, 27) + h2) & _MASK
        h1 = (h1 * 5 + 0x52DCE729) & _MASK
        k2 = (_rotl((k2 * _C2) & _MASK, 33) * _C1) & _MASK
        h2 ^= k2
        h2 = (_rotl(h2, 31) + h1) & _MASK
        h2 = (h2 * 5 + 0x38495AB5) & _MASK
    tail = data[full:]
    if tail:
        k1 = int.from_bytes(tail[:8], "little")
        k2 = int.from_bytes(tail[8:], "little") if len(tail) > 8 else 0
        if k2:
            h2 ^= (_rotl((k2 * _C2) & _MASK, 33) * _C1) & _MASK
        h1 ^= (_rotl((k1 * _C1) & _MASK, 31) * _C2) & _MASK
    h1 ^= n
    h2 ^= n
    h1 = (h1 + h2) & _MASK
    h2 = (h2 + h1) & _MASK
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 = (h1 + h2) & _MASK
    h2 = (h2 + h1) & _MASK
    return h1.to_bytes(8, "little") + h2.to_bytes(8, "little")


def uid_bytes(uid: str) -> bytes:
    """What Java's ``String.getBytes(UTF-8)`` gives: a lone surrogate becomes ``?`` as in Java."""
    return uid.encode("utf-8", errors="replace")


def operator_id(uid: str) -> str:
    """The OperatorID (32 lower-case hex) Flink gives the operator with ``.uid(uid)``."""
    return murmur3_x64_128(uid_bytes(uid)).hex()


def is_operator_id(text: str) -> bool:
    """32 hex digits: an OperatorID / JobVertexID as printed (also what ``setUidHash`` accepts)."""
    return bool(_HEX_ID.match(text))


@dataclass(frozen=True)
class DeclaredUid:
    """A uid the contract declares (or a connector derives from one), with its OperatorID."""

    uid: str
    operator_id: str
    path: str  # the contract field: state.operators[0].uid, job.sinks[1].uid, ...
    derived: str | None = None  # how a connector derived it from the uid at ``path``, else None

    def to_dict(self) -> dict[str, str | None]:
        return {"uid": self.uid, "operator_id": self.operator_id, "path": self.path, "derived": self.derived}


# Connector-derived uids for a sink whose contract uid is U (docs/facts-savepoint.md):
#   Iceberg FlinkSink (v1) with uidPrefix U: writer "U-writer", committer "U-committer";
#   Sink V2 (IcebergSink and others): the writer takes U, the committer "Sink Committer: U";
#   IcebergSink (v2) with uidSuffix U: its pre-commit aggregator "Sink pre-commit aggregator: U".
SINK_DERIVATIONS: tuple[tuple[str, str], ...] = (
    ("{}-committer", "Iceberg FlinkSink committer (uidPrefix)"),
    ("{}-writer", "Iceberg FlinkSink writer (uidPrefix)"),
    ("Sink Committer: {}", "Sink V2 committer"),
    ("Sink pre-commit aggregator: {}", "IcebergSink pre-commit aggregator (uidSuffix)"),
)


def _uid(item: object) -> str | None:
    value = item.get("uid") if isinstance(item, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def declared_uids(contract: dict[str, object]) -> list[DeclaredUid]:
    """Every uid the contract declares: ``state.operators[].uid`` and ``restores_from``,
    ``job.sources[].uid``, ``job.sinks[].uid`` and, for each sink, the uids its connector derives.
    A ``restores_from`` (or uid) that is already an OperatorID hex stands for itself (setUidHash)."""
    out: list[DeclaredUid] = []
    seen: set[tuple[str, str]] = set()

    def add(uid: str, path: str, derived: str | None = None) -> None:
        oid = uid.lower() if is_operator_id(uid) and derived is None and path.endswith("restores_from") else None
        entry = DeclaredUid(uid, oid or operator_id(uid), path, derived)
        if (entry.operator_id, path) not in seen:
            seen.add((entry.operator_id, path))
            out.append(entry)

    state = contract.get("state") if isinstance(contract.get("state"), dict) else {}
    job = contract.get("job") if isinstance(contract.get("job"), dict) else {}
    assert isinstance(state, dict) and isinstance(job, dict)
    for i, op in enumerate(state.get("operators") or []):
        if not isinstance(op, dict):
            continue
        uid = _uid(op)
        if uid:
            add(uid, f"state.operators[{i}].uid")
        old = op.get("restores_from")
        if isinstance(old, str) and old.strip():
            add(old, f"state.operators[{i}].restores_from")
    for i, src in enumerate(job.get("sources") or []):
        uid = _uid(src)
        if uid:
            add(uid, f"job.sources[{i}].uid")
    for i, sink in enumerate(job.get("sinks") or []):
        uid = _uid(sink)
        if not uid:
            continue
        add(uid, f"job.sinks[{i}].uid")
        for pattern, how in SINK_DERIVATIONS:
            add(pattern.format(uid), f"job.sinks[{i}].uid", how)
    return out


def edit_distance(a: str, b: str, cap: int = 256) -> int:
    """Levenshtein distance (insert, delete, substitute), on at most ``cap`` characters of each."""
    a, b = a[:cap], b[:cap]
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest_uid(uid: str, candidates: list[str]) -> tuple[str, int] | None:
    """The candidate nearest to ``uid`` by edit distance (ties: the first declared), with the distance."""
    best: tuple[str, int] | None = None
    for c in candidates:
        d = edit_distance(uid, c)
        if best is None or d < best[1]:
            best = (c, d)
    return best
