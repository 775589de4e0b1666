"""The limits custom policies run under: a wall-clock limit per evaluation (one pipeline, one
policy test) and a memory limit (``limits:`` in streamwarden.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from streamwarden.core.units import format_duration, format_size

DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_MEMORY_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class Limits:
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    memory_bytes: int = DEFAULT_MEMORY_BYTES

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000

    def shown_timeout(self) -> str:
        return format_duration(self.timeout_ms)

    def shown_memory(self) -> str:
        return format_size(self.memory_bytes)


_DEFAULTS = f"{format_duration(DEFAULT_TIMEOUT_MS)} and {format_size(DEFAULT_MEMORY_BYTES)}"
HINT = (
    "custom policies run under `limits: {policy_timeout, policy_memory}` of streamwarden.yaml "
    f"(default {_DEFAULTS}); a policy that needs more is likely looping or recursing without end"
)
