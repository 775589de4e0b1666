"""A repository for gate/evidence tests: streamwarden.yaml with a `prod` environment whose Iceberg
catalog is a real PyIceberg SQL catalog, the example contract, a table the Iceberg Flink sink
committed checkpoints 1..20 into, and savepoints written next to it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result
from tests.conftest import CLEAN_CONTRACT
from tests.iceberg_tables import JOB_A, FlinkSink, Lake
from tests.savepoint_files import Operator, orders_job, write_savepoint

from streamwarden.cli.recovery import evidence, gate
from streamwarden.flink.uids import operator_id

DAY_MS = 86_400_000
SINK_UID = "orders-iceberg-sink"
SNAPSHOT_AGE = str(8 * DAY_MS)  # the contract keeps snapshots 7d: the table must keep them longer (SW-RET-001)


@dataclass
class RecoveryRepo:
    root: Path
    upsert: bool = True
    contract_text: str = CLEAN_CONTRACT
    lake: Lake = field(init=False)
    sink: FlinkSink = field(init=False)

    def __post_init__(self) -> None:
        self.lake = Lake(self.root)
        props = {"history.expire.max-snapshot-age-ms": SNAPSHOT_AGE, "write.upsert.enabled": str(self.upsert).lower()}
        table = self.lake.create_orders(props)
        self.sink = FlinkSink(self.lake, table, JOB_A, operator_id(SINK_UID))
        if not self.upsert:
            self.contract_text = self.contract_text.replace(
                'write.upsert.enabled: "true"', 'write.upsert.enabled: "false"'
            )
        self.write_contract(self.contract_text)
        config = {"contracts": ["contracts/**/*.yaml"], "environments": {"prod": {"iceberg": self.lake.environment()}}}
        (self.root / "streamwarden.yaml").write_text(yaml.safe_dump(config))

    def write_contract(self, text: str) -> None:
        (self.root / "contracts").mkdir(exist_ok=True)
        (self.root / "contracts" / "orders.yaml").write_text(text)

    def edit_contract(self, old: str, new: str) -> None:
        assert old in self.contract_text, old
        self.contract_text = self.contract_text.replace(old, new)
        self.write_contract(self.contract_text)

    def commit(self, first: int, last: int) -> list[int]:
        return self.sink.commit_range(first, last)

    def savepoint(
        self,
        checkpoint_id: int = 12,
        operators: list[Operator] | None = None,
        *,
        age_ms: int = 0,
        name: str = "1a2b3c4d5e6f",
        **kw: Any,
    ) -> Path:
        d = write_savepoint(
            self.root / "savepoints" / f"savepoint-{JOB_A[:6]}-{name}",
            operators or orders_job(),
            checkpoint_id=checkpoint_id,
            **kw,
        )
        when = (self.now_ms - age_ms) / 1000
        os.utime(d / "_metadata", (when, when))
        return d

    @property
    def now_ms(self) -> int:
        return self.lake.clock.now_ms + 60_000

    def now_arg(self) -> str:
        import datetime as dt

        return dt.datetime.fromtimestamp(self.now_ms / 1000, tz=dt.timezone.utc).isoformat().replace("+00:00", "Z")

    def run(self, command: str, *args: str) -> Result:
        cmd = gate if command == "gate" else evidence
        full = [
            "orders-enrichment",
            "--env",
            "prod",
            "--config",
            str(self.root / "streamwarden.yaml"),
            "--now",
            self.now_arg(),
            *args,
        ]
        result = CliRunner().invoke(cmd, full, catch_exceptions=False)
        assert "Traceback" not in result.output
        return result
