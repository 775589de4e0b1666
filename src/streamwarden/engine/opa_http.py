"""The OPA server's REST API, as ``--engine opa`` uses it: opa-python-client (the ``opa`` extra)
on a transport streamwarden bounds.

The client's ``requests`` session gets ``OpaAdapter`` (on ``boundedhttp.BoundedAdapter``) for
``http://`` and ``https://`` in place of its own (whose retries would repeat a request the deadline
already ended, and stretch it). For every request the adapter:

- reads the answer itself, under one deadline for the whole exchange (``serverhttp.Deadline``:
  connecting, the TLS handshake, sending, the headers and every byte of the body; when it passes,
  the socket is shut down, so a server that drips one byte at a time cannot stretch it, where a
  socket timeout only bounds one read) and a cap on its size (16 MiB; 64 MiB for the policy list,
  which carries every module's syntax tree);
- parses it with the server-JSON reader (``serverhttp.loads_server_json``: no NaN, no out-of-range
  integer, no lone surrogate) and a depth limit: the client's ``response.json()`` returns that
  document, it never decodes a body itself;
- makes one attempt, follows no redirect (the token would go along) and answers every status that
  is not a success with an ``OpaHttpError`` (the server's own message, scrubbed), so the client's
  error paths never read a body;
- verifies TLS against the system's CAs (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` apply) or the bundle
  ``REQUESTS_CA_BUNDLE`` names, not against a bundle of the client's.

The token (``STREAMWARDEN_OPA_TOKEN``) and the token-like parts of the URL (``secrets.url_secrets``)
are registered with the scrubber when the client is made: every later message of the process is
scrubbed of them, an error body that quotes the token included, and so is the URL wherever it is
shown. The session never reads ``~/.netrc``: it sends the bearer token or nothing.
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import requests
import urllib3
from opa_client.opa import OpaClient  # type: ignore[import-untyped,unused-ignore]
from requests.auth import AuthBase

from streamwarden.core import secrets
from streamwarden.core.boundedhttp import BoundedAdapter, failure_of, read_capped
from streamwarden.core.serverhttp import TOO_DEEP, loads_server_json, too_deep

DEFAULT_TIMEOUT_S = 30.0
MAX_ANSWER_BYTES = 16 * 1024 * 1024  # a decision, a policy, a status: as much as Flink REST's answers
MAX_LIST_BYTES = 64 * 1024 * 1024  # the policy list: every module's source and syntax tree
MAX_JSON_DEPTH = 64
_ERROR_BYTES = 64 * 1024
_ERROR_LINE = 300
_HEADERS = {
    "Accept": "application/json",
    "User-Agent": "streamwarden",
    "Accept-Encoding": "identity",  # the cap counts the bytes that are parsed: nothing to inflate
    # a connection per exchange: with one attempt, a kept-alive connection the server closed
    # between two requests would fail the second
    "Connection": "close",
}

T = TypeVar("T")


class OpaHttpError(Exception):
    """A request that gave no usable answer. ``kind``: unreachable, timeout, http, too_large,
    truncated, not_json, too_deep, tls, client (the client could not make the request or use a
    success answer). ``message`` names the server (scrubbed), never a secret."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Limits:
    """What one answer may be: ``cap`` bytes, containers nested ``depth`` deep (None: only
    ``json.loads``' own recursion limit)."""

    cap: int
    depth: int | None


# a decision nests a few levels; the policy list carries syntax trees, nested as deep as the policies
ANSWER = Limits(MAX_ANSWER_BYTES, MAX_JSON_DEPTH)
POLICY_LIST = Limits(MAX_LIST_BYTES, None)

_LIMITS: ContextVar[Limits] = ContextVar("streamwarden_opa_limits", default=ANSWER)


@contextmanager
def reading(limits: Limits) -> Iterator[None]:
    """The requests made in this block are read with ``limits``."""
    token = _LIMITS.set(limits)
    try:
        yield
    finally:
        _LIMITS.reset(token)


class _Answer(requests.Response):
    """A success answer whose body was read under the deadline and the cap and parsed by the
    server-JSON reader: ``json()`` is that document (None for an empty body)."""

    def __init__(self, response: requests.Response, body: bytes, doc: Any) -> None:
        super().__init__()
        self.__dict__.update(response.__dict__)
        self._content = body
        self._content_consumed = True
        self.doc = doc

    def json(self, **kwargs: Any) -> Any:
        return self.doc


class OpaAdapter(BoundedAdapter):
    """The transport of one OPA server. ``root`` is how the client spells the server's base URL
    (``scheme://host:port[/prefix]``), ``shown`` how messages name it (the URL as given, scrubbed)."""

    def __init__(self, root: str, shown: str, timeout_s: float, tls: ssl.SSLContext | None) -> None:
        self.root = root
        self.shown = shown
        self.tls = tls
        super().__init__(timeout_s)

    def refused_proxy(self, proxy: str) -> Exception:
        shown = secrets.scrub(proxy, secrets.url_secrets(proxy))
        return OpaHttpError("unreachable", f"cannot reach {self.shown} through the proxy {shown}: use an HTTP proxy")

    # TLS: the context's CAs, never the client's bundle (requests' default) nor one of its own
    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        host, pool = super().build_connection_pool_key_attributes(request, verify, cert)
        if host.get("scheme") == "https":
            pool = {"cert_reqs": "CERT_REQUIRED", **({"ssl_context": self.tls} if self.tls is not None else {})}
        return host, pool

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        conn.cert_reqs = "CERT_REQUIRED"
        conn.ca_certs = conn.ca_cert_dir = None

    # -- one exchange -------------------------------------------------------------------------
    def own_error(self, exc: Exception) -> bool:
        return isinstance(exc, OpaHttpError)

    def shown_url(self, url: str) -> str:
        if url.startswith(self.root):
            return self.shown + secrets.scrub(url[len(self.root) :])
        return secrets.scrub(url)

    def answer(self, response: requests.Response, shown: str) -> _Answer:
        limits = _LIMITS.get()
        status = response.status_code
        if 300 <= status < 400:
            raise OpaHttpError(
                "http",
                f"{shown} answered HTTP {status}, a redirect; redirects are not followed (the token would go "
                "along): give --opa-url the server itself",
                status,
            )
        if not 200 <= status < 300:
            try:
                body = read_capped(response.raw, _ERROR_BYTES)[:_ERROR_BYTES]
            except (OSError, urllib3.exceptions.HTTPError):
                body = b""
            raise self._http_error(status, body, shown)
        declared = str(response.headers.get("Content-Length") or "")
        too_large = declared.isdigit() and int(declared) > limits.cap  # refused before a byte is read
        body = b"" if too_large else read_capped(response.raw, limits.cap)
        if too_large or len(body) > limits.cap:
            size = f"{limits.cap // (1024 * 1024)} MiB"
            raise OpaHttpError("too_large", f"{shown} answered more than {size}; refusing to read it")
        return _Answer(response, body, self._parse(body, shown, limits.depth))

    def _parse(self, body: bytes, shown: str, depth: int | None) -> Any:
        if not body.strip():
            return None
        try:
            doc = loads_server_json(body.decode("utf-8"))
        except RecursionError:
            doc = TOO_DEEP
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise OpaHttpError("not_json", f"{shown} answered something that is not JSON: {_snippet(body)}") from None
        if doc is TOO_DEEP or (depth is not None and too_deep(doc, depth)):
            raise OpaHttpError("too_deep", f"{shown} answered JSON nested too deep; refusing it")
        return doc

    def _http_error(self, status: int, body: bytes, shown: str) -> OpaHttpError:
        detail = secrets.cut(_opa_errors(body), _ERROR_LINE) or _snippet(body)
        suffix = f": {detail}" if detail else ""
        if status in (401, 403):
            return OpaHttpError(
                "http", f"{shown} answered HTTP {status}{suffix}; check the token in STREAMWARDEN_OPA_TOKEN", status
            )
        return OpaHttpError("http", f"{shown} answered HTTP {status}{suffix}", status)

    def request_error(self, exc: Exception, shown: str) -> OpaHttpError:
        failure = failure_of(exc, _ERROR_LINE)
        if failure.kind == "truncated":
            of = f" of {failure.announced}" if failure.announced is not None else ""
            return OpaHttpError("truncated", f"{shown} closed the connection after {failure.got}{of} bytes")
        if failure.kind == "timeout":
            return self.timed_out(shown)
        if failure.kind == "tls":
            return OpaHttpError("tls", f"TLS error talking to {self.shown}: {failure.detail}")
        return OpaHttpError("unreachable", f"cannot reach {self.shown} ({failure.detail})")

    def timed_out(self, shown: str) -> OpaHttpError:
        return OpaHttpError("timeout", f"no whole answer from {shown} within {self.timeout_s:g}s")


class _NoNetrc(AuthBase):
    """The session's own headers (the bearer token, or none) and nothing else: with an ``auth``
    set, requests does not look up ``~/.netrc`` for credentials to send."""

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        return r


class OpaHttp:
    """One OPA server: ``base`` is ``http(s)://host[:port][/prefix]`` (the API is under ``/v1``)."""

    def __init__(self, base: str, token: str | None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.base = base.rstrip("/")
        self.timeout_s = timeout_s
        found = [*secrets.url_secrets(self.base), *([token] if token else [])]
        secrets.register(*found)  # every later message of this process is scrubbed of them too
        self.shown = secrets.scrub(self.base, found)
        parts = urlsplit(self.base)
        tls = parts.scheme == "https"
        host = f"[{parts.hostname}]" if parts.hostname and ":" in parts.hostname else str(parts.hostname)
        prefix = parts.path.strip("/")
        self.client: Any = OpaClient(
            host=host,
            port=parts.port or (443 if tls else 80),
            version=f"{prefix}/v1" if prefix else "v1",
            ssl=tls,
            headers=dict(_HEADERS),
            token=token,
            retries=0,
            timeout=timeout_s,
        )
        root = self.client.root_url.removesuffix("/v1")
        adapter = OpaAdapter(root, self.shown, timeout_s, _tls_context() if tls else None)
        self.session: requests.Session = self.client._session
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.max_redirects = 0  # the adapter refuses a redirect; the session would not follow one either
        self.session.auth = _NoNetrc()

    # -- the calls the engine makes -----------------------------------------------------------
    def policy_ids(self) -> list[str]:
        """``GET /v1/policies`` through the client's session (the client's own call reads ids off
        any shape of answer): the ids of the policies the server holds."""

        def listed() -> Any:
            with reading(POLICY_LIST):
                return self.session.get(f"{self.client.root_url}/policies", timeout=self.timeout_s).json()

        body = self._call("/v1/policies", listed)
        found = body.get("result") if isinstance(body, dict) else None
        if not isinstance(found, list):
            raise OpaHttpError("not_json", f"{self.shown}/v1/policies answered JSON that is not a policy list")
        return [p["id"] for p in found if isinstance(p, dict) and isinstance(p.get("id"), str)]

    def policy_source(self, pid: str) -> str | None:
        """The module's text as the server holds it, or None (not there)."""
        try:
            body = self._call(f"/v1/policies/{pid}", lambda: self.client.get_policy(_quote(pid)))
        except OpaHttpError as exc:
            if exc.status == 404:
                return None
            raise
        raw = body.get("result") if isinstance(body, dict) else None
        raw = raw.get("raw") if isinstance(raw, dict) else None
        return raw if isinstance(raw, str) else None

    def put_policy(self, pid: str, source: str) -> None:
        # rego_compat off: the module is uploaded as written, never rewritten by the client
        self._call(
            f"/v1/policies/{pid}", lambda: self.client.update_policy_from_string(source, _quote(pid), rego_compat=False)
        )

    def delete_policy(self, pid: str) -> None:
        self._call(f"/v1/policies/{pid}", lambda: self.client.delete_policy(_quote(pid)))

    def put_data(self, path: str, value: dict[str, Any]) -> None:
        self._call(f"/v1/data/{path}", lambda: self.client.update_or_create_data(value, path))

    def query(self, package: str, rule: str, input_doc: dict[str, Any]) -> tuple[bool, Any]:
        """``POST /v1/data/<package>/<rule>`` with ``input``: (defined, value). A server that
        answers without ``result`` (``{}``) says the document is undefined there."""
        path = f"/v1/data/{package.replace('.', '/')}/{rule}"
        body = self._call(path, lambda: self.client.query_rule(input_doc, package, rule))
        if not isinstance(body, dict):
            raise OpaHttpError("not_json", f"{self.shown}{path} answered JSON that is not an object")
        if "result" not in body:
            return False, None
        return True, body["result"]

    def _call(self, path: str, call: Callable[[], T]) -> T:
        """One call of the client; every failure an OpaHttpError."""
        try:
            return call()
        except OpaHttpError:
            raise
        except Exception as exc:  # a request it could not make, or a success answer it could not use
            why = secrets.cut(f"{type(exc).__name__}: {exc}", _ERROR_LINE)
            raise OpaHttpError("client", f"the OPA client failed on {self.shown}{path}: {why}") from None


def _snippet(body: bytes) -> str:
    return secrets.cut(" ".join(body[:2048].decode("utf-8", "replace").split()), 120)


def _opa_errors(body: bytes) -> str:
    """OPA's error body ``{"code", "message", "errors": [{"message"}]}`` as one line."""
    try:
        doc = loads_server_json(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ""
    if not isinstance(doc, dict):
        return ""
    message = doc.get("message") if isinstance(doc.get("message"), str) else ""
    errors: list[Any] = doc["errors"] if isinstance(doc.get("errors"), list) else []
    details = "; ".join(e["message"] for e in errors if isinstance(e, dict) and isinstance(e.get("message"), str))
    return " ".join(f"{message}{': ' + details if details else ''}".split())


def _tls_context() -> ssl.SSLContext:
    """The system's CAs (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` apply), or the bundle
    ``REQUESTS_CA_BUNDLE`` names."""
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or None
    try:
        return ssl.create_default_context(cafile=bundle)
    except (OSError, ssl.SSLError) as exc:
        raise OpaHttpError("tls", f"cannot load REQUESTS_CA_BUNDLE {bundle}: {exc}") from None


def _quote(pid: str) -> str:
    """A policy id as a URL path (the client puts it in the URL as given)."""
    return quote(pid, safe="/")
