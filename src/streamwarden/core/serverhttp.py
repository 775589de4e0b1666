"""What every client of a server (Flink REST, an OPA server) shares: a deadline for a whole
exchange (``Deadline``: connecting, the TLS handshake, sending, the headers and every byte of the
body; a server that drips one byte at a time cannot stretch it, where a socket timeout only bounds
one read), and the reading of a server's JSON (``loads_server_json``: no NaN, no out-of-range
integer, no lone surrogate; ``too_deep``). And Flink REST's transport: urllib with no redirect
followed (credentials would go along) and the deadline (``opener``).

The size cap, the retries and the messages are each client's (``flink.rest``; ``engine.opa_http``,
which gives the deadline the sockets of opa-python-client's session).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import re
import socket
import ssl
import threading
import urllib.request
import zlib
from collections.abc import Callable, Iterable
from typing import Any


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """urllib would follow a redirect to any host with the Authorization header: refuse instead."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


TOO_DEEP = object()  # what a parse deeper than Python recurses gives (RecursionError)


def too_deep(doc: Any, limit: int) -> bool:
    """Whether ``doc`` nests containers more than ``limit`` deep (iteratively: no recursion)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


class Deadline:
    """A per-request deadline: when it passes, the request's socket is shut down, which ends a read
    that a dripping server would otherwise keep alive (a socket timeout only bounds one read)."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sock: Any = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def attach(self, sock: Any) -> None:
        with self._lock:
            self._sock = sock
            fired = self.fired
        if fired:
            shutdown(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sock = self._sock
        if sock is not None:
            shutdown(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def shutdown(sock: Any) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def deadline_connection(base: type[http.client.HTTPConnection], watch: Deadline | None) -> Any:
    class Connection(base):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            create: Callable[..., Any] = self._create_connection  # type: ignore[has-type]

            def create_and_watch(*a: Any, **kw: Any) -> Any:
                sock = create(*a, **kw)
                if watch is not None:  # from the TCP connection on: a TLS handshake may drip too
                    watch.attach(sock)
                return sock

            self._create_connection = create_and_watch

        def connect(self) -> None:
            super().connect()
            if watch is not None:
                watch.attach(self.sock)  # the TLS socket that replaced the plain one

    return Connection


class DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        watch = getattr(req, "streamwarden_deadline", None)
        return self.do_open(deadline_connection(http.client.HTTPConnection, watch), req)


class DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, context: ssl.SSLContext | None) -> None:
        super().__init__(context=context)
        self._ctx = context

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        watch = getattr(req, "streamwarden_deadline", None)
        return self.do_open(deadline_connection(http.client.HTTPSConnection, watch), req, context=self._ctx)


def loads_server_json(text: str) -> Any:
    """JSON from a server, as Java could have meant it: a non-finite number (``NaN``,
    ``Infinity``, ``1e999``) and an integer outside Java's ``long`` are null (a value no Flink
    field holds: the section's normalizer treats it as missing), and a lone surrogate escape
    (``"\\ud800"``) in a string is U+FFFD. No such value reaches the policies, the reports or a
    JSON document streamwarden prints."""
    doc = json.loads(text, parse_constant=_none, parse_float=_finite, parse_int=_java_long)
    return _valid_unicode(doc) if "\\u" in text else doc


def _none(_: str) -> None:
    return None


def _finite(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _java_long(text: str) -> int | None:
    if len(text.lstrip("-")) > 19:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str, a surrogate is always a lone one


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid_unicode(v) for v in value]
    return value


def opener(ssl_context: ssl.SSLContext | None = None) -> urllib.request.OpenerDirector:
    """An opener whose requests follow no redirect and honour the ``Deadline`` set on them as
    ``request.streamwarden_deadline`` (the environment's proxy settings apply)."""
    return urllib.request.build_opener(
        urllib.request.ProxyHandler(), NoRedirect(), DeadlineHTTPHandler(), DeadlineHTTPSHandler(ssl_context)
    )


INFLATE_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class InflateError(Exception):
    """``kind``: ``corrupt`` (the body does not inflate) or ``too_large`` (past the cap)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def inflate_capped(body: bytes, coding: str, cap: int) -> bytes:
    """``body`` inflated (``coding``: a key of ``INFLATE_WBITS``), at most ``cap`` bytes: a small
    bomb is refused once it passes the cap, never inflated whole. Shared by every reader of a
    compressed server answer or file (Flink REST, the REST catalog, previous metadata files)."""
    try:
        inflater = zlib.decompressobj(INFLATE_WBITS[coding])
        out = inflater.decompress(body, cap + 1)
    except zlib.error:
        raise InflateError("corrupt") from None
    if len(out) > cap or inflater.unconsumed_tail:
        raise InflateError("too_large")
    return out
