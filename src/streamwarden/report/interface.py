"""What a reporter gets, and what it must give back: text for a file or stdout."""

from __future__ import annotations

import posixpath
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from streamwarden.core.errors import StreamwardenError
from streamwarden.engine.policyset import RuleDescriptor
from streamwarden.evaluate.findings import Finding, summarize


@dataclass
class Report:
    findings: list[Finding]
    pipelines: list[str]
    pipeline_files: dict[str, str] = field(default_factory=dict)
    errors: list[StreamwardenError] = field(default_factory=list)
    fail_on: str = "error"
    # the rule catalog from METADATA (SARIF rule descriptors, help text); may be empty
    rules: dict[str, RuleDescriptor] = field(default_factory=dict)
    # the contract review (`diff --format json` "pipelines" list), rendered by markdown when present
    diff: list[dict[str, Any]] | None = None
    # the --baseline file applied to this run (None: no baseline, every finding is new)
    baseline: str | None = None
    # prepended to every root-relative file so locations are repository-relative ("" at the repo root)
    repo_prefix: str = ""

    @property
    def summary(self) -> dict[str, int]:
        return summarize(self.findings, self.pipelines)

    def by_pipeline(self) -> dict[str, list[Finding]]:
        """The findings of each pipeline: every checked pipeline (in order, with none too), then any
        other a finding names."""
        out: dict[str, list[Finding]] = {p: [] for p in self.pipelines}
        for f in self.findings:
            out.setdefault(f.pipeline, []).append(f)
        return out

    def repo_path(self, file: str | None) -> str | None:
        """The finding's file as a path relative to the repository root (absolute paths stay absolute)."""
        if not file:
            return None
        if file.startswith("/"):
            return file
        joined = (
            posixpath.normpath(posixpath.join(self.repo_prefix, file)) if self.repo_prefix else posixpath.normpath(file)
        )
        return file if joined.startswith("../") or joined == ".." else joined


class Reporter(ABC):
    @abstractmethod
    def render(self, report: Report, *, color: bool = False) -> str:
        """The whole output as text."""
