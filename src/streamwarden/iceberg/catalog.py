"""Open an Iceberg catalog and a table through pyiceberg, with errors a user can act on.

Catalog properties come from ``streamwarden.yaml`` (``environments.<env>.iceberg.catalogs.<name>``,
passed to pyiceberg's ``load_catalog`` unchanged), merged by pyiceberg with its own
``~/.pyiceberg.yaml`` and ``PYICEBERG_CATALOG__<NAME>__<KEY>`` variables. A catalog that
``streamwarden.yaml`` does not configure is opened from PyIceberg's own configuration only when the
environment opts in (``use_pyiceberg_config: true``); which tables a contract may open at all is
decided by ``streamwarden.iceberg.access`` before the catalog is touched. Relative SQLite and
warehouse paths are resolved against the directory of ``streamwarden.yaml``. The checker only
reads: the SQL catalog is opened with ``init_catalog_tables=false`` and a missing SQLite file is an
error, never a new empty catalog.

pyiceberg is imported inside the functions: a static check never imports it (or pyarrow).
Every message here is redacted (``streamwarden.core.secrets``, scrubbed before it is cut): no catalog
property value that may be a secret (nor a part of one: the client id and the secret of a
``credential``, a token-like segment of the ``uri`` path), and no URL credentials, ever reaches the
facts document or the terminal; the values are also registered with ``streamwarden.core.secrets`` so
that whatever else prints them in this process scrubs them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from streamwarden.core import secrets
from streamwarden.iceberg import classes, compat, ownconfig
from streamwarden.iceberg.access import AccessRefused, Decision, Reader, access_of, decide

_SECRET_KEY = re.compile(
    r"secret|password|passwd|token|credential|key|auth|session|signature|sas|connection[_.-]?string", re.IGNORECASE
)
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@")
_SENSITIVE_QUERY = re.compile(r"(?i)([?&](?:[^=&\s]*(?:token|secret|password|key|sig|credential)[^=&\s]*)=)[^&\s]+")
_MAX_MESSAGE = 400
INSTALL_HINT = "pip install 'streamwarden[iceberg]'"
_OPEN: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}


class IcebergFactsError(Exception):
    """A gap in the Iceberg facts: the message is clear, redacted and ready for SW-FACT-001."""


def secret_values(props: Mapping[str, Any]) -> list[str]:
    """Values of properties whose name suggests a secret (credential, token, *secret*, *key*...),
    the secret of a ``client_id:client_secret`` credential, and the credential-like parts of URL
    values (password, query values, token-like path segments)."""
    out: list[str] = []
    for k, v in props.items():
        if v in (None, ""):
            continue
        value = str(v)
        if _SECRET_KEY.search(str(k)) and len(value) > 2:
            out.append(value)
            # "Bearer <token>", "Basic <b64>": a server may echo the token alone
            out += [part for part in value.split()[1:] if len(part) > 2] if " " in value.strip() else []
            secret_part = value.split(":", 1)[1] if ":" in value and "://" not in value else ""
            out += [secret_part] if len(secret_part) > 2 else []  # client_id:client_secret
        if "://" in value:
            out += secrets.url_secrets(value)
    return out


def public_properties(props: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The catalog properties a printed command may carry, and the names of those it may not: a
    property whose name suggests a secret, or whose value holds a credential (a URL's password,
    query values, token-like path segments), is left to the environment."""
    hidden = set(secret_values(props))
    public: dict[str, str] = {}
    withheld: list[str] = []
    for k, v in props.items():
        if v in (None, ""):
            continue
        value = str(v)
        if _SECRET_KEY.search(str(k)) or any(h in value for h in hidden):
            withheld.append(str(k))
        else:
            public[str(k)] = value
    return public, withheld


def redact(text: str, props: Mapping[str, Any] | None = None) -> str:
    """Remove secrets from a message: secret property values (and their prefixes), URL
    user:password@, signed query strings, credential shapes (``streamwarden.core.secrets.scrub``)."""
    values = secret_values(props or {})
    secrets.register(*values)
    out = secrets.scrub(text, values)
    out = _URL_USERINFO.sub(lambda m: m.group("scheme") + "***@", out)
    out = _SENSITIVE_QUERY.sub(lambda m: m.group(1) + "***", out)
    # pyiceberg's "Could not initialize catalog with the following properties: {...}" dumps them all
    out = re.sub(r"(following properties:)\s*\{.*\}", r"\1 (redacted)", out, flags=re.DOTALL)
    return out


def describe(exc: BaseException, props: Mapping[str, Any] | None = None) -> str:
    """``ExceptionName: first line of the message``, redacted and bounded."""
    text = str(exc).strip().splitlines()[0].strip() if str(exc).strip() else ""
    kind = type(exc).__name__
    msg = f"{kind}: {text}" if text else kind
    return _bounded(redact(msg, props))  # redacted first: a cut could split a secret and let its first part through


def _bounded(msg: str, limit: int = _MAX_MESSAGE) -> str:
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def _sqlite_path(uri: str) -> str | None:
    """The file of a ``sqlite:///path`` URL (None for in-memory or other databases)."""
    m = re.match(r"^sqlite(?:\+\w+)?:///(?P<path>[^?]*)", uri)
    if not m or m.group("path") in ("", ":memory:"):
        return None
    return m.group("path")


def resolve_properties(props: Mapping[str, Any], root: Path) -> dict[str, str]:
    """Catalog properties as strings, relative SQLite / warehouse paths made absolute against ``root``.

    ``sqlite:///lake/catalog.db`` is relative (SQLAlchemy: three slashes then a relative path);
    ``sqlite:////abs/catalog.db`` is absolute. A warehouse without a scheme (``lake/warehouse``)
    or with ``file:`` and no slashes is relative; ``file:///abs`` and ``s3://...`` are kept.
    """
    out = {str(k): ("true" if v is True else "false" if v is False else str(v)) for k, v in props.items()}
    uri = out.get("uri", "")
    path = _sqlite_path(uri)
    if path is not None and not Path(path).is_absolute():
        prefix = uri[: uri.index(":///") + 4]
        rest = uri[len(prefix) + len(path) :]
        out["uri"] = f"{prefix}{(root / path).resolve()}{rest}"
    wh = out.get("warehouse")
    if wh and "://" not in wh:
        local = wh[len("file:") :] if wh.startswith("file:") else wh
        if not Path(local).is_absolute():
            out["warehouse"] = (root / local).resolve().as_uri()
    return out


def catalog_properties(
    name: str, catalogs: Mapping[str, Any] | None, root: Path, *, use_pyiceberg_config: bool = False
) -> dict[str, str]:
    """The properties for catalog ``name``: streamwarden.yaml's, else (``use_pyiceberg_config``
    only) pyiceberg's own config."""
    configured = (catalogs or {}).get(name)
    if isinstance(configured, Mapping):
        return resolve_properties(configured, root)
    if not use_pyiceberg_config:
        known = ", ".join(sorted(catalogs or {})) or "none"
        raise IcebergFactsError(
            f"catalog '{name}' (table.catalog) is not configured for this environment: add it under "
            f"environments.<env>.iceberg.catalogs.{name} in streamwarden.yaml (configured: {known})"
        )
    try:
        ownconfig.install()  # never a .pyiceberg.yaml of the work tree (a pull request's)
        from pyiceberg.utils.config import Config
    except ImportError:
        raise IcebergFactsError(f"pyiceberg is not installed ({INSTALL_HINT})") from None
    try:
        own = Config().get_catalog_config(name)
    except Exception as exc:  # a broken ~/.pyiceberg.yaml
        raise IcebergFactsError(f"PyIceberg configuration could not be read: {describe(exc)}") from None
    if own:
        classes.trust(own)  # the classes it names are the user's choice, as streamwarden.yaml's are
        return {}  # pyiceberg merges its own config for this name; nothing to add
    known = ", ".join(sorted(catalogs or {})) or "none"
    raise IcebergFactsError(
        f"catalog '{name}' (table.catalog) is not configured for this environment: add it under "
        f"environments.<env>.iceberg.catalogs.{name} in streamwarden.yaml (configured: {known}), "
        f"or in PyIceberg's .pyiceberg.yaml / PYICEBERG_CATALOG__{name.upper()}__* variables "
        "(the environment sets use_pyiceberg_config: true)"
    )


def open_catalog(name: str, props: dict[str, str], timeout_ms: int | None = None) -> Any:
    """``load_catalog(name, **props)``; a missing SQLite file is an error (never created). A REST
    catalog's requests are bounded (``iceberg.rest_http``): ``timeout_ms`` for each whole exchange
    (``iceberg.timeout``; default 30 s), a size cap, no redirect."""
    try:
        ownconfig.install()  # never a .pyiceberg.yaml of the work tree (a pull request's)
        from pyiceberg.catalog import load_catalog
    except ImportError:
        raise IcebergFactsError(f"pyiceberg is not installed ({INSTALL_HINT})") from None

    secrets.register(*secret_values(props))  # whatever prints them later in this process scrubs them
    # a class PyIceberg loads by name comes from this configuration, never from a server's answer
    # or a table property (iceberg.classes)
    classes.install()
    classes.trust(props)
    uri = props.get("uri", "")
    path = _sqlite_path(uri)
    if path is not None:
        if not Path(path).is_file():
            raise IcebergFactsError(f"catalog '{name}': the SQLite catalog database {path} does not exist")
        props = {"init_catalog_tables": "false", **props}
    from streamwarden.iceberg import rest_http

    timeout_s = timeout_ms / 1000 if isinstance(timeout_ms, int) and timeout_ms > 0 else rest_http.DEFAULT_TIMEOUT_S
    # the bound is part of the catalog: two environments naming one catalog with different
    # iceberg.timeout values get one client each, never the first one's deadline
    key = (name, (*sorted(props.items()), ("streamwarden.timeout-s", repr(timeout_s))))
    if key in _OPEN:
        return _OPEN[key]
    try:
        from pyiceberg.utils.config import Config

        configured = {**(Config().get_catalog_config(name) or {}), **props}  # as load_catalog merges them
        settings = rest_http.Settings(timeout_s=timeout_s, origins=rest_http.origins_of(configured))
        with rest_http.bounded(settings):
            catalog = load_catalog(name, **props)
    except Exception as exc:
        raise IcebergFactsError(f"catalog '{name}' could not be opened: {_explain(exc, props)}") from None
    _OPEN[key] = catalog  # many contracts in one run share a catalog (and its connection pool)
    return catalog


def open_table(catalog: Any, catalog_name: str, identifier: str, props: Mapping[str, Any]) -> Any:
    """``catalog.load_table(identifier)`` with errors for a missing table, a denied request, an
    unreachable service and a corrupt or unreadable metadata file. Metadata that the Iceberg spec
    allows and PyIceberg refuses is read with the compatibility reading (``iceberg.compat``; what it
    adapts is collected by ``compat.recording()`` around this call); metadata PyIceberg loads
    although its current schema, spec or sort order names nothing is an error naming the field."""
    try:
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
    except ImportError:
        raise IcebergFactsError(f"pyiceberg is not installed ({INSTALL_HINT})") from None
    compat.install()
    try:
        table = catalog.load_table(identifier)
        invalid = compat.inconsistencies(table.metadata)
    except (NoSuchTableError, NoSuchNamespaceError):
        raise IcebergFactsError(f"table {identifier} does not exist in catalog '{catalog_name}'") from None
    except Exception as exc:
        raise IcebergFactsError(
            f"table {identifier} in catalog '{catalog_name}' could not be loaded: {_explain(exc, props, metadata=True)}"
        ) from None
    if invalid:
        why = _bounded(redact("the table metadata is not valid: " + "; ".join(invalid), props))
        raise IcebergFactsError(f"table {identifier} in catalog '{catalog_name}' could not be loaded: {why}")
    return table


@dataclass(frozen=True)
class ContractTable:
    """The table a contract's ``table`` section names, loaded once for every gatherer that reads it."""

    catalog: str
    identifier: str
    table: Any  # pyiceberg.table.Table
    props: Mapping[str, str]  # the catalog's properties: describe(exc, props) redacts their secrets
    adapted: tuple[str, ...] = ()  # what the compatibility reading adapted (iceberg.compat)


def declared_table(contract: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(table.catalog, table.identifier)``; None when the contract declares neither (no table to
    read); IcebergFactsError when it declares only one (which table is meant cannot be told)."""
    table_c = contract.get("table")
    table_c = table_c if isinstance(table_c, Mapping) else {}
    catalog_name, identifier = table_c.get("catalog"), table_c.get("identifier")
    if not catalog_name and not identifier:
        return None
    if not identifier:
        raise IcebergFactsError(
            f"table.identifier is not declared: cannot tell which table of catalog '{catalog_name}'"
        )
    if not catalog_name:
        raise IcebergFactsError(f"table.catalog is not declared: cannot tell which catalog holds {identifier}")
    return str(catalog_name), str(identifier)


def reader_of(contract: Mapping[str, Any]) -> Reader:
    """Who reads, outside a pull request: the contract's own owner."""
    owner = (contract.get("metadata") or {}).get("owner") if isinstance(contract.get("metadata"), Mapping) else None
    name = (contract.get("metadata") or {}).get("name") if isinstance(contract.get("metadata"), Mapping) else None
    return Reader(owner=str(owner) if owner else None, pipeline=str(name) if name else None)


def table_decision(
    contract: Mapping[str, Any], iceberg_env: Mapping[str, Any] | None, reader: Reader | None = None
) -> Decision | None:
    """The access decision for the contract's table (streamwarden.iceberg.access); None when the
    contract declares no complete table or the environment has no iceberg section (nothing is
    read). ``reader`` None: the contract's own owner, no pull request."""
    try:
        name = declared_table(contract)
    except IcebergFactsError:
        return None
    access = access_of(iceberg_env)
    if name is None or not access.configured:
        return None
    return decide(access, reader or reader_of(contract), *name)


def open_contract_table(
    contract: Mapping[str, Any],
    iceberg_env: Mapping[str, Any] | None,
    root: Path,
    reader: Reader | None = None,
    *,
    command_line: bool = False,
) -> ContractTable | None:
    """Open the contract's table through the catalog ``iceberg_env`` configures (the environment's
    ``iceberg`` section, may be None; ``root``: the directory of streamwarden.yaml), when the
    environment lets ``reader`` read it (AccessRefused otherwise). None when the contract declares
    no table; every failure is an IcebergFactsError with a redacted message. ``command_line``: the
    table was named on the command line (``init --table``), not by a contract: only the catalog rule
    applies, not the grants."""
    name = declared_table(contract)
    if name is None:
        return None
    catalog_name, identifier = name
    access = access_of(iceberg_env)
    if not access.configured:  # no iceberg section: a gap in the facts (SW-FACT-001), no table is opened
        raise IcebergFactsError(
            f"the environment has no iceberg section: add environments.<env>.iceberg.catalogs.{catalog_name} "
            f"to streamwarden.yaml to read {identifier}"
        )
    if command_line:
        access, reader = replace(access, grants=None), Reader()
    decision = decide(access, reader or reader_of(contract), catalog_name, identifier)
    if not decision.allowed:
        raise AccessRefused(decision)
    props: dict[str, str] = {}
    try:
        props = catalog_properties(
            catalog_name, (iceberg_env or {}).get("catalogs"), root, use_pyiceberg_config=access.use_pyiceberg_config
        )
        with compat.recording() as adapted:
            timeout_ms = (iceberg_env or {}).get("timeout")
            catalog = open_catalog(catalog_name, props, timeout_ms if isinstance(timeout_ms, int) else None)
            table = open_table(catalog, catalog_name, identifier, props)
    except IcebergFactsError:
        raise
    except Exception as exc:  # a configuration shape no check expected: still a gap, never a traceback
        why = f"table {identifier} in catalog '{catalog_name}' could not be read: {describe(exc, props)}"
        raise IcebergFactsError(why) from None
    return ContractTable(catalog_name, identifier, table, props, tuple(adapted))


def _explain(exc: BaseException, props: Mapping[str, Any], *, metadata: bool = False) -> str:
    """A short cause for the common failures, then the redacted original message."""
    from streamwarden.iceberg.rest_http import RestHttpError

    if isinstance(exc, (classes.UntrustedClass, RestHttpError)):
        return _bounded(redact(str(exc), props))
    refused = compat.refusal(exc) if metadata else None
    if refused is not None:  # the field refused, and whether that is a reader limit or invalid metadata
        return _bounded(redact(refused, props))
    name = type(exc).__name__
    text = str(exc).lower()
    if isinstance(exc, PermissionError) or name in ("ForbiddenError", "UnauthorizedError", "AuthorizationExpiredError"):
        cause = "permission denied"
    elif name == "JSONDecodeError" or "expecting value" in text:
        cause = "the table metadata file is corrupt or not Iceberg metadata"
    elif isinstance(exc, FileNotFoundError) or "no such file" in text:
        cause = "a metadata file is missing"
    elif (
        isinstance(exc, (ConnectionError, TimeoutError))
        or name in ("OperationalError",)
        or any(
            w in text
            for w in ("connection refused", "timed out", "name or service not known", "max retries", "unable to open")
        )
    ):
        cause = "the catalog is unreachable"
    else:
        cause = ""
    detail = describe(exc, props)
    return f"{cause} ({detail})" if cause else detail
