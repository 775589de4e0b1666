"""A ``requests`` transport with streamwarden's bounds, for the clients that bring their own
``requests`` session: opa-python-client (``engine.opa_http``), PyIceberg's REST catalog
(``iceberg.rest_http``) and the webhook posts of ``evidence --notify`` (``verbs.notify``). Flink
REST has its own transport on urllib (``serverhttp``).

``BoundedAdapter`` is mounted on the client's session for ``http://`` and ``https://``. For every
request it:

- reads the whole answer itself (``stream``), under one deadline for the whole exchange
  (``serverhttp.Deadline``: connecting, the TLS handshake, sending, the headers and every byte of
  the body; every socket of the exchange, a proxy's included, is given to it, and when it passes
  the socket is shut down, so a server that drips one byte at a time cannot stretch it) and a cap
  on its size, counted in the bytes as they come (``read_capped``);
- makes one attempt (a retry would start a second deadline) and follows no redirect: a client's
  credentials would go along;
- reaches a server through a proxy from the environment only when it is an HTTP proxy (a SOCKS
  proxy's sockets cannot be watched).

What an answer becomes (a parsed document, a response with its body, an error) and the words of
each error are the subclass's: ``answer``, ``request_error``, ``timed_out``, ``refused_proxy``.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from streamwarden.core import secrets
from streamwarden.core.serverhttp import Deadline

CHUNK = 256 * 1024

_WATCH: ContextVar[Deadline | None] = ContextVar("streamwarden_http_deadline", default=None)


# -- the connections: every socket of an exchange is given to its deadline ----------------------
def _watch(sock: object) -> None:
    watch = _WATCH.get()
    if watch is not None and isinstance(sock, socket.socket):
        watch.attach(sock)


class _WatchedConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _watch(sock)  # from the TCP connection on: a TLS handshake or a proxy tunnel may drip too
        return sock

    def connect(self) -> None:
        super().connect()
        _watch(self.sock)  # the TLS socket that replaced the plain one

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watch(self.sock)  # a connection kept alive from an earlier exchange
        super().request(*args, **kwargs)


class _WatchedTLSConnection(_WatchedConnection, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _WatchedConnection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedTLSConnection


POOLS: dict[str, type[HTTPConnectionPool]] = {"http": _Pool, "https": _TLSPool}


class BoundedAdapter(HTTPAdapter):
    """The transport of one server, with a deadline of ``timeout_s`` for each exchange."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        super().__init__(max_retries=0)  # one attempt: a retry would start a second deadline

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        """A proxy from the environment (``HTTPS_PROXY``, ``NO_PROXY``...): its connections are
        watched as direct ones are. A SOCKS proxy's are not, so it is refused."""
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not isinstance(manager, urllib3.ProxyManager):
            raise self.refused_proxy(proxy)
        manager.pool_classes_by_scheme = POOLS
        return manager

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        shown = self.shown_url(request.url or "")
        watch = Deadline(self.timeout_s)
        bound = _WATCH.set(watch)
        response: requests.Response | None = None
        try:
            try:
                # the body is read here (stream), under the deadline; the timeout bounds each
                # socket operation, the deadline all of them
                response = super().send(
                    request, stream=True, timeout=self.timeout_s, verify=verify, cert=cert, proxies=dict(proxies or {})
                )
                answer = self.answer(response, shown)
            finally:
                _WATCH.reset(bound)
                watch.cancel()
            if watch.fired:
                raise self.timed_out(shown)
        except Exception as exc:
            if response is not None:  # its connection may hold unread bytes: not kept alive
                response.raw.close()
                response.raw.release_conn()
            if watch.fired:  # the deadline closed the socket: whatever broke, it is the timeout
                raise self.timed_out(shown) from None
            if self.own_error(exc):
                raise
            raise self.request_error(exc, shown) from None
        answer.raw.release_conn()
        return answer

    # -- what a subclass says -----------------------------------------------------------------
    def shown_url(self, url: str) -> str:
        """How a message names ``url`` (scrubbed)."""
        raise NotImplementedError

    def answer(self, response: requests.Response, shown: str) -> requests.Response:
        """The response the client gets, its body read (``read_capped``) and checked; a redirect
        or an answer too large is an error."""
        raise NotImplementedError

    def own_error(self, exc: Exception) -> bool:
        """Whether ``exc`` is one of the subclass's errors, raised as it is."""
        raise NotImplementedError

    def request_error(self, exc: Exception, shown: str) -> Exception:
        raise NotImplementedError

    def timed_out(self, shown: str) -> Exception:
        raise NotImplementedError

    def refused_proxy(self, proxy: str) -> Exception:
        raise NotImplementedError


def read_capped(raw: Any, cap: int) -> bytes:
    """At most ``cap + 1`` bytes of a body, as they are sent (not decoded)."""
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk: bytes = raw.read(min(CHUNK, cap + 1 - size), decode_content=False)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps: causes, contexts, urllib3's ``reason``, exceptions in ``args``."""
    seen: set[int] = set()
    pending = [exc]
    while pending and len(seen) < 50:
        cur = pending.pop(0)
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        nested = [cur.__cause__, cur.__context__, getattr(cur, "reason", None), *cur.args]
        pending += [e for e in nested if isinstance(e, BaseException)]


def is_timeout(exc: BaseException) -> bool:
    # urllib3's NewConnectionError (a refused connection, an unknown host) is a ConnectTimeoutError
    # by inheritance only
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return False
    return isinstance(exc, (TimeoutError, urllib3.exceptions.TimeoutError))


def truncated(causes_of: list[BaseException]) -> tuple[int, int | None] | None:
    """(bytes received, bytes announced) when the server closed the connection mid-answer."""
    for cause in causes_of:
        if isinstance(cause, http.client.IncompleteRead):
            got = cause.partial if isinstance(cause.partial, int) else len(cause.partial)
            return got, (got + cause.expected if isinstance(cause.expected, int) else None)
    return None


@dataclass(frozen=True)
class Failure:
    """Why a request got no usable answer, told from what ``requests`` raised (its causes):
    ``kind`` is ``truncated`` (``got`` bytes of ``announced``), ``timeout``, ``tls`` or
    ``unreachable``; ``detail`` (tls, unreachable) is the reason, scrubbed and cut. Each client
    (OPA, the REST catalog, notify) words it for its own reader."""

    kind: str
    detail: str = ""
    got: int = 0
    announced: int | None = None


def failure_of(exc: Exception, limit: int = 200) -> Failure:
    found = list(causes(exc))
    cut = truncated(found)
    if cut is not None:
        return Failure("truncated", got=cut[0], announced=cut[1])
    if any(is_timeout(c) for c in found):
        return Failure("timeout")
    for cause in found:
        if isinstance(cause, ssl.SSLError):
            why = str(cause.reason or cause)
            if isinstance(cause, ssl.SSLCertVerificationError) and cause.verify_message:
                why += f" ({cause.verify_message})"  # what failed: self-signed, a hostname mismatch...
            return Failure("tls", secrets.cut(why, limit))
    failed = next((c for c in found if isinstance(c, OSError) and c.strerror), None)
    text = failed.strerror.lower() if failed is not None and failed.strerror else str(exc) or type(exc).__name__
    return Failure("unreachable", secrets.cut(text, limit))
