"""The deployment source's object: light, so a static check reads ``needed`` of every contract
without importing the deployment parsers (facts/deployment.py) for a contract that names no file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.core.errors import StreamwardenError
from streamwarden.facts.source import GatherContext, Subject, not_configured, unavailable


@dataclass(frozen=True)
class DeploymentSettings:
    """The deployment source's settings: ``flink.known_keys`` of streamwarden.yaml (the
    repository's own Flink keys, never reported as unknown)."""

    known_keys: tuple[str, ...] = ()


class DeploymentSource:
    """``facts.deployment``: the files a contract's ``job.deployment`` names, read from the
    repository (no environment, no extra): the one source a static check reads."""

    name = "deployment"
    section = None
    extra = None
    phase = "reading deployment files"
    recovery = True

    def needed(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> bool:
        job = contract.get("job") or {}
        return bool(job.get("deployment"))

    def modules(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> Sequence[tuple[str, str, str]]:
        return ()

    def gather(self, subjects: Sequence[Subject], env: Mapping[str, Any], ctx: GatherContext) -> list[dict[str, Any]]:
        keys = ctx.settings(DeploymentSettings).known_keys
        return [self.gather_one(s, ctx.root, keys) if self.needed(s.data, env) else not_configured() for s in subjects]

    @staticmethod
    def gather_one(subject: Subject, root: Path, known_keys: tuple[str, ...]) -> dict[str, Any]:
        if subject.file is None:
            return unavailable("the contract's file is not known: job.deployment cannot be resolved")
        from streamwarden.facts.deployment import gather_deployment  # its parsers: only when a file is named

        try:
            return gather_deployment(dict(subject.data), subject.file, root, known_keys=known_keys)
        except StreamwardenError as exc:
            return unavailable(exc.render())
