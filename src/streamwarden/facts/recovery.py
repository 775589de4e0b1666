"""Facts for the recovery verbs (``gate``, ``evidence``): one contract, one environment, every
source through the one pipeline (facts/pipeline.py), the savepoint source set to read the
savepoint a restore would use (``--restore-from``, else Flink's newest retained checkpoint before
``--since``, else the candidate Flink names) and to plan the table side of that restore. What the
evidence record shows of the table besides its facts (its catalog, the properties a printed
command may carry, the branch's ancestry) is read from the table the Iceberg source opened. A
source the environment configures but that cannot be read is unavailable (SW-FACT-001); nothing
here raises for it. Unknown environments and contracts are the caller's exit-2 errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamwarden.contracts import Contract
from streamwarden.contracts.config import Config
from streamwarden.facts import pipeline
from streamwarden.facts.deployment_source import DeploymentSettings
from streamwarden.facts.savepoint import SavepointSettings, ancestry_of
from streamwarden.facts.source import GatherContext, Subject, checked_branch
from streamwarden.iceberg import MAIN_BRANCH
from streamwarden.iceberg.catalog import public_properties


@dataclass
class RecoveryFacts:
    facts: dict[str, Any]
    catalog: str | None = None
    identifier: str | None = None
    catalog_properties: dict[str, str] = field(default_factory=dict)  # what a printed command may carry
    withheld_properties: list[str] = field(default_factory=list)  # secrets: left to the environment
    branch: str = MAIN_BRANCH
    ancestry: list[dict[str, Any]] = field(default_factory=list)  # newest first
    ancestry_complete: bool = False
    rollback_to: str | None = None  # --rollback-to as given: the operator's named target


def gather_recovery(
    contract: Contract,
    config: Config,
    env_name: str,
    now_ms: int,
    *,
    restore_from: str | None = None,
    rollback_to: str | None = None,
    since_ms: int | None = None,
) -> RecoveryFacts:
    env = config.environment(env_name)  # an unknown environment is the caller's exit 2
    settings = [
        DeploymentSettings(config.flink_known_keys),
        SavepointSettings(restore=True, restore_from=restore_from, since_ms=since_ms, rollback_to=rollback_to),
    ]
    subject = Subject(contract.data, contract.path)
    pipeline.gather([subject], env, GatherContext.of(config.root, now_ms, settings), recovery=True)
    out = RecoveryFacts(subject.facts, branch=checked_branch(contract.data, env), rollback_to=rollback_to)
    table = subject.table
    if table is not None:
        out.catalog, out.identifier = table.catalog, table.identifier
        out.catalog_properties, out.withheld_properties = public_properties(table.props)
        out.ancestry, out.ancestry_complete = ancestry_of(subject, env)
    return out
