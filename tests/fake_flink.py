"""A fake Flink REST server on 127.0.0.1 for the HTTP edge cases: proxy pages, truncated JSON,
5xx, 404, jobs that vanish between two calls. It answers like Flink 2.3.0 for one healthy job
unless a test overrides a route.

A route maps a path (without the query) to a response, or to a list of responses served in turn
(the last one repeats); ``fallback`` answers paths without a route. A response is
``(status, body)``, ``(status, body, headers)`` or a callable ``(handler) -> None`` that writes
the answer itself.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JID = "4d986ca01ddda5a426cdee76cc7caaf6"
VID = "bc764cd8ddf7a0cff126f51c16239658"
NOW = 1795640942263

Response = Any


def overview(*jobs: tuple[str, str, str, int]) -> dict[str, Any]:
    """``/jobs/overview`` for (jid, name, state, start-time) tuples."""
    return {
        "jobs": [
            {"jid": j, "name": n, "state": s, "start-time": t, "end-time": -1, "duration": 1, "tasks": {}}
            for j, n, s, t in jobs
        ]
    }


def job(jid: str = JID, name: str = "orders", state: str = "RUNNING") -> dict[str, Any]:
    return {
        "jid": jid,
        "name": name,
        "state": state,
        "job-type": "STREAMING",
        "start-time": NOW - 60000,
        "end-time": -1,
        "duration": 60000,
        "maxParallelism": -1,
        "now": NOW,
        "timestamps": {"RUNNING": NOW - 59000, "CREATED": NOW - 59500},
        "vertices": [
            {"id": VID, "name": "Source: src", "maxParallelism": 128, "parallelism": 1, "status": state},
        ],
    }


CHECKPOINT_CONFIG = {
    "mode": "exactly_once",
    "interval": 1000,
    "timeout": 60000,
    "min_pause": 500,
    "max_concurrent": 1,
    "externalization": {"enabled": True, "delete_on_cancellation": False},
    "state_backend": "EmbeddedRocksDBStateBackend",
    "checkpoint_storage": "FileSystemCheckpointStorage",
    "unaligned_checkpoints": False,
    "tolerable_failed_checkpoints": 3,
    "aligned_checkpoint_timeout": 0,
}

_COMPLETED = {
    "className": "completed",
    "id": 15,
    "status": "COMPLETED",
    "is_savepoint": False,
    "savepointFormat": None,
    "trigger_timestamp": NOW - 525,
    "latest_ack_timestamp": NOW - 500,
    "checkpointed_size": 29046,
    "state_size": 34015,
    "end_to_end_duration": 25,
    "num_subtasks": 2,
    "num_acknowledged_subtasks": 2,
    "checkpoint_type": "CHECKPOINT",
    "tasks": {},
    "external_path": f"file:/data/flink/checkpoints/{JID}/chk-15",
    "discarded": False,
}

CHECKPOINTS = {
    "counts": {"restored": 0, "total": 15, "in_progress": 0, "completed": 15, "failed": 0},
    "summary": {"end_to_end_duration": {"min": 18, "max": 101, "avg": 29, "p50": 25.0, "p99": 101.0}},
    "latest": {"completed": _COMPLETED, "savepoint": None, "failed": None, "restored": None},
    "history": [_COMPLETED],
}

METRICS = [{"id": "numRestarts", "value": "0"}, {"id": "lastCheckpointDuration", "value": "25"}]

BACKPRESSURE = {
    "status": "ok",
    "backpressureLevel": "ok",
    "end-timestamp": NOW,
    "subtasks": [{"subtask": 0, "backpressureLevel": "ok", "ratio": 0.0, "idleRatio": 1.0, "busyRatio": "NaN"}],
}


def healthy_routes(jid: str = JID, name: str = "orders") -> dict[str, Response]:
    return {
        "/jobs/overview": (200, overview((jid, name, "RUNNING", NOW - 60000))),
        "/config": (200, {"flink-version": "2.3.0"}),
        f"/jobs/{jid}": (200, job(jid, name)),
        f"/jobs/{jid}/checkpoints/config": (200, CHECKPOINT_CONFIG),
        f"/jobs/{jid}/checkpoints": (200, CHECKPOINTS),
        f"/jobs/{jid}/exceptions": (200, {"exceptionHistory": {"entries": [], "truncated": False}}),
        f"/jobs/{jid}/metrics": (200, METRICS),
        f"/jobs/{jid}/vertices/{VID}/backpressure": (200, BACKPRESSURE),
    }


def flink_error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"errors": [f"{message}\n\tat org.apache.flink.Some.frame(Some.java:1)"]}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout test) closes its socket: not worth a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class FakeFlink:
    def __init__(self) -> None:
        self.routes: dict[str, Response] = healthy_routes()
        self.hits: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.inflight = 0
        self.max_inflight = 0
        self.delay_s = 0.0
        self.fallback: Callable[[BaseHTTPRequestHandler], None] | None = None  # for paths without a route
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake.serve(self)

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def count(self, path: str) -> int:
        return sum(1 for p, _ in self.hits if p == path)

    def serve(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?", 1)[0]
        with self.lock:
            self.hits.append((path, dict(h.headers)))
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
            default = self.fallback or (404, {"errors": ["Not found: " + path]})
            route = self.routes.get(path, default)
            if isinstance(route, list):
                route = route.pop(0) if len(route) > 1 else route[0]
        # In flight = from the request's arrival until its answer starts: the count drops
        # before the first byte goes out, or a client that already has its answer could send
        # its next request before this thread counts down, and the bound would read one high.
        try:
            if self.delay_s:
                time.sleep(self.delay_s)
        finally:
            with self.lock:
                self.inflight -= 1
        if callable(route):
            route(h)
            return
        status, body, *rest = route
        headers = rest[0] if rest else {}
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", headers.pop("Content-Type", "application/json; charset=UTF-8"))
        h.send_header("Content-Length", str(len(raw)))
        for k, v in headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(raw)


@contextmanager
def fake_flink() -> Iterator[FakeFlink]:
    fake = FakeFlink()
    thread = threading.Thread(target=fake.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()


def cut_off(declared: int, body: bytes) -> Callable[[BaseHTTPRequestHandler], None]:
    """An answer that promises ``declared`` bytes and closes the connection after ``body``."""

    def write(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(declared))
        h.end_headers()
        h.wfile.write(body)
        h.wfile.flush()
        h.close_connection = True

    return write


def slow(seconds: float, body: Any) -> Callable[[BaseHTTPRequestHandler], None]:
    def write(h: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        raw = json.dumps(body).encode()
        h.send_response(200)
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    return write
