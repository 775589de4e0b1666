"""``savepoint inspect``: what Flink wrote in a savepoint's or retained checkpoint's ``_metadata``,
its operators matched to a contract's uids. Data only; report/savepoint.py renders it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamwarden.contracts import load_contract
from streamwarden.core.errors import UsageError
from streamwarden.facts.savepoint import load_savepoint, savepoint_facts


def inspect_savepoint(location: str, contract_file: str | None = None) -> dict[str, Any]:
    """The savepoint at ``location`` (a directory, its ``_metadata`` or a URI): its operators,
    matched to the uids of the contract in ``contract_file`` when one is given (a missing file is
    a UsageError, exit 2)."""
    contract = None
    if contract_file:
        p = Path(contract_file)
        if not p.is_file():
            raise UsageError("contract file does not exist", file=contract_file)
        contract = load_contract(p, Path.cwd()).data
    return savepoint_facts(load_savepoint(location), contract)
