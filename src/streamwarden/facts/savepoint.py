"""Savepoint facts (``facts.savepoint``): a savepoint or retained checkpoint's ``_metadata``, read
from a local path, a ``file:`` URI, or an object store (s3://, gs://, abfs://, hdfs://) through
``pyarrow.fs`` (installed with the iceberg extra; imported only for such a location), matched
against the uids the contract declares. State files are never opened. The shape is documented in
docs/facts-savepoint.md.

``load_savepoint`` raises ``SavepointError`` (exit 2 for ``savepoint inspect``); ``gather_savepoint``
turns the same problems into ``{"available": false, "configured": true, "error": ...}``, which
SW-FACT-001 reports (an error in the gate, which fails closed), except a ``--restore-from`` that
does not exist (``SavepointNotFound``): a typo in the command line is unusable input, exit 2.
"""

from __future__ import annotations

import os
import re
import stat
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden import secrets
from streamwarden.errors import InputError
from streamwarden.facts.savepoint_kafka import kafka_facts
from streamwarden.facts.source import GatherContext, available, not_configured, unavailable
from streamwarden.flink.savepoint_bytes import MAX_METADATA_BYTES
from streamwarden.flink.savepoint_metadata import CheckpointMetadata, MetadataError, parse_metadata
from streamwarden.flink.uids import closest_uid, declared_uids
from streamwarden.flink.values import bare_location

METADATA = "_metadata"
OBJECT_STORES = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "s3p": "s3",
    "gs": "gs",
    "gcs": "gs",
    "abfs": "abfs",
    "abfss": "abfss",
    "hdfs": "hdfs",
    "viewfs": "viewfs",
}
INSTALL_HINT = "pip install 'streamwarden[iceberg]'"
_CHECKPOINT_DIR = re.compile(r"^chk-(\d+)$")
_SAVEPOINT_DIR = re.compile(r"^savepoint-([0-9a-f]{6})-[0-9a-f]{12}$")
_JOB_ID = re.compile(r"^[0-9a-f]{32}$")
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@")
CLOSEST_LIMIT = 5


class SavepointError(InputError):
    """The savepoint cannot be used: missing, unreadable, or not a _metadata this reader knows."""


class SavepointNotFound(SavepointError):
    """Nothing exists at the location (as opposed to a savepoint that exists but cannot be read)."""


NOT_FOUND_HINT = (
    "give the savepoint or retained checkpoint directory (the one holding _metadata), its _metadata file, "
    "or its URI (file:, s3://, gs://, abfs://, hdfs://); check the path for a typo"
)


@dataclass
class LoadedSavepoint:
    location: str  # as the user gave it, credentials removed
    metadata_path: str  # the _metadata file read (local path or URI, credentials removed)
    metadata: CheckpointMetadata
    modified_ms: int | None


def display_location(location: str) -> str:
    """The location without ``user:password@`` and without a query string (signed URLs)."""
    try:
        return bare_location(location)
    except ValueError:  # a port that is no number, a broken IPv6 literal
        return secrets.scrub(location)


def normalize_pointer(location: str) -> str:
    """A comparable form of a savepoint/checkpoint pointer: ``file:`` and trailing ``/_metadata`` removed."""
    text = display_location(location.strip())
    parts = urllib.parse.urlsplit(text)
    if parts.scheme == "file":
        text = urllib.parse.unquote(parts.path)
    text = text.rstrip("/")
    if text.endswith("/" + METADATA):
        text = text[: -len(METADATA) - 1]
    return text.rstrip("/")


def load_savepoint(location: str) -> LoadedSavepoint:
    """Read and parse the ``_metadata`` at ``location`` (its directory or the file itself)."""
    shown = display_location(location)
    if not location.strip():
        raise SavepointError("the savepoint location is empty")
    parts = urllib.parse.urlsplit(location)
    scheme = parts.scheme.lower()
    if scheme in OBJECT_STORES:
        path, data, modified = _read_object_store(location, scheme, shown)
    elif scheme in ("", "file") or len(scheme) == 1:
        path, data, modified = _read_local(_local_path(location, parts), shown)
    else:
        raise SavepointError(
            f"cannot read a savepoint at {shown}: unsupported scheme '{scheme}:'",
            hint="give a local path, a file: URI, or s3://, gs://, abfs://, hdfs:// (through pyarrow)",
        )
    try:
        metadata = parse_metadata(data)
    except MetadataError as exc:
        raise SavepointError(f"{path} is not a readable Flink _metadata: {exc}") from None
    return LoadedSavepoint(shown, path, metadata, modified)


def _local_path(location: str, parts: urllib.parse.SplitResult) -> Path:
    if parts.scheme.lower() != "file":
        return Path(location).expanduser()
    if parts.netloc not in ("", "localhost"):
        host = parts.hostname or ""  # never parts.netloc: it carries user:password@
        raise SavepointError(f"file URI {display_location(location)} names host '{host}': only local files")
    return Path(urllib.parse.unquote(parts.path))


def _read_local(path: Path, shown: str) -> tuple[str, bytes, int | None]:
    target = path / METADATA if path.is_dir() else path
    if path.is_dir() and not target.exists():
        raise SavepointError(f"{shown} has no {METADATA} file: not a savepoint or retained checkpoint directory")
    if not target.exists():
        raise SavepointNotFound(f"{shown} does not exist", hint=NOT_FOUND_HINT)
    try:
        st = target.stat()
        if stat.S_ISDIR(st.st_mode):
            raise SavepointError(f"cannot read {target}: is a directory")
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the run, a device never end
            what = shown if target == path else f"{shown}: {METADATA}"
            raise SavepointError(f"{what} is not a regular file (a pipe, socket or device): it is not read")
        size = st.st_size
        if size > MAX_METADATA_BYTES:
            raise SavepointError(f"{target} is {size} bytes: more than a _metadata may be ({MAX_METADATA_BYTES} bytes)")
        with open(target, "rb") as f:
            data = f.read(MAX_METADATA_BYTES + 1)
        modified = int(os.stat(target).st_mtime * 1000)
    except OSError as exc:
        raise SavepointError(f"cannot read {target}: {(exc.strerror or str(exc)).lower()}") from None
    return str(target), data, modified


def _read_object_store(location: str, scheme: str, shown: str) -> tuple[str, bytes, int | None]:
    try:
        import pyarrow.fs as pafs
    except ImportError:
        raise SavepointError(
            f"reading a savepoint at {shown} needs pyarrow, which is not installed", hint=INSTALL_HINT
        ) from None
    canonical = OBJECT_STORES[scheme]
    uri = location if scheme == canonical else canonical + location[len(scheme) :]
    try:
        fs, path = filesystem_from_uri(uri)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise SavepointNotFound(f"{shown} does not exist", hint=NOT_FOUND_HINT)
        if info.type == pafs.FileType.Directory:
            path = path.rstrip("/") + "/" + METADATA
            info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise SavepointError(f"{shown} has no {METADATA} (not found)")
        if info.size is not None and info.size > MAX_METADATA_BYTES:
            raise SavepointError(f"{shown}: {METADATA} is {info.size} bytes, more than a _metadata may be")
        with fs.open_input_stream(path) as f:
            data = f.read(MAX_METADATA_BYTES + 1)
        modified = int(info.mtime.timestamp() * 1000) if info.mtime is not None else None
    except SavepointError:
        raise
    except Exception as exc:  # pyarrow raises OSError / ArrowException subclasses with the store's reason
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        reason = secrets.cut(_USERINFO.sub(r"\1", reason), 300)  # scrubbed first, then cut
        raise SavepointError(f"cannot read the savepoint at {shown}: {reason}") from None
    return f"{canonical}://{path}", bytes(data), modified


def filesystem_from_uri(uri: str) -> tuple[Any, str]:
    """``pyarrow.fs.FileSystem.from_uri``: credentials come from the store's usual environment
    (AWS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_*), never from streamwarden's output."""
    import pyarrow.fs as pafs

    fs, path = pafs.FileSystem.from_uri(uri)
    return fs, path


def location_identity(location: str) -> dict[str, Any]:
    """What the directory layout tells: ``<dir>/<job id>/chk-<n>`` or ``savepoint-<6 hex>-<12 hex>``."""
    parts = [p for p in normalize_pointer(location).split("/") if p]
    if parts and parts[-1] == METADATA:
        parts = parts[:-1]
    out: dict[str, Any] = {"kind": None, "job_id": None, "job_id_prefix": None, "directory_checkpoint_id": None}
    if not parts:
        return out
    m = _CHECKPOINT_DIR.match(parts[-1])
    if m:
        out.update(kind="checkpoint", directory_checkpoint_id=int(m.group(1)))
        if len(parts) >= 2 and _JOB_ID.match(parts[-2]):
            out.update(job_id=parts[-2], job_id_prefix=parts[-2][:6])
        return out
    m = _SAVEPOINT_DIR.match(parts[-1])
    if m:
        out.update(kind="savepoint", job_id_prefix=m.group(1))
    return out


def flink_entry_for(flink: dict[str, Any] | None, location: str) -> dict[str, Any] | None:
    """The checkpoint or savepoint in Flink's REST facts whose external path is ``location``."""
    checkpoints = (flink or {}).get("checkpoints") or {}
    if not (flink or {}).get("available") or not checkpoints.get("available"):
        return None
    want = normalize_pointer(location)
    latest = checkpoints.get("latest") or {}
    entries = [latest.get("savepoint"), latest.get("completed"), *(checkpoints.get("history") or [])]
    for e in entries:
        if (
            isinstance(e, dict)
            and isinstance(e.get("external_path"), str)
            and normalize_pointer(e["external_path"]) == want
        ):
            return e
    return None


def flink_pointer_gone(location: str, source: str, flink: dict[str, Any] | None) -> str | None:
    """Why the checkpoint Flink named as the one to restore from is gone, and the newest retained
    checkpoint beside it (None when ``location`` is no ``chk-<n>`` directory). Flink keeps only the
    newest ``execution.checkpointing.num-retained`` completed checkpoints: the one its REST API
    reported (its statistics are cached for a few seconds) is deleted when a newer one completes."""
    ident = location_identity(location)
    if ident["kind"] != "checkpoint":
        return None
    named = ident["directory_checkpoint_id"]
    shown = display_location(location)
    newer = [(cid, path) for cid, path in retained_checkpoints(location, flink) if cid > named]
    said = "the latest completed checkpoint" if source == "flink_latest_checkpoint" else "a checkpoint"
    message = (
        f"Flink named checkpoint {named} ({shown}) as {said}, but it no longer exists: Flink deletes a "
        "completed checkpoint when a newer one completes and it has more than "
        "execution.checkpointing.num-retained"
    )
    if not newer:
        return message + "; no newer retained checkpoint was found beside it"
    cid, path = max(newer)
    return message + f"; the newest retained checkpoint is {cid} ({path}): restore from it with --restore-from {path}"


def retained_checkpoints(location: str, flink: dict[str, Any] | None) -> list[tuple[int, str]]:
    """``(checkpoint id, location)`` of the completed checkpoints that still exist beside
    ``location``: for a local path, its sibling ``chk-<n>`` directories holding a ``_metadata``;
    for an object store (not listed), those Flink reports completed and not discarded."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme.lower() in OBJECT_STORES:
        checkpoints = (flink or {}).get("checkpoints") or {}
        latest = checkpoints.get("latest") or {}
        reported = [latest.get("completed"), *(checkpoints.get("history") or [])]
        return sorted(
            {
                e["id"]: display_location(e["external_path"])
                for e in reported
                if isinstance(e, dict)
                and isinstance(e.get("id"), int)
                and isinstance(e.get("external_path"), str)
                and e.get("status") == "completed"
                and not e.get("is_savepoint")
                and not e.get("discarded")
            }.items()
        )
    found: dict[int, str] = {}
    try:
        parent = _local_path(location, parts).parent
        for entry in os.scandir(parent):
            m = _CHECKPOINT_DIR.match(entry.name)
            if m and entry.is_dir(follow_symlinks=False) and os.path.isfile(os.path.join(entry.path, METADATA)):
                found[int(m.group(1))] = display_location(entry.path)
    except (OSError, SavepointError):
        pass  # nothing to list: no newer checkpoint is named
    return sorted(found.items())


def flink_candidate(flink: dict[str, Any] | None) -> tuple[str, str] | None:
    """The pointer the Flink job would restore from when none is given: the newest of its latest
    savepoint and its latest retained checkpoint (``(external_path, source)``), else None."""
    checkpoints = (flink or {}).get("checkpoints") or {}
    if not (flink or {}).get("available") or not checkpoints.get("available"):
        return None
    latest = checkpoints.get("latest") or {}
    found = []
    for key, source in (("savepoint", "flink_latest_savepoint"), ("completed", "flink_latest_checkpoint")):
        e = latest.get(key)
        if isinstance(e, dict) and isinstance(e.get("external_path"), str) and not e.get("discarded"):
            found.append((e.get("id") or -1, e["external_path"], source))
    if not found:
        return None
    found.sort(key=lambda t: t[0], reverse=True)
    return found[0][1], found[0][2]


def savepoint_facts(
    sp: LoadedSavepoint, contract: dict[str, Any] | None, flink: dict[str, Any] | None = None, source: str = "path"
) -> dict[str, Any]:
    """The ``facts.savepoint`` document for a loaded savepoint (``contract``: the normalized one)."""
    md = sp.metadata
    ident = location_identity(sp.location)
    entry = flink_entry_for(flink, sp.location)
    kind = md.properties.get("type") or ident["kind"]
    completed, completed_source = sp.modified_ms, "file_mtime" if sp.modified_ms is not None else None
    job_id, job_source = ident["job_id"], "path" if ident["job_id"] else None
    if entry is not None:
        completed = entry.get("latest_ack_timestamp") or completed
        completed_source = "flink" if entry.get("latest_ack_timestamp") else completed_source
        job_id, job_source = (flink or {}).get("job_id") or job_id, "flink"
    operators = [op.to_dict() for op in md.operators]
    declared = declared_uids(contract or {})
    facts: dict[str, Any] = {
        **available(),
        "source": source,
        "location": sp.location,
        "metadata_path": sp.metadata_path,
        "kind": kind,
        "format": md.properties.get("format"),
        "version": md.version,
        "checkpoint_id": md.checkpoint_id,
        "metadata_bytes": md.size,
        "completed_ms": completed,
        "completed_ms_source": completed_source,
        "job_id": job_id,
        "job_id_prefix": (job_id or "")[:6] or ident["job_id_prefix"],
        "job_id_source": job_source,
        "directory_checkpoint_id": ident["directory_checkpoint_id"],
        "master_states": [m["name"] for m in md.master_states],
        "operators": operators,
        "stateful_operators": sum(1 for op in md.operators if op.has_state),
        "state_size": sum(op.state_size for op in md.operators),
        "declared": [],
        "matched": contract is not None,
    }
    if contract is not None:
        match_declared(facts, [d.to_dict() for d in declared])
    facts["kafka"] = kafka_facts(md.operators, facts["operators"], contract)
    return facts


def inspect_savepoint(location: str, contract_file: str | None = None) -> dict[str, Any]:
    """What ``savepoint inspect`` shows: the savepoint's operators, matched to the uids of the
    contract in ``contract_file`` when one is given (a missing file is a UsageError, exit 2)."""
    from streamwarden.contracts import load_contract
    from streamwarden.errors import UsageError

    contract = None
    if contract_file:
        p = Path(contract_file)
        if not p.is_file():
            raise UsageError("contract file does not exist", file=contract_file)
        contract = load_contract(p, Path.cwd()).data
    return savepoint_facts(load_savepoint(location), contract)


def match_declared(facts: dict[str, Any], declared: list[dict[str, Any]]) -> None:
    """Mark each operator with the declared uid that hashes to its id, and, for a stateful operator
    no declared uid claims, the closest declared uid (edit distance to its recorded uid, v5+) or
    the declared uids whose ids the savepoint does not hold (no recorded uid)."""
    ids = {op["operator_id"] for op in facts["operators"]}
    by_id: dict[str, dict[str, Any]] = {}
    for d in declared:
        current = by_id.get(d["operator_id"])
        if current is None or (current["derived"] and not d["derived"]):
            by_id[d["operator_id"]] = d
    plain = [d for d in declared if not d["derived"]]
    absent = [d for d in plain if d["operator_id"] not in ids]
    for op in facts["operators"]:
        m = by_id.get(op["operator_id"])
        op["matched"] = None if m is None else {"uid": m["uid"], "path": m["path"], "derived": m["derived"]}
        op["closest"] = None
        op["candidates"] = []
        if m is not None or not op["has_state"]:
            continue
        if op["uid"]:
            best = closest_uid(op["uid"], [d["uid"] for d in plain])
            if best is not None:
                d = next(x for x in plain if x["uid"] == best[0])
                op["closest"] = {
                    "uid": best[0],
                    "distance": best[1],
                    "path": d["path"],
                    "operator_id": d["operator_id"],
                }
        else:
            op["candidates"] = [
                {"uid": d["uid"], "path": d["path"], "operator_id": d["operator_id"]} for d in absent[:CLOSEST_LIMIT]
            ]
            if absent:
                first = absent[0]
                op["closest"] = {
                    "uid": first["uid"],
                    "distance": None,
                    "path": first["path"],
                    "operator_id": first["operator_id"],
                }
    for d in declared:
        d["in_savepoint"] = d["operator_id"] in ids
    facts["declared"] = declared
    facts["unmatched_stateful"] = [
        op["operator_id"] for op in facts["operators"] if op["has_state"] and not op["matched"]
    ]
    facts["declared_absent"] = [d["uid"] for d in absent]


def gather(contract: dict[str, Any], env: Mapping[str, Any], ctx: GatherContext) -> dict[str, Any]:
    """``facts.savepoint`` (the gatherer protocol, facts/source.py): the savepoint at
    ``ctx.restore_from`` (``ctx.restore_source`` says where that location came from), else the
    candidate the Flink section already gathered (``ctx.flink``) names. The location comes from
    the command line or Flink, never from ``env``."""
    flink = dict(ctx.flink) if ctx.flink is not None else None
    return gather_savepoint(contract, ctx.restore_from, flink, ctx.restore_source)


def gather_savepoint(
    contract: dict[str, Any],
    location: str | None,
    flink: dict[str, Any] | None = None,
    source: str = "restore_from",
) -> dict[str, Any]:
    """``facts.savepoint`` for ``location`` (``--restore-from`` unless ``source`` says where it
    came from), else for the candidate the Flink facts name; not configured when there is neither.
    A read problem is a gap in the facts, never raised, but for a ``--restore-from`` where nothing
    exists: SavepointNotFound (exit 2), as the user can fix the command line."""
    if not location:
        candidate = flink_candidate(flink)
        if candidate is None:
            return not_configured()
        location, source = candidate
    try:
        sp = load_savepoint(location)
    except SavepointNotFound as exc:
        if source == "restore_from":
            raise SavepointNotFound(f"--restore-from {exc.message}", hint=exc.hint) from None
        gone = flink_pointer_gone(location, source, flink)  # Flink named it: no typo to look for
        return unavailable(gone or exc.render(), location=display_location(location), source=source)
    except SavepointError as exc:
        return unavailable(exc.render(), location=display_location(location), source=source)
    return savepoint_facts(sp, contract, flink, source)
