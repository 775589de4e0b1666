"""Where a declared backfill's commits landed, and what stretch of data they wrote: the facts of
``facts.iceberg.backfills`` (docs/facts-iceberg.md). Table metadata and manifests only, never a
data file; the one pyiceberg import (the bound decoder) is inside a function.

A backfill is declared in two places: by its own contract (``fork_of``: its branch or WAP id, its
from/to range on a column, and ``fork_of.job_id``) and by the owner's (``backfills[]``: job id,
branch). Its snapshots are those whose summary carries one of its Flink job ids
(``flink.job-id``, from the declaration or resolved by job name through the Flink REST facts), or
its WAP id (``wap.id``). For each of them the facts list the branches whose ancestry holds it
(each branch walked back at most ``walk`` snapshots) and, for a declared range, the lowest and
highest values its added data files reach, from the manifest entries of the manifests it wrote:
the partition values when the range's column is the source of an identity, year, month, day or
hour partition field, else the column's lower/upper bounds. Whether that is outside its boundary
is SW-TABLE-015's to say.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamwarden.iceberg.lineage import JOB_ID
from streamwarden.iceberg.snapshots import summary_dict

WAP_ID = "wap.id"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
US_PER_DAY = 86_400_000_000
US_PER_HOUR = 3_600_000_000
TEMPORAL = ("date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns")
NUMERIC = ("int", "long")
# order-preserving transforms a range maps through, finest first
ORDERED_TRANSFORMS = ("identity", "hour", "day", "month", "year")


@dataclass(frozen=True)
class BackfillLimits:
    walk: int = 10_000  # snapshots walked back from each branch head
    snapshots: int = 200  # matched snapshots whose manifests are read for the range, newest first
    listed: int = 50  # matched snapshots listed per declaration
    manifest_entries: int = 200_000  # entries read per declaration, then the range check stops (truncated)


@dataclass(frozen=True)
class Declared:
    """One declared backfill: where it is declared (``path``), what identifies its snapshots, its
    boundary."""

    path: str
    kind: str
    job: str | None
    job_ids: tuple[str, ...]
    branch: str | None
    wap_id: str | None
    range: Mapping[str, Any] | None


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def declarations(contract: Mapping[str, Any], flink: Mapping[str, Any] | None) -> list[Declared]:
    """The backfills ``contract`` declares: itself (``fork_of``) and those of the owner's
    ``backfills[]`` that name a branch. Job names resolve to ids through ``flink`` (the contract's
    ``facts.flink``) when it is available, as SW-TABLE-010 resolves them."""
    flink = flink if isinstance(flink, Mapping) and flink.get("available") is True else None
    out: list[Declared] = []
    fork = contract.get("fork_of")
    if isinstance(fork, Mapping):
        ids = [fork.get("job_id")]
        if flink is not None and flink.get("job_found") is True:  # the contract's own job.name, resolved
            ids += list(flink.get("job_ids") or [])
        out.append(
            Declared(
                path="fork_of",
                kind=str(fork.get("kind") or "backfill"),
                job=_text((contract.get("job") or {}).get("name"))
                if isinstance(contract.get("job"), Mapping)
                else None,
                job_ids=_ids(ids),
                branch=_text(fork.get("branch")),
                wap_id=_text(fork.get("wap_id")),
                range=fork.get("range") if isinstance(fork.get("range"), Mapping) else None,
            )
        )
    for i, b in enumerate(contract.get("backfills") or []):
        if not isinstance(b, Mapping) or _text(b.get("branch")) is None:
            continue
        ids = [b.get("job_id")]
        if flink is not None:
            ids += [
                j.get("id") for j in flink.get("jobs") or [] if isinstance(j, Mapping) and j.get("name") == b.get("job")
            ]
        out.append(
            Declared(
                path=f"backfills[{i}]",
                kind="backfill",
                job=_text(b.get("job")),
                job_ids=_ids(ids),
                branch=_text(b.get("branch")),
                wap_id=None,
                range=None,  # backfills[].from/to name no column: only the branch is checked
            )
        )
    return out


def _ids(values: Iterable[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip().lower() for v in values if isinstance(v, str) and v.strip()))


def branch_membership(metadata: Any, walk: int) -> tuple[dict[int, list[str]], dict[str, dict[str, Any]]]:
    """Snapshot id -> the branches whose ancestry holds it (each walked back ``walk`` snapshots at
    most), and what was walked per branch."""
    by_id = {s.snapshot_id: s for s in metadata.snapshots}
    member: dict[int, list[str]] = {}
    walked: dict[str, dict[str, Any]] = {}
    heads = []
    for name, ref in (metadata.refs or {}).items():
        if str(getattr(ref.snapshot_ref_type, "value", ref.snapshot_ref_type)) == "branch":
            heads.append((str(name), ref.snapshot_id))
    if not heads and metadata.current_snapshot_id is not None:  # v1 metadata without refs
        heads.append(("main", metadata.current_snapshot_id))
    for name, head in sorted(heads):
        current, seen, n = head, set(), 0
        while current is not None and current in by_id and current not in seen and n < walk:
            seen.add(current)
            member.setdefault(current, []).append(name)
            n += 1
            current = by_id[current].parent_snapshot_id
        walked[name] = {"head": head, "walked": n, "truncated": current in by_id and n >= walk}
    return member, walked


def backfill_facts(
    table: Any, contract: Mapping[str, Any], flink: Mapping[str, Any] | None, limits: BackfillLimits
) -> dict[str, Any] | None:
    """``facts.iceberg.backfills``, or None when the contract declares no backfill to check."""
    declared = declarations(contract, flink)
    if not declared:
        return None
    md = table.metadata
    member, walked = branch_membership(md, limits.walk)
    snaps = sorted(md.snapshots, key=lambda s: (s.timestamp_ms or 0, s.sequence_number or 0), reverse=True)
    summaries = {s.snapshot_id: summary_dict(s) for s in snaps}
    items = []
    for d in declared:
        matched = [s for s in snaps if _matches(summaries[s.snapshot_id], d)]
        listed = []
        for s in matched[: limits.listed]:
            summary = summaries[s.snapshot_id]
            listed.append(
                {
                    "snapshot_id": s.snapshot_id,
                    "timestamp_ms": s.timestamp_ms,
                    "operation": summary.get("operation"),
                    "job_id": summary.get(JOB_ID),
                    "wap_id": summary.get(WAP_ID),
                    "branches": sorted(member.get(s.snapshot_id, [])),
                }
            )
        item: dict[str, Any] = {
            "path": d.path,
            "kind": d.kind,
            "job": d.job,
            "job_ids": list(d.job_ids),
            "branch": d.branch,
            "wap_id": d.wap_id,
            "identified": bool(d.job_ids or d.wap_id),
            "matched": len(matched),
            "snapshots": listed,
            "snapshots_truncated": max(0, len(matched) - limits.listed),
            "range": None,
        }
        if d.range is not None:
            item["range"] = range_facts(table, d.range, matched, limits)
        items.append(item)
    return {"branches": walked, "walk": limits.walk, "items": items}


def _matches(summary: Mapping[str, str], d: Declared) -> bool:
    job = summary.get(JOB_ID)
    if job is not None and job.strip().lower() in d.job_ids:
        return True
    return d.wap_id is not None and summary.get(WAP_ID) == d.wap_id


# ------------------------------------------------------------------------------------------ range


class RangeError(ValueError):
    """The declared range cannot be compared with the column (what and why, for the facts)."""


def _column(table: Any, name: str) -> tuple[int, str, Any]:
    from streamwarden.iceberg.types import normalize_type

    schema = table.schema()
    try:
        field = schema.find_field(name)
    except ValueError:
        raise RangeError(f"the table has no column {name!r}") from None
    return field.field_id, normalize_type(field.field_type), field.field_type


def _unit(kind: str) -> str:
    if kind == "date":
        return "days since 1970-01-01"
    if kind.endswith("_ns"):
        return "nanoseconds since 1970-01-01T00:00:00Z"
    if kind in TEMPORAL:
        return "microseconds since 1970-01-01T00:00:00Z"
    return "value"


def _parse(value: Any, kind: str, what: str) -> int:
    """A declared bound in the column's unit (see _unit)."""
    if kind in NUMERIC:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            raise RangeError(f"{what} {value!r} is not an integer, as the {kind} column is") from None
    if kind not in TEMPORAL:
        raise RangeError(f"a range on a {kind} column cannot be compared (only int, long, date and timestamps)")
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # already in the column's unit
    text = str(value).strip()
    try:
        if len(text) == 10:
            when = dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), dt.timezone.utc)
        else:
            when = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=dt.timezone.utc)
    except ValueError:
        raise RangeError(f"{what} {value!r} is neither an RFC 3339 instant nor a date") from None
    if kind == "date":
        return (when.date() - EPOCH.date()).days
    delta = when - EPOCH
    us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return us * 1000 if kind.endswith("_ns") else us


def show(value: int, kind: str) -> str:
    """A value in the column's unit, as a person reads it."""
    if kind == "date":
        return (EPOCH.date() + dt.timedelta(days=value)).isoformat()
    if kind in TEMPORAL:
        us = value // 1000 if kind.endswith("_ns") else value
        return (EPOCH + dt.timedelta(microseconds=us)).isoformat().replace("+00:00", "Z")
    return str(value)


def _span(transform: str, value: int, kind: str) -> tuple[int, int]:
    """The values of the source column (its unit) that partition value ``value`` holds, inclusive."""
    if transform == "identity":
        return value, value
    scale = 1000 if kind.endswith("_ns") else 1
    if kind == "date":
        start_days, end_days = _day_span(transform, value)
        return start_days, end_days
    if transform == "hour":
        return value * US_PER_HOUR * scale, (value + 1) * US_PER_HOUR * scale - 1
    start_days, end_days = _day_span(transform, value)
    return start_days * US_PER_DAY * scale, (end_days + 1) * US_PER_DAY * scale - 1


def _day_span(transform: str, value: int) -> tuple[int, int]:
    if transform == "day":
        return value, value
    if transform == "month":
        y, m = divmod(value, 12)
        first = dt.date(1970 + y, m + 1, 1)
        nxt = dt.date(1970 + y + (m + 1) // 12, (m + 1) % 12 + 1, 1)
    elif transform == "year":
        first, nxt = dt.date(1970 + value, 1, 1), dt.date(1971 + value, 1, 1)
    else:
        raise RangeError(f"transform {transform} does not apply to a date")
    return (first - EPOCH.date()).days, (nxt - EPOCH.date()).days - 1


def _partition_value(value: Any, kind: str) -> int | None:
    """A partition value as an integer in its transform's unit (identity: the column's unit)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, dt.datetime):
        return _parse(value.isoformat(), kind, "partition value")
    if isinstance(value, dt.date):
        return (value - EPOCH.date()).days
    return None


def _partition_field(spec: Any, source_id: int) -> tuple[int, str, str] | None:
    """(position, name, transform) of the finest order-preserving partition field on the column."""
    best: tuple[int, tuple[int, str, str]] | None = None
    for pos, pf in enumerate(spec.fields):
        transform = str(pf.transform).replace(" ", "").lower()
        if pf.source_id != source_id or transform not in ORDERED_TRANSFORMS:
            continue
        rank = ORDERED_TRANSFORMS.index(transform)
        if best is None or rank < best[0]:
            best = (rank, (pos, pf.name, transform))
    return best[1] if best else None


def range_facts(
    table: Any, declared: Mapping[str, Any], matched: Sequence[Any], limits: BackfillLimits
) -> dict[str, Any]:
    """The declared range in the column's unit, and per matched snapshot the lowest and highest
    value its added data files reach (see the module's docstring)."""
    column = str(declared.get("column"))
    out: dict[str, Any] = {"column": column, "declared_from": declared.get("from"), "declared_to": declared.get("to")}
    try:
        field_id, kind, field_type = _column(table, column)
        low, high = _parse(declared.get("from"), kind, "from"), _parse(declared.get("to"), kind, "to")
    except RangeError as exc:
        return {**out, "checked": False, "reason": str(exc), "error": None}
    out.update(
        type=kind,
        unit=_unit(kind),
        **{"from": low, "to": high, "from_text": show(low, kind), "to_text": show(high, kind)},
    )
    specs = table.specs()
    io = table.io
    snapshots: list[dict[str, Any]] = []
    how: set[str] = set()
    entries = 0
    truncated = len(matched) > limits.snapshots
    for s in matched[: limits.snapshots]:
        if entries >= limits.manifest_entries:
            truncated = True
            break
        try:
            found, n, used = _snapshot_bounds(s, io, specs, field_id, kind, field_type)
        except Exception as exc:  # an unreadable manifest list or manifest: SW-FACT-001, the gate fails closed
            return {**out, "checked": False, "reason": None, "error": f"snapshot {s.snapshot_id}: {_describe(exc)}"}
        entries += n
        how.update(used)
        if found is not None:
            snapshots.append({"snapshot_id": s.snapshot_id, **found})
    out.update(
        checked=True,
        reason=None,
        error=None,
        compared=sorted(how),
        snapshots=snapshots,
        entries_read=entries,
        truncated=truncated,
    )
    return out


def _describe(exc: BaseException) -> str:
    from streamwarden.iceberg.catalog import describe

    return describe(exc)


def _snapshot_bounds(
    snap: Any, io: Any, specs: Mapping[int, Any], field_id: int, kind: str, field_type: Any
) -> tuple[dict[str, Any] | None, int, set[str]]:
    """(lowest/highest of the data files ``snap`` added, entries read, how each was judged)."""
    from pyiceberg.conversions import from_bytes
    from pyiceberg.manifest import ManifestContent, ManifestEntryStatus

    lowest: tuple[int, str, str] | None = None
    highest: tuple[int, str, str] | None = None
    files = n = 0
    used: set[str] = set()
    for m in snap.manifests(io):
        if m.content != ManifestContent.DATA or m.added_snapshot_id != snap.snapshot_id:
            continue
        spec = specs.get(m.partition_spec_id)
        pfield = _partition_field(spec, field_id) if spec is not None else None
        for e in m.fetch_manifest_entry(io, discard_deleted=True):
            n += 1
            if e.status != ManifestEntryStatus.ADDED or (e.snapshot_id not in (None, snap.snapshot_id)):
                continue
            df = e.data_file
            pair: tuple[tuple[int, str], tuple[int, str]] | None = None
            if pfield is not None:
                pos, name, transform = pfield
                value = _partition_value(df.partition[pos], kind)
                if value is not None:
                    lo, hi = _span(transform, value, kind)
                    label = f"partition {name}={value} ({show(lo, kind)} .. {show(hi, kind)})"
                    pair = (hi, label), (lo, label)  # a partition is outside only when all of it is
                    used.add(f"partition {name} ({transform} of {kind})")
            if pair is None:
                lower = (df.lower_bounds or {}).get(field_id)
                upper = (df.upper_bounds or {}).get(field_id)
                if lower is None or upper is None:
                    continue
                lo_v, hi_v = int(from_bytes(field_type, lower)), int(from_bytes(field_type, upper))
                pair = (lo_v, f"lower bound {show(lo_v, kind)}"), (hi_v, f"upper bound {show(hi_v, kind)}")
                used.add("column bounds")
            files += 1
            if lowest is None or pair[0][0] < lowest[0]:
                lowest = (pair[0][0], pair[0][1], df.file_path)
            if highest is None or pair[1][0] > highest[0]:
                highest = (pair[1][0], pair[1][1], df.file_path)
    if lowest is None or highest is None:
        return None, n, used
    return (
        {
            "files": files,
            "lowest": lowest[0],
            "lowest_text": lowest[1],
            "lowest_file": lowest[2],
            "highest": highest[0],
            "highest_text": highest[1],
            "highest_file": highest[2],
        },
        n,
        used,
    )
