"""One scrubber for every string that may carry a credential: error messages, text copied from a
server's answer (job names, exception texts, failure labels, checkpoint paths), and what the CLI
prints.

``scrub`` removes

- the secret values this process was configured with (``register``: the Flink token or password
  and their Authorization header value, Iceberg catalog properties that look like secrets, token
  segments of a configured URL), and any prefix of one longer than ``PREFIX_MIN - 1`` characters
  (a server that cuts its echo of a token short still leaks most of it);
- credential shapes it can recognise without being told: ``Authorization: ...`` values,
  ``Bearer``/``Basic`` tokens, ``user:password@`` in URLs, ``password=...``/``"client_secret":
  "..."`` style pairs and signed-URL query parameters.

``cut`` scrubs *then* truncates: truncating first could cut a secret (or the word before it that
makes it recognisable) in two and let the first part through.
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from collections.abc import Iterable
from typing import Any

MASK = "***"
PREFIX_MIN = 9  # a prefix of a configured secret longer than 8 characters never appears
_MIN_SECRET = 3  # shorter values are not scrubbed by value (they would mask ordinary words)
REGISTER_MIN = 8  # shorter values are scrubbed only where they are passed explicitly

_lock = threading.Lock()
_registered: set[str] = set()

_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic|token|digest|negotiate)\s+)?([^\s\"'<>,;]+)"
)
_SCHEME_TOKEN = re.compile(r"\b(Bearer|bearer|BEARER|Basic|basic|BASIC|Token|token)(\s+)([A-Za-z0-9._~+/=-]{8,})")
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s\"'<>]+@")
_SECRET_WORD = (
    r"(?:secret|passw(?:or)?d|pwd|token|credential|api[_-]?key|access[_-]?key|private[_-]?key|account[_-]?key"
    r"|shared[_-]?access[_-]?(?:key|signature)|sig|signature|sas)"
)
_SECRET_PAIR = re.compile(
    r"(?i)(?P<key>\b(?:[\w.-]*[_.-])?" + _SECRET_WORD + r"s?(?:[_.-][\w.-]*)?)"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"'&,;}<>)\]]+)"
)
# A word each credential shape above needs: text whose case-folded form has none of them has no
# shape, and most text a run scrubs (a finding's message, a contract value) has none. Searched in
# ``str.casefold()`` (a superset of the shapes' case-insensitive matching, and 2 us where ``(?i)``
# takes 14 us on a finding's message). "key" counts only as the secret words have it (api_key,
# access-key, privatekey, account_key): a bare "key" is in every message about a configuration key.
_SHAPE_HINT = re.compile(
    r"authorization|bearer|basic|token|secret|passw|pwd|credential|(?:api|access|private|account)[_-]?key|sig|sas|@"
)
_PLAIN_WORD = re.compile(r"[a-z]{1,12}")
_TOKEN_SEGMENT = re.compile(r"[A-Za-z0-9._~+=-]{16,}")
_SECRET_SEGMENT_NAME = re.compile(r"(?i)" + _SECRET_WORD + r"s?|keys?|auth")


def register(*values: Any) -> None:
    """Remember secret values for every later ``scrub`` in this process (and for the last net on
    what the CLI writes). Only values that cannot be ordinary output are kept: at least
    ``REGISTER_MIN`` characters, not a number, not a boolean (a property such as
    ``rest.sigv4-enabled: true`` has a secret-looking name; masking every ``true`` would be absurd)."""
    keep = {str(v) for v in values if v is not None}
    keep = {v for v in keep if len(v) >= REGISTER_MIN and not v.isdigit() and v.lower() not in ("true", "false")}
    with _lock:
        _registered.update(keep)


def registered() -> frozenset[str]:
    with _lock:
        return frozenset(_registered)


def url_secrets(url: str) -> list[str]:
    """The parts of a configured URL that may be credentials: the password, query values, and (for
    an http(s) endpoint) path segments that look like tokens (20+ characters with a digit and
    both cases, or 32+ token characters with a digit) or follow a segment named like one
    (``/token/<value>``)."""
    try:
        parts = urllib.parse.urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    out = [urllib.parse.unquote(password)] if password else []
    out += [v for _, v in urllib.parse.parse_qsl(parts.query) if v]
    if parts.scheme.lower() not in ("http", "https"):
        return out
    segments = [urllib.parse.unquote(s) for s in parts.path.split("/")]
    for i, seg in enumerate(segments):
        after_name = i > 0 and _SECRET_SEGMENT_NAME.fullmatch(segments[i - 1] or "") and seg
        if _tokenish(seg) or after_name:
            out += [seg, urllib.parse.quote(seg, safe="")]
    return out


def _tokenish(segment: str) -> bool:
    if not _TOKEN_SEGMENT.fullmatch(segment) or not re.search(r"\d", segment):
        return False
    mixed = re.search(r"[a-z]", segment) is not None and re.search(r"[A-Z]", segment) is not None
    return (len(segment) >= 20 and mixed) or len(segment) >= 32


def scrub(text: str, secrets: Iterable[str] = (), *, shapes: bool = True) -> str:
    """``text`` without any configured secret (nor a prefix of one longer than 8 characters) and,
    unless ``shapes`` is false (a whole report, where only exact values are worth replacing),
    without any credential shape it recognises."""
    if not text:
        return text
    if _registered or secrets:  # (a static check registers nothing)
        values = sorted({s for s in (*registered(), *secrets) if s and len(s) >= _MIN_SECRET}, key=len, reverse=True)
        for value in values:
            if value in text:
                text = text.replace(value, MASK)
        for value in values:
            if len(value) >= PREFIX_MIN:
                text = _mask_prefixes(text, value)
    if not shapes or _SHAPE_HINT.search(text.casefold()) is None:
        return text
    text = _AUTH_HEADER.sub(_auth_header, text)
    text = _SCHEME_TOKEN.sub(_scheme_token, text)
    text = _URL_USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", text)
    return _SECRET_PAIR.sub(_secret_pair, text)


def cut(text: str, limit: int, secrets: Iterable[str] = ()) -> str:
    """Scrub, then bound to ``limit`` characters (plus an ellipsis)."""
    text = scrub(text, secrets)
    return text if len(text) <= limit else text[:limit] + "…"


def scrub_tree(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of a JSON-like value with every string (and every key) scrubbed."""
    extra = tuple(secrets)
    if isinstance(value, str):
        return scrub(value, extra)
    if isinstance(value, dict):
        return {(scrub(k, extra) if isinstance(k, str) else k): scrub_tree(v, extra) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_tree(v, extra) for v in value]
    return value


def _mask_prefixes(text: str, value: str) -> str:
    head = value[:PREFIX_MIN]
    start = text.find(head)
    while start != -1:
        end = start + PREFIX_MIN
        while end < len(text) and end - start < len(value) and text[end] == value[end - start]:
            end += 1
        text = text[:start] + MASK + text[end:]
        start = text.find(head, start + len(MASK))
    return text


def _auth_header(m: re.Match[str]) -> str:
    scheme = f"{m.group(2)} " if m.group(2) else ""
    return f"{m.group(1)}{scheme}{MASK}"


def _scheme_token(m: re.Match[str]) -> str:
    token = m.group(3)
    if token == MASK or (token.isalpha() and token.islower()):  # "basic authentication" is prose
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{MASK}"


def _secret_pair(m: re.Match[str]) -> str:
    value = m.group("value")
    if value.startswith(MASK) or _PLAIN_WORD.fullmatch(value):  # "invalid token: expired" stays readable
        return m.group(0)
    return f"{m.group('key')}{m.group('sep')}{MASK}"
