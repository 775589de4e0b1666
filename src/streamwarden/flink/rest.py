"""A small Flink REST client on the standard library: urllib with an ssl context, auth read from
environment variables named in ``streamwarden.yaml``, a deadline per request (for the whole
answer, not per read: a server that drips a byte a second cannot stretch it), retries with
exponential backoff for idempotent GETs, caps on the size and the nesting depth of an answer, and
a bounded thread pool. The transport (the deadline, no redirect) and the reading of a server's
JSON are ``streamwarden.core.serverhttp``'s, shared with the OPA server's client.

Secrets never leave this module: errors carry no header, no token and no password, and any text
taken from a response (an HTML proxy page that echoes headers, say) is scrubbed of them
(``streamwarden.core.secrets``: scrubbed first, then cut).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from streamwarden.core import secrets as _secrets
from streamwarden.core.serverhttp import (
    INFLATE_WBITS,
    TOO_DEEP,
    Deadline,
    InflateError,
    inflate_capped,
    loads_server_json,
    opener,
    too_deep,
)

DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_RETRIES = 2
DEFAULT_CONCURRENCY = 8
DEFAULT_BACKOFF_S = 0.2
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
MAX_JSON_DEPTH = 64  # Flink's answers nest about 8 deep
_RETRY_STATUS = frozenset({500, 502, 503, 504})
_SNIPPET = 120
_ERROR_LINE = 300

T = TypeVar("T")
R = TypeVar("R")


class FlinkConfigError(Exception):
    """The environment's flink section cannot be used (a missing variable, an unreadable certificate)."""


class RestError(Exception):
    """A request that gave no usable JSON. ``kind`` is one of: unreachable, timeout, unauthorized,
    not_found, http (another 4xx/5xx), not_json, too_large, too_deep, truncated, tls, shape (JSON
    that is not what the endpoint answers). The message names the URL
    (without credentials) and never a secret."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.message = message


@dataclass
class RestSettings:
    rest_url: str
    timeout_s: float = DEFAULT_TIMEOUT_MS / 1000
    retries: int = DEFAULT_RETRIES
    concurrency: int = DEFAULT_CONCURRENCY
    backoff_s: float = DEFAULT_BACKOFF_S
    max_bytes: int = MAX_RESPONSE_BYTES
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False)


def display_url(url: str) -> str:
    """The URL without user info (``https://user:pw@host`` -> ``https://host``); a URL that does
    not parse (a server's redirect to port 99999999, a broken IPv6 literal) is named as such."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "a URL that does not parse"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")


def settings_from_env(flink_env: dict[str, Any], root: Path, environ: dict[str, str] | None = None) -> RestSettings:
    """Build the client settings from ``environments.<name>.flink`` (timeout already in ms).
    Raises FlinkConfigError with a message that names variables and files, never their values."""
    env = os.environ if environ is None else environ
    url = str(flink_env.get("rest_url") or "").strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FlinkConfigError(f"flink.rest_url must be an http:// or https:// URL, got {display_url(url)!r}")
    headers = {"Accept": "application/json", "User-Agent": "streamwarden"}
    secrets: list[str] = []
    if parts.username or parts.password:
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password or "")
        secrets += [s for s in (password,) if s]
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    auth = flink_env.get("auth") or {}
    if auth.get("bearer_token_env"):
        token = _from_env(env, str(auth["bearer_token_env"]), "auth.bearer_token_env")
        secrets.append(token)
        headers["Authorization"] = f"Bearer {token}"
    elif auth.get("basic"):
        basic = auth["basic"]
        user = _from_env(env, str(basic.get("username_env")), "auth.basic.username_env")
        password = _from_env(env, str(basic.get("password_env")), "auth.basic.password_env")
        secrets.append(password)
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    if "Authorization" in headers:
        secrets.append(headers["Authorization"].split(" ", 1)[1])
    secrets += _secrets.url_secrets(url)
    _secrets.register(*secrets)  # every later message of this process is scrubbed of them too
    timeout_ms = flink_env.get("timeout")
    return RestSettings(
        rest_url=urllib.parse.urlunsplit((parts.scheme, _netloc(parts), parts.path.rstrip("/"), "", "")),
        timeout_s=(int(timeout_ms) if isinstance(timeout_ms, int) and timeout_ms > 0 else DEFAULT_TIMEOUT_MS) / 1000,
        retries=_count(flink_env.get("retries"), DEFAULT_RETRIES, 0),
        concurrency=_count(flink_env.get("concurrency"), DEFAULT_CONCURRENCY, 1),
        headers=headers,
        secrets=tuple(s for s in secrets if s),
        ssl_context=_ssl_context(flink_env, root) if parts.scheme == "https" else None,
    )


def _count(value: Any, default: int, minimum: int) -> int:
    return max(minimum, value) if isinstance(value, int) and not isinstance(value, bool) else default


def _netloc(parts: urllib.parse.SplitResult) -> str:
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{parts.port}" if parts.port else host


def _from_env(env: Any, name: str, what: str) -> str:
    value = env.get(name)
    if not value:
        raise FlinkConfigError(f"environment variable {name} (flink.{what}) is not set")
    return str(value)


def _ssl_context(flink_env: dict[str, Any], root: Path) -> ssl.SSLContext:
    ca = flink_env.get("ca_file")
    cert = flink_env.get("client_cert")
    key = flink_env.get("client_key")
    try:
        ctx = ssl.create_default_context(cafile=str(root / ca) if ca else None)
    except (OSError, ssl.SSLError) as exc:
        raise FlinkConfigError(f"cannot load flink.ca_file {ca}: {_os_reason(exc)}") from None
    if cert:
        try:
            ctx.load_cert_chain(str(root / cert), str(root / key) if key else None)
        except (OSError, ssl.SSLError) as exc:
            raise FlinkConfigError(f"cannot load flink.client_cert {cert}: {_os_reason(exc)}") from None
    return ctx


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


class FlinkRestClient:
    """GET JSON from one Flink REST endpoint; ``map`` runs calls concurrently with a bound."""

    def __init__(self, settings: RestSettings, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.url = display_url(settings.rest_url)
        self._sleep = sleep
        self._pool = ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="flink-rest")
        self._opener = opener(settings.ssl_context)
        self._lock = threading.Lock()
        self.requests = 0  # GETs sent so far, attempts included

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> FlinkRestClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn`` over ``items`` with at most ``concurrency`` calls at a time, results in order.
        ``fn`` must not raise (wrap results): this is for fan-out, not for error handling."""
        return list(self._pool.map(fn, items))

    def get_json(self, path: str) -> Any:
        """GET ``path`` (relative to rest_url) and parse JSON. Retries connection errors and
        500/502/503/504 with exponential backoff; raises RestError."""
        last: RestError | None = None
        for attempt in range(self.settings.retries + 1):
            if attempt:
                self._sleep(self.settings.backoff_s * (2 ** (attempt - 1)))
            try:
                return self._get_once(path)
            except RestError as exc:
                last = exc
                if not _retryable(exc):
                    raise
        assert last is not None
        if self.settings.retries:
            raise RestError(last.kind, f"{last.message} (after {self.settings.retries + 1} attempts)", last.status)
        raise last

    def _get_once(self, path: str) -> Any:
        url = self.settings.rest_url + path
        shown = self.url + path.split("?", 1)[0]
        req = urllib.request.Request(url, headers=self.settings.headers, method="GET")
        with self._lock:
            self.requests += 1
        watch = Deadline(self.settings.timeout_s)
        req.streamwarden_deadline = watch  # type: ignore[attr-defined]  # read by the Deadline*Handler
        try:
            try:
                with self._opener.open(req, timeout=self.settings.timeout_s) as resp:
                    body = self._read(resp, shown)
                    ctype = resp.headers.get("Content-Type", "")
            except urllib.error.HTTPError as exc:
                # an error's body is read under the same deadline: a server that drips it one
                # byte at a time must not hold the run past the timeout
                raise self._http_error(exc, shown) from None
            finally:
                watch.cancel()
        except Exception as exc:
            if watch.fired:  # the deadline closed the socket: whatever broke, it is the timeout
                raise self._timed_out(shown) from None
            raise self._request_error(exc, shown) from None
        if watch.fired:
            raise self._timed_out(shown)
        return self._parse(body, ctype, shown)

    def _timed_out(self, shown: str) -> RestError:
        return RestError("timeout", f"no answer from {shown} within {self._timeout_text()}")

    def _request_error(self, exc: Exception, shown: str) -> RestError:
        if isinstance(exc, RestError):
            return exc
        if isinstance(exc, urllib.error.HTTPError):
            return self._http_error(exc, shown)
        if isinstance(exc, http.client.IncompleteRead):
            return RestError("truncated", f"{shown} closed the connection after {len(exc.partial)} bytes")
        if isinstance(exc, TimeoutError):
            return self._timed_out(shown)
        if isinstance(exc, urllib.error.URLError):
            return self._url_error(exc.reason, shown)
        if isinstance(exc, ssl.SSLError):
            return RestError("tls", f"TLS error talking to {shown}: {_os_reason(exc)}")
        if isinstance(exc, (ConnectionError, http.client.HTTPException, OSError)):
            return self._url_error(exc, shown)
        raise exc

    def _read(self, resp: Any, shown: str) -> bytes:
        cap = self.settings.max_bytes
        body: bytes = resp.read(cap + 1)
        if len(body) > cap:
            raise RestError("too_large", f"{shown} answered more than {_size_text(cap)}; refusing to read it")
        declared = str(resp.headers.get("Content-Length") or "")
        if declared.isdigit() and int(declared) > len(body):
            raise RestError("truncated", f"{shown} closed the connection after {len(body)} of {declared} bytes")
        return self._decoded(body, str(resp.headers.get("Content-Encoding") or ""), shown)

    def _decoded(self, body: bytes, encoding: str, shown: str) -> bytes:
        """Flink answers plain JSON and no Accept-Encoding is sent; a proxy in front of it may still
        compress. gzip and deflate are inflated under the same size cap (a small bomb is refused,
        never inflated whole); any other coding is named instead of quoting its compressed bytes."""
        coding = encoding.strip().lower()
        if coding in ("", "identity"):
            return body
        if coding not in INFLATE_WBITS:
            named = _secrets.cut(coding, 40)
            raise RestError("not_json", f"{shown} answered with Content-Encoding {named}, which is not read")
        cap = self.settings.max_bytes
        try:
            return inflate_capped(body, coding, cap)
        except InflateError as exc:
            if exc.kind == "corrupt":
                raise RestError("not_json", f"{shown} answered a {coding} body that does not inflate") from None
            too_much = f"{shown} answered more than {_size_text(cap)} once inflated; refusing to read it"
            raise RestError("too_large", too_much) from None

    def _parse(self, body: bytes, ctype: str, shown: str) -> Any:
        try:
            doc = loads_server_json(body.decode("utf-8"))
        except RecursionError:
            doc = TOO_DEEP
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            kind = "an HTML page" if "html" in ctype.lower() or body.lstrip()[:1] == b"<" else "invalid JSON"
            detail = f" ({exc.msg} at byte {exc.pos} of {len(body)})" if isinstance(exc, json.JSONDecodeError) else ""
            raise RestError(
                "not_json",
                f"{shown} answered {kind}{detail}, not Flink JSON: {self._snippet(body)}"
                + ("; is a proxy or login page in front of Flink?" if kind == "an HTML page" else ""),
            ) from None
        if doc is TOO_DEEP or too_deep(doc, MAX_JSON_DEPTH):
            raise RestError("too_deep", f"{shown} answered JSON nested more than {MAX_JSON_DEPTH} deep; refusing it")
        return doc

    def _http_error(self, exc: urllib.error.HTTPError, shown: str) -> RestError:
        status = exc.code
        try:
            body = exc.read(64 * 1024) if exc.fp is not None else b""
        except OSError:
            body = b""
        detail = _secrets.cut(_flink_errors(body), _ERROR_LINE, self.settings.secrets) or self._snippet(body)
        suffix = f": {detail}" if detail else ""
        if status in (401, 403):
            what = "unauthorized" if status == 401 else "forbidden"
            hint = "check the token or credentials named under flink.auth"
            return RestError("unauthorized", f"{shown} answered HTTP {status} ({what}); {hint}", status)
        if 300 <= status < 400:
            target = display_url(exc.headers.get("Location", "") or "") if exc.headers else ""
            return RestError(
                "http",
                f"{shown} answered HTTP {status}, a redirect to {target or 'another location'}; redirects are not "
                "followed (credentials would go along): point flink.rest_url at the Flink REST endpoint itself",
                status,
            )
        if status == 404:
            return RestError("not_found", f"{shown} answered HTTP 404 (not found){suffix}", status)
        return RestError("http", f"{shown} answered HTTP {status}{suffix}", status)

    def _url_error(self, reason: Any, shown: str) -> RestError:
        if isinstance(reason, TimeoutError):
            return self._timed_out(shown)
        if isinstance(reason, ssl.SSLError):
            return RestError("tls", f"TLS error talking to {shown}: {_os_reason(reason)}")
        text = _os_reason(reason) if isinstance(reason, BaseException) else str(reason)
        return RestError("unreachable", f"cannot reach {self.url} ({text})")

    def _timeout_text(self) -> str:
        ms = round(self.settings.timeout_s * 1000)
        return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"

    def _snippet(self, body: bytes) -> str:
        text = " ".join(body[:2048].decode("utf-8", "replace").split())
        return _secrets.cut(text, _SNIPPET, self.settings.secrets)

    def scrub(self, text: str) -> str:
        return _secrets.scrub(text, self.settings.secrets)


def _size_text(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def _retryable(exc: RestError) -> bool:
    """Connection failures, cut-off answers and 500/502/503/504 are worth another try; a timeout
    is not (it would multiply the wait), nor is any other answer."""
    return exc.kind in ("unreachable", "truncated") or (exc.kind == "http" and exc.status in _RETRY_STATUS)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value (and recognisable credential) replaced by ``***``."""
    return _secrets.scrub(text, secrets)


def _flink_errors(body: bytes) -> str:
    """Flink's error body ``{"errors": ["..."]}``: the first line of the first error."""
    try:
        doc = loads_server_json(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ""
    errors = doc.get("errors") if isinstance(doc, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], str):
        return errors[0].strip().splitlines()[0] if errors[0].strip() else ""
    return ""
