"""Live facts for ``--env NAME``: Flink REST, the Iceberg catalog and Spark data scans.

Each source is gathered only when the environment configures it (Flink) or the contract declares
what it proves (a ``table`` section for Iceberg, quality / retention.data for Spark). Hosts come
from ``streamwarden.yaml`` only, never from a contract. Heavy libraries are imported here, lazily.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from streamwarden.core import progress
from streamwarden.core.errors import SetupError
from streamwarden.facts.data_run import DataRun
from streamwarden.facts.restore import names_job, retained_checkpoints
from streamwarden.facts.source import GatherContext, not_configured, refused
from streamwarden.iceberg.access import Reader
from streamwarden.iceberg.catalog import ContractTable, table_decision
from streamwarden.iceberg.snapshots import branch_ancestry

# environment section, and the extra of the same name -> (what it is, the package the extra installs)
_EXTRAS = {"iceberg": ("Iceberg", "pyiceberg"), "spark": ("Spark", "pyspark")}


def gather_live(
    contracts: Sequence[dict[str, Any]],
    env: dict[str, Any],
    root: Path,
    now_ms: int,
    *,
    since_snapshot: int | None = None,
    state_file: Path | None = None,
    readers: Sequence[Reader | None] | None = None,
    data_run: DataRun | None = None,
) -> list[dict[str, Any]]:
    """For each normalized contract, its live fact sections (``flink``, ``iceberg``, ``data``,
    ``access``, and ``savepoint.retained`` when Flink names retained checkpoints), through the
    gatherers of facts/source.py: the same functions facts/recovery.py calls for one contract.

    ``access`` is the environment's decision on the contract's table (streamwarden.iceberg.access;
    ``readers``: who reads, per contract, None for the contract's own owner outside a pull request):
    a table the contract may not read is never opened, and its ``iceberg`` and ``data`` sections say
    so (SW-FACT-002). The contracts on one table share one data scan (spark_data.gather_many);
    ``data_run`` carries the state file and the scan budget across the calls of one run.

    Raises SetupError (exit 2) when the environment configures a source that this run needs and
    the install lacks its extra: that is not a gap in the facts but a broken setup."""
    from streamwarden.facts import iceberg, spark_data

    require_extras(contracts, env)
    ctx = GatherContext(root, now_ms, since_snapshot=since_snapshot, state_file=state_file)
    ctx = replace(ctx, data_run=data_run or DataRun(state_file))
    who = list(readers) if readers is not None else [None] * len(contracts)
    out: list[dict[str, Any]] = [{} for _ in contracts]
    if env.get("flink"):
        from streamwarden.facts import flink

        progress.set_phase("Flink: reading the running jobs")
        for facts, section in zip(out, flink.gather_many(list(contracts), env, ctx), strict=True):
            facts["flink"] = section
    with_table = [isinstance(c.get("table"), dict) for c in contracts]
    promises = [spark_data.data_promises(c) for c in contracts]
    scans = any(promises)
    if scans:
        progress.set_phase("Iceberg and Spark scan: reading tables and their data", len(contracts))
    elif any(with_table):
        progress.set_phase("Iceberg: reading tables", sum(with_table))
    tables: list[ContractTable | None] = [None] * len(contracts)
    try:
        for i, (facts, contract, has_table) in enumerate(zip(out, contracts, with_table, strict=True)):
            decision = table_decision(contract, env.get("iceberg"), who[i])
            if decision is not None:
                facts["access"] = decision.section()
            if decision is not None and not decision.allowed:  # nothing of the table is read
                facts["iceberg"] = refused(decision.reason)
                if promises[i]:
                    facts["data"] = refused(decision.reason)
                if scans or has_table:
                    progress.advance()
                continue
            if has_table:
                facts["iceberg"], table = iceberg.gather_table(contract, env, replace(ctx, reader=who[i]))
                tables[i] = table
                flink_facts = facts.get("flink") or {}
                if table is not None and names_job(flink_facts):  # the walk reads the whole branch
                    retained = retained_checkpoints(flink_facts, *branch_ancestry(table.table, "main"))
                    if retained:  # no savepoint file is read: the section stays not configured
                        facts["savepoint"] = {**not_configured(), "retained": retained}
            if not promises[i] and (scans or has_table):
                progress.advance()
        if scans:  # one scan per table and snapshot, for every contract on it (tables opened once)
            todo = [i for i, p in enumerate(promises) if p and "data" not in out[i]]
            sections = spark_data.gather_many(
                [contracts[i] for i in todo], env, ctx, [tables[i] for i in todo], [who[i] for i in todo]
            )
            for i, section in zip(todo, sections, strict=True):
                out[i]["data"] = section
                progress.advance()
    finally:
        if scans:
            spark_data.stop_spark()
    progress.set_phase("evaluating policies")
    return out


def require_extras(contracts: Sequence[dict[str, Any]], env: dict[str, Any]) -> None:
    """Fail before gathering when the environment configures Iceberg or Spark, a contract of this
    run needs it, and its package cannot be imported (``pip install 'streamwarden[iceberg]'`` /
    ``[spark]`` was not run). A Spark scan reads the table through the catalog, so it needs
    pyiceberg too. A section no contract needs asks for nothing; an unreachable service is not
    checked here (it is a gap in the facts, SW-FACT-001)."""
    from streamwarden.facts.spark_data import data_promises

    scans = any(data_promises(c) for c in contracts)
    tables = scans or any(isinstance(c.get("table"), dict) for c in contracts)
    needed: list[tuple[str, str]] = []  # (section that needs it, extra), the first missing is reported
    if env.get("iceberg") and tables:
        needed.append(("iceberg", "iceberg"))
    if env.get("spark") and scans:
        needed += [("spark", "spark"), ("spark", "iceberg")]
    for section, extra in needed:
        package = _EXTRAS[extra][1]
        try:
            importlib.import_module(package)
        except ImportError as exc:
            what = f"{_EXTRAS[section][0]} (its `{section}` section in streamwarden.yaml)"
            if section != extra:
                what += f" for data scans, which read the table through {package},"
            raise SetupError(
                f"the environment configures {what} but {package} is not installed ({exc}): "
                f"install streamwarden's {extra} extra, then run the check again",
                hint=f"pip install 'streamwarden[{extra}]'",
            ) from None
