"""Reporters: one module per output format, each reading only the run's findings."""

from __future__ import annotations

from streamwarden.report.interface import Report, Reporter

FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")
# the file name extension each format is usually written with (used in help and docs)
EXTENSIONS = {"text": "txt", "json": "json", "sarif": "sarif", "junit": "xml", "github": "txt", "markdown": "md"}


def get_reporter(name: str) -> Reporter:
    """The reporter by format name; each module is imported only when chosen."""
    if name == "text":
        from streamwarden.report.text import TextReporter

        return TextReporter()
    if name == "json":
        from streamwarden.report.json_format import JsonReporter

        return JsonReporter()
    if name == "sarif":
        from streamwarden.report.sarif import SarifReporter

        return SarifReporter()
    if name == "junit":
        from streamwarden.report.junit import JunitReporter

        return JunitReporter()
    if name == "github":
        from streamwarden.report.github import GithubReporter

        return GithubReporter()
    if name == "markdown":
        from streamwarden.report.markdown import MarkdownReporter

        return MarkdownReporter()
    from streamwarden.errors import UsageError

    raise UsageError(f"unknown format '{name}'", hint="use one of: " + ", ".join(FORMATS))


__all__ = ["EXTENSIONS", "FORMATS", "Report", "Reporter", "get_reporter"]
