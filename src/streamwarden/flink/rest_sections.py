"""Normalizers for the sections of ``facts.flink``: one function per Flink REST response.

They accept the response shapes of Flink 1.18 to 2.x, turn durations into ms, sizes into bytes,
enum-like values into lower case (as in the normalized contract), and -1 sentinels into null.
docs/facts-flink.md documents every field. Every normalizer tolerates missing or mistyped fields
(a proxy or an older Flink may leave them out): a missing value becomes null, except where a
rule could not tell a gap from a fact: ``job_shape_problem`` names what makes a ``/jobs/:id``
answer unusable, and the gatherer then reports the job as unavailable.

Fan-out and size are bounded: at most ``MAX_VERTICES`` vertices are listed (and asked for their
backpressure), ``MAX_EXCEPTIONS`` exception entries and ``MAX_HISTORY`` checkpoint history entries
are kept. Text is scrubbed of secrets before it is cut to ``MESSAGE_LIMIT``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from streamwarden.flink.values import bare_location

# Flink's "no periodic checkpoints" interval (Long.MAX_VALUE).
DISABLED_INTERVAL = 9_223_372_036_854_775_807
TERMINAL_STATES = frozenset({"finished", "canceled", "failed"})
MESSAGE_LIMIT = 300
MAX_VERTICES = 200  # vertices listed per job (each costs a backpressure request)
MAX_EXCEPTIONS = 20  # as many as /exceptions?maxExceptions= asks for
MAX_HISTORY = 100  # checkpoint history entries (Flink keeps 10 by default)
MAX_LABELS = 50  # failure labels per exception entry

# Job metrics requested from /jobs/:id/metrics (names present in 1.18..2.x; missing ones are skipped).
JOB_METRICS = (
    "numRestarts",
    "fullRestarts",
    "uptime",
    "downtime",
    "restartingTime",
    "lastCheckpointDuration",
    "lastCheckpointSize",
    "lastCheckpointFullSize",
    "lastCheckpointExternalPath",
    "lastCheckpointRestoreTimestamp",
    "lastCheckpointCompletedTimestamp",
    "lastCompletedCheckpointId",
    "numberOfCompletedCheckpoints",
    "numberOfFailedCheckpoints",
    "numberOfInProgressCheckpoints",
    "totalNumberOfCheckpoints",
)


def ok(**fields: Any) -> dict[str, Any]:
    return {"available": True, **fields}


def missing(error: str) -> dict[str, Any]:
    return {"available": False, "error": error}


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and math.isfinite(x):
        return int(x)
    if isinstance(x, str):
        try:
            return int(x.strip())
        except ValueError:
            return None
    return None


def _nonneg(x: Any) -> int | None:
    """A duration or timestamp in ms, or a size in bytes; Flink writes -1 for "not yet"."""
    n = _int(x)
    return n if n is not None and n >= 0 else None


def _ratio(x: Any) -> float | None:
    """A ratio from backpressure ("NaN" as a string happens)."""
    if isinstance(x, bool):
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _lower(x: Any) -> str | None:
    return x.strip().lower().replace("-", "_") if isinstance(x, str) and x.strip() else None


def _str(x: Any) -> str | None:
    return x if isinstance(x, str) and x != "" else None


def _bool(x: Any) -> bool | None:
    return x if isinstance(x, bool) else None


def first_line(text: Any, scrub: Callable[[str], str]) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    line = scrub(text.strip().splitlines()[0].strip())  # scrub first: a cut could split a secret
    return line[:MESSAGE_LIMIT] + ("…" if len(line) > MESSAGE_LIMIT else "")


def exception_text(trace: Any, scrub: Callable[[str], str]) -> str | None:
    """The first line of a Java stack trace, plus its root cause (the last "Caused by:") when
    there is one: "JobException: Recovery is suppressed ... (root cause: NoResourceAvailableException: ...)"."""
    head = first_line(trace, scrub)
    if head is None:
        return None
    causes = [
        ln.strip()[len("Caused by:") :].strip() for ln in str(trace).splitlines() if ln.strip().startswith("Caused by:")
    ]
    root = first_line(causes[-1], scrub) if causes else None
    return f"{head} (root cause: {root})" if root and root != head else head


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


# -- /jobs/overview ---------------------------------------------------------------------------
def _location(x: Any) -> str | None:
    """A checkpoint's or savepoint's location as a Flink server names it, bare (``values.
    bare_location``: no credentials, no query): a location read later (``gate``, ``evidence``) is
    the store's, at the endpoint the environment configures, never one a server chose."""
    text = _str(x)
    if text is None or "://" not in text:  # a path, or Flink's own "file:/..." form: as Flink wrote it
        return text
    try:
        return bare_location(text)
    except ValueError:
        return None


class ShapeError(ValueError):
    """An answer that is JSON, but not of the shape Flink gives: the section is unavailable."""


def overview_problem(doc: Any) -> str | None:
    """What makes a ``/jobs/overview`` answer unusable (None when Flink could have written it): a
    jobs list whose every entry is an object with a ``jid`` and a ``name`` string. An entry of
    another shape is not skipped: the job it stands for could be the contract's, and reading
    "not running" into it would let a gate allow a restore."""
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        return "no jobs list"
    for i, j in enumerate(doc["jobs"]):
        if not isinstance(j, dict) or not isinstance(j.get("jid"), str) or not isinstance(j.get("name"), str):
            return f"jobs[{i}] is not a job with a jid and a name"
    return None


def overview_jobs(doc: Any) -> list[dict[str, Any]]:
    """``{"jobs": [...]}`` as [{id, name, state, start_time}], newest first."""
    out = []
    for j in _list(_dict(doc).get("jobs")):
        j = _dict(j)
        jid = _str(j.get("jid"))
        if jid is None:
            continue
        out.append(
            {
                "id": jid,
                "name": j.get("name") if isinstance(j.get("name"), str) else "",
                "state": _lower(j.get("state")),
                "start_time": _nonneg(j.get("start-time")),
            }
        )
    out.sort(key=lambda j: j["start_time"] or 0, reverse=True)
    return out


# -- /jobs/:id ------------------------------------------------------------------------------
def job_shape_problem(doc: Any) -> str | None:
    """What makes a ``/jobs/:id`` answer unusable (None when it has the shape Flink gives): the
    rules read the job's id, state and vertices, and must never see them missing."""
    if not isinstance(doc, dict):
        return f"a JSON {type(doc).__name__ if doc is not None else 'null'} instead of an object"
    for key in ("jid", "state"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            return f"no {key} string"
    if not isinstance(doc.get("vertices"), list):
        return "no vertices list"
    if not all(isinstance(v, dict) and isinstance(v.get("id"), str) for v in doc["vertices"]):
        return "a vertex without an id"
    return None


def job_details(doc: Any) -> dict[str, Any]:
    d = _dict(doc)
    timestamps = _dict(d.get("timestamps"))
    vertices = []
    listed = _list(d.get("vertices"))
    for v in listed[:MAX_VERTICES]:
        v = _dict(v)
        vertices.append(
            {
                "id": _str(v.get("id")),
                "name": _str(v.get("name")),
                "parallelism": _int(v.get("parallelism")),
                "max_parallelism": _positive(v.get("maxParallelism")),
                "status": _lower(v.get("status")),
            }
        )
    return ok(
        id=_str(d.get("jid")),
        name=d.get("name") if isinstance(d.get("name"), str) else None,
        state=_lower(d.get("state")),
        job_type=_lower(d.get("job-type") or d.get("jobType")),
        start_time=_nonneg(d.get("start-time")),
        end_time=_nonneg(d.get("end-time")),
        duration=_nonneg(d.get("duration")),
        now=_nonneg(d.get("now")),
        running_since=_nonneg(timestamps.get("RUNNING")) or None,
        max_parallelism=_positive(d.get("maxParallelism")),
        vertices=vertices,
        vertex_count=len(listed),
        vertices_truncated=len(listed) > MAX_VERTICES,
    )


def _positive(x: Any) -> int | None:
    n = _int(x)
    return n if n is not None and n > 0 else None


# -- /jobs/:id/checkpoints/config ------------------------------------------------------------
def checkpoint_config(doc: Any) -> dict[str, Any]:
    d = _dict(doc)
    interval = _int(d.get("interval"))
    enabled = interval is not None and 0 < interval < DISABLED_INTERVAL
    ext = _dict(d.get("externalization"))
    if ext.get("enabled") is True:
        externalized = (
            "delete_on_cancellation" if ext.get("delete_on_cancellation") is True else "retain_on_cancellation"
        )
    elif ext.get("enabled") is False:
        externalized = "none"
    else:
        externalized = None
    backend_class = _str(d.get("state_backend"))
    return ok(
        enabled=enabled,
        mode=_lower(d.get("mode") or d.get("processing_mode")),
        interval=interval if enabled else None,
        timeout=_nonneg(d.get("timeout")),
        min_pause=_nonneg(d.get("min_pause")),
        max_concurrent=_int(d.get("max_concurrent")),
        unaligned=_bool(d.get("unaligned_checkpoints")),
        tolerable_failures=_int(d.get("tolerable_failed_checkpoints")),
        externalized=externalized,
        state_backend=_backend(backend_class),
        state_backend_class=backend_class,
        checkpoint_storage=_str(d.get("checkpoint_storage")),
        aligned_checkpoint_timeout=_nonneg(d.get("aligned_checkpoint_timeout")),
        changelog_enabled=_bool(d.get("state_changelog_enabled")),
    )


def checkpointing_disabled() -> dict[str, Any]:
    """Flink answers 404 "Checkpointing is not enabled for this job" on some versions."""
    return ok(enabled=False, interval=None)


def _backend(cls: str | None) -> str | None:
    if cls is None:
        return None
    low = cls.lower()
    for needle, name in (("forst", "forst"), ("rocksdb", "rocksdb"), ("hashmap", "hashmap")):
        if needle in low:
            return name
    if low in ("memorystatebackend", "fsstatebackend"):
        return "hashmap"  # the 1.x names of the heap backend
    return low


# -- /jobs/:id/checkpoints -------------------------------------------------------------------
def checkpoints(doc: Any, scrub: Callable[[str], str]) -> dict[str, Any]:
    # Flink always answers with the "counts" and "latest" objects (empty history or not): anything
    # else is not Flink's answer, and "no checkpoints" must not be read into it (a gate would let a
    # restore through); the ValueError makes the section unavailable (SW-FACT-001)
    if not isinstance(doc, dict) or not isinstance(doc.get("counts"), dict) or not isinstance(doc.get("latest"), dict):
        raise ShapeError("no 'counts' and 'latest' objects")
    d = _dict(doc)
    counts = _dict(d.get("counts"))
    latest = _dict(d.get("latest"))
    restored = _dict(latest.get("restored"))
    summary = _dict(d.get("summary"))
    return ok(
        counts={k: _int(counts.get(k)) for k in ("total", "completed", "failed", "in_progress", "restored")},
        latest={
            "completed": _entry(latest.get("completed"), scrub),
            "savepoint": _entry(latest.get("savepoint"), scrub),
            "failed": _entry(latest.get("failed"), scrub),
            "restored": {
                "id": _int(restored.get("id")),
                "restore_timestamp": _nonneg(restored.get("restore_timestamp")),
                "is_savepoint": _bool(restored.get("is_savepoint")),
                "external_path": _location(restored.get("external_path")),
            }
            if restored
            else None,
        },
        history=[e for e in (_entry(h, scrub) for h in _list(d.get("history"))[:MAX_HISTORY]) if e is not None],
        summary={
            k: {s: _ratio(_dict(summary.get(k)).get(s)) for s in ("min", "max", "avg", "p99")}
            for k in ("end_to_end_duration", "state_size", "checkpointed_size")
            if isinstance(summary.get(k), dict)
        },
    )


def _entry(x: Any, scrub: Callable[[str], str]) -> dict[str, Any] | None:
    e = _dict(x)
    if not e or _int(e.get("id")) is None:
        return None
    out: dict[str, Any] = {
        "id": _int(e.get("id")),
        "status": _lower(e.get("status")),
        "is_savepoint": _bool(e.get("is_savepoint")),
        "checkpoint_type": _lower(e.get("checkpoint_type")),
        "trigger_timestamp": _nonneg(e.get("trigger_timestamp")),
        "latest_ack_timestamp": _nonneg(e.get("latest_ack_timestamp")),
        "end_to_end_duration": _nonneg(e.get("end_to_end_duration")),
        "state_size": _nonneg(e.get("state_size")),
        "checkpointed_size": _nonneg(e.get("checkpointed_size")),
        "num_subtasks": _int(e.get("num_subtasks")),
        "num_acknowledged_subtasks": _int(e.get("num_acknowledged_subtasks")),
    }
    if "external_path" in e or "discarded" in e:
        out["external_path"] = _location(e.get("external_path"))
        out["discarded"] = _bool(e.get("discarded"))
    if "failure_message" in e or "failure_timestamp" in e:
        out["failure_timestamp"] = _nonneg(e.get("failure_timestamp"))
        out["failure_message"] = first_line(e.get("failure_message"), scrub)
    return out


# -- /jobs/:id/exceptions --------------------------------------------------------------------
def exceptions(doc: Any, scrub: Callable[[str], str]) -> dict[str, Any]:
    d = _dict(doc)
    history = d.get("exceptionHistory")
    if isinstance(history, dict):
        raw = _list(history.get("entries"))
        truncated = True if len(raw) > MAX_EXCEPTIONS else _bool(history.get("truncated"))
        raw = raw[:MAX_EXCEPTIONS]
        entries: list[dict[str, Any]] = [
            {
                "exception": _str(_dict(e).get("exceptionName")),
                "message": exception_text(_dict(e).get("stacktrace"), scrub),
                "timestamp": _nonneg(_dict(e).get("timestamp")),
                "task": _str(_dict(e).get("taskName")),
                "failure_labels": _labels(_dict(e).get("failureLabels")),
            }
            for e in raw
        ]
    else:  # very old shape: root-exception + all-exceptions only
        truncated = True if len(_list(d.get("all-exceptions"))) > MAX_EXCEPTIONS else _bool(d.get("truncated"))
        entries = [
            {
                "exception": None,
                "message": exception_text(_dict(e).get("exception"), scrub),
                "timestamp": _nonneg(_dict(e).get("timestamp")),
                "task": _str(_dict(e).get("task")),
                "failure_labels": {},
            }
            for e in _list(d.get("all-exceptions"))[:MAX_EXCEPTIONS]
        ]
    entries.sort(key=_timestamp, reverse=True)
    return ok(entries=entries, truncated=truncated)


def _labels(x: Any) -> dict[str, str]:
    """Failure labels are string -> string in Flink; anything else (a nested value) is dropped."""
    items = [(k, v) for k, v in _dict(x).items() if isinstance(k, str) and isinstance(v, str)]
    return dict(items[:MAX_LABELS])


def _timestamp(entry: dict[str, Any]) -> int:
    ts = entry.get("timestamp")
    return ts if isinstance(ts, int) else 0


# -- /jobs/:id/vertices/:vid/backpressure ----------------------------------------------------
def backpressure(doc: Any) -> dict[str, Any]:
    d = _dict(doc)
    subtasks = [_dict(s) for s in _list(d.get("subtasks"))]
    status = _lower(d.get("status"))

    def top(key: str) -> float | None:
        vals = [v for v in (_ratio(s.get(key)) for s in subtasks) if v is not None]
        return max(vals) if vals else None

    return ok(
        status=status,
        level=_lower(d.get("backpressureLevel") or d.get("backpressure-level")) if status == "ok" else None,
        max_ratio=top("ratio"),
        max_busy_ratio=top("busyRatio"),
        max_idle_ratio=top("idleRatio"),
        subtasks=len(subtasks),
    )


# -- /jobs/:id/metrics?get=... ---------------------------------------------------------------
def metrics(doc: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for m in _list(doc):
        m = _dict(m)
        name, raw = m.get("id"), m.get("value")
        if isinstance(name, str):
            values[name] = _metric_value(raw)
    return ok(values=values)


def _metric_value(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw if isinstance(raw, (int, float)) and not isinstance(raw, bool) else None
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        f = float(raw)
    except ValueError:
        return raw
    return f if math.isfinite(f) else None


def restarts(metric_section: dict[str, Any], exception_section: dict[str, Any]) -> tuple[int | None, str | None]:
    """Restarts since the job started: the numRestarts metric (fullRestarts on old 1.x), else the
    number of entries in the exception history (a lower bound when it is truncated)."""
    values = metric_section.get("values") or {}
    for name in ("numRestarts", "fullRestarts"):
        if isinstance(values.get(name), int):
            return values[name], f"metrics.{name}"
    if exception_section.get("available"):
        return len(exception_section.get("entries") or []), "exceptions"
    return None, None
