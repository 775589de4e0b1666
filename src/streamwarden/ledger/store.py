"""The ledger table through PyIceberg: opened in the catalog streamwarden.yaml names (the
environment's ``iceberg.catalogs``, exactly as a contract's table is opened), created on the first
write, appended to one decision at a time, read back for one table, and the restore tag.

Every write is one Iceberg commit (``table.append`` of a one-row Arrow table): a row is in the
ledger whole or not at all. A write first reads the ledger for the row's ``decision_id``: a retry
of the same decision writes nothing. Errors are :class:`LedgerError` (exit 2), redacted as the
Iceberg facts' are (``iceberg.catalog.describe``). pyiceberg and pyarrow are imported inside the
functions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.core.errors import StreamwardenError
from streamwarden.iceberg.catalog import IcebergFactsError, catalog_properties, describe, open_catalog
from streamwarden.ledger.schema import READ_COLUMNS, iceberg_schema

READ_LIMIT = 1000  # rows of one table input.ledger keeps, the most recent first
TAG_PREFIX = "streamwarden-restore-"


class LedgerError(StreamwardenError):
    """The ledger cannot be opened, created, read or written (exit 2; nothing was written)."""


class LedgerMissing(LedgerError):
    """The ledger table does not exist yet (nothing was ever recorded): a reader sees no rows."""


@dataclass(frozen=True)
class Ledger:
    catalog: str
    identifier: str
    table: Any  # pyiceberg.table.Table
    props: Mapping[str, str]


def open_ledger(
    section: Mapping[str, Any], iceberg_env: Mapping[str, Any] | None, root: Path, *, create: bool
) -> Ledger:
    """The ledger ``section`` (``{catalog, table}``) names, through the environment's catalogs.
    ``create``: a missing table (and namespace) is created with the ledger's schema; else a
    missing ledger is a LedgerError, as is every failure (redacted)."""
    name, identifier = str(section["catalog"]), str(section["table"])
    where = f"ledger {identifier} in catalog '{name}'"
    props: dict[str, str] = {}
    try:
        env = iceberg_env or {}
        props = catalog_properties(
            name, env.get("catalogs"), root, use_pyiceberg_config=env.get("use_pyiceberg_config") is True
        )
        timeout = env.get("timeout")
        catalog = open_catalog(name, props, timeout if isinstance(timeout, int) else None)
    except IcebergFactsError as exc:
        raise LedgerError(f"{where} cannot be opened: {exc}") from None
    try:
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
    except ImportError:  # pragma: no cover - open_catalog imported it already
        raise LedgerError(f"{where}: pyiceberg is not installed") from None
    try:
        try:
            table = catalog.load_table(identifier)
        except (NoSuchTableError, NoSuchNamespaceError):
            if not create:
                raise LedgerMissing(f"{where} does not exist yet (the first --record creates it)") from None
            namespace = identifier.rsplit(".", 1)[0]
            catalog.create_namespace_if_not_exists(namespace)
            table = catalog.create_table_if_not_exists(identifier, iceberg_schema(), properties={"format-version": "2"})
    except LedgerError:
        raise
    except Exception as exc:
        raise LedgerError(f"{where} cannot be opened: {describe(exc, props)}") from None
    return Ledger(name, identifier, table, props)


def _equal(column: str, value: str) -> Any:
    """``column = value`` as a PyIceberg expression (a value, never parsed: no injection)."""
    from pyiceberg.expressions import EqualTo

    equal: Any = EqualTo  # its constructor takes (term, literal); its pydantic fields type otherwise
    return equal(column, value)


def has_decision(ledger: Ledger, decision_id: str) -> bool:
    """Whether the ledger holds a row of ``decision_id`` (a filtered scan, one column)."""
    try:
        found = ledger.table.scan(row_filter=_equal("decision_id", decision_id), selected_fields=("decision_id",))
        return bool(found.to_arrow().num_rows)
    except Exception as exc:
        raise LedgerError(f"ledger {ledger.identifier} cannot be read: {describe(exc, ledger.props)}") from None


def append_once(ledger: Ledger, row: Mapping[str, Any]) -> bool:
    """Append ``row`` in one commit unless its ``decision_id`` is there already: True when written."""
    if has_decision(ledger, str(row["decision_id"])):
        return False
    import pyarrow as pa

    try:
        arrow = pa.Table.from_pylist([dict(row)], schema=ledger.table.schema().as_arrow())
        ledger.table.append(arrow)
    except Exception as exc:
        raise LedgerError(f"ledger {ledger.identifier} cannot be written: {describe(exc, ledger.props)}") from None
    return True


def read_rows(ledger: Ledger, table_identifier: str, limit: int = READ_LIMIT) -> list[dict[str, Any]]:
    """The rows about ``table_identifier`` (a row filter: the scan skips files without it), the
    most recent first, at most ``limit``; ``recorded_at`` as ``recorded_at_ms``."""
    try:
        scan = ledger.table.scan(row_filter=_equal("table_identifier", table_identifier), selected_fields=READ_COLUMNS)
        rows = scan.to_arrow().to_pylist()
    except Exception as exc:
        raise LedgerError(f"ledger {ledger.identifier} cannot be read: {describe(exc, ledger.props)}") from None
    out = []
    for r in rows:
        when = r.pop("recorded_at", None)
        r["recorded_at_ms"] = int(when.timestamp() * 1000) if isinstance(when, dt.datetime) else None
        r["replay_snapshot_ids"] = list(r.get("replay_snapshot_ids") or [])
        out.append(r)
    out.sort(key=lambda r: (r["recorded_at_ms"] or 0, r["decision_id"]), reverse=True)
    return out[:limit]


def tag_name(decision: str) -> str:
    return TAG_PREFIX + decision


def tag_snapshot(table: Any, name: str, snapshot_id: int, max_ref_age_ms: int | None, props: Mapping[str, str]) -> bool:
    """Create tag ``name`` at ``snapshot_id`` on ``table`` (one commit through PyIceberg's
    ManageSnapshots): True when created, False when it is there at that snapshot already; at
    another snapshot, or a branch of that name, is a LedgerError."""
    refs = table.metadata.refs or {}
    ref = refs.get(name)
    if ref is not None:
        kind = str(getattr(ref.snapshot_ref_type, "value", ref.snapshot_ref_type))
        if kind == "tag" and ref.snapshot_id == snapshot_id:
            return False
        raise LedgerError(
            f"the table already has a {kind} {name} at snapshot {ref.snapshot_id}, not at {snapshot_id}: "
            "it was left as it is",
            hint="a tag names one restore point; drop it first if it is wrong (ALTER TABLE ... DROP TAG)",
        )
    try:
        table.manage_snapshots().create_tag(snapshot_id, name, max_ref_age_ms=max_ref_age_ms).commit()
    except Exception as exc:
        raise LedgerError(f"tag {name} cannot be created: {describe(exc, props)}") from None
    return True
