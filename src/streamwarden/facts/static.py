"""Facts that need no live system: the repository files a contract names (``job.deployment``).

Live sources (Flink REST, Iceberg, Spark, savepoints) are added by facts/live.py (``check --env``)
or facts/recovery.py (``gate``, ``evidence``); until a source is read for the run it is
``{"available": false, "configured": false}``, which no rule treats as missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamwarden.facts.source import SOURCES, GatherContext, not_configured


def gather_static_facts(contract: Any, root: Path, known_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    facts: dict[str, Any] = {name: not_configured() for name in SOURCES}
    job = contract.data.get("job") or {}
    if job.get("deployment"):  # the deployment gatherer (and what it imports) only when it reads a file
        from streamwarden.facts import deployment

        ctx = GatherContext(root, contract_file=contract.path, known_keys=known_keys)
        facts["deployment"] = deployment.gather(contract.data, {}, ctx)
    return facts


def gather_named_deployment(
    data: dict[str, Any], directory: Path, root: Path, known_keys: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``facts.deployment`` of a contract's data whose ``job.deployment`` entries are relative to
    ``directory`` (a resolved directory in the repository), not to the contract's file, and must
    lie in the repository: in a pull request, the files the base's contract names
    (``BaseSnapshot.named_deployment``)."""
    from streamwarden.facts import deployment

    return deployment.gather_deployment(data, directory, root, known_keys=known_keys, directory=directory)
