"""PyIceberg's REST catalog on streamwarden's bounded transport (``boundedhttp.BoundedAdapter``).

PyIceberg gives its ``requests`` session no timeout, retries nothing itself but follows redirects
with the session's ``Authorization`` header, and reads a whole answer into memory: a catalog that
drips a byte every few seconds held a run for ever, and one that answered gigabytes took them in
memory. :func:`install` (once per process) gives PyIceberg's REST catalog ``BoundedSession`` in
place of ``requests.Session`` (``RestAdapter`` from its first request: the OAuth token is fetched
while the session is built), routes its OAuth2 manager's ``requests.post`` through one, and wraps
``RestCatalog._create_session`` so that an adapter PyIceberg mounts later is replaced too. For
every request:

- it goes only to the origin (scheme, host, port) of the configured ``uri`` or
  ``oauth2-server-uri``: a ``/v1/config`` override naming another host sent the bearer token, or
  the client secret, there;
- one deadline for the whole exchange (``iceberg.timeout`` in ``streamwarden.yaml``, default
  30 s), one attempt, no redirect followed;
- at most ``MAX_ANSWER_BYTES`` read, counted as the bytes come; a ``gzip`` or ``deflate`` body is
  inflated under the same cap (an encoding streamwarden cannot bound is refused);
- JSON nested deeper than ``MAX_JSON_DEPTH`` is refused before PyIceberg parses it.

A SigV4 signing adapter that PyIceberg mounts for the catalog's URI keeps signing: the bounded
adapter replaces it and calls its ``add_headers``. The settings come from the catalog's
configuration, set by :func:`bounded` around ``load_catalog`` (never from a server's answer).
Every failure is a ``RestHttpError`` whose message names the URL scrubbed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter

from streamwarden.core import secrets
from streamwarden.core.boundedhttp import BoundedAdapter, failure_of, read_capped
from streamwarden.core.serverhttp import INFLATE_WBITS, InflateError, inflate_capped, too_deep

DEFAULT_TIMEOUT_S = 30.0
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # a table's metadata with its snapshot log may be tens of MiB
MAX_JSON_DEPTH = 256  # a schema's nested types: three JSON levels for each struct level


class RestHttpError(Exception):
    """A REST catalog exchange that gave no usable answer; the message is scrubbed."""


@dataclass(frozen=True)
class Settings:
    timeout_s: float = DEFAULT_TIMEOUT_S
    cap: int = MAX_ANSWER_BYTES
    # the scheme://host:port a request may go to: the configured uri's and oauth2-server-uri's
    # (empty: any); a server's answer (a /v1/config override of uri) cannot add one
    origins: frozenset[str] = frozenset()


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (the default port spelled out), "" when it has none."""
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        return ""
    host = (parts.hostname or "").lower()
    return f"{parts.scheme.lower()}://{host}:{port}" if host and port else ""


def origins_of(properties: Mapping[str, Any]) -> frozenset[str]:
    """Where a catalog configured with ``properties`` may be reached."""
    found = {origin(str(properties.get(key) or "")) for key in ("uri", "oauth2-server-uri")}
    return frozenset(o for o in found if o)


_SETTINGS: ContextVar[Settings | None] = ContextVar("streamwarden_rest_catalog", default=None)
_lock = threading.Lock()
_installed = False


@contextmanager
def bounded(settings: Settings) -> Iterator[None]:
    """The settings of the sessions the REST catalogs opened in this block make."""
    install()
    token = _SETTINGS.set(settings)
    try:
        yield
    finally:
        _SETTINGS.reset(token)


class BoundedSession(requests.Session):
    """A session whose every request goes through ``RestAdapter`` from its first one on (the
    OAuth token is fetched while PyIceberg builds the session)."""

    def __init__(self) -> None:
        super().__init__()
        settings = _SETTINGS.get() or Settings()  # outside bounded(): the defaults, never no bound
        self.mount("http://", RestAdapter(settings))
        self.mount("https://", RestAdapter(settings))


class _Requests:
    """``requests`` as PyIceberg's OAuth2 manager calls it (``requests.post``), on a bounded session."""

    def __getattr__(self, name: str) -> Any:
        return getattr(requests, name)

    @staticmethod
    def post(url: str, **kwargs: Any) -> requests.Response:
        with BoundedSession() as session:
            return session.post(url, **kwargs)


def install() -> None:
    """Put the bounded session in PyIceberg's REST catalog and its OAuth2 manager, and keep a
    signing adapter it mounts signing (idempotent, thread-safe)."""
    global _installed
    with _lock:
        if _installed:
            return
        import pyiceberg.catalog.rest as rest
        import pyiceberg.catalog.rest.auth as auth

        setattr(rest, "Session", BoundedSession)  # noqa: B010 (the name PyIceberg's module looks up)
        setattr(auth, "requests", _Requests())  # noqa: B010
        create = rest.RestCatalog._create_session

        def create_bounded(catalog: Any) -> requests.Session:
            session: requests.Session = create(catalog)
            settings = _SETTINGS.get() or Settings()
            for prefix, adapter in list(session.adapters.items()):
                if isinstance(adapter, RestAdapter):
                    continue
                signer = adapter if isinstance(adapter, HTTPAdapter) and type(adapter) is not HTTPAdapter else None
                session.mount(prefix, RestAdapter(settings, signer))  # SigV4's, mounted for the catalog's uri
            return session

        rest.RestCatalog._create_session = create_bounded  # type: ignore[method-assign,assignment]
        _installed = True


class RestAdapter(BoundedAdapter):
    """The transport of a REST catalog's session; ``signer``: the adapter it replaces that adds
    headers of its own (SigV4), called for each request."""

    def __init__(self, settings: Settings, signer: HTTPAdapter | None = None) -> None:
        self.settings = settings
        self.signer = signer
        super().__init__(settings.timeout_s)

    def add_headers(self, request: requests.PreparedRequest, **kwargs: Any) -> None:
        if self.signer is not None:
            self.signer.add_headers(request, **kwargs)

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        where = origin(request.url or "")
        if self.settings.origins and where not in self.settings.origins:
            raise RestHttpError(
                f"the catalog asked for a request to {self.shown_url(request.url or '')}, which is not where "
                "its configuration (uri, oauth2-server-uri) points; a catalog's answer cannot send its "
                "requests and credentials to another host, so none is made"
            )
        return super().send(request, *args, **kwargs)

    def shown_url(self, url: str) -> str:
        return secrets.cut(secrets.scrub(url.split("?", 1)[0], secrets.url_secrets(url)), 200)

    def own_error(self, exc: Exception) -> bool:
        return isinstance(exc, RestHttpError)

    def refused_proxy(self, proxy: str) -> Exception:
        shown = secrets.scrub(proxy, secrets.url_secrets(proxy))
        return RestHttpError(f"cannot reach the catalog through the proxy {shown}: use an HTTP proxy")

    def timed_out(self, shown: str) -> Exception:
        return RestHttpError(f"the catalog is unreachable: no whole answer from {shown} within {self.timeout_s:g}s")

    def request_error(self, exc: Exception, shown: str) -> Exception:
        failure = failure_of(exc)
        if failure.kind == "truncated":
            of = f" of {failure.announced}" if failure.announced is not None else ""
            return RestHttpError(f"{shown} closed the connection after {failure.got}{of} bytes")
        if failure.kind == "timeout":
            return self.timed_out(shown)
        if failure.kind == "tls":  # a catalog that cannot be trusted cannot be read
            return RestHttpError(f"the catalog is unreachable: TLS error talking to {shown}: {failure.detail}")
        return RestHttpError(f"the catalog is unreachable: cannot reach {shown} ({failure.detail})")

    def answer(self, response: requests.Response, shown: str) -> requests.Response:
        status = response.status_code
        if 300 <= status < 400:
            where = secrets.cut(secrets.scrub(str(response.headers.get("Location") or "")), 200)
            raise RestHttpError(
                f"{shown} answered HTTP {status}, a redirect to {where or 'nowhere'}; streamwarden follows no "
                "redirect of a catalog (its credentials would go along): configure the catalog's final URI"
            )
        cap = self.settings.cap
        declared = str(response.headers.get("Content-Length") or "")
        if declared.isdigit() and int(declared) > cap:  # refused before a byte is read
            raise self._too_large(shown)
        body = read_capped(response.raw, cap)
        if len(body) > cap:
            raise self._too_large(shown)
        encoding = str(response.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding in INFLATE_WBITS:
            body = self._inflate(body, encoding, shown)
        elif encoding not in ("", "identity"):
            raise RestHttpError(
                f"{shown} answered in the content encoding {secrets.cut(encoding, 40)!r}, "
                "which streamwarden does not read"
            )
        if body.lstrip()[:1] in (b"{", b"["):
            self._check_depth(body, shown)
        response._content = body
        response._content_consumed = True
        if "Content-Encoding" in response.headers:
            del response.headers["Content-Encoding"]
        return response

    def _inflate(self, body: bytes, coding: str, shown: str) -> bytes:
        try:
            return inflate_capped(body, coding, self.settings.cap)
        except InflateError as exc:
            if exc.kind == "corrupt":
                raise RestHttpError(f"{shown} answered a compressed body that cannot be inflated") from None
            raise self._too_large(shown, inflated=True) from None

    def _check_depth(self, body: bytes, shown: str) -> None:
        try:
            doc = json.loads(body)
        except RecursionError:
            doc = None
            deep = True
        except ValueError:
            return  # not JSON: PyIceberg says so
        else:
            deep = too_deep(doc, MAX_JSON_DEPTH)
        if deep:
            raise RestHttpError(
                f"{shown} answered JSON nested more than {MAX_JSON_DEPTH} levels deep; refusing to read it"
            )

    def _too_large(self, shown: str, *, inflated: bool = False) -> RestHttpError:
        size = (
            f"{self.settings.cap // (1024 * 1024)} MiB"
            if self.settings.cap >= 1024 * 1024
            else f"{self.settings.cap} bytes"
        )
        what = "inflates to" if inflated else "answered"
        return RestHttpError(f"{shown} {what} more than {size}; refusing to read it")
