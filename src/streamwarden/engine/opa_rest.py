"""The OPA server's REST API, as ``--engine opa`` uses it: on the standard library, with the
transport of every server client (``streamwarden.serverhttp``: a deadline for each whole exchange,
no redirect followed), a cap on the size of every answer, and messages that never carry the
bearer token.

The token (``STREAMWARDEN_OPA_TOKEN``) and the token-like parts of the URL (``secrets.url_secrets``)
are registered with the scrubber when the client is made: every later message of the process is
scrubbed of them, an error body that quotes the token included, and so is the URL wherever it is
shown.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from streamwarden import secrets
from streamwarden.serverhttp import TOO_DEEP, Deadline, loads_server_json, opener, too_deep

DEFAULT_TIMEOUT_S = 30.0
MAX_ANSWER_BYTES = 16 * 1024 * 1024  # a decision, a policy, a status: as much as Flink REST's answers
MAX_LIST_BYTES = 64 * 1024 * 1024  # the policy list: every module's source and syntax tree
MAX_JSON_DEPTH = 64
_ERROR_BYTES = 64 * 1024
_ERROR_LINE = 300


class OpaRestError(Exception):
    """A request that gave no usable answer. ``kind``: unreachable, timeout, http, too_large,
    truncated, not_json, too_deep, tls. ``message`` names the server (scrubbed), never a secret."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status


class OpaRest:
    """One OPA server: ``base`` is ``http(s)://host[:port][/prefix]`` (the API is under ``/v1``)."""

    def __init__(self, base: str, token: str | None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.base = base.rstrip("/")
        self.timeout_s = timeout_s
        self.headers = {"Accept": "application/json", "User-Agent": "streamwarden"}
        found = [*secrets.url_secrets(base)]
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
            found.append(token)
        secrets.register(*found)  # every later message of this process is scrubbed of them too
        self.secrets = tuple(s for s in found if s)
        self.shown = secrets.scrub(self.base, self.secrets)
        self._opener = opener(_tls_context() if self.base.startswith("https:") else None)

    # -- the calls the engine makes -----------------------------------------------------------
    def policy_ids(self) -> list[str]:
        body = self.call("GET", "/v1/policies", cap=MAX_LIST_BYTES)
        listed = body.get("result") if isinstance(body, dict) else None
        if not isinstance(listed, list):
            raise OpaRestError("not_json", f"{self.shown}/v1/policies answered JSON that is not a policy list")
        return [p["id"] for p in listed if isinstance(p, dict) and isinstance(p.get("id"), str)]

    def policy_source(self, pid: str) -> str | None:
        """The module's text as the server holds it, or None (not there)."""
        try:
            body = self.call("GET", f"/v1/policies/{_quote(pid)}")
        except OpaRestError as exc:
            if exc.status == 404:
                return None
            raise
        raw = (body.get("result") or {}).get("raw") if isinstance(body, dict) else None
        return raw if isinstance(raw, str) else None

    def put_policy(self, pid: str, source: str) -> None:
        self.call("PUT", f"/v1/policies/{_quote(pid)}", source.encode("utf-8"), "text/plain")

    def delete_policy(self, pid: str) -> None:
        self.call("DELETE", f"/v1/policies/{_quote(pid)}")

    def put_data(self, path: str, value: Any) -> None:
        self.call("PUT", f"/v1/data/{path}", json.dumps(value).encode("utf-8"), "application/json")

    def query(self, path: str, input_doc: dict[str, Any]) -> tuple[bool, Any]:
        """``POST /v1/data/<path>`` with ``input``: (defined, value). A server that answers without
        ``result`` (``{}``) says the document is undefined there."""
        body = self.call(
            "POST",
            f"/v1/data/{path}",
            json.dumps({"input": input_doc}, ensure_ascii=False).encode("utf-8"),
            "application/json",
        )
        if not isinstance(body, dict):
            raise OpaRestError("not_json", f"{self.shown}/v1/data/{path} answered JSON that is not an object")
        if "result" not in body:
            return False, None
        return True, body["result"]

    # -- one exchange -------------------------------------------------------------------------
    def call(
        self,
        method: str,
        path: str,
        data: bytes | None = None,
        ctype: str | None = None,
        *,
        cap: int = MAX_ANSWER_BYTES,
    ) -> Any:
        """One request; its JSON answer (None for an empty body). Raises OpaRestError."""
        shown = self.shown + path
        headers = dict(self.headers)
        if ctype:
            headers["Content-Type"] = ctype
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        watch = Deadline(self.timeout_s)
        req.streamwarden_deadline = watch  # type: ignore[attr-defined]  # read by the Deadline*Handler
        try:
            try:
                with self._opener.open(req, timeout=self.timeout_s) as resp:
                    body = self._read(resp, shown, cap)
            except urllib.error.HTTPError as exc:
                raise self._http_error(exc, shown) from None  # its body read under the same deadline
            finally:
                watch.cancel()
        except OpaRestError:
            if watch.fired:
                raise self._timed_out(shown) from None
            raise
        except Exception as exc:
            if watch.fired:  # the deadline closed the socket: whatever broke, it is the timeout
                raise self._timed_out(shown) from None
            raise self._request_error(exc, shown) from None
        if watch.fired:
            raise self._timed_out(shown)
        # a decision nests a few levels; the policy list carries syntax trees, nested as deep as
        # the policies (json.loads' own recursion limit still stops a hostile one)
        return self._parse(body, shown, MAX_JSON_DEPTH if cap <= MAX_ANSWER_BYTES else None)

    def _read(self, resp: Any, shown: str, cap: int) -> bytes:
        body: bytes = resp.read(cap + 1)
        if len(body) > cap:
            size = f"{cap // (1024 * 1024)} MiB"
            raise OpaRestError("too_large", f"{shown} answered more than {size}; refusing to read it")
        declared = str(resp.headers.get("Content-Length") or "")
        if declared.isdigit() and int(declared) > len(body):
            raise OpaRestError("truncated", f"{shown} closed the connection after {len(body)} of {declared} bytes")
        return body

    def _parse(self, body: bytes, shown: str, depth: int | None) -> Any:
        if not body.strip():
            return None
        try:
            doc = loads_server_json(body.decode("utf-8"))
        except RecursionError:
            doc = TOO_DEEP
        except (UnicodeDecodeError, json.JSONDecodeError):
            snippet = self._snippet(body)
            raise OpaRestError("not_json", f"{shown} answered something that is not JSON: {snippet}") from None
        if doc is TOO_DEEP or (depth is not None and too_deep(doc, depth)):
            raise OpaRestError("too_deep", f"{shown} answered JSON nested too deep; refusing it")
        return doc

    def _http_error(self, exc: urllib.error.HTTPError, shown: str) -> OpaRestError:
        try:
            body = exc.read(_ERROR_BYTES) if exc.fp is not None else b""
        except OSError:
            body = b""
        detail = secrets.cut(_opa_errors(body), _ERROR_LINE, self.secrets) or self._snippet(body)
        suffix = f": {detail}" if detail else ""
        if 300 <= exc.code < 400:
            return OpaRestError(
                "http",
                f"{shown} answered HTTP {exc.code}, a redirect; redirects are not followed (the token would go "
                "along): give --opa-url the server itself",
                exc.code,
            )
        if exc.code in (401, 403):
            return OpaRestError(
                "http", f"{shown} answered HTTP {exc.code}{suffix}; check the token in STREAMWARDEN_OPA_TOKEN", exc.code
            )
        return OpaRestError("http", f"{shown} answered HTTP {exc.code}{suffix}", exc.code)

    def _request_error(self, exc: Exception, shown: str) -> OpaRestError:
        if isinstance(exc, http.client.IncompleteRead):
            return OpaRestError("truncated", f"{shown} closed the connection after {len(exc.partial)} bytes")
        if isinstance(exc, TimeoutError):
            return self._timed_out(shown)
        reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if isinstance(reason, TimeoutError):
            return self._timed_out(shown)
        if isinstance(reason, ssl.SSLError):
            return OpaRestError("tls", f"TLS error talking to {self.shown}: {reason.reason or reason}")
        if isinstance(reason, OSError) and reason.strerror:
            text = reason.strerror.lower()
        else:
            text = str(reason) or type(reason).__name__
        why = secrets.cut(text, _ERROR_LINE, self.secrets)
        return OpaRestError("unreachable", f"cannot reach {self.shown} ({why})")

    def _timed_out(self, shown: str) -> OpaRestError:
        seconds = f"{self.timeout_s:g}s"
        return OpaRestError("timeout", f"no whole answer from {shown} within {seconds}")

    def _snippet(self, body: bytes) -> str:
        return secrets.cut(" ".join(body[:2048].decode("utf-8", "replace").split()), 120, self.secrets)


def _opa_errors(body: bytes) -> str:
    """OPA's error body ``{"code", "message", "errors": [{"message"}]}`` as one line."""
    try:
        doc = loads_server_json(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ""
    if not isinstance(doc, dict):
        return ""
    message = doc.get("message") if isinstance(doc.get("message"), str) else ""
    details = "; ".join(
        e["message"] for e in doc.get("errors") or [] if isinstance(e, dict) and isinstance(e.get("message"), str)
    )
    return " ".join(f"{message}{': ' + details if details else ''}".split())


def _tls_context() -> ssl.SSLContext:
    """The system's CAs (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` apply), or the bundle
    ``REQUESTS_CA_BUNDLE`` names, as for the HTTP client streamwarden used before."""
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or None
    try:
        return ssl.create_default_context(cafile=bundle)
    except (OSError, ssl.SSLError) as exc:
        raise OpaRestError("tls", f"cannot load REQUESTS_CA_BUNDLE {bundle}: {exc}") from None


def _quote(pid: str) -> str:
    return urllib.parse.quote(pid, safe="/")
