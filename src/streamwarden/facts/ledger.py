"""Live ledger facts (``facts.ledger``, and ``input.ledger`` built from it): the recovery
ledger's rows about the contract's table, when the environment has a ledger (``ledger:`` in
streamwarden.yaml, the environment's own or the top-level one). Read with a PyIceberg row filter
on ``table_identifier`` (the scan skips the ledger's files that hold no row of that table), at most
``READ_LIMIT`` rows, the most recent first. A ledger that does not exist yet has no rows (nothing
was recorded); one that cannot be read is unavailable (SW-FACT-001: the gate fails closed).
The rows are facts; which rollback a row explains is the rules' to decide."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streamwarden.core import progress
from streamwarden.facts.source import GatherContext, Subject, available, not_configured, unavailable


class LedgerSource:
    """``facts.ledger``: the environment's ``ledger`` section, through its ``iceberg`` catalogs."""

    name = "ledger"
    section = "ledger"
    extra = "iceberg"
    phase = "Iceberg: reading the recovery ledger"
    recovery = True

    def needed(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> bool:
        table = contract.get("table")
        return isinstance(env.get("ledger"), Mapping) and isinstance(table, Mapping) and bool(table.get("identifier"))

    def modules(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> Sequence[tuple[str, str, str]]:
        return (("ledger", "iceberg", "pyiceberg"),) if self.needed(contract, env) else ()

    def gather(self, subjects: Sequence[Subject], env: Mapping[str, Any], ctx: GatherContext) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        opened: Any = None
        error: str | None = None
        for s in subjects:
            if not self.needed(s.data, env):
                out.append(not_configured())
                continue
            section = env["ledger"]
            ident = str(section.get("table"))
            if opened is None and error is None:
                opened, error = _open(section, env, ctx)
            if error is not None:
                out.append(unavailable(error, table=ident))
            else:
                out.append(_rows(opened, ident, str(s.data["table"]["identifier"])))
            progress.advance()
        return out


def _open(section: Mapping[str, Any], env: Mapping[str, Any], ctx: GatherContext) -> tuple[Any, str | None]:
    """The opened ledger, ``False`` when it does not exist yet, or the error."""
    from streamwarden.ledger.store import LedgerError, LedgerMissing, open_ledger

    try:
        return open_ledger(section, env.get("iceberg"), ctx.root, create=False), None
    except LedgerMissing:
        return False, None
    except LedgerError as exc:
        return None, exc.message


def _rows(opened: Any, ident: str, table: str) -> dict[str, Any]:
    from streamwarden.ledger.store import READ_LIMIT, LedgerError, read_rows

    if opened is False:
        return available(table=ident, exists=False, rows=[], limit=READ_LIMIT)
    try:
        rows = read_rows(opened, table)
    except LedgerError as exc:
        return unavailable(exc.message, table=ident)
    return available(table=ident, exists=True, rows=rows, limit=READ_LIMIT)
