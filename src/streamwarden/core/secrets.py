"""One scrubber for every string that may carry a credential: error messages, text copied from a
server's answer (job names, exception texts, failure labels, checkpoint paths), and what the CLI
prints.

``scrub`` removes

- the secret values this process was configured with (``register``: the Flink token or password
  and their Authorization header value, Iceberg catalog properties that look like secrets, token
  segments of a configured URL), and any prefix of one longer than ``PREFIX_MIN - 1`` characters
  (a server that cuts its echo of a token short still leaks most of it);
- credential shapes it can recognise without being told: ``Authorization: ...`` values,
  ``Bearer``/``Basic`` tokens, ``user:password@`` in URLs, and ``name=value`` / ``name: value`` /
  ``"name": "value"`` pairs whose name says it holds a secret (``secret_name``: ``password``,
  ``keyPassword``, ``trustStorePassword``, ``PASSWORD``, ``secret-key``, ``secretKey``,
  ``sessionToken``, ``clientSecret``, ``accessKey``, ``AccountKey``, ``sig``,
  ``SharedAccessSignature``, ``sasl.jaas.config``, ``connection-string``... in any case style),
  a JVM option's ``-D<name>=<value>`` included.

``secret_name`` is also what says that a setting's whole value is a secret (a deployment file's
``s3.secret-key``, ``security.ssl.keystore-password``): the deployment facts mask those values
where they are read (``mask_setting``).

``cut`` scrubs *then* truncates: truncating first could cut a secret (or the word before it that
makes it recognisable) in two and let the first part through.
"""

from __future__ import annotations

import itertools
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
# a name made of words around one of these, separated or not: the pair's name, in any case style
_OLD_SECRET_NAME = re.compile(r"(?i)(?:[\w.-]*[_.-])?" + _SECRET_WORD + r"s?(?:[_.-][\w.-]*)?")
# every name=value pair; the name decides (``secret_name``), so the pattern need not
_SECRET_PAIR = re.compile(
    r"(?:(?P<pre>-D)|\b)(?P<key>[\w.-]+)"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"'&,;}<>)\]]+)"
)
# What Flink's own masking looks for in a key (GlobalConfiguration.SENSITIVE_KEYS), and more: a
# name holding one of these, whatever its case, names a secret.
_SECRET_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "apikey",
    "api-key",
    "api_key",
    "auth-params",
    "service-key",
    "basic-auth",
    "jaas.config",
    "http-headers",
    "connection-string",
    "connectionstring",
    "signature",
    "fs.azure.account.key",
)
# whole words (the name split at separators and at case changes: trustStorePassword -> trust,
# store, password) that name a secret alone, and pairs of consecutive words that do
_SECRET_WORDS = frozenset({"pwd", "sig", "sas", "accesskey", "secretkey", "accountkey", "privatekey", "sastoken"})
_SECRET_WORD_PAIRS = frozenset(
    {
        ("access", "key"),
        ("account", "key"),
        ("private", "key"),
        ("api", "key"),
        ("service", "key"),
        ("shared", "key"),
        ("connection", "string"),
        ("jaas", "config"),
        ("auth", "params"),
        ("basic", "auth"),
        ("http", "headers"),
    }
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A word each credential shape above needs: text whose case-folded form has none of them has no
# shape, and most text a run scrubs (a finding's message, a contract value) has none. Searched in
# ``str.casefold()`` (a superset of the shapes' case-insensitive matching, and 2 us where ``(?i)``
# takes 14 us on a finding's message). "key" counts only as the secret names have it (api_key,
# access.key, privatekey, account-key, AccessKey): a bare "key" is in every message about a
# configuration key, and scrubbing each of those for nothing made large files slow.
_SHAPE_HINT = re.compile(
    r"authorization|bearer|basic|token|secret|passw|pwd|passphrase|credential"
    r"|(?:api|access|private|account|service|shared|secret)[^a-z0-9]{0,3}key"
    r"|sig|sas|jaas|connection|auth|header|@"
)
_PLAIN_WORD = re.compile(r"[a-z]{1,12}")
_TOKEN_SEGMENT = re.compile(r"[A-Za-z0-9._~+=-]{16,}")
_SECRET_SEGMENT_NAME = re.compile(r"(?i)" + _SECRET_WORD + r"s?|keys?|auth")


def secret_name(name: str) -> bool:
    """Whether a setting, a parameter or a JSON key of this name holds a secret: its lower-case
    form holds a part Flink masks (``password``, ``secret``, ``token``, ``apikey``,
    ``jaas.config``...) or a few more (``credential``, ``connection-string``, ``signature``), or
    its words, split at separators and case changes, say it (``sig``, ``sas``, ``pwd``,
    ``access key``, ``account key``, ``private key``: ``accessKey``, ``ACCOUNT_KEY``,
    ``fs.s3a.access.key``)."""
    low = name.lower()
    if any(part in low for part in _SECRET_PARTS):
        return True
    words = [w.lower() for w in _WORD.findall(name)]
    return any(w in _SECRET_WORDS for w in words) or any(p in _SECRET_WORD_PAIRS for p in itertools.pairwise(words))


def mask_setting(name: str, value: Any) -> Any:
    """A configuration value as it may be shown: ``MASK`` for a setting whose name says it holds a
    secret (``secret_name``), else the value with every secret in it masked (a JVM option's
    ``-Dx.password=...``, a URL's ``?secretKey=...`` or ``user:password@``), each part of a mapping
    or a list by its own name. Masked whatever the value looks like: ``changeit`` is a password."""
    if isinstance(value, dict):
        return {k: mask_setting(str(k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_setting(name, v) for v in value]
    if value is None or isinstance(value, bool):
        return value
    if secret_name(name):
        return MASK
    return scrub(value, strict=True) if isinstance(value, str) else value


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


def scrub(text: str, secrets: Iterable[str] = (), *, shapes: bool = True, strict: bool = False) -> str:
    """``text`` without any configured secret (nor a prefix of one longer than 8 characters) and,
    unless ``shapes`` is false (a whole report, where only exact values are worth replacing),
    without any credential shape it recognises. A pair whose value is a short lower-case word
    (``invalid token: expired``) is prose and kept, unless ``strict`` (a configuration value, where
    ``password=changeit`` is no prose)."""
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
    return _SECRET_PAIR.sub(_strict_pair if strict else _secret_pair, text)


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


def _secret_pair(m: re.Match[str], strict: bool = False) -> str:
    key, value = m.group("key"), m.group("value")
    if not (secret_name(key) or _OLD_SECRET_NAME.fullmatch(key)):
        # not a secret, but its value may hold pairs that are (s3://b/p?secretKey=...)
        head = m.group(0)[: m.start("value") - m.start()]
        return head + _SECRET_PAIR.sub(_strict_pair if strict else _secret_pair, value)
    if value.startswith(MASK) or (not strict and _PLAIN_WORD.fullmatch(value)):  # "invalid token: expired"
        return m.group(0)
    return f"{m.group('pre') or ''}{key}{m.group('sep')}{MASK}"


def _strict_pair(m: re.Match[str]) -> str:
    return _secret_pair(m, strict=True)
