"""What a reporter gets, and what it must give back: text for a file or stdout."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from streamwarden.errors import StreamwardenError
from streamwarden.findings import Finding, summarize


@dataclass
class Report:
    findings: list[Finding]
    pipelines: list[str]
    pipeline_files: dict[str, str] = field(default_factory=dict)
    errors: list[StreamwardenError] = field(default_factory=list)
    fail_on: str = "error"

    @property
    def summary(self) -> dict[str, int]:
        return summarize(self.findings, self.pipelines)


class Reporter(ABC):
    @abstractmethod
    def render(self, report: Report, *, color: bool = False) -> str:
        """The whole output as text."""
