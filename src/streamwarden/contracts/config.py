"""The repository configuration, ``streamwarden.yaml``: contract globs, extra policy dirs, fail_on,
named environments, how far ahead a waiver may expire, the recovery ledger. Connection details live
here or in the environment, never in a contract."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.contracts.normalize import UnitError, convert_units, lower_enums
from streamwarden.contracts.schemawalk import walker_for
from streamwarden.contracts.validate import validate_document
from streamwarden.core.errors import ContractErrors, InputError
from streamwarden.core.paths import display_path
from streamwarden.core.resources import CONFIG_SCHEMA, load_schema
from streamwarden.engine.limits import Limits
from streamwarden.yamlsafe.read import YamlDocument, load_single, parse_documents

CONFIG_NAMES = ("streamwarden.yaml", "streamwarden.yml")
FAIL_ON = ("error", "warning", "never")
DAY_MS = 86_400_000
WAIVER_MAX_HORIZON_MS = 365 * DAY_MS  # `waivers.max_horizon` unset: one year
NOTIFY_TIMEOUT_MS = 10_000  # a notify target's `timeout` unset
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class NotifyTarget:
    """One webhook target of ``notify:``: ``evidence --notify`` posts the notice of each consumer
    whose contact one of ``contacts`` matches to ``url`` (the host comes from here only, never
    from a contract), with the bearer token of the variable ``token_env``. ``where``: the
    target's place in streamwarden.yaml (file, line, field path), for errors."""

    name: str
    url: str
    contacts: tuple[str, ...]
    token_env: str | None = None
    timeout_ms: int = NOTIFY_TIMEOUT_MS
    file: str | None = None
    line: int | None = None
    path: str = "notify"


@dataclass(frozen=True)
class LedgerConfig:
    """Where the recovery ledger of one environment lives (``ledger:`` at the top level or in the
    environment, whose own wins): a catalog of that environment's ``iceberg.catalogs`` and the
    table as ``NAMESPACE.TABLE``. ``where``: the field path it was written at, ``line`` its line."""

    catalog: str
    table: str
    file: str | None = None
    line: int | None = None
    where: str = "ledger"

    def section(self) -> dict[str, str]:
        """What the environment's ``ledger`` section holds for the sources that read it."""
        return {"catalog": self.catalog, "table": self.table}


@dataclass
class Config:
    root: Path
    file: str | None = None
    contracts: list[str] = field(default_factory=lambda: ["contracts/**/*.yaml"])
    policies: list[Path] = field(default_factory=list)
    fail_on: str = "error"
    environments: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None  # the file, absolute
    contracts_set: bool = False  # `contracts:` written in the file: every file its globs match is a contract
    limits: Limits = field(default_factory=Limits)  # custom policies' time and memory limits
    flink_known_keys: tuple[str, ...] = ()  # `flink.known_keys`: keys SW-DEPLOY-001 accepts besides Flink's
    # `waivers.max_horizon`: how far ahead a waiver may expire (SW-WAIVER-001 reads it from the input)
    waiver_max_horizon_ms: int = WAIVER_MAX_HORIZON_MS
    notify: list[NotifyTarget] = field(default_factory=list)  # `notify:`: where `evidence --notify` posts
    ledgers: dict[str, LedgerConfig] = field(default_factory=dict)  # by environment: the ledger it records to

    def policy_settings(self) -> dict[str, Any]:
        """The part of this configuration the policies read: ``input.config``."""
        return {"waivers": {"max_horizon_ms": self.waiver_max_horizon_ms}}

    def environment(self, name: str) -> dict[str, Any]:
        if name not in self.environments:
            known = ", ".join(sorted(self.environments)) or "none"
            raise InputError(
                f"unknown environment '{name}' (configured: {known})",
                file=self.file,
                hint="environments are declared under `environments:` in streamwarden.yaml",
            )
        env: dict[str, Any] = expand_env(self.environments[name])
        ledger = self.ledgers.get(name)
        if ledger is not None:  # the top-level ledger applies here too: the sources read one section
            env["ledger"] = ledger.section()
        else:
            env.pop("ledger", None)
        return env

    def ledger_for(self, name: str) -> LedgerConfig | None:
        """The ledger environment ``name`` records to (None: none configured there)."""
        self.environment(name)  # an unknown environment is exit 2
        return self.ledgers.get(name)


def find_config(explicit: str | None, cwd: Path) -> Path | None:
    if explicit:
        p = Path(explicit)
        if not p.exists():
            raise InputError("configuration file does not exist", file=explicit)
        return p
    for name in CONFIG_NAMES:
        p = cwd / name
        if p.is_file():
            return p
    return None


def load_config(explicit: str | None = None, cwd: Path | None = None) -> Config:
    cwd = cwd or Path.cwd()
    path = find_config(explicit, cwd)
    if path is None:
        return Config(root=cwd)
    shown = display_path(path, cwd)
    # the file where it is (its directory resolved, the file itself not): a streamwarden.yaml that
    # is a symbolic link configures the directory it is in, and in a pull request the trusted ref
    # is asked for the file at that path, not at the link's target
    root = path.absolute().parent.resolve()
    config = config_from_document(load_single(path, shown), root)
    config.path = root / path.name
    return config


def config_from_text(text: str, shown: str, root: Path) -> Config:
    """A streamwarden.yaml read from somewhere else than the work tree (a trusted git ref)."""
    docs = [d for d in parse_documents(text, shown) if d.data is not None]
    if not docs:
        raise InputError("the file is empty (no YAML document)", file=shown, line=1)
    return config_from_document(docs[0], root)


def config_from_document(doc: YamlDocument, root: Path) -> Config:
    shown = doc.file
    if not isinstance(doc.data, dict):
        raise InputError("streamwarden.yaml must be a mapping at the top level", file=shown, line=doc.start_line)
    schema = load_schema(CONFIG_SCHEMA)
    walker = walker_for(schema)
    prepared = lower_enums(walker, schema, doc.data)
    errors = validate_document(doc, prepared, schema, what="configuration")
    if errors:
        raise ContractErrors(list(errors))
    try:
        data = convert_units(walker, schema, prepared)
    except UnitError as exc:
        raise InputError(str(exc), file=shown, line=doc.line_of(exc.path), path=exc.path) from None
    for i, pattern in enumerate(data.get("contracts") or []):
        _check_inside(pattern, f"contracts[{i}]", doc, "a glob")
    for i, directory in enumerate(data.get("policies") or []):
        _check_inside(directory, f"policies[{i}]", doc, "a policy directory")
    return Config(
        root=root,
        file=shown,
        contracts=list(data.get("contracts") or ["contracts/**/*.yaml"]),
        contracts_set=bool(data.get("contracts")),
        policies=[(root / p) for p in data.get("policies") or []],
        fail_on=str(data.get("fail_on") or "error"),
        environments=dict(data.get("environments") or {}),
        flink_known_keys=tuple((data.get("flink") or {}).get("known_keys") or ()),
        limits=_limits(data.get("limits") or {}),
        waiver_max_horizon_ms=_horizon(data.get("waivers") or {}),
        notify=_notify(data.get("notify") or [], doc),
        ledgers=_ledgers(data, doc),
    )


def _notify(items: list[Any], doc: YamlDocument) -> list[NotifyTarget]:
    """``notify:`` (its shape checked by the schema): unique names, a URL with a host and no
    credentials in it (the token comes from ``token_env``)."""
    from urllib.parse import urlsplit

    targets: list[NotifyTarget] = []
    for i, item in enumerate(items):
        path = f"notify[{i}]"
        name, url = str(item["name"]), str(item["url"])
        if any(t.name == name for t in targets):
            raise InputError(
                f"two notify targets are named {name!r}",
                file=doc.file,
                line=doc.line_of(f"{path}.name"),
                path=f"{path}.name",
                hint="give each target of `notify:` its own name",
            )
        try:
            parts = urlsplit(url)
            host, _ = parts.hostname, parts.port
        except ValueError as exc:
            host, parts = None, None
            why = str(exc)
        else:
            why = "it has no host"
        if parts is None or not host:
            raise InputError(
                f"notify target {name!r}: the url is not usable ({why})",
                file=doc.file,
                line=doc.line_of(f"{path}.url"),
                path=f"{path}.url",
                hint="write the webhook's http:// or https:// URL, e.g. https://hooks.example.com/streamwarden",
            )
        timeout = item.get("timeout")
        if timeout == 0:
            raise InputError(
                f"notify target {name!r}: a timeout of 0 lets no post finish",
                file=doc.file,
                line=doc.line_of(f"{path}.timeout"),
                path=f"{path}.timeout",
                hint="leave it out (10s) or give the longest a post may take, e.g. 30s",
            )
        targets.append(
            NotifyTarget(
                name=name,
                url=url,
                contacts=tuple(str(c) for c in item["contacts"]),
                token_env=item.get("token_env"),
                timeout_ms=timeout if isinstance(timeout, int) else NOTIFY_TIMEOUT_MS,
                file=doc.file,
                line=doc.line_of(path),
                path=path,
            )
        )
    return targets


def _ledgers(data: dict[str, Any], doc: YamlDocument) -> dict[str, LedgerConfig]:
    """Each environment's ledger: its own ``ledger``, else the top-level one when the environment
    configures ``iceberg`` (a ledger is an Iceberg table). The catalog must be one of that
    environment's ``iceberg.catalogs`` (or PyIceberg's own, with ``use_pyiceberg_config``)."""
    top = data.get("ledger")
    out: dict[str, LedgerConfig] = {}
    for env_name, env in (data.get("environments") or {}).items():
        env = env if isinstance(env, dict) else {}
        own = env.get("ledger")
        iceberg = env.get("iceberg")
        if isinstance(own, dict):
            where = f"environments.{env_name}.ledger"
            chosen = own
        elif isinstance(top, dict) and isinstance(iceberg, dict):
            where, chosen = "ledger", top
        else:
            continue
        ledger = LedgerConfig(
            str(chosen["catalog"]), str(chosen["table"]), doc.file, doc.line_of(f"{where}.catalog"), where
        )
        catalogs = (iceberg or {}).get("catalogs") if isinstance(iceberg, dict) else None
        catalogs = catalogs if isinstance(catalogs, dict) else {}
        pyiceberg_own = isinstance(iceberg, dict) and iceberg.get("use_pyiceberg_config") is True
        if ledger.catalog not in catalogs and not pyiceberg_own:
            known = ", ".join(sorted(catalogs)) or "none"
            raise InputError(
                f"the ledger's catalog '{ledger.catalog}' is not a catalog of environment '{env_name}' "
                f"(its iceberg.catalogs: {known})",
                file=doc.file,
                line=ledger.line,
                path=f"{where}.catalog",
                hint=f"name one of environments.{env_name}.iceberg.catalogs, or give the environment its own `ledger:`",
            )
        out[str(env_name)] = ledger
    return out


def _horizon(data: dict[str, Any]) -> int:
    horizon = data.get("max_horizon")
    return horizon if isinstance(horizon, int) and not isinstance(horizon, bool) else WAIVER_MAX_HORIZON_MS


def _limits(data: dict[str, Any]) -> Limits:
    default = Limits()
    timeout, memory = data.get("policy_timeout"), data.get("policy_memory")
    return Limits(
        timeout_ms=timeout if isinstance(timeout, int) else default.timeout_ms,
        memory_bytes=memory if isinstance(memory, int) else default.memory_bytes,
    )


def _check_inside(value: Any, path: str, doc: YamlDocument, what: str) -> None:
    """Globs and policy directories are relative to streamwarden.yaml and stay inside its directory
    (the repository root): never absolute, never climbing out with ``..``, no control characters."""
    if not isinstance(value, str):
        return
    problem = None
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        problem = "holds a control character"
    elif value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", value):
        problem = "is absolute"
    elif ".." in re.split(r"[\\/]", value):
        problem = "climbs out of the repository with '..'"
    if problem:
        raise InputError(
            f"{what} {value!r} {problem}" if "control" not in problem else f"{what} {problem}",
            file=doc.file,
            line=doc.line_of(path),
            path=path,
            hint="paths in streamwarden.yaml are relative to its directory and stay in it, e.g. contracts/**/*.yaml",
        )


def expand_env(value: Any) -> Any:
    """``${NAME}`` in a string value is replaced by the environment variable (never logged)."""
    if isinstance(value, str):

        def repl(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in os.environ:
                raise InputError(f"environment variable {name} is not set (referenced as ${{{name}}})")
            return os.environ[name]

        return _ENV_REF.sub(repl, value)
    if isinstance(value, dict):
        return {k: expand_env(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_env(v) for v in value]
    return value
