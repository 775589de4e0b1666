"""Live facts for ``--env NAME``: Flink REST, the Iceberg catalog and Spark data scans.

Each source is gathered only when the environment configures it (Flink) or the contract declares
what it proves (a ``table`` section for Iceberg, quality / retention.data for Spark). Hosts come
from ``streamwarden.yaml`` only, never from a contract. Heavy libraries are imported here, lazily.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streamwarden import progress
from streamwarden.errors import SetupError
from streamwarden.facts.static import not_configured

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
    """For each normalized contract, its live fact sections (``flink``, ``iceberg``, ``data``).

    Raises SetupError (exit 2) when the environment configures a source that this run needs and
    the install lacks its extra: that is not a gap in the facts but a broken setup."""
    require_extras(contracts, env)
    out: list[dict[str, Any]] = [{} for _ in contracts]
    if env.get("flink"):
        from streamwarden.facts.flink import gather_flink, job_name

        progress.set_phase("Flink: reading the running jobs")
        by_job = gather_flink(list(contracts), env["flink"], root)
        for facts, contract in zip(out, contracts, strict=True):
            facts["flink"] = by_job.get(job_name(contract), not_configured())
    with_table = [isinstance(c.get("table"), dict) for c in contracts]
    if any(with_table):
        progress.set_phase("Iceberg: reading tables", sum(with_table))
    for facts, contract, has_table in zip(out, contracts, with_table, strict=True):
        if has_table:
            from streamwarden.facts.iceberg import gather_iceberg_table

            facts["iceberg"], table = gather_iceberg_table(contract, env.get("iceberg"), root, now_ms)
            retained = _retained(facts.get("flink"), table)
            if retained:
                facts["savepoint"] = {**not_configured(), "retained": retained}
            progress.advance()
    from streamwarden.facts.spark_data import data_promises

    if any(data_promises(c) for c in contracts):
        from streamwarden.facts.spark_data import gather_data, stop_spark

        progress.set_phase("Spark scan: reading table data", len(contracts))
        try:
            for facts, contract in zip(out, contracts, strict=True):
                facts["data"] = gather_data(
                    contract, env, root, now_ms, since_snapshot=since_snapshot, state_file=state_file
                )
                progress.advance()
        finally:
            stop_spark()
    progress.set_phase("evaluating policies")
    return out


def _retained(flink: dict[str, Any] | None, table: Any) -> list[dict[str, Any]]:
    """The retained checkpoints and savepoints Flink reports for the pipeline's job, each matched
    to the table snapshot of its checkpoint (SW-RET-007 in a scheduled audit): no savepoint file is
    read, so ``facts.savepoint`` stays not configured and only carries ``retained``."""
    if table is None or not flink or not flink.get("available") or not flink.get("job_id"):
        return []
    from streamwarden.facts.recovery import flink_entries
    from streamwarden.facts.restore import retained_matches
    from streamwarden.iceberg.snapshots import branch_ancestry

    ancestry, complete = branch_ancestry(table, "main")
    return retained_matches(flink_entries(flink), ancestry, flink["job_id"], complete=complete)


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
