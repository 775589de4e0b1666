"""What the data facts of one run share (facts/spark_data.py): the state file, the scan budget and
what the run's scans have planned so far. No Spark, no PyIceberg here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.facts.data_state import load_state
from streamwarden.iceberg.access import ScanBudget


class DataFactsError(Exception):
    """A gap in the data facts, with a message ready for SW-FACT-001."""


@dataclass
class DataRun:
    """What the data facts of one run share: the state file (read once; written after each scan
    unless ``read_only``, as in a pull request, whose contracts never move the trusted state), the
    scan budget (``iceberg.data.scan_budget``) and what the run's scans have planned so far."""

    state_file: Path | None = None
    read_only: bool = False
    budget: ScanBudget = field(default_factory=ScanBudget)
    spent: dict[str, int] = field(default_factory=lambda: {"files": 0, "bytes": 0, "rows": 0})
    scans: int = 0  # table scans made (a table scanned once for several contracts counts once)
    _state: dict[str, Any] | None = None

    def state(self) -> dict[str, Any] | None:
        if self.state_file is None:
            return None
        if self._state is None:
            self._state = load_state(self.state_file)
        return self._state

    def charge(self, planned: Mapping[str, int], what: str) -> None:
        """Count a scan's planned work against the budget before it reads anything; over it, the
        scan is not run (DataFactsError, SW-FACT-001 names the budget)."""
        for unit in ("files", "bytes", "rows"):
            limit = getattr(self.budget, unit)
            if limit is not None and self.spent[unit] + planned[unit] > limit:
                raise DataFactsError(
                    f"the data scan of {what} would read {planned[unit]} {unit} ({self.spent[unit]} read already "
                    f"in this run), over the scan budget of {limit} {unit} per run "
                    f"(iceberg.data.scan_budget.{unit} in streamwarden.yaml): not scanned"
                )
        for unit in self.spent:
            self.spent[unit] += planned[unit]
        self.scans += 1
