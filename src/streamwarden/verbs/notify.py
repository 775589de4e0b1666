"""``evidence --notify``: each consumer's notice (verbs/notices.py), posted as JSON to the webhook
targets of ``notify:`` in streamwarden.yaml whose ``contacts`` match the consumer's contact.

- A target's URL comes from streamwarden.yaml only, never from a contract; its bearer token from
  the variable its ``token_env`` names (checked before anything is posted: one that is not set is
  unusable input, exit 2). The token and the token-like parts of the URL are registered with the
  scrubber: no output, error or record of the process shows them.
- One POST per consumer and matching target, on the bounded transport (``core/boundedhttp``):
  one deadline for the whole exchange (the target's ``timeout``, 10 s unless set), one attempt,
  no redirect followed (the token would go along), at most ``MAX_ANSWER_BYTES`` of an answer read,
  only http:// and https://, a proxy from the environment only when it is an HTTP proxy.
- A 2xx answer is a delivery; anything else (refused, timed out, a redirect, an error status, an
  answer too large) is a failure, said in the record (``notify.deliveries``) and on stderr, and the
  command exits 1 after writing the record. A consumer no target serves is listed as not told.

The record's ``notified`` lists the consumers that at least one target accepted a notice for.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import requests
import urllib3
from requests.auth import AuthBase

from streamwarden import __version__
from streamwarden.contracts.config import NotifyTarget
from streamwarden.core import secrets
from streamwarden.core.boundedhttp import BoundedAdapter, failure_of, read_capped
from streamwarden.core.errors import InputError

MAX_ANSWER_BYTES = 64 * 1024  # a webhook's answer is an acknowledgement: nothing of it is used
_ERROR_LINE = 200


class NotifyError(Exception):
    """A post that was not delivered; ``message`` is scrubbed and names the target, never a secret."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status


class NotifyAdapter(BoundedAdapter):
    """The transport of one target; ``shown`` is how messages name it (scrubbed)."""

    def __init__(self, shown: str, timeout_s: float) -> None:
        self.shown = shown
        super().__init__(timeout_s)

    def shown_url(self, url: str) -> str:
        return self.shown

    def own_error(self, exc: Exception) -> bool:
        return isinstance(exc, NotifyError)

    def answer(self, response: requests.Response, shown: str) -> requests.Response:
        status = response.status_code
        if 300 <= status < 400:
            raise NotifyError(
                "redirect",
                f"{shown} answered HTTP {status}, a redirect; redirects are not followed (the token would go "
                "along): give the webhook's own URL in notify",
                status,
            )
        declared = str(response.headers.get("Content-Length") or "")
        too_large = declared.isdigit() and int(declared) > MAX_ANSWER_BYTES
        body = b"" if too_large else read_capped(response.raw, MAX_ANSWER_BYTES)
        if too_large or len(body) > MAX_ANSWER_BYTES:
            raise NotifyError(
                "too_large",
                f"{shown} answered HTTP {status} with more than {MAX_ANSWER_BYTES // 1024} KiB; refused to read it",
                status,
            )
        if not 200 <= status < 300:
            snippet = secrets.cut(" ".join(body[:2048].decode("utf-8", "replace").split()), _ERROR_LINE)
            hint = "; check the token in the variable token_env names" if status in (401, 403) else ""
            raise NotifyError(
                "http", f"{shown} answered HTTP {status}{': ' + snippet if snippet else ''}{hint}", status
            )
        response._content = body
        response._content_consumed = True
        return response

    def request_error(self, exc: Exception, shown: str) -> NotifyError:
        failure = failure_of(exc, _ERROR_LINE)
        if failure.kind == "truncated":
            return NotifyError("truncated", f"{shown} closed the connection after {failure.got} bytes of its answer")
        if failure.kind == "timeout":
            return self.timed_out(shown)
        if failure.kind == "tls":
            return NotifyError("tls", f"TLS error talking to {shown}: {failure.detail}")
        return NotifyError("unreachable", f"cannot reach {shown} ({failure.detail})")

    def timed_out(self, shown: str) -> NotifyError:
        return NotifyError("timeout", f"no whole answer from {shown} within {self.timeout_s:g}s")

    def refused_proxy(self, proxy: str) -> NotifyError:
        shown = secrets.scrub(proxy, secrets.url_secrets(proxy))
        return NotifyError("unreachable", f"cannot reach {self.shown} through the proxy {shown}: use an HTTP proxy")


class _Bearer(AuthBase):
    """The target's token, or nothing: with an ``auth`` set, requests never reads ``~/.netrc``."""

    def __init__(self, token: str | None) -> None:
        self.token = token

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        if self.token:
            r.headers["Authorization"] = f"Bearer {self.token}"
        return r


def serves(target: NotifyTarget, contact: Any) -> bool:
    """Whether ``target`` serves a consumer with this contact: one of its ``contacts`` equals it or
    matches it as a glob, case left aside. A consumer without a contact is served by none."""
    if not isinstance(contact, str) or not contact.strip():
        return False
    wanted = contact.strip().casefold()
    return any(fnmatch.fnmatchcase(wanted, pattern.casefold()) for pattern in target.contacts)


def _tokens(targets: Sequence[NotifyTarget]) -> dict[str, str | None]:
    """Each used target's token, read before anything is posted; one whose variable is not set
    stops the command (exit 2) with nothing sent."""
    out: dict[str, str | None] = {}
    for t in targets:
        if t.token_env is None:
            out[t.name] = None
            continue
        token = os.environ.get(t.token_env)
        if not token:
            raise InputError(
                f"notify target {t.name!r}: the environment variable {t.token_env} is not set"
                + (" (it is empty)" if token == "" else ""),
                file=t.file,
                line=t.line,
                path=f"{t.path}.token_env",
                hint=f"export {t.token_env} with the webhook's bearer token, or remove token_env; nothing was posted",
            )
        secrets.register(token)
        out[t.name] = token
    return out


def deliver(targets: Sequence[NotifyTarget], notices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Post each notice to every target that serves its consumer: what was delivered, what
    failed, and who no target serves. ``failed``: at least one post was not delivered."""
    routes = [(n, [t for t in targets if serves(t, (n.get("consumer") or {}).get("contact"))]) for n in notices]
    tokens = _tokens([t for t in targets if any(t in used for _, used in routes)])
    for t in targets:
        secrets.register(*secrets.url_secrets(t.url))
    deliveries: list[dict[str, Any]] = []
    not_told: list[dict[str, Any]] = []
    notified: list[str] = []
    for notice, used in routes:
        consumer = notice.get("consumer") or {}
        if not used:
            not_told.append(
                {
                    "name": consumer.get("name"),
                    "contact": consumer.get("contact"),
                    "reason": "no contact" if not consumer.get("contact") else "no notify target serves this contact",
                }
            )
            continue
        told = False
        for target in used:
            outcome = _post(target, tokens.get(target.name), notice)
            deliveries.append({"consumer": consumer.get("name"), "target": target.name, **outcome})
            told = told or outcome["delivered"]
        if told:
            notified.append(str(consumer.get("name")))
    return {
        "targets": [t.name for t in targets],
        "deliveries": deliveries,
        "not_told": not_told,
        "notified": notified,
        "failed": any(not d["delivered"] for d in deliveries),
    }


def _post(target: NotifyTarget, token: str | None, notice: Mapping[str, Any]) -> dict[str, Any]:
    found = [*secrets.url_secrets(target.url), *([token] if token else [])]
    shown = f"notify target {target.name!r} ({secrets.scrub(target.url, found)})"
    body = json.dumps(secrets.scrub_tree(dict(notice), found), ensure_ascii=False).encode("utf-8")
    session = requests.Session()
    adapter = NotifyAdapter(shown, target.timeout_ms / 1000)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.max_redirects = 0
    session.auth = _Bearer(token)
    headers = {
        "Content-Type": "application/json",
        "Accept-Encoding": "identity",
        "User-Agent": f"streamwarden/{__version__}",
        "Idempotency-Key": str(notice.get("id") or ""),
        "Connection": "close",
    }
    try:
        response = session.post(target.url, data=body, headers=headers, allow_redirects=False)
    except NotifyError as exc:
        return {"delivered": False, "status": exc.status, "kind": exc.kind, "error": secrets.scrub(exc.message, found)}
    except (requests.RequestException, urllib3.exceptions.HTTPError, ValueError) as exc:
        why = secrets.cut(f"{type(exc).__name__}: {exc}", _ERROR_LINE, found)
        return {"delivered": False, "status": None, "kind": "client", "error": f"{shown}: {why}"}
    finally:
        session.close()
    return {"delivered": True, "status": response.status_code, "kind": None, "error": None}
