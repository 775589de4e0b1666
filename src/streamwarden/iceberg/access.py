"""What a contract may read: the access settings of an environment's ``iceberg`` section.

The environment (``streamwarden.yaml``; in a pull request the trusted ref's) decides, never the
contract:

- ``catalogs``: the only catalogs a contract's ``table.catalog`` may name, unless
  ``use_pyiceberg_config: true`` lets it name one that PyIceberg's own configuration knows;
- ``allow``: grants, each naming one namespace or one table exactly, optionally in one catalog and
  for some owners (``metadata.owner``). Without ``allow``, every table of the usable catalogs may be
  read, except in a pull request: there a contract reads only the table its base version reads;
- ``data.show_values``: whether data findings may show row values (default: counts only);
- ``data.scan_budget``: files, bytes and rows one run may scan (checked before a scan reads).

A refusal is a :class:`Decision` with ``allowed`` false: the Iceberg source (facts/iceberg.py) puts it
in ``input.facts.access`` and gather nothing of the table (SW-FACT-002 reports it), and
``iceberg.catalog.open_contract_table`` refuses to open the table (:class:`AccessRefused`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reader:
    """Who reads: the contract's owner and, in a pull request, what its trusted version says.

    ``owner`` is the owner the grants are matched against (in a pull request: the base version's,
    None for a contract new in the pull request). ``base_table`` is the (catalog, identifier) the
    base version reads (pull request only)."""

    owner: str | None = None
    pull_request: bool = False
    base_table: tuple[str, str] | None = None
    pipeline: str | None = None


@dataclass(frozen=True)
class Grant:
    index: int
    catalog: str | None
    namespace: str | None
    table: str | None
    owners: tuple[str, ...] | None

    def covers(self, catalog: str, identifier: str, owner: str | None) -> bool:
        if self.catalog is not None and self.catalog != catalog:
            return False
        if self.owners is not None and owner not in self.owners:
            return False
        if self.table is not None:
            return identifier == self.table
        namespace = identifier.rpartition(".")[0]
        return namespace != "" and namespace == self.namespace


@dataclass(frozen=True)
class ScanBudget:
    files: int | None = None
    bytes: int | None = None
    rows: int | None = None


@dataclass(frozen=True)
class Access:
    """The access settings of one environment's ``iceberg`` section."""

    configured: bool  # the environment has an iceberg section
    catalogs: frozenset[str]
    use_pyiceberg_config: bool
    grants: tuple[Grant, ...] | None  # None: no allow list
    show_values: bool
    budget: ScanBudget


def access_of(iceberg_env: Mapping[str, Any] | None) -> Access:
    section: Mapping[str, Any] = iceberg_env if isinstance(iceberg_env, Mapping) else {}
    grants: tuple[Grant, ...] | None = None
    if isinstance(section.get("allow"), list):
        grants = tuple(
            Grant(
                index=i,
                catalog=_str(g.get("catalog")),
                namespace=_str(g.get("namespace")),
                table=_str(g.get("table")),
                owners=tuple(str(o) for o in g["owners"]) if isinstance(g.get("owners"), list) else None,
            )
            for i, g in enumerate(section["allow"])
            if isinstance(g, Mapping)
        )
    data: Mapping[str, Any] = section["data"] if isinstance(section.get("data"), Mapping) else {}
    budget: Mapping[str, Any] = data["scan_budget"] if isinstance(data.get("scan_budget"), Mapping) else {}
    return Access(
        configured=isinstance(iceberg_env, Mapping),
        catalogs=frozenset(str(k) for k in (section.get("catalogs") or {})),
        use_pyiceberg_config=section.get("use_pyiceberg_config") is True,
        grants=grants,
        show_values=data.get("show_values") is True,
        budget=ScanBudget(**{k: int(budget[k]) for k in ("files", "bytes", "rows") if isinstance(budget.get(k), int)}),
    )


@dataclass(frozen=True)
class Decision:
    allowed: bool
    catalog: str
    table: str
    owner: str | None
    field: str  # the contract field the decision is about (table.catalog or table.identifier)
    reason: str
    grant: str | None = None  # what allowed it: "allow[2]", "base", "no allow list"

    def section(self) -> dict[str, Any]:
        """``input.facts.access``."""
        return {
            "allowed": self.allowed,
            "catalog": self.catalog,
            "table": self.table,
            "owner": self.owner,
            "field": self.field,
            "reason": self.reason,
            "grant": self.grant,
        }


class AccessRefused(Exception):
    """The environment does not let the contract read its table (SW-FACT-002)."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


def decide(access: Access, reader: Reader, catalog: str, identifier: str) -> Decision:
    """May ``reader`` read ``catalog``.``identifier`` under ``access``?"""
    shown = f"{catalog}.{identifier}"

    def refuse(field: str, why: str) -> Decision:
        return Decision(False, catalog, identifier, reader.owner, field, why)

    if catalog not in access.catalogs and not access.use_pyiceberg_config:
        known = ", ".join(sorted(access.catalogs)) or "none"
        return refuse(
            "table.catalog",
            f"catalog '{catalog}' is not one this environment configures (iceberg.catalogs: {known}), "
            "and it does not opt into PyIceberg's own configuration (iceberg.use_pyiceberg_config)",
        )
    if access.grants is not None:
        for g in access.grants:
            if g.covers(catalog, identifier, reader.owner):
                return Decision(True, catalog, identifier, reader.owner, "table.identifier", "", f"allow[{g.index}]")
        whose = (
            f"owner '{reader.owner}'"
            if reader.owner is not None
            else "a contract whose owner is not yet on the base"
            if reader.pull_request
            else "a contract without metadata.owner"
        )
        return refuse("table.identifier", f"no entry of iceberg.allow grants {shown} to {whose}")
    if reader.pull_request:
        if reader.base_table == (catalog, identifier):
            return Decision(True, catalog, identifier, reader.owner, "table.identifier", "", "base")
        was = (
            f"its version on the base reads {reader.base_table[0]}.{reader.base_table[1]}"
            if reader.base_table is not None
            else "it has no version on the base that reads a table"
        )
        return refuse(
            "table.identifier",
            f"without iceberg.allow a pull request's contract reads only the table its version on the base "
            f"reads, and {was}",
        )
    return Decision(True, catalog, identifier, reader.owner, "table.identifier", "", "no allow list")


def _str(v: Any) -> str | None:
    return None if v is None else str(v)
