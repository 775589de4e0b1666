"""Facts that need no live system: the repository files a contract names (``job.deployment``).

Live sources (Flink REST, Iceberg, Spark, savepoints) are added by their own gatherers; until a
source is configured for the run it is ``{"available": false, "configured": false}``, which no
rule treats as missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamwarden.errors import StreamwardenError

SOURCES = ("deployment", "flink", "iceberg", "data", "savepoint")


def not_configured() -> dict[str, Any]:
    return {"available": False, "configured": False}


def unavailable(error: str) -> dict[str, Any]:
    return {"available": False, "configured": True, "error": error}


def gather_static_facts(contract: Any, root: Path, known_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    facts: dict[str, Any] = {name: not_configured() for name in SOURCES}
    job = contract.data.get("job") or {}
    if job.get("deployment"):
        from streamwarden.facts.deployment import gather_deployment

        try:
            facts["deployment"] = gather_deployment(contract.data, contract.path, root, known_keys=known_keys)
        except StreamwardenError as exc:
            facts["deployment"] = unavailable(exc.render())
    return facts
