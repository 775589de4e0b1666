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

from streamwarden import progress
from streamwarden.errors import SetupError
from streamwarden.facts.restore import names_job, retained_checkpoints
from streamwarden.facts.source import GatherContext, not_configured
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
) -> list[dict[str, Any]]:
    """For each normalized contract, its live fact sections (``flink``, ``iceberg``, ``data``, and
    ``savepoint.retained`` when Flink names retained checkpoints), through the gatherers of
    facts/source.py: the same functions facts/recovery.py calls for one contract.

    Raises SetupError (exit 2) when the environment configures a source that this run needs and
    the install lacks its extra: that is not a gap in the facts but a broken setup."""
    from streamwarden.facts import iceberg, spark_data

    require_extras(contracts, env)
    ctx = GatherContext(root, now_ms, since_snapshot=since_snapshot, state_file=state_file)
    out: list[dict[str, Any]] = [{} for _ in contracts]
    if env.get("flink"):
        from streamwarden.facts import flink

        progress.set_phase("Flink: reading the running jobs")
        for facts, section in zip(out, flink.gather_many(list(contracts), env, ctx), strict=True):
            facts["flink"] = section
    with_table = [isinstance(c.get("table"), dict) for c in contracts]
    scans = any(spark_data.data_promises(c) for c in contracts)
    if scans:
        progress.set_phase("Iceberg and Spark scan: reading tables and their data", len(contracts))
    elif any(with_table):
        progress.set_phase("Iceberg: reading tables", sum(with_table))
    try:
        for facts, contract, has_table in zip(out, contracts, with_table, strict=True):
            table = None
            if has_table:
                facts["iceberg"], table = iceberg.gather_table(contract, env, ctx)
                flink_facts = facts.get("flink") or {}
                if table is not None and names_job(flink_facts):  # the walk reads the whole branch
                    retained = retained_checkpoints(flink_facts, *branch_ancestry(table.table, "main"))
                    if retained:  # no savepoint file is read: the section stays not configured
                        facts["savepoint"] = {**not_configured(), "retained": retained}
            if scans:  # one table, opened once, for the table facts and the scan
                facts["data"] = spark_data.gather(contract, env, replace(ctx, table=table))
            if scans or has_table:
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
